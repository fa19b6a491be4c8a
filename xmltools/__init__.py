"""xmltools: interpret XML tool calls written by a language model."""

from __future__ import annotations

from .errors import (
    BrowserError,
    BrowserNotFoundError,
    ConfigError,
    MistakeLimitError,
    ModelError,
    RemoteBrowserError,
    StreamClosedError,
    UsageError,
    XmltoolsError,
)
from .parser import (
    BROWSER_ACTION,
    Block,
    Diagnostic,
    Limits,
    ParamDelta,
    StreamParser,
    TextBlock,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolSyntax,
    ToolUse,
    Vocabulary,
    parse,
)

__version__ = "0.1.0"

__all__ = [
    "BROWSER_ACTION",
    "Block",
    "BrowserError",
    "BrowserNotFoundError",
    "ConfigError",
    "Diagnostic",
    "Limits",
    "MistakeLimitError",
    "ModelError",
    "ParamDelta",
    "RemoteBrowserError",
    "StreamClosedError",
    "StreamParser",
    "TextBlock",
    "TextDelta",
    "ToolCompleted",
    "ToolStarted",
    "ToolSyntax",
    "ToolUse",
    "UsageError",
    "Vocabulary",
    "XmltoolsError",
    "__version__",
    "parse",
]
