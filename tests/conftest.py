"""Shared test set-up: the fixture site served on 127.0.0.1, browser sessions, and the folders' rules.

tests/unit holds fast tests with no browser and no command in a subprocess;
tests/browser holds the tests that drive a real Chromium, marked ``browser`` here
by folder; tests/slow holds the rest that takes seconds (the wheel build, the
commands in a subprocess).  A test outside tests/browser that launches a browser
fails, so Chromium cannot slip into the fast set unnoticed.
"""

from __future__ import annotations

import atexit
import functools
import os
import random
import select
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

sys.path.insert(0, str(Path(__file__).parent))

from support.helpers import SITE  # this folder is on the path from the line above

BROWSER_TESTS = Path(__file__).parent / "browser"
SLOW_TESTS = Path(__file__).parent / "slow"

_stop = threading.Event()


def _never(handler: SimpleHTTPRequestHandler) -> None:
    """A resource that never arrives (held open for at most 60 s, until the server stops, or until
    the browser hangs up, as it does when the page that asked for it goes away)."""
    deadline = time.monotonic() + 60
    conn = handler.connection
    while not _stop.is_set() and time.monotonic() < deadline:
        readable, _, _ = select.select([conn], [], [], 0.05)
        if readable:
            try:
                if not conn.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return
            time.sleep(0.05)  # bytes the browser sent after its request: still there, not read


def _slow(handler: SimpleHTTPRequestHandler) -> None:
    """``/__slow__/PATH``: the file at PATH, after a random delay of 0 to 800 ms."""
    time.sleep(random.uniform(0, 0.8))
    handler.path = handler.path.removeprefix("/__slow__")
    SimpleHTTPRequestHandler.do_GET(handler)


def _redirect(handler: SimpleHTTPRequestHandler) -> None:
    """``/__redirect__/N/PATH``: a chain of N redirects that ends at /PATH."""
    count, _, rest = handler.path.removeprefix("/__redirect__/").partition("/")
    n = int(count)
    handler.send_response(302)
    handler.send_header("Location", f"/__redirect__/{n - 1}/{rest}" if n > 1 else "/" + rest)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _post(handler: SimpleHTTPRequestHandler) -> None:
    """``POST /__post__/PATH``: reads the form and answers 303 See Other to /PATH?FORM."""
    length = int(handler.headers.get("Content-Length") or 0)
    body = handler.rfile.read(length).decode() if length else ""
    handler.send_response(303)
    handler.send_header("Location", "/" + handler.path.removeprefix("/__post__/") + "?" + body)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _to(handler: SimpleHTTPRequestHandler) -> None:
    """``/__to__/URL``: one redirect to URL (percent-encoded), wherever it points."""
    handler.send_response(302)
    handler.send_header("Location", unquote(handler.path.removeprefix("/__to__/")))
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _attachment(handler: SimpleHTTPRequestHandler) -> None:
    """``/__attachment__/NAME``: a small CSV sent as an attachment (a download, not a page)."""
    body = b"name,qty\napples,3\n"
    name = handler.path.rsplit("/", 1)[-1]
    handler.send_response(200)
    handler.send_header("Content-Type", "text/csv")
    handler.send_header("Content-Disposition", f'attachment; filename="{name}"')
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


ROUTES = {
    "/__never__/": _never,
    "/__slow__/": _slow,
    "/__redirect__/": _redirect,
    "/__post__/": _post,
    "/__to__/": _to,
    "/__attachment__/": _attachment,
}


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    from xmltools.base.serve import serve_directory

    with serve_directory(SITE, routes=ROUTES) as base:
        yield base
    _stop.set()


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    from xmltools.browser.session import BrowserSession

    async with BrowserSession() as b:
        yield b


@pytest.fixture
async def patient() -> AsyncIterator[object]:
    """A session for pages that are slow by nature (each alert, console line or popup is a round trip
    to Chromium, and this machine is small): what these tests check is the outcome and the note, not
    the speed, which ``make bench`` measures."""
    from xmltools.browser.session import BrowserSession
    from xmltools.browser.settings import BrowserConfig, Timeouts

    bounds = Timeouts(action=30.0, navigation=30.0, screenshot=30.0)  # 200 popups took a shot past 10 s
    async with BrowserSession(BrowserConfig(timeouts=bounds)) as b:
        yield b


pytest_plugins = ["pytester"]

# Hypothesis's per-example deadline (200 ms) and its too-slow check measure this machine's load,
# not the code: the unit tests share make test's two processes with Chromium. make bench measures
# speed.
hypothesis_settings.register_profile("xmltools", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("xmltools")


# -- repetition ---------------------------------------------------------------------------------------

DEFAULT_REPEAT = 3  # what `make test` runs; `make stress` sets 30


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--repeat",
        type=int,
        default=None,
        help="how many times the tests that repeat an action repeat it "
        f"(default: $XMLTOOLS_REPEAT, else {DEFAULT_REPEAT}; make stress runs 30)",
    )


def repeat_count(config: pytest.Config) -> int:
    """The one place the repetition count is read: ``--repeat``, else ``XMLTOOLS_REPEAT``, else 3."""
    given = config.getoption("--repeat")
    if given is None:
        given = int(os.environ.get("XMLTOOLS_REPEAT") or DEFAULT_REPEAT)
    if given < 1:
        raise pytest.UsageError(f"--repeat / XMLTOOLS_REPEAT must be at least 1, not {given}")
    return int(given)


@pytest.fixture
def repeat(request: pytest.FixtureRequest) -> int:
    """How many times a test that repeats an action (against pages served with random delays) does it.

    Every test that takes this fixture is marked ``repeated``: ``make stress`` runs
    just those, 30 times each.
    """
    return repeat_count(request.config)


# -- the folders' rules ------------------------------------------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark by folder: ``browser`` for tests/browser, ``slow`` for tests/slow; and ``repeated`` for
    the tests that take the ``repeat`` fixture."""
    for item in items:
        if "repeat" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.repeated)
        if item.path.is_relative_to(BROWSER_TESTS):
            item.add_marker(pytest.mark.browser)
        elif item.path.is_relative_to(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


_in_browser_folder = False  # whether the test being run (set-up, call and teardown) is under tests/browser


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    global _in_browser_folder
    _in_browser_folder = item.path.is_relative_to(BROWSER_TESTS)
    try:
        return (yield)
    finally:
        _in_browser_folder = False


def _refuse_outside_browser_folder(launch: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(launch)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not _in_browser_folder:
            raise AssertionError(
                "this test launches a browser: it belongs under tests/browser (marked `browser` there)"
            )
        return launch(*args, **kwargs)

    return guarded


_own_tmp: str | None = None  # this process's temporary folder


def pytest_configure(config: pytest.Config) -> None:
    """A temporary folder of our own, and a guard on every way Playwright starts a local browser.

    Each pytest process (each xdist worker too) gets its own ``TMPDIR``, which
    Chromium and Playwright's driver inherit: the tests that count the profile
    folders left in the temporary folder see only their own browsers', not
    those of another worker or of anyone else on the machine.

    Outside tests/browser, launching a browser fails.  Connecting to a remote
    one is left alone: the tests that check an unreachable endpoint need no
    browser.
    """
    global _own_tmp
    if _own_tmp is None:
        _own_tmp = tempfile.mkdtemp(prefix="xmltools-tests-")
        os.environ["TMPDIR"] = _own_tmp
        tempfile.tempdir = None  # read TMPDIR again
        # removed when this process ends, after pytest's own clean-up (xdist workers end first)
        atexit.register(shutil.rmtree, _own_tmp, ignore_errors=True)
    from playwright.async_api import BrowserType as AsyncBrowserType
    from playwright.sync_api import BrowserType as SyncBrowserType

    for cls in (AsyncBrowserType, SyncBrowserType):
        for name in ("launch", "launch_persistent_context"):
            original = getattr(cls, name)
            if not getattr(original, "_outside_browser_folder_refused", False):
                guarded = _refuse_outside_browser_folder(original)
                guarded._outside_browser_folder_refused = True  # type: ignore[attr-defined]
                setattr(cls, name, guarded)
