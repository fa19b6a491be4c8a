"""The network's quiet window after an action, with the page's requests stood in for by plain objects."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from xmltools.browser.settings import BrowserConfig, Timeouts
from xmltools.browser.settle import Settler
from xmltools.browser.watch import Watch

QUIET = 5.0  # a network-quiet window far longer than the bound below: its end is the bound
BOUND = 0.4


class Frame:
    pass


class Page:
    def __init__(self) -> None:
        self.main_frame = Frame()


class Request:
    def __init__(self, frame: Frame, navigation: bool) -> None:
        self.frame, self.navigation = frame, navigation

    def is_navigation_request(self) -> bool:
        return self.navigation


class Response:
    headers: dict[str, str] = {}  # noqa: RUF012 (read only)
    status = 200
    url = "http://127.0.0.1/x"

    def __init__(self, request: Request) -> None:
        self.request = request


def watched() -> tuple[Watch, Settler, Page]:
    timeouts = Timeouts(network_quiet=QUIET)
    watch = Watch(BrowserConfig(timeouts=timeouts))
    page = Page()
    watch.page = page  # type: ignore[assignment]
    settler = Settler(timeouts, tabs=None, watch=watch, bounds=None)  # type: ignore[arg-type]
    settler.begin()
    return watch, settler, page


def load(watch: Watch, req: Any) -> None:
    """One request, from its start to its end, as the page's events tell it."""
    watch._on_request(req)
    watch._on_response(Response(req))
    watch._on_request_done(req)


async def waited(settler: Settler) -> float:
    started = time.monotonic()
    await settler._network_quiet(asyncio.get_running_loop().time() + BOUND)
    return time.monotonic() - started


async def test_the_main_frames_own_document_does_not_restart_the_network_window() -> None:
    """A link click that loads a page with nothing else to fetch: the page's DOM-quiet window, which
    begins once the document is parsed, is the wait; the document's own events add none."""
    watch, settler, page = watched()
    load(watch, Request(page.main_frame, navigation=True))
    assert watch.nav_requests == 1 and watch.last_net >= settler._action_started
    assert await waited(settler) < BOUND / 2


async def test_any_other_request_during_the_action_is_waited_out() -> None:
    """An inner frame's document and a subresource each hold the window open (here until its bound)."""
    for navigation in (True, False):
        watch, settler, page = watched()
        load(watch, Request(page.main_frame if not navigation else Frame(), navigation=navigation))
        assert await waited(settler) >= BOUND


async def test_a_request_in_flight_is_waited_for_whatever_it_is() -> None:
    watch, settler, page = watched()
    watch._on_request(Request(page.main_frame, navigation=True))
    assert await waited(settler) >= BOUND
