"""Moved to :mod:`xmltools.lab.variants`; this path is kept, with a warning, for this release."""

from __future__ import annotations

import warnings

from .lab.variants import *  # noqa: F403
from .lab.variants import __all__ as __all__

warnings.warn(
    "xmltools.experiment moved to xmltools.lab.variants; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
