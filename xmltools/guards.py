"""Moved to :mod:`xmltools.loop.guards`; this path is kept, with a warning, for this release."""

from __future__ import annotations

import warnings

from .loop.guards import *  # noqa: F403
from .loop.guards import __all__ as __all__

warnings.warn(
    "xmltools.guards moved to xmltools.loop.guards; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
