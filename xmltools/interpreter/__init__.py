"""The interpreter: parser + protocol + controller + renderer, for one assistant message at a time.

:class:`AsyncInterpreter` is the core; :class:`Interpreter` is its synchronous
twin.  Each takes one assistant message, whole or as a stream, and returns a
:class:`~xmltools.record.turn.Turn`: the messages to append, the calls found, what
ran, what was refused and why, and the protocol state.

The browser is behind a seam (:class:`BrowserLike`): by default a real
browser session, started on the first ``launch``; tests and offline replays
pass their own (``browser=``, or ``browser_factory=`` for named sessions).

Named sessions (profiles with sessions, such as ``full``): a browser call may
name a ``<session>``; the protocol state is kept per session, each session has
a browser of its own (an isolated context of the same pool), at most
``max_sessions_per_interpreter`` are open at once, and other tools wait until
every session is closed.

Approval (:mod:`xmltools.protocol.approval`): after the protocol allows a call, its
category's rule (and the host's callback) decides whether it runs; a call the
host must answer is held in ``Turn.approval_required`` until ``approve()``
or ``deny()``.  Neither a denial nor a held call is the model's mistake.

The parts, one concern each: :mod:`.core` (a message's flow), :mod:`.calls`
(one call's path), :mod:`.sessions` (browser sessions by name),
:mod:`.secrecy` (secrets in and out), :mod:`.stream` and :mod:`.sync`.
"""

from __future__ import annotations

from ..browser.base import BrowserLike
from .core import AsyncInterpreter, default_registry
from .stream import TurnStream
from .sync import Interpreter, SyncTurnStream

__all__ = [
    "AsyncInterpreter",
    "BrowserLike",
    "Interpreter",
    "SyncTurnStream",
    "TurnStream",
    "default_registry",
]
