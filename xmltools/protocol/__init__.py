"""The protocol: what the model may do, and when.

- :mod:`.machine`: the state machine as a table (states × events → a move or a
  violation), kept per session, with the mistake counter;
- :mod:`.approval`: the host's rules on each action's category (allow, deny, ask).

Pure: no I/O, and neither Playwright nor Jinja2 is imported.  The package's
names are the state machine's.
"""

from __future__ import annotations

from .machine import *  # noqa: F403
from .machine import __all__ as __all__
