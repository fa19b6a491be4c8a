"""Moved to :mod:`xmltools.loop.history`; this path is kept, with a warning, for this release."""

from __future__ import annotations

import warnings

from .loop.history import *  # noqa: F403
from .loop.history import __all__ as __all__

warnings.warn(
    "xmltools.history moved to xmltools.loop.history; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
