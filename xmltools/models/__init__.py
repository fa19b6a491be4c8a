"""The model adapters every use calls: OpenAI-compatible and Anthropic clients, and their token counts.

- :mod:`.openai` and :mod:`.anthropic`: one adapter per provider's SDK;
- :mod:`.usage`: token counts, reported or estimated;
- :mod:`.adapters`: any model called as chunks (:func:`model_chunks`), and the
  command line's maker (:func:`build_model`);
- :mod:`.sdkcall`: calling a sync SDK client without blocking the event loop.
"""

from __future__ import annotations

from .adapters import *  # noqa: F403
from .adapters import __all__ as __all__
