"""Ctrl-C and SIGTERM on the command line: the work stops, what was done is kept, one line says so.

A long command (``run``, ``experiment``, ``replay``, ``demo``) runs its
coroutine through :func:`run_interruptibly`.  The first SIGINT or SIGTERM cancels that
coroutine: its ``finally`` blocks and ``except`` clauses run as for any
cancellation (the transcript gets its end record, the report asked for is
written, the browsers and MCP servers close), then :class:`KeyboardInterrupt`
reaches :func:`xmltools.cli.main`, which prints one line and exits with 130
(SIGINT) or 143 (SIGTERM), as a shell reports a process its signal ended.
Outside a coroutine the first signal raises :class:`KeyboardInterrupt` where
the command is, as Python does by default.  A second signal while the first
is being handled, or while the process exits after it (closing the browsers
that the host's pool keeps), ends the process at once, with one line and no
traceback.

What a command kept is said with :func:`kept` while it cleans up (``the
transcript run.jsonl, 4 turns``); the line lists it.

This is the command line's business only: the library installs no signal
handler, and a host that calls it gets Python's own ``KeyboardInterrupt``,
after asyncio's cancellation has closed what was open.  The standard
library's :func:`asyncio.run` cancels its task on the first SIGINT too, but it
leaves SIGTERM alone and turns the second SIGINT into a traceback in the
middle of the cleanup; hence this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TypeVar

from ..errors import EXIT_INTERRUPTED, EXIT_TERMINATED

__all__ = ["exit_status", "handling", "kept", "run_interruptibly", "said"]

T = TypeVar("T")


@dataclass
class _State:
    """The signal seen first (none yet), the coroutine that a signal cancels, and what was kept."""

    signum: int | None = None
    task: asyncio.Task[Any] | None = None
    notes: list[str] = field(default_factory=list)


_state = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """The first signal cancels the running command (or raises where it is); the second ends it all."""
    if _state.signum is not None:
        # straight to the file descriptor: the handler may run in the middle of a write to sys.stderr
        # (the run's status line), and a second write to that buffer there would raise
        os.write(2, f"\nxmltools: {_name(signum)} again; stopped at once\n".encode())
        os._exit(exit_status(signum))
    _state.signum = signum
    task = _state.task
    if task is not None and not task.done():
        task.cancel()
        task.get_loop().call_soon_threadsafe(lambda: None)  # wake the loop if it waits in select()
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """SIGINT and SIGTERM handled as this module says, for a command's duration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state.signum, _state.task, _state.notes = None, None, []
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in before:
        signal.signal(s, _on_signal)
    try:
        yield
    finally:
        if _state.signum is None:  # once interrupted, a second signal ends at once, in the exit too
            for s, handler in before.items():
                signal.signal(s, handler)


def run_interruptibly(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, cancelled by the first signal: ``KeyboardInterrupt`` once it has ended."""

    async def main() -> T:
        _state.task = asyncio.current_task()
        try:
            return await coro
        finally:
            _state.task = None

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if _state.signum is None:
            raise
        raise KeyboardInterrupt from None


def kept(note: str) -> None:
    """Say what the interrupted command kept (``the transcript run.jsonl, 4 turns``)."""
    _state.notes.append(note)


def said() -> str:
    """The one line for an interrupted command, without the ``xmltools:`` prefix."""
    signum = _state.signum or signal.SIGINT
    line = "interrupted by Ctrl-C" if signum == signal.SIGINT else f"stopped by {_name(signum)}"
    return f"{line}; kept {', '.join(_state.notes)}" if _state.notes else line


def exit_status(signum: int | None = None) -> int:
    """130 for SIGINT (or when no signal is known: a ``KeyboardInterrupt`` raised otherwise), 143 for
    SIGTERM."""
    signum = _state.signum if signum is None else signum
    return EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED


def _name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
