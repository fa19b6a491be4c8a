"""What an action produces: observations, console entries, screenshots and failures.

Plain pydantic data shared by the controller (which fills it), the renderer
(which turns it into words) and transcripts (which store it).  No I/O here;
this module imports neither Playwright nor Jinja2.
"""

from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ConsoleEntry",
    "Failure",
    "FailureKind",
    "Observation",
    "Point",
    "Screenshot",
    "Viewport",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Viewport(_Frozen):
    width: int = Field(ge=1)
    height: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


class Point(_Frozen):
    x: int
    y: int

    def __str__(self) -> str:
        return f"{self.x},{self.y}"


class ConsoleEntry(_Frozen):
    """A console message, a page error or a failed request."""

    type: str  # log, info, warning, error, debug, pageerror, requestfailed, ...
    text: str

    def line(self) -> str:
        return self.text if self.type == "log" else f"[{self.type}] {self.text}"


class Screenshot(_Frozen):
    data: bytes
    format: Literal["webp", "png", "jpeg"]
    width: int
    height: int

    @property
    def media_type(self) -> str:
        return f"image/{self.format}"

    def b64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.b64()}"


class Observation(_Frozen):
    """What the model sees after an action: the page as it now is."""

    url: str
    title: str
    console: tuple[ConsoleEntry, ...] = ()
    screenshot: Screenshot | None = None
    viewport: Viewport
    mouse: Point | None = None
    notes: tuple[str, ...] = ()  # dialogs dismissed, tabs followed, downloads saved, waits cut short
    target: str | None = None  # what the action acted on: role and accessible name, e.g. 'link "Docs"'
    snapshot: str | None = None  # the ARIA snapshot (observe="snapshot" or "both", or the snapshot action)
    extract: str | None = None  # what get_text, get_html or get_attribute read from the page, capped
    tabs: tuple[str, ...] = ()  # the open tabs, when there are several: 't2 "Title" (current)'
    sessions: tuple[str, ...] = ()  # the open browser sessions, when there are several: 'shop (this one)'


FailureKind = Literal[
    "navigation", "timeout", "no_target", "target", "crashed", "closed", "launch", "internal"
]


class Failure(_Frozen):
    """A browser action that failed, reported honestly to the model."""

    # "target": the model's target was wrong (a stale ref, a selector that matches nothing or several,
    # a hidden, disabled or covered element): the one kind that counts as the model's mistake
    kind: FailureKind
    message: str
    observation: Observation | None = None  # what the page looks like now, when it can still be seen
    browser_closed: bool = False  # the browser is gone (or was shut down to recover): launch again
    last_url: str | None = None  # where the browser was when it went away, for the relaunch hint
