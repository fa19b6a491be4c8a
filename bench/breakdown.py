"""Where a step's time goes, measured from outside: each phase's own time, per step.

The bench wraps the functions that make up a step (the parser, the call's checks, the target,
the settling, the capture, the rendering, the record) with timers, for the bench's process only:
the package a user installs carries no timer of its own.  A phase's time is its own, the time
of the phases it calls taken out, so the phases add up to the step.  What is left of the
step, once every named phase is counted, is ``act``: the handler's own work, the click itself.

A phase's parent is the phase that was running when it began.  A phase that runs beside its
parent, in a task of its own (the capture taken while the page settles), is taken out of its
parent's time as well, so the phases still add up to the step: ``settle`` is then what the wait
added to the capture.  Use :func:`wrapped` around the steps to measure; read :meth:`Clock.take` after
each one.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: (phase, module, owner, attribute): owner is a class name, or "" for a module-level function
POINTS: list[tuple[str, str, str, str]] = [
    ("sync hop", "xmltools.interpreter.sync", "Interpreter", "handle"),
    ("interpreter", "xmltools.interpreter.core", "AsyncInterpreter", "handle"),
    ("parse", "xmltools.interpreter.core", "", "parse"),
    ("validate", "xmltools.interpreter.calls", "CallRunner", "check"),
    ("protocol", "xmltools.interpreter.calls", "CallRunner", "_protocol"),
    ("protocol", "xmltools.interpreter.calls", "CallRunner", "_approve_or_hold"),
    ("act", "xmltools.browser.session", "BrowserSession", "run"),
    ("target", "xmltools.browser.targets", "Targets", "at_point"),
    ("target", "xmltools.browser.targets", "Targets", "describe_point"),
    ("target", "xmltools.browser.targets", "Targets", "locate"),
    ("target", "xmltools.browser.targets", "Targets", "on_element"),
    ("target", "xmltools.browser.targets", "Targets", "name"),
    ("settle", "xmltools.browser.settle", "Settler", "settle"),
    ("capture", "xmltools.browser.observe", "Observer", "capture"),
    ("observe", "xmltools.browser.observe", "Observer", "observe"),
    ("render", "xmltools.render.prompts", "Renderer", "browser_result"),
    ("encode", "xmltools.interpreter.core", "", "to_message"),
    ("encode", "xmltools.interpreter.core", "", "apply_image_budget"),
    ("record", "xmltools.interpreter.core", "AsyncInterpreter", "_recorded"),
]


class _Phase:
    __slots__ = ("inner", "name", "parent", "started")

    def __init__(self, name: str, parent: _Phase | None) -> None:
        self.name, self.parent, self.started, self.inner = name, parent, time.perf_counter(), 0.0


class Clock:
    """The phases' own times since the last :meth:`take`, in seconds."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._running: list[_Phase] = []
        self._lock = threading.Lock()

    def enter(self, phase: str) -> _Phase:
        with self._lock:
            entry = _Phase(phase, self._running[-1] if self._running else None)
            self._running.append(entry)
            return entry

    def leave(self, entry: _Phase) -> None:
        with self._lock:
            self._running.remove(entry)
            spent = time.perf_counter() - entry.started
            self.seconds[entry.name] = self.seconds.get(entry.name, 0.0) + spent - entry.inner
            if entry.parent is not None:
                entry.parent.inner += spent

    def take(self) -> dict[str, float]:
        out, self.seconds = self.seconds, {}
        return out


def _timed(fn: Callable[..., Any], phase: str, clock: Clock) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            entry = clock.enter(phase)
            try:
                return await fn(*args, **kwargs)
            finally:
                clock.leave(entry)

        return run_async

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        entry = clock.enter(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            clock.leave(entry)

    return run


@contextmanager
def wrapped(clock: Clock) -> Iterator[list[str]]:
    """Every point that this tree has, timed into ``clock``; yields the points it lacks."""
    import importlib

    undo: list[tuple[Any, str, Any]] = []
    missing: list[str] = []
    try:
        for phase, module, owner, attr in POINTS:
            try:
                holder: Any = importlib.import_module(module)
                if owner:
                    holder = getattr(holder, owner)
                original = getattr(holder, attr)
            except (ImportError, AttributeError):
                missing.append(f"{module}.{owner + '.' if owner else ''}{attr}")
                continue
            undo.append((holder, attr, original))
            setattr(holder, attr, _timed(original, phase, clock))
        yield missing
    finally:
        for holder, attr, original in reversed(undo):
            setattr(holder, attr, original)
