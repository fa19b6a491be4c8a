"""The controller in a real Chromium, against fixtures/site served on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from playwright.async_api import Page
from support.helpers import evaluate as js
from support.helpers import failed, ok
from support.helpers import free_port as _free_port

from xmltools.base.results import Observation, Point, Viewport
from xmltools.browser.images import image_size
from xmltools.browser.locate import find_chromium
from xmltools.browser.pool import discover_remote
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig, Timeouts
from xmltools.browser.sync import SyncBrowser
from xmltools.errors import RemoteBrowserError


def console_texts(obs: Observation, kind: str | None = None) -> list[str]:
    return [c.text for c in obs.console if kind is None or c.type == kind]


# -- observations ---------------------------------------------------------------------


async def test_launch_returns_a_full_observation(browser: BrowserSession, site: str) -> None:
    obs = ok(await browser.launch(site + "/buttons.html"))
    assert obs.url == site + "/buttons.html" and obs.title == "Buttons"
    assert obs.viewport == Viewport(width=900, height=600)
    shot = obs.screenshot
    assert shot is not None and shot.format == "webp" and (shot.width, shot.height) == (900, 600)
    assert image_size(shot.data) == (900, 600)
    assert console_texts(obs) == ["buttons ready"]
    assert obs.mouse is None
    assert browser.is_open


async def test_console_messages_of_every_kind(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/buttons.html"))
    obs = ok(await browser.click(Point(x=100, y=65)))
    assert [(c.type, c.text) for c in obs.console] == [("log", "clicked log")]  # console.log is captured
    assert obs.mouse == Point(x=100, y=65)
    assert [(c.type, c.text) for c in ok(await browser.click(Point(x=100, y=145))).console] == [
        ("warning", "clicked warn")
    ]
    assert [(c.type, c.text) for c in ok(await browser.click(Point(x=100, y=225))).console] == [
        ("error", "clicked error")
    ]
    assert [(c.type, c.text) for c in ok(await browser.click(Point(x=100, y=305))).console] == [
        ("pageerror", "boom from the page")
    ]
    obs = ok(await browser.click(Point(x=100, y=465)))
    kinds = {c.type for c in obs.console}
    assert "httperror" in kinds, obs.console
    assert any("missing-file.json" in c.text and c.text.startswith("404") for c in obs.console)
    # nothing new: the next observation has no old messages
    assert ok(await browser.hover(Point(x=600, y=400))).console == ()


async def test_dom_change_is_visible_and_png_is_an_option(site: str) -> None:
    async with BrowserSession(BrowserConfig(screenshot_format="png")) as b:
        ok(await b.launch(site + "/buttons.html"))
        before = ok(await b.hover(Point(x=500, y=500)))
        after = ok(await b.click(Point(x=100, y=385)))
        assert after.screenshot is not None and after.screenshot.format == "png"
        assert image_size(after.screenshot.data) == (900, 600)
        assert before.screenshot is not None and before.screenshot.data != after.screenshot.data
        assert str(await js(b, "document.getElementById('out').textContent")).startswith("changed")


async def test_a_click_on_nothing_fails_and_shows_the_page(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/buttons.html"))
    f = failed(await browser.click(Point(x=800, y=580)), "no_target")
    assert "800,580" in f.message
    assert f.observation is not None and f.observation.screenshot is not None
    assert not f.browser_closed and browser.is_open


async def test_form_type_press_and_submit(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))
    ok(await browser.click(Point(x=150, y=97)))
    ok(await browser.type("Ada  L"))
    ok(await browser.press("Control+a"))
    ok(await browser.type("Ada"))
    ok(await browser.press("Tab"))
    ok(await browser.type("secret"))
    obs = ok(await browser.press("Enter"))
    assert obs.title == "Welcome"
    assert console_texts(obs) == ["signed in as Ada"]
    assert await js(browser, "document.getElementById('status').textContent") == "Welcome, Ada!"


async def test_scrolling_moves_one_viewport(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/long.html"))
    ok(await browser.scroll("down"))
    assert await js(browser, "window.scrollY") == 600
    ok(await browser.scroll("down"))
    assert await js(browser, "window.scrollY") == 1200
    ok(await browser.scroll("up"))
    ok(await browser.scroll("up"))
    obs = ok(await browser.scroll("up"))
    assert await js(browser, "window.scrollY") == 0
    assert any("already at the top" in n for n in obs.notes)


async def test_resize_changes_viewport_and_screenshot(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/long.html"))
    obs = ok(await browser.resize(Viewport(width=1280, height=800)))
    assert obs.viewport == Viewport(width=1280, height=800)
    assert obs.screenshot is not None and (obs.screenshot.width, obs.screenshot.height) == (1280, 800)
    ok(await browser.scroll("down"))
    assert await js(browser, "window.scrollY") == 800


async def test_settle_waits_for_a_page_that_changes_after_a_delay(browser: BrowserSession, site: str) -> None:
    obs = ok(await browser.launch(site + "/delayed.html"))
    assert await js(browser, "document.getElementById('h').textContent") == "Ready"
    assert "ready after delay" in console_texts(obs)
    obs = ok(await browser.click(Point(x=140, y=145)))
    assert "ready after delay" in console_texts(obs)


# -- pages that misbehave --------------------------------------------------------------


async def test_dialogs_are_dismissed_and_reported(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/dialogs.html"))
    obs = ok(await browser.click(Point(x=150, y=65)))
    assert any("alert" in n and "Saved!" in n for n in obs.notes), obs.notes
    obs = ok(await browser.click(Point(x=150, y=145)))
    assert any("confirm" in n for n in obs.notes)
    assert await js(browser, "document.getElementById('out').textContent") == "confirm: false"
    obs = ok(await browser.click(Point(x=150, y=225)))
    assert any("prompt" in n for n in obs.notes)
    assert await js(browser, "document.getElementById('out').textContent") == "prompt: null"


async def test_new_tabs_are_followed(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/popup.html"))
    obs = ok(await browser.click(Point(x=150, y=65)))
    assert obs.url == site + "/form.html" and obs.title == "Sign in"
    assert any("new tab" in n for n in obs.notes)
    ok(await browser.launch(site + "/popup.html"))
    obs = ok(await browser.click(Point(x=150, y=145)))
    assert obs.url == site + "/long.html"
    assert any("new tab" in n for n in obs.notes)


async def test_downloads_are_saved_in_the_session_folder(site: str, tmp_path: Path) -> None:
    async with BrowserSession(BrowserConfig(downloads_dir=tmp_path)) as b:
        ok(await b.launch(site + "/download.html"))
        obs = ok(await b.click(Point(x=150, y=65)))
        saved = tmp_path / "shopping-list.csv"
        assert any(str(saved) in n for n in obs.notes), obs.notes
        assert saved.read_text().startswith("name,qty")


@pytest.mark.long
async def test_a_page_that_never_finishes_loading(site: str) -> None:
    t = Timeouts(navigation=2.0, settle=1.0)
    async with BrowserSession(BrowserConfig(timeouts=t)) as b:
        start = time.monotonic()
        obs = ok(await b.launch(site + "/never.html"))
        assert time.monotonic() - start < 15
        assert obs.title == "Never finishes"
        assert any("had not finished loading" in n for n in obs.notes), obs.notes


@pytest.mark.long
async def test_an_endless_script_fails_within_its_bound_and_launch_recovers(site: str) -> None:
    t = Timeouts(action=2.0, settle=1.0)
    async with BrowserSession(BrowserConfig(timeouts=t)) as b:
        ok(await b.launch(site + "/loop.html"))
        start = time.monotonic()
        f = failed(await b.click(Point(x=150, y=65)), "timeout")
        assert time.monotonic() - start < 20
        assert f.browser_closed and not b.is_open
        obs = ok(await b.launch(site + "/form.html"))
        assert obs.title == "Sign in"


async def test_a_renderer_crash_is_reported_and_launch_recovers(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))

    async def crash(page: Page) -> None:
        cdp = await page.context.new_cdp_session(page)
        with pytest.raises(Exception):  # noqa: B017 - the crash itself breaks the protocol call
            await asyncio.wait_for(cdp.send("Page.crash"), 5)

    await browser.on_page(crash)
    f = failed(await browser.click(Point(x=150, y=97)), "crashed")
    assert f.browser_closed and not browser.is_open
    ok(await browser.launch(site + "/form.html"))


async def test_a_killed_browser_is_reported_and_launch_recovers(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))
    pid = await browser.browser_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    # the renderer's end can reach the session before the browser's: wait (bounded) for the browser's,
    # which is what this test is about, rather than a fixed time a loaded machine may overrun
    deadline = time.monotonic() + 10
    while not browser.watch.disconnected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    f = failed(await browser.click(Point(x=150, y=97)), "closed")
    assert f.browser_closed and not browser.is_open
    assert failed(await browser.scroll("down"), "closed").browser_closed
    ok(await browser.launch(site + "/form.html"))


async def test_a_navigation_error_is_never_a_success(browser: BrowserSession) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    f = failed(await browser.launch(f"http://127.0.0.1:{port}/"), "navigation")
    assert "ERR_CONNECTION_REFUSED" in f.message


async def test_a_second_launch_starts_a_fresh_session(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))
    await js(browser, "localStorage.setItem('k', 'v')")
    first = browser.page
    sessions = browser.pool.sessions
    ok(await browser.launch(site + "/form.html"))
    assert first is not None and first.is_closed() and browser.page is not first
    assert browser.pool.sessions == sessions  # the first context was given back
    assert await js(browser, "localStorage.getItem('k')") is None


async def test_sessions_do_not_share_storage(site: str) -> None:
    async with BrowserSession() as a, BrowserSession() as b:
        ok(await a.launch(site + "/form.html"))
        ok(await b.launch(site + "/form.html"))
        await js(a, "localStorage.setItem('k', 'v'); document.cookie = 'c=1'")
        assert await js(a, "localStorage.getItem('k')") == "v"
        assert await js(b, "localStorage.getItem('k')") is None
        assert await js(b, "document.cookie") == ""


async def test_close_then_actions_report_a_closed_browser(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))
    page = browser.page
    sessions = browser.pool.sessions
    assert await browser.close() is None
    assert not browser.is_open and page is not None and page.is_closed()
    assert browser.pool.sessions == sessions - 1
    assert failed(await browser.click(Point(x=1, y=1)), "closed")


# -- remote mode ------------------------------------------------------------------------


@pytest.fixture
def remote_chrome() -> object:
    port = _free_port()
    profile = tempfile.mkdtemp(prefix="xmltools-remote-")
    args = [
        find_chromium().path,
        f"--remote-debugging-port={port}",
        "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={profile}",
        "--headless=new",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "about:blank",
    ]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            discover_remote(("127.0.0.1",), port, 0.5)
            break
        except RemoteBrowserError:
            time.sleep(0.1)
    yield port, proc
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    shutil.rmtree(profile, ignore_errors=True)


async def test_remote_mode_connects_and_leaves_chrome_running(
    remote_chrome: tuple[int, subprocess.Popen[bytes]], site: str
) -> None:
    port, proc = remote_chrome
    async with BrowserSession(BrowserConfig(remote=f"http://127.0.0.1:{port}")) as b:
        obs = ok(await b.launch(site + "/form.html"))
        assert obs.title == "Sign in" and await b.browser_pid() is None
        ok(await b.click(Point(x=150, y=97)))
        assert await b.close() is None
    await asyncio.sleep(0.5)
    assert proc.poll() is None, "closing a remote session must leave that Chrome running"
    discover_remote(("127.0.0.1",), port, 1.0)


async def test_an_unreachable_remote_says_how_to_start_chrome() -> None:
    port = _free_port()
    async with BrowserSession(BrowserConfig(remote=f"http://127.0.0.1:{port}")) as b:
        with pytest.raises(RemoteBrowserError) as info:  # the host's problem, raised to the host
            await b.launch("http://127.0.0.1/")
        assert "--remote-debugging-port=9222" in str(info.value) and str(port) in str(info.value)
    with pytest.raises(RemoteBrowserError, match="remote-debugging-port"):
        discover_remote(("127.0.0.1",), port, 0.3)


# -- the sync facade -------------------------------------------------------------------


def test_sync_facade(site: str) -> None:
    with SyncBrowser() as b:
        obs = ok(b.launch(site + "/buttons.html"))
        assert obs.title == "Buttons"
        assert console_texts(ok(b.click(Point(x=100, y=65)))) == ["clicked log"]
        assert b.close() is None


async def test_sync_facade_inside_a_running_loop(site: str) -> None:
    # as in Jupyter: an event loop is already running in this thread
    asyncio.get_running_loop()
    with SyncBrowser() as b:
        assert ok(b.launch(site + "/form.html")).title == "Sign in"


def test_image_size_reader() -> None:
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000384000002580806000000")
    assert image_size(png) == (900, 600)
    with pytest.raises(ValueError):
        image_size(b"GIF89a....")


async def test_webp_falls_back_to_png_when_the_browser_cannot_encode_it(
    browser: BrowserSession, site: str
) -> None:
    from playwright.async_api import Error as PlaywrightError

    ok(await browser.launch(site + "/form.html"))
    cdp = browser._cdp
    assert cdp is not None
    real_send = cdp.send

    async def no_webp(method: str, params: dict[str, object] | None = None) -> dict[str, object]:
        if method == "Page.captureScreenshot" and (params or {}).get("format") == "webp":
            raise PlaywrightError("Protocol error: unsupported format")
        return await real_send(method, params)  # type: ignore[arg-type]

    cdp.send = no_webp  # type: ignore[method-assign]
    obs = ok(await browser.hover(Point(x=10, y=10)))
    assert obs.screenshot is not None and obs.screenshot.format == "png"
    assert image_size(obs.screenshot.data) == (900, 600)


@pytest.mark.long
async def test_device_scale_factor_gives_a_sharper_screenshot(site: str) -> None:
    async with BrowserSession(BrowserConfig(device_scale_factor=2)) as b:
        obs = ok(await b.launch(site + "/form.html"))
        assert obs.viewport == Viewport(width=900, height=600)
        assert obs.screenshot is not None and (obs.screenshot.width, obs.screenshot.height) == (1800, 1200)
        assert obs.screenshot.format == "png"  # WebP is not available at a scale factor other than 1
        ok(await b.hover(Point(x=5, y=5)))
        assert await js(b, "devicePixelRatio") == 2  # taking screenshots keeps the page's pixel ratio


async def test_device_scale_factor_screenshot_of_a_scrolled_page(site: str) -> None:
    async with BrowserSession(BrowserConfig(device_scale_factor=2, screenshot_format="png")) as b:
        ok(await b.launch(site + "/long.html"))
        top = ok(await b.hover(Point(x=5, y=5)))
        down = ok(await b.scroll("down"))
        assert down.screenshot is not None and (down.screenshot.width, down.screenshot.height) == (1800, 1200)
        assert (
            top.screenshot is not None and down.screenshot.data != top.screenshot.data
        )  # the visible part moved
