"""A stand-in browser at the interpreter's seam, for unit tests of the protocol flow (no Chromium)."""

from __future__ import annotations

from typing import Any

from xmltools.base.results import ConsoleEntry, Failure, Observation, Point, Screenshot
from xmltools.browser.base import StubBrowser

SHOT = Screenshot(data=b"RIFF\x00\x00\x00\x00WEBPVP8 stand-in", format="webp", width=900, height=600)


class FakeBrowser(StubBrowser):
    """The stub browser, plus a log of actions, a screenshot and console line, and failures on demand."""

    def __init__(self, fail: dict[str, Failure] | None = None) -> None:
        super().__init__()
        self.actions: list[Any] = []
        self.fail = fail or {}
        self.shutdowns = 0

    async def run(self, action: Any) -> Observation | Failure | None:
        self.actions.append(action)
        f = self.fail.get(action.action)
        if f is not None:
            if f.browser_closed:
                self.open = False
            return f
        return await super().run(action)

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        return Observation(
            url=self.url,
            title="Stand-in",
            console=(ConsoleEntry(type="log", text=f"did {action.action}"),),
            screenshot=SHOT,
            viewport=self.viewport,
            mouse=mouse,
        )

    async def close(self) -> Failure | None:
        self.actions.append("close()")
        return await super().close()

    async def shutdown(self) -> None:
        self.shutdowns += 1
        await super().shutdown()
