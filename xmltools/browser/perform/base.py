"""The action table ``HANDLERS[type(action)]``, the :class:`Scope` a handler may touch, and its :class:`Act`.

A handler is registered with ``@handles(Model, ...)`` for the typed action
models of :mod:`xmltools.actions` it runs, one handler per model.  It receives
the action as that model, a :class:`Scope`, and an :class:`Act` to fill: notes,
what it acted on, what it read, a screenshot of its own, a snapshot to take, a
moved mouse or a new viewport.  It formats nothing beyond those words; the
session settles the page, captures it once and builds the observation.  A
handler's ``flow`` says how the session runs it:

- ``page``: on the open page (most actions);
- ``open``: the session opens first (``launch``);
- ``session``: no page and no observation (``close``).

Must not import the session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from playwright.async_api import Page

from ...actions import ActionModel
from ...base.results import Failure, Point, Screenshot, Viewport
from ..bounds import Bounds
from ..guard import Guard
from ..observe import SnapshotRequest
from ..settings import BrowserConfig, Timeouts
from ..tabs import Tabs
from ..targets import Targets
from ..watch import Watch

__all__ = ["HANDLERS", "Act", "Control", "Flow", "Handler", "Scope", "handles"]

Flow = Literal["page", "open", "session"]


@dataclass
class Act:
    """What one action produced, for the session to report; handlers fill it, never format an observation."""

    notes: list[str] = field(default_factory=list)
    target: str | None = None  # what was acted on: role and name, e.g. 'link "Docs"'
    extract: str | None = None  # what was read from the page
    screenshot: Screenshot | None = None  # a screenshot of the action's own, shown instead of the page's
    snapshot: SnapshotRequest | None = None  # a snapshot to take with the observation
    navigates: bool = False  # the action is known to start a navigation: wait for it
    mouse: Point | None = None  # where the mouse now is, when the action moved it
    viewport: Viewport | None = None  # the new viewport, when the action resized it
    then: ActionModel | None = None  # an action to run next, whose result is the answer (a launch's size)
    ended: bool = False  # the session ended: there is nothing to observe
    closed: Failure | None = None  # what ending it reported


class Control(Protocol):
    """What a handler may do to the session itself."""

    async def end(self) -> Failure | None:
        """Close the session, as the host's close() does."""
        ...

    async def drop(self) -> None:
        """Forget the session and give its context back (its last tab closed)."""
        ...


@dataclass(frozen=True)
class Scope:
    """What a handler may touch: the session's parts, its settings, the viewport and the mouse."""

    settings: BrowserConfig
    bounds: Bounds
    watch: Watch
    tabs: Tabs
    guard: Guard
    targets: Targets
    viewport: Viewport
    mouse: Point | None
    control: Control

    @property
    def page(self) -> Page:
        """The current tab (Hung when none is open)."""
        return self.tabs.require_page()

    @property
    def timeouts(self) -> Timeouts:
        return self.settings.timeouts


A = TypeVar("A")
HandlerFn = Callable[[Any, Scope, Act], Awaitable[None]]


@dataclass(frozen=True)
class Handler:
    fn: HandlerFn
    flow: Flow = "page"

    @property
    def name(self) -> str:
        return self.fn.__name__


HANDLERS: dict[type[ActionModel], Handler] = {}


def handles(
    *models: type[ActionModel], flow: Flow = "page"
) -> Callable[[Callable[[A, Scope, Act], Awaitable[None]]], Callable[[A, Scope, Act], Awaitable[None]]]:
    """Register the decorated coroutine as the one handler of ``models``."""

    def register(
        fn: Callable[[A, Scope, Act], Awaitable[None]],
    ) -> Callable[[A, Scope, Act], Awaitable[None]]:
        for model in models:
            if model in HANDLERS:
                raise RuntimeError(f"{model.__name__} has a handler already: {HANDLERS[model].name}")
            HANDLERS[model] = Handler(fn, flow)
        return fn

    return register
