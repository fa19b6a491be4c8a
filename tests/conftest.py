"""Shared test set-up: the fixture site served on 127.0.0.1, and browser sessions."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

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


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    from xmltools.serve import serve_directory

    with serve_directory(SITE, routes={"/__never__/": _never}) as base:
        yield base
    _stop.set()


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    from xmltools.browser.controller import BrowserSession

    async with BrowserSession() as b:
        yield b


pytest_plugins = ["pytester"]
