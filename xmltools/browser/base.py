"""The seam between the interpreter and a browser: :class:`BrowserLike`, and :class:`StubBrowser` to stand in.

Everything the interpreter asks of a browser is :class:`BrowserLike`: run one
typed action (from :mod:`xmltools.actions`) and return an
:class:`~xmltools.base.results.Observation`, a :class:`~xmltools.base.results.Failure`,
or None once closed.  :class:`~xmltools.browser.session.BrowserSession` is the
real one.  :class:`StubBrowser` is a public test double, as httpx ships
``MockTransport``: every action succeeds with a bare observation, so the
parser, the protocol and the renderer can be exercised with no Chromium::

    interp = AsyncInterpreter(config, browser=StubBrowser())

Subclass it to script a page: override :meth:`StubBrowser.observation` for
what each action shows, or :meth:`StubBrowser.run` to fail on demand.  Must
not import Playwright (the pure interpreter path imports this module), nor
``config``, ``tools``, ``profiles``, ``render`` or ``interpreter``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..actions import Click, Hover, Launch, Resize, facts_of
from ..base.results import Failure, Observation, Point, Viewport

__all__ = ["BrowserLike", "StubBrowser"]


@runtime_checkable
class BrowserLike(Protocol):
    """What the interpreter needs of a browser (the real session, or a stand-in)."""

    viewport: Viewport

    @property
    def is_open(self) -> bool: ...

    async def run(self, action: object) -> Observation | Failure | None: ...

    async def close(self) -> Failure | None: ...

    async def shutdown(self) -> None: ...


class StubBrowser:
    """Every action succeeds with a bare observation: scoring measures the model's calls, not a page."""

    def __init__(self, viewport: Viewport | None = None) -> None:
        self.viewport = viewport or Viewport(width=900, height=600)
        self.open = False
        self.url = "about:blank"

    @property
    def is_open(self) -> bool:
        return self.open

    async def run(self, action: object) -> Observation | Failure | None:
        action = getattr(action, "inner", action)  # an action in a named tab (InTab)
        if facts_of(action).session == "close":
            self.open = False
            return None
        if isinstance(action, Launch):
            self.open = True
            self.url = action.url or "about:blank"
        if isinstance(action, Resize):
            self.viewport = action.size
        mouse: Point | None = action.coordinate if isinstance(action, (Click, Hover)) else None
        return self.observation(action, mouse)

    def observation(self, action: object, mouse: Point | None) -> Observation:
        """What the page shows after ``action`` (override to script it)."""
        return Observation(url=self.url, title="", viewport=self.viewport, mouse=mouse)

    async def close(self) -> Failure | None:
        self.open = False
        return None

    async def shutdown(self) -> None:
        self.open = False
