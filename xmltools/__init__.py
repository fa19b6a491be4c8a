"""xmltools: interpret XML tool calls written by a language model.

Everything a program needs is importable from here, and only from here is the
import path a promise (``__all__`` is exact, and a test keeps it so).  Names
are loaded on first use (PEP 562), so ``import xmltools`` is cheap and
``import xmltools.parser`` loads neither Jinja2 nor Playwright.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from . import _moved

__version__ = "0.1.0"
"""The version of this package."""

_moved.install()  # the old module paths of this release, each with a warning

# each public name, and the module that owns it
_OWNERS: dict[str, str] = {
    **dict.fromkeys(["Allow", "ApprovalPolicy", "Ask", "Deny", "PendingApproval"], "protocol.approval"),
    "Config": "config.settings",
    **dict.fromkeys(
        [
            "ApprovalError",
            "BrowserError",
            "BrowserNotFoundError",
            "ConfigError",
            "McpServerError",
            "MistakeLimitError",
            "ModelError",
            "RemoteBrowserError",
            "StreamClosedError",
            "TranscriptError",
            "UsageError",
            "XmltoolsError",
            "exit_code",
        ],
        "errors",
    ),
    **dict.fromkeys(["BrowserLike", "StubBrowser"], "browser.base"),
    "BrowserSession": "browser.session",
    **dict.fromkeys(["AsyncInterpreter", "Interpreter"], "interpreter"),
    **dict.fromkeys(
        ["LoopEvent", "LoopResult", "arun_loop", "loop_registry", "loop_system_prompt", "run_loop"], "loop"
    ),
    "AnthropicModel": "models.anthropic",
    "OpenAIModel": "models.openai",
    "Usage": "models.usage",
    **dict.fromkeys(
        [
            "BROWSER_ACTION",
            "Block",
            "Diagnostic",
            "Limits",
            "ParamDelta",
            "StreamParser",
            "TextBlock",
            "TextDelta",
            "ToolCompleted",
            "ToolStarted",
            "ToolSyntax",
            "ToolUse",
            "Vocabulary",
            "parse",
        ],
        "parser",
    ),
    **dict.fromkeys(["Policy", "State"], "protocol.machine"),
    "Renderer": "render.prompts",
    "Secret": "base.secrets",
    "TaskProgress": "base.progress",
    "serve_directory": "base.serve",
    **dict.fromkeys(["Expectation", "ExpectationFailed"], "base.expectations"),
    **dict.fromkeys(["Experiment", "load_experiment", "run_experiment"], "lab"),
    **dict.fromkeys(["ReplayResult", "replay"], "replaying.run"),
    **dict.fromkeys(
        ["ConsoleEntry", "Failure", "Observation", "Point", "Screenshot", "Viewport"], "base.results"
    ),
    **dict.fromkeys(["Tool", "ToolRegistry"], "tools"),
    **dict.fromkeys(
        ["ReplaySettings", "Transcript", "TranscriptWriter", "load_transcript"], "record.transcript"
    ),
    **dict.fromkeys(["IncompleteRecord", "TranscriptWarning"], "record.reader"),
    **dict.fromkeys(["CallOutcome", "Turn"], "record.turn"),
}

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
    "BrowserLike",
    "BrowserNotFoundError",
    "BrowserSession",
    "CallOutcome",
    "Config",
    "ConfigError",
    "ConsoleEntry",
    "Deny",
    "Diagnostic",
    "Expectation",
    "ExpectationFailed",
    "Experiment",
    "Failure",
    "IncompleteRecord",
    "Interpreter",
    "Limits",
    "LoopEvent",
    "LoopResult",
    "McpServerError",
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
    "ReplayResult",
    "ReplaySettings",
    "Screenshot",
    "Secret",
    "State",
    "StreamClosedError",
    "StreamParser",
    "StubBrowser",
    "TaskProgress",
    "TextBlock",
    "TextDelta",
    "Tool",
    "ToolCompleted",
    "ToolRegistry",
    "ToolStarted",
    "ToolSyntax",
    "ToolUse",
    "Transcript",
    "TranscriptError",
    "TranscriptWarning",
    "TranscriptWriter",
    "Turn",
    "Usage",
    "UsageError",
    "Viewport",
    "Vocabulary",
    "XmltoolsError",
    "__version__",
    "arun_loop",
    "exit_code",
    "load_experiment",
    "load_transcript",
    "loop_registry",
    "loop_system_prompt",
    "parse",
    "replay",
    "run_experiment",
    "run_loop",
    "serve_directory",
]


def __getattr__(name: str) -> _typing.Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module 'xmltools' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{owner}", __name__), name)
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_OWNERS})


if _typing.TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    from .base.expectations import Expectation, ExpectationFailed
    from .base.progress import TaskProgress
    from .base.results import ConsoleEntry, Failure, Observation, Point, Screenshot, Viewport
    from .base.secrets import Secret
    from .base.serve import serve_directory
    from .browser.base import BrowserLike, StubBrowser
    from .browser.session import BrowserSession
    from .config.settings import Config
    from .errors import (
        ApprovalError,
        BrowserError,
        BrowserNotFoundError,
        ConfigError,
        McpServerError,
        MistakeLimitError,
        ModelError,
        RemoteBrowserError,
        StreamClosedError,
        TranscriptError,
        UsageError,
        XmltoolsError,
        exit_code,
    )
    from .interpreter import AsyncInterpreter, Interpreter
    from .lab import Experiment, load_experiment, run_experiment
    from .loop import LoopEvent, LoopResult, arun_loop, loop_registry, loop_system_prompt, run_loop
    from .models.anthropic import AnthropicModel
    from .models.openai import OpenAIModel
    from .models.usage import Usage
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
    from .protocol.approval import Allow, ApprovalPolicy, Ask, Deny, PendingApproval
    from .protocol.machine import Policy, State
    from .record.reader import IncompleteRecord, TranscriptWarning
    from .record.transcript import ReplaySettings, Transcript, TranscriptWriter, load_transcript
    from .record.turn import CallOutcome, Turn
    from .render.prompts import Renderer
    from .replaying.run import ReplayResult, replay
    from .tools import Tool, ToolRegistry
