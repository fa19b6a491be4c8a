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
    "Identity",
    "Observation",
    "Point",
    "Rematch",
    "Screenshot",
    "Viewport",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Viewport(_Frozen):
    """The size of the page's visible area, in CSS pixels (``900x600`` by default)."""

    width: int = Field(ge=1)
    height: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


class Point(_Frozen):
    """A point in the viewport, in CSS pixels: where the mouse is, or where a call acts."""

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
    """An image of the page: its bytes, its format (WebP, PNG or JPEG) and its size in pixels."""

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


class Identity(_Frozen):
    """Who an element is: recorded with each action on an element, so that a replay can find it again.

    ``locators`` are ranked as Playwright prefers them (test id, role and name,
    label, placeholder, text, then CSS), in the selector syntax the model
    writes, and each matched exactly one element when recorded.
    """

    described: str  # role and accessible name as the page computes them: 'button "Save"'
    role: str = ""
    name: str = ""
    tag: str = ""
    attributes: dict[str, str] = Field(default_factory=dict)  # id, name, data-testid, label, placeholder, ...
    text: str = ""  # the element's own text, short
    frame: str | None = None  # the selector of the iframe it is in, when the action named one
    box: tuple[float, float, float, float] | None = None  # x, y, width, height in the viewport
    locators: tuple[str, ...] = ()


class Rematch(_Frozen):
    """A replayed action's element, found again by its recorded identity because its ref, selector or
    point now reached another element (or none)."""

    expected: str  # the recorded element: 'button "Save"'
    reached: str  # what the ref, selector or point reaches now ('' for nothing)
    found_by: str  # the recorded locator that found it


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
    identity: Identity | None = None  # who the element acted on is (recorded while recording)
    rematch: Rematch | None = None  # on replay: the element was found again by its identity


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
    # on replay: the step's recorded element could not be found again by its identity (kind "target");
    # the one failure healing is for
    element_gone: bool = False
