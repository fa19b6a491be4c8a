"""Shared test set-up: the fixture site served on 127.0.0.1, and browser sessions."""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).parent.parent
SITE = ROOT / "fixtures" / "site"

_stop = threading.Event()


def _never(handler: SimpleHTTPRequestHandler) -> None:
    """A resource that never arrives (held open for at most 60 s, or until the server stops)."""
    deadline = time.monotonic() + 60
    while not _stop.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)


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
    from xmltools.serve import serve_directory

    with serve_directory(SITE, routes=ROUTES) as base:
        yield base
    _stop.set()


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    from xmltools.browser.session import BrowserSession

    async with BrowserSession() as b:
        yield b


pytest_plugins = ["pytester"]
