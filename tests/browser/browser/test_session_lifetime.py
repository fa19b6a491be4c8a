"""How long a session lives: a profile folder that outlasts it, and closing it when nobody uses it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.helpers import ok

from xmltools.base.results import Failure, Point
from xmltools.base.urlpolicy import UrlPolicy
from xmltools.browser.pool import Backend, BrowserPool
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig, Timeouts
from xmltools.config.settings import Config
from xmltools.errors import BrowserError, ConfigError


def wait(seconds: float) -> Any:
    return SimpleNamespace(action="wait", seconds=seconds, target=None, url=None, text=None, state=None)


@pytest.fixture
async def pool() -> AsyncIterator[BrowserPool]:
    p = BrowserPool()
    try:
        yield p
    finally:
        await p.aclose()


async def tab_count(page: Any) -> int:
    return len(page.context.pages)


async def read_state(b: BrowserSession) -> tuple[str, Any]:
    cookies = await b.on_page(lambda p: p.evaluate("document.cookie"))
    stored = await b.on_page(lambda p: p.evaluate("localStorage.getItem('kept')"))
    return str(cookies), stored


# -- the settings ----------------------------------------------------------------------------------


def test_the_settings_reach_the_browser_config(tmp_path: Path) -> None:
    cfg = Config(profile_dir=tmp_path / "p", idle_timeout=2.5).browser_settings()
    assert cfg.profile_dir == tmp_path / "p" and cfg.idle_timeout == 2.5
    assert Config().browser_settings().profile_dir is None
    with pytest.raises(ConfigError):
        BrowserConfig(idle_timeout=0)


async def test_a_profile_folder_needs_a_local_browser(tmp_path: Path, pool: BrowserPool) -> None:
    with pytest.raises(ConfigError, match="profile_dir needs a local browser"):
        BrowserConfig(remote="http://127.0.0.1:9222", profile_dir=tmp_path)
    with pytest.raises(ConfigError, match="profile_dir needs a local browser"):
        Config(remote="auto", profile_dir=tmp_path).browser_settings()
    remote = Backend("cdp", endpoint="http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="profile_dir needs a local browser"):
        await pool.run(pool.persistent_context(remote, tmp_path, 1.0))
    assert pool.sessions == 0 and not (tmp_path / "Default").exists()


# -- profile_dir -----------------------------------------------------------------------------------


@pytest.mark.long
async def test_a_profile_folder_keeps_cookies_and_storage_for_the_next_session(
    site: str, tmp_path: Path, pool: BrowserPool
) -> None:
    cfg = BrowserConfig(profile_dir=tmp_path / "profile")
    first = BrowserSession(cfg, pool=pool)
    ok(await first.launch(site + "/form.html"))
    assert pool.sessions == 1 and pool.browsers() == {}  # a browser of its own, not the shared one
    assert await first.on_page(tab_count) == 1  # the context's own first tab is used
    await first.on_page(lambda p: p.evaluate("document.cookie = 'kept=yes; max-age=3600; path=/'"))
    await first.on_page(lambda p: p.evaluate("localStorage.setItem('kept', 'stored')"))
    assert await read_state(first) == ("kept=yes", "stored")
    assert await first.close() is None
    assert pool.sessions == 0

    later = BrowserSession(cfg, pool=pool)
    obs = ok(await later.launch(site + "/form.html"))
    assert obs.title == "Sign in" and obs.screenshot is not None
    assert (obs.screenshot.width, obs.screenshot.height) == (cfg.viewport.width, cfg.viewport.height)
    assert await read_state(later) == ("kept=yes", "stored")

    fresh = BrowserSession(pool=pool)  # no profile folder: nothing of the other sessions
    ok(await fresh.launch(site + "/form.html"))
    assert await read_state(fresh) == ("", None)
    assert pool.sessions == 2
    await later.shutdown()
    await fresh.shutdown()
    assert pool.sessions == 0


@pytest.mark.long
async def test_a_persistent_context_gets_the_policy_downloads_and_tabs(
    site: str, tmp_path: Path, pool: BrowserPool
) -> None:
    cfg = BrowserConfig(
        profile_dir=tmp_path / "profile",
        downloads_dir=tmp_path / "downloads",
        url_policy=UrlPolicy(allowed_origins=("http://127.0.0.1:*",)),
    )
    async with BrowserSession(cfg, pool=pool) as b:
        ok(await b.launch(site + "/hostile/cross.html"))
        obs = ok(await b.click(Point(x=190, y=185)))  # window.open to another origin
        assert obs.url == site + "/hostile/cross.html"
        assert any("refused" in n for n in obs.notes), obs.notes
        ok(await b.launch(site + "/download.html"))
        obs = ok(await b.click(Point(x=150, y=65)))
        saved = tmp_path / "downloads" / "shopping-list.csv"
        assert any(str(saved) in n for n in obs.notes), obs.notes
        ok(await b.launch(site + "/popup.html"))
        obs = ok(await b.click(Point(x=150, y=145)))
        assert obs.url == site + "/long.html" and any("new tab" in n for n in obs.notes), obs.notes
        assert await b.browser_pid() is not None
    assert pool.sessions == 0


async def test_a_profile_folder_serves_one_session_at_a_time(
    site: str, tmp_path: Path, pool: BrowserPool
) -> None:
    cfg = BrowserConfig(profile_dir=tmp_path / "profile", timeouts=Timeouts(launch=20.0))
    first = BrowserSession(cfg, pool=pool)
    ok(await first.launch(site + "/form.html"))
    second = BrowserSession(cfg, pool=pool)
    start = time.monotonic()
    with pytest.raises(BrowserError, match="is in use"):
        await second.launch(site + "/form.html")
    assert time.monotonic() - start < 5
    assert pool.sessions == 1 and not second.is_open

    # another pool (another host) on the same folder meets Chromium's own profile lock
    other = BrowserPool()
    try:
        start = time.monotonic()
        with pytest.raises(BrowserError, match="is in use"):
            await BrowserSession(cfg, pool=other).launch(site + "/form.html")
        assert time.monotonic() - start < 15
        assert other.sessions == 0
    finally:
        await other.aclose()

    assert ok(await first.hover(Point(x=5, y=5))).title == "Sign in"  # the first goes on, untouched
    assert await first.on_page(tab_count) == 1
    await first.close()
    ok(await second.launch(site + "/form.html"))  # the folder is free again
    await second.close()
    assert pool.sessions == 0


async def test_persistent_contexts_count_against_max_sessions(site: str, tmp_path: Path) -> None:
    pool = BrowserPool(max_sessions=1)
    try:
        a = BrowserSession(BrowserConfig(profile_dir=tmp_path / "a"), pool=pool)
        b = BrowserSession(BrowserConfig(timeouts=Timeouts(launch=1.0)), pool=pool)
        ok(await a.launch(site + "/form.html"))
        res = await b.launch(site + "/form.html")
        assert isinstance(res, Failure) and res.kind == "launch", res
        await a.close()
        # the slot is free again; this start also launches the pool's own browser, which may take
        # more than b's 1 s on a busy machine
        later = BrowserSession(pool=pool)
        ok(await later.launch(site + "/form.html"))
        await later.close()
    finally:
        await pool.aclose()


# -- idle_timeout --------------------------------------------------------------------------------


async def test_an_idle_session_closes_itself_and_says_so(site: str, pool: BrowserPool, repeat: int) -> None:
    b = BrowserSession(BrowserConfig(idle_timeout=1.0), pool=pool)
    other = BrowserSession(pool=pool)  # a session without the timeout stays
    ok(await other.launch(site + "/form.html"))
    for i in range(repeat):
        ok(await b.launch(site + "/form.html"))
        assert pool.sessions == 2, i
        await asyncio.sleep(0.5)
        assert b.is_open and pool.sessions == 2, i
        await asyncio.sleep(1.1)
        assert pool.sessions == 1 and not b.is_open, i
        res = await b.click(Point(x=5, y=5))
        assert isinstance(res, Failure), (i, res)
        assert res.kind == "closed" and res.browser_closed, (i, res)
        assert res.message == "the browser was closed after 1 s unused; launch it again to go on."
        assert res.last_url == site + "/form.html"
    assert other.is_open
    ok(await other.hover(Point(x=5, y=5)))
    await other.close()
    assert pool.sessions == 0


@pytest.mark.long
async def test_an_action_longer_than_the_idle_timeout_is_not_cut_off(site: str, pool: BrowserPool) -> None:
    b = BrowserSession(BrowserConfig(idle_timeout=1.0), pool=pool)
    ok(await b.launch(site + "/form.html"))
    start = time.monotonic()
    obs = ok(await b.act(wait(1.5)))
    assert time.monotonic() - start >= 1.5
    assert obs.title == "Sign in" and b.is_open and pool.sessions == 1
    ok(await b.hover(Point(x=5, y=5)))  # the timer started again after the wait
    await b.close()


@pytest.mark.long
async def test_a_session_in_use_stays_open(site: str, pool: BrowserPool) -> None:
    b = BrowserSession(BrowserConfig(idle_timeout=1.0), pool=pool)
    ok(await b.launch(site + "/form.html"))
    end = time.monotonic() + 4.0
    while time.monotonic() < end:
        await asyncio.sleep(0.5)
        ok(await b.hover(Point(x=5, y=5)))
        assert pool.sessions == 1
    await b.close()
    assert pool.sessions == 0


@pytest.mark.long
async def test_close_stops_the_timer_and_a_relaunch_starts_it(site: str, pool: BrowserPool) -> None:
    b = BrowserSession(BrowserConfig(idle_timeout=1.0), pool=pool)
    ok(await b.launch(site + "/form.html"))
    assert await b.close() is None
    assert b._idle_timer is None
    await asyncio.sleep(1.3)
    res = await b.click(Point(x=5, y=5))  # closed by the host, not for being unused
    assert isinstance(res, Failure) and res.message == "the browser is not open.", res
    ok(await b.launch(site + "/form.html"))
    await b.shutdown()
    assert b._idle_timer is None and pool.sessions == 0


@pytest.mark.long
async def test_a_folder_being_given_back_is_waited_for_not_found_in_use(
    site: str, tmp_path: Path, pool: BrowserPool
) -> None:
    """A session opened on a folder whose last session has ended while its browser still stops (an
    idle close on a busy machine) waits for the folder instead of being told it is in use."""
    cfg = BrowserConfig(profile_dir=tmp_path / "profile")
    b = BrowserSession(cfg, pool=pool)
    ok(await b.launch(site + "/form.html"))
    closing = asyncio.ensure_future(b.close())
    while pool.sessions:
        await asyncio.sleep(0.002)
    again = BrowserSession(cfg, pool=pool)
    ok(await again.launch(site + "/form.html"))
    assert await closing is None
    await again.close()


@pytest.mark.long
async def test_an_idle_persistent_session_gives_its_folder_back(
    site: str, tmp_path: Path, pool: BrowserPool
) -> None:
    cfg = BrowserConfig(profile_dir=tmp_path / "profile", idle_timeout=1.0)
    b = BrowserSession(cfg, pool=pool)
    ok(await b.launch(site + "/form.html"))
    await asyncio.sleep(1.8)
    assert pool.sessions == 0 and not b.is_open
    again = BrowserSession(cfg, pool=pool)
    ok(await again.launch(site + "/form.html"))
    await again.close()
