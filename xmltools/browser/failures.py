"""One table that classifies every failure the browser reports; the one way an action's error is reported.

Three classes, and what the controller does with each:

- ``TRANSIENT``: the document changed under us (a navigation replaced the
  execution context, the screenshot target was swapped, a frame detached).
  The controller settles on the new document and looks again, within the
  same bounds.
- ``PAGE``: the page's own problem (a navigation error, a wait that ran out).
  It is reported to the model honestly and the session is kept.
- ``LOST``: the browser disconnected, the context or page was closed by the
  browser, the renderer crashed.  Only these end the session.

Playwright reports all of them as one ``Error`` type whose message tells them
apart, so the table matches on message fragments.  An unknown message counts
as ``PAGE``, and the session's liveness is checked before the verdict is
final (see :func:`classify`): a dead browser makes any error ``LOST``.

The other side: an action that stops short for a reason the model is told as
it is (its target was wrong, the page would not load, a wait it asked for ran
out) raises an :class:`ActionError` that carries its :class:`Failure` kind,
and :func:`to_failure` is the one place that turns it into a Failure.  A wrong
target is a :class:`TargetError`; a replayed step whose recorded element
cannot be found again is an :class:`ElementGone`, and its Failure says so
(``element_gone``), for the healer to check.  Pure: must not import
Playwright, nor any other module of the browser.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from ..base.results import Failure, Observation

__all__ = [
    "ActionError",
    "ElementGone",
    "FailureClass",
    "NavigationError",
    "TargetError",
    "WaitedOut",
    "classify",
    "first_line",
    "to_failure",
]

ActionErrorKind = Literal["navigation", "timeout", "no_target", "target"]


class FailureClass(Enum):
    TRANSIENT = "transient"
    PAGE = "page"
    LOST = "lost"


# (fragment of the message, lower case) -> class; the first match wins
TABLE: tuple[tuple[str, FailureClass], ...] = (
    # Playwright's word for a closed page; with the browser alive, another tab may take over
    ("target page, context or browser has been closed", FailureClass.TRANSIENT),
    ("target crashed", FailureClass.LOST),
    ("page crashed", FailureClass.LOST),
    ("browser has been closed", FailureClass.LOST),
    ("browser has disconnected", FailureClass.LOST),
    ("connection closed", FailureClass.LOST),
    ("websocket error", FailureClass.LOST),
    ("execution context was destroyed", FailureClass.TRANSIENT),
    ("cannot find context with specified id", FailureClass.TRANSIENT),
    ("not attached to an active page", FailureClass.TRANSIENT),
    ("frame was detached", FailureClass.TRANSIENT),
    ("frame has been detached", FailureClass.TRANSIENT),
    ("navigating frame was detached", FailureClass.TRANSIENT),
    ("inspected target navigated or closed", FailureClass.TRANSIENT),
    ("session closed. most likely the page has been closed", FailureClass.TRANSIENT),
    ("target closed", FailureClass.TRANSIENT),
    ("timeout", FailureClass.PAGE),
    ("net::err_", FailureClass.PAGE),
)


def classify(message: str, *, alive: bool, page_open: bool) -> FailureClass:
    """The class of a failure with this message, given whether the session still lives.

    ``alive``: the browser is connected and no renderer crashed.  ``page_open``:
    the page the action ran on is still open.  A closed page in a live browser
    is transient (another tab takes over, or the session reports it closed).
    """
    if not alive:
        return FailureClass.LOST
    low = message.lower()
    for fragment, cls in TABLE:
        if fragment in low:
            if cls is FailureClass.LOST and page_open:
                # a message that speaks of a crash or a closed browser while everything answers
                return FailureClass.PAGE
            return cls
    return FailureClass.PAGE


def first_line(err: BaseException) -> str:
    """The first line of an error's message, without Playwright's ``Page.goto:``-style prefix."""
    text = str(err).strip()
    line = text.splitlines()[0] if text else type(err).__name__
    head, sep, rest = line.partition(": ")
    if sep and "." in head and " " not in head:
        return rest
    return line


class ActionError(Exception):
    """An action stopped short; the message is for the model, and the session goes on."""

    kind: ActionErrorKind = "target"
    element_gone = False  # a replayed step's recorded element could not be found again

    def __init__(self, message: str, *, kind: ActionErrorKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class TargetError(ActionError):
    """The model's target is wrong (``no_target``: a point on the bare page); the message is for the model."""


class ElementGone(TargetError):
    """On replay, the step's recorded element could not be found again by its identity."""

    element_gone = True


class NavigationError(ActionError):
    """A page could not be opened or loaded (refused by the policy, no answer, a network error)."""

    kind: ActionErrorKind = "navigation"


class WaitedOut(ActionError):
    """A wait the model asked for ran out: reported, not a mistake."""

    kind: ActionErrorKind = "timeout"


def to_failure(err: ActionError, observation: Observation | None) -> Failure:
    """The Failure an action's error is reported as, with the page as it now is (when it can be seen)."""
    return Failure(kind=err.kind, message=str(err), observation=observation, element_gone=err.element_gone)
