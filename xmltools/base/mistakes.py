"""The model's mistake, in one shape whichever layer finds it.

As h11 tells the remote side's protocol errors from the local side's, xmltools
tells the model's mistakes (rendered back to it; the session goes on; they
count towards the mistake limit) from the host's (exceptions, in
:mod:`xmltools.errors`).  Each mistake has a ``kind``, the layer that found it:

- ``call``: the call cannot be read as one (:class:`xmltools.tools.CallError`);
- ``protocol``: a move the state machine refuses (:class:`xmltools.protocol.machine.Violation`);
- ``target``: the element it named could not be acted on (:class:`WrongTarget`,
  from the browser's failure of kind ``target``);

and a ``code`` saying which mistake of its kind.  A browser failure that is
not the model's, a refusal by the host and a held call are no mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias

__all__ = ["Mistake", "MistakeKind", "WrongTarget"]

MistakeKind: TypeAlias = Literal["call", "protocol", "target"]


@dataclass(frozen=True)
class Mistake:
    """A mistake of the model: its kind (the layer that found it) and its code."""

    kind: ClassVar[MistakeKind] = "call"
    code: str


@dataclass(frozen=True)
class WrongTarget(Mistake):
    """The element the model named could not be acted on (the browser's failure of kind ``target``)."""

    kind: ClassVar[MistakeKind] = "target"
    message: str = ""
