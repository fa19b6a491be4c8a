"""Named sessions in a real Chromium: each is an isolated context of one pool, with its own tabs and storage."""

from __future__ import annotations

from support.helpers import ba, read, said

from xmltools import Config, Interpreter, State
from xmltools.browser.pool import BrowserPool


def test_sessions_keep_their_own_storage_cookies_and_tabs(site: str) -> None:
    pool = BrowserPool()
    cfg = Config(profile="full", observe="snapshot", approval={"script": "allow"})
    try:
        with Interpreter(cfg, pool=pool) as it:
            it.handle(ba("launch", url=site + "/pages/one.html"))
            it.handle(
                ba("evaluate", script="localStorage.setItem('who', 'default'); document.cookie = 'c=1'; 1")
            )
            it.handle(ba("open_tab", url=site + "/pages/two.html"))
            turn = it.handle(ba("launch", "shop", url=site + "/pages/one.html"))
            assert turn.sessions == ("default", "shop") and "default, shop (this one)" in said(turn)
            assert "Tabs" not in said(turn)  # the shop session has one tab; default's two are its own
            assert pool.sessions == 2
            got = read(
                it.handle(ba("evaluate", "shop", script="[localStorage.getItem('who'), document.cookie]"))
            )
            assert got == '[null, ""]'
            got = read(it.handle(ba("evaluate", script="[localStorage.getItem('who'), document.cookie]")))
            assert got == '["default", "c=1"]'
            assert "t2" in read(it.handle(ba("list_tabs")))
            turn = it.handle(ba("close"))
            assert turn.state is State.ACTIVE and turn.sessions == ("shop",) and pool.sessions == 1
            assert it.handle(ba("get_text", "shop", selector="h1")).ran is not None
            assert it.handle(ba("close", "shop")).state is State.IDLE
        assert pool.sessions == 0
    finally:
        pool.close()


def test_three_sessions_at_most_then_one_closes_and_another_opens(site: str) -> None:
    pool = BrowserPool()
    try:
        with Interpreter(Config(profile="full", observe="snapshot"), pool=pool) as it:
            for name in ("a", "b", "c"):
                assert it.handle(ba("launch", name, url=site + "/pages/one.html")).ran is not None
            turn = it.handle(ba("launch", "d", url=site + "/pages/one.html"))
            assert turn.outcomes[0].violation == "too_many_sessions" and pool.sessions == 3
            it.handle(ba("close", "b"))
            assert it.handle(ba("launch", "d", url=site + "/pages/two.html")).sessions == ("a", "c", "d")
            assert pool.sessions == 3
        assert pool.sessions == 0  # closing the interpreter closes every session
    finally:
        pool.close()
