"""The pool's spare context: made when a session ends, taken by the next one alike, never shared."""

from __future__ import annotations

import asyncio
import time

import pytest
from playwright.async_api import BrowserContext
from support.helpers import ok

from xmltools.base.results import Viewport
from xmltools.browser.pool import BrowserPool
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig


async def spare_of(pool: BrowserPool, bound: float = 10.0) -> BrowserContext:
    """The spare, once it is made."""
    deadline = time.monotonic() + bound
    while (spare := pool.spare_context) is None:
        assert time.monotonic() < deadline, "no spare was made"
        await asyncio.sleep(0.02)
    return spare


def open_contexts(pool: BrowserPool) -> int:
    return sum(len(b.contexts) for b in pool.browsers().values())


async def until_open_contexts(pool: BrowserPool, n: int, bound: float = 10.0) -> None:
    deadline = time.monotonic() + bound
    while open_contexts(pool) != n:
        assert time.monotonic() < deadline, f"{open_contexts(pool)} contexts open, not {n}"
        await asyncio.sleep(0.02)


async def test_the_next_session_starts_on_the_spare_and_sees_nothing_of_the_last(site: str) -> None:
    pool = BrowserPool()
    try:
        b = BrowserSession(pool=pool)
        ok(await b.launch(site + "/form.html"))
        assert pool.spare_context is None  # the first session of a pool makes none
        await b.on_page(lambda p: p.evaluate("localStorage.setItem('k', 'v')"))
        await b.close()
        spare = await spare_of(pool)
        assert pool.sessions == 0  # a spare takes no session slot
        obs = ok(await b.launch(site + "/form.html"))
        assert b.tabs.context is spare and obs.url.endswith("/form.html")
        assert await b.on_page(lambda p: p.evaluate("localStorage.getItem('k')")) is None
        assert len(obs.tabs) == 0  # the spare's page is the one tab, not a second
        assert await spare_of(pool) is not spare  # another is made for the session after
        await b.close()
    finally:
        await pool.aclose()


@pytest.mark.long
async def test_a_session_with_other_options_makes_its_own_and_the_spare_is_closed(site: str) -> None:
    pool = BrowserPool()
    try:
        small = BrowserSession(BrowserConfig(viewport=Viewport(width=640, height=480)), pool=pool)
        ok(await small.launch(site + "/form.html"))
        await small.close()
        spare = await spare_of(pool)
        other = BrowserSession(pool=pool)
        ok(await other.launch(site + "/form.html"))
        assert other.tabs.context is not spare
        await until_open_contexts(pool, 1)  # the spare made for 640x480 is gone
        await other.close()
        assert await spare_of(pool) is not spare  # one for the default viewport now
        await until_open_contexts(pool, 1)
    finally:
        await pool.aclose()


@pytest.mark.long
async def test_a_pool_without_spares_keeps_none(site: str) -> None:
    pool = BrowserPool(spare=False)
    try:
        b = BrowserSession(pool=pool)
        for _ in range(3):
            ok(await b.launch(site + "/form.html"))
            await b.close()
        await asyncio.sleep(0.3)
        assert pool.spare_context is None and open_contexts(pool) == 0
    finally:
        await pool.aclose()


async def test_sessions_in_a_row_each_start_and_leave_one_spare_behind(site: str, repeat: int) -> None:
    pool = BrowserPool()
    try:
        b = BrowserSession(pool=pool)
        failures = []
        for i in range(repeat):
            res = await b.launch(site + "/__slow__/form.html")  # served after a random delay
            if not ok(res).title:
                failures.append(f"try {i}: {res}")
            await b.close()
        assert not failures, failures[:3]
        await spare_of(pool)
        await until_open_contexts(pool, 1)  # the spare, and no context left over
    finally:
        await pool.aclose()
    assert pool.spare_context is None


@pytest.mark.long
async def test_a_full_pool_keeps_no_spare_until_a_session_ends(site: str) -> None:
    pool = BrowserPool(max_sessions=2)
    try:
        a, b = BrowserSession(pool=pool), BrowserSession(pool=pool)
        ok(await a.launch(site + "/form.html"))
        await a.close()
        await spare_of(pool)
        ok(await a.launch(site + "/form.html"))  # takes the spare; one session of two: another is made
        await spare_of(pool)
        ok(await b.launch(site + "/form.html"))  # takes that one and fills the pool
        await asyncio.sleep(0.5)
        assert pool.spare_context is None and pool._spare is None
        assert open_contexts(pool) == 2
        await b.close()
        await spare_of(pool)  # a slot is free: a session could take one again
        await until_open_contexts(pool, 2)
        await a.close()
    finally:
        await pool.aclose()
