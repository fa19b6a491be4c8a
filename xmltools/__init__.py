"""xmltools: interpret XML tool calls written by a language model."""

from __future__ import annotations

from .approval import Allow, ApprovalPolicy, Ask, Deny, PendingApproval
from .config import Config
from .errors import (
    ApprovalError,
    BrowserError,
    BrowserNotFoundError,
    ConfigError,
    MistakeLimitError,
    ModelError,
    RemoteBrowserError,
    StreamClosedError,
    TranscriptError,
    UsageError,
    XmltoolsError,
)
from .interpreter import AsyncInterpreter, Interpreter
from .loop import LoopResult, arun_loop, run_loop
from .models import AnthropicModel, OpenAIModel
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
from .protocol import Policy, State
from .render import Renderer
from .results import ConsoleEntry, Failure, Observation, Point, Screenshot, Viewport
from .tools import Tool, ToolRegistry
from .turn import Turn

__version__ = "0.1.0"

__all__ = [
    "BROWSER_ACTION",
    "Allow",
    "AnthropicModel",
    "ApprovalError",
    "ApprovalPolicy",
    "Ask",
    "AsyncInterpreter",
    "Block",
    "BrowserError",
    "BrowserNotFoundError",
    "Config",
    "ConfigError",
    "ConsoleEntry",
    "Deny",
    "Diagnostic",
    "Failure",
    "Interpreter",
    "Limits",
    "LoopResult",
    "MistakeLimitError",
    "ModelError",
    "Observation",
    "OpenAIModel",
    "ParamDelta",
    "PendingApproval",
    "Point",
    "Policy",
    "RemoteBrowserError",
    "Renderer",
    "Screenshot",
    "State",
    "StreamClosedError",
    "StreamParser",
    "TextBlock",
    "TextDelta",
    "Tool",
    "ToolCompleted",
    "ToolRegistry",
    "ToolStarted",
    "ToolSyntax",
    "ToolUse",
    "TranscriptError",
    "Turn",
    "UsageError",
    "Viewport",
    "Vocabulary",
    "XmltoolsError",
    "__version__",
    "arun_loop",
    "parse",
    "run_loop",
]
