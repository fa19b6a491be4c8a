"""One handler per browser action, collected into one table: ``HANDLERS[type(action)]``.

Importing this package fills the table from its modules, by action group:
:mod:`.pointer`, :mod:`.keyboard`, :mod:`.navigation`, :mod:`.reading`,
:mod:`.checks` and :mod:`.tabs`; :mod:`.base` holds the table, the :class:`Scope` a handler may
touch and the :class:`Act` it fills.  Must not import the session.
"""

from __future__ import annotations

from . import checks, keyboard, navigation, pointer, reading, tabs  # noqa: F401  (they fill the table)
from .base import HANDLERS, Act, Control, Flow, Handler, Scope, handles

__all__ = ["HANDLERS", "Act", "Control", "Flow", "Handler", "Scope", "handles"]
