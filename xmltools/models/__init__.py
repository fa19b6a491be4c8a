"""The model adapters every use calls: OpenAI-compatible and Anthropic clients, and their token counts.

- :mod:`.adapters`: the adapters, usage counting, and :func:`model_chunks`;
- :mod:`.sdkcall`: calling a sync SDK client without blocking the event loop.
"""

from __future__ import annotations

from .adapters import *  # noqa: F403
from .adapters import __all__ as __all__
