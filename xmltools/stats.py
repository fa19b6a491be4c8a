"""Moved to :mod:`xmltools.lab.stats`; this path is kept, with a warning, for this release."""

from __future__ import annotations

import warnings

from .lab.stats import *  # noqa: F403
from .lab.stats import __all__ as __all__

warnings.warn(
    "xmltools.stats moved to xmltools.lab.stats; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
