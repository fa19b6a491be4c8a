"""The browser-wide request listener (xmltools.browser.intercept.BrowserIntercept) at its seam: the
DevTools session is a stand-in that records what is sent and lets the test report targets and paused
requests, in the order a browser could.

What is checked: a request of a guarded tab is decided here whether or not the tab has its own
listener by then (a popup's first request, a request begun before the listener, or a redirect's next
hop, may never reach it); a context with no guard is let through at once; an inner frame's request is
left to its tab's listener, and waits while a guarded tab is being born, within the bound.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from xmltools.browser import intercept
from xmltools.browser.intercept import BrowserIntercept


class FakeSession:
    """A browser-wide DevTools session: events are reported by the test, commands are recorded."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def on(self, event: str, handler: Any) -> None:
        self.handlers[event] = handler

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.sent.append((method, params or {}))
        if method == "Target.getTargetInfo":  # asked only of frames never reported: inner frames
            raise PlaywrightError("No target with given id found")
        return {}

    def report(self, event: str, params: dict[str, Any]) -> None:
        self.handlers[event](params)

    def tab(self, target: str, context: str) -> None:
        self.report(
            "Target.targetCreated",
            {"targetInfo": {"targetId": target, "type": "page", "browserContextId": context}},
        )

    def pause(self, request: str, frame: str, url: str, redirected_from: str | None = None) -> None:
        event: dict[str, Any] = {
            "requestId": request,
            "frameId": frame,
            "resourceType": "Document",
            "request": {"url": url},
        }
        if redirected_from:
            event["redirectedRequestId"] = redirected_from
        self.report("Fetch.requestPaused", event)

    def answers(self, request: str) -> list[str]:
        """What was answered for ``request``: continued, or failed with its reason."""
        out = []
        for method, params in self.sent:
            if params.get("requestId") == request:
                out.append(
                    "continued" if method == "Fetch.continueRequest" else params.get("errorReason", method)
                )
        return out


class FakeBrowser:
    def __init__(self) -> None:
        self.session = FakeSession()

    async def new_browser_cdp_session(self) -> FakeSession:
        return self.session


class Policy:
    """A guard's decision: anything under /out/ is refused; every URL asked about is kept."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, url: str, navigation: bool, redirected: bool) -> str | None:
        self.asked.append(url)
        return "Aborted" if "/out/" in url else None


async def _listener() -> tuple[BrowserIntercept, FakeSession]:
    browser = FakeBrowser()
    wide = await BrowserIntercept.of(browser)  # type: ignore[arg-type]
    assert wide is not None
    return wide, browser.session


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_popups_first_request_is_decided_here() -> None:
    wide, cdp = await _listener()
    policy = Policy()
    wide.guard("C1", policy)
    cdp.tab("T2", "C1")  # a popup: no listener of its own yet
    cdp.pause("r1", "T2", "http://localhost/out/p.html")
    await _settle()
    assert cdp.answers("r1") == ["Aborted"]


async def test_a_covered_tabs_redirect_hop_is_still_decided_here() -> None:
    """The tab's own listener is ready, yet the hop belongs to a request begun before it."""
    wide, cdp = await _listener()
    policy = Policy()
    cdp.tab("T1", "C1")
    wide.guard("C1", policy)
    wide.cover("T1")
    cdp.pause("r1", "T1", "http://127.0.0.1/hop.html")
    cdp.pause("r2", "T1", "http://localhost/out/r.html", redirected_from="r1")
    await _settle()
    assert cdp.answers("r1") == ["continued"]
    assert cdp.answers("r2") == ["Aborted"]


async def test_a_context_with_no_guard_is_let_through_at_once() -> None:
    wide, cdp = await _listener()
    policy = Policy()
    wide.guard("C1", policy)
    cdp.tab("T9", "C9")  # another context of the same browser, with no policy
    cdp.pause("r1", "T9", "http://127.0.0.1/out/x.html")
    await _settle()
    assert cdp.answers("r1") == ["continued"] and policy.asked == []


async def test_an_inner_frames_request_waits_while_a_guarded_tab_is_being_born() -> None:
    """An inner frame is no target: while a guarded tab has no listener yet, the request may be that
    tab's, whose own listener decides once it is ready."""
    wide, cdp = await _listener()
    policy = Policy()
    wide.guard("C1", policy)
    cdp.tab("T1", "C1")
    cdp.pause("r1", "F1", "http://127.0.0.1/out/frame.html")  # getTargetInfo: no such target
    await asyncio.sleep(0.1)
    assert cdp.answers("r1") == []
    wide.cover("T1")
    await _settle()
    assert cdp.answers("r1") == ["continued"] and policy.asked == []  # the tab's listener decides


async def test_past_the_bound_every_guard_with_a_tab_being_born_decides_for_an_inner_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(intercept, "BIRTH_BOUND", 0.2)
    wide, cdp = await _listener()
    policy = Policy()
    wide.guard("C1", policy)
    cdp.tab("T1", "C1")  # and its listener never comes
    cdp.pause("r1", "F1", "http://127.0.0.1/out/frame.html")
    cdp.pause("r2", "F2", "http://127.0.0.1/in.html")
    await asyncio.sleep(0.1)
    assert cdp.answers("r1") == cdp.answers("r2") == []
    await asyncio.sleep(0.3)
    assert cdp.answers("r1") == ["Aborted"] and cdp.answers("r2") == ["continued"]
