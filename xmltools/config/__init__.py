"""The configuration: one model with documented defaults, its layered loading, and its explanation.

- :mod:`.settings`: :class:`Config` and the frozen view it gives each subsystem;
- :mod:`.explain`: where each value came from (``xmltools config``).

Imports neither Playwright nor Jinja2.
"""

from __future__ import annotations

from .settings import *  # noqa: F403
from .settings import __all__ as __all__
