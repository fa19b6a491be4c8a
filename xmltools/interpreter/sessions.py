"""The interpreter's browser sessions by name: each one's protocol state and its browser.

A profile with sessions (``full``, ``forge``) lets a call name a ``<session>``;
every other call acts on ``default``.  This table owns, per name, the protocol
:class:`~xmltools.protocol.machine.Session` (state, idle clock; the default one also
counts the model's mistakes) and the browser behind the seam
(:class:`~xmltools.browser.base.BrowserLike`), made on first use by the host's
factory or as a real :class:`~xmltools.browser.session.BrowserSession`.

Imports the browser package only lazily, when a real browser is first needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..base.results import Viewport
from ..browser.base import BrowserLike
from ..config.settings import Config
from ..profiles import DEFAULT_SESSION
from ..protocol.machine import Session, State

if TYPE_CHECKING:
    from ..browser.pool import BrowserPool

__all__ = ["BrowserSessions"]


class BrowserSessions:
    """Protocol states and browsers, by session name; ``default`` always has a state."""

    def __init__(
        self,
        config: Config,
        *,
        browser: BrowserLike | None = None,
        factory: Callable[[str], BrowserLike] | None = None,
        pool: BrowserPool | None = None,
    ) -> None:
        self._config = config
        self._pool = pool  # None: the process-wide pool
        self._factory = factory
        self.states: dict[str, Session] = {DEFAULT_SESSION: self.new_state()}
        self.browsers: dict[str, BrowserLike] = {DEFAULT_SESSION: browser} if browser is not None else {}

    def new_state(self) -> Session:
        c = self._config
        return Session(policy=c.policy, mistake_limit=c.mistake_limit, idle_timeout=c.idle_timeout)

    def state_of(self, name: str) -> Session:
        """The protocol state of ``name``, made idle when the session was never used."""
        return self.states.setdefault(name, self.new_state())

    @property
    def default(self) -> Session:
        return self.states[DEFAULT_SESSION]

    @property
    def open(self) -> tuple[str, ...]:
        """The names of the sessions open now, in the order they were opened."""
        return tuple(n for n, s in self.states.items() if s.state is State.ACTIVE)

    @property
    def state(self) -> State:
        """ACTIVE while any session is open."""
        return State.ACTIVE if self.open else State.IDLE

    def viewport_of(self, name: str) -> Viewport:
        browser = self.browsers.get(name)
        return browser.viewport if browser is not None else self._config.viewport

    def browser(self, name: str = DEFAULT_SESSION) -> BrowserLike:
        """The session's browser, made now when it has none yet."""
        made = self.browsers.get(name)
        if made is None:
            made = self._factory(name) if self._factory is not None else self._real_browser(name)
            self.browsers[name] = made
        return made

    def _real_browser(self, name: str) -> BrowserLike:
        from ..browser.session import BrowserSession

        settings = self._config.browser_settings()
        if settings.profile_dir is not None and name != DEFAULT_SESSION:
            # each named session keeps its own user data, beside the default one's
            settings = dataclasses.replace(
                settings, profile_dir=settings.profile_dir / "xmltools-sessions" / name
            )
        return BrowserSession(settings, pool=self._pool)

    def idle_expired(self, now: float) -> Iterator[str]:
        """The sessions whose idle time ran out (each is yielded once; close it, then lose it)."""
        for name, s in list(self.states.items()):
            if s.idle_expired(now):
                yield name

    async def close(self, name: str) -> None:
        """Close the session's browser (when it has one) and move its state to IDLE."""
        browser = self.browsers.get(name)
        if browser is not None:
            await browser.close()
        self.states[name].browser_lost()

    async def shutdown(self) -> None:
        """Release every browser and forget every open session."""
        for browser in list(self.browsers.values()):
            await browser.shutdown()
        for s in self.states.values():
            s.browser_lost()
