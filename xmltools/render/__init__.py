"""Rendering: what the model reads, made from the Jinja2 templates of ``prompts/``.

- :mod:`.prompts`: the template environment, the system prompt, and each result,
  error and note as text;
- :mod:`.messages`: the rendered pieces of a user turn, as each provider's message;
- :mod:`.images`: the history's image budget;
- :mod:`.html`: the HTML reports.

The only package that imports Jinja2.
"""

from __future__ import annotations

from .html import *  # noqa: F403
from .html import __all__ as _html
from .images import *  # noqa: F403
from .images import __all__ as _images
from .messages import *  # noqa: F403
from .messages import __all__ as _messages
from .prompts import *  # noqa: F403
from .prompts import __all__ as _prompts

__all__ = [*_prompts, *_messages, *_images, *_html]
