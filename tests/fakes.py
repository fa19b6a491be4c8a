"""A stand-in browser at the interpreter's seam, for unit tests of the protocol flow (no Chromium)."""

from __future__ import annotations

from typing import Any

from xmltools.results import ConsoleEntry, Failure, Observation, Screenshot, Viewport
from xmltools.tools import Click, Close, Hover, Launch, Resize

SHOT = Screenshot(data=b"RIFF\x00\x00\x00\x00WEBPVP8 stand-in", format="webp", width=900, height=600)


class FakeBrowser:
    def __init__(self, fail: dict[str, Failure] | None = None) -> None:
        self.viewport = Viewport(width=900, height=600)
        self.open = False
        self.url = ""
        self.actions: list[Any] = []
        self.fail = fail or {}
        self.shutdowns = 0

    @property
    def is_open(self) -> bool:
        return self.open

    async def run(self, action: Any) -> Observation | Failure | None:
        self.actions.append(action)
        name = action.action
        if name in self.fail:
            f = self.fail[name]
            if f.browser_closed:
                self.open = False
            return f
        if isinstance(action, Close):
            self.open = False
            return None
        if isinstance(action, Launch):
            self.open = True
            self.url = action.url
        if isinstance(action, Resize):
            self.viewport = action.size
        mouse = action.coordinate if isinstance(action, (Click, Hover)) else None
        return Observation(
            url=self.url,
            title="Stand-in",
            console=(ConsoleEntry(type="log", text=f"did {name}"),),
            screenshot=SHOT,
            viewport=self.viewport,
            mouse=mouse,
        )

    async def close(self) -> Failure | None:
        self.actions.append("close()")
        self.open = False
        return None

    async def shutdown(self) -> None:
        self.shutdowns += 1
        self.open = False
