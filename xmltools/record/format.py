"""The records of a transcript file: one pydantic model a line, each naming its ``role``.

The format's shape, apart from the writer and the loader in
:mod:`xmltools.record.transcript` that use it: the header, the plain messages, what
the model wrote (with the tokens its call took, when a loop said, and the
checklist of its task, in a dialect that has one), each call's
outcome, the host's assertions, the loop's notes to the model (nudges and
budget warnings), and how the run ended.  Pure data: it imports no browser,
renderer or interpreter.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..base.comparison import Region
from ..base.expectations import Expectation
from ..base.results import ConsoleEntry, Identity, Point, Rematch, Viewport
from ..protocol.machine import State

__all__ = [
    "FORMAT_VERSION",
    "AssistantRecord",
    "CallRef",
    "EndRecord",
    "ErrorRecord",
    "ExpectRecord",
    "Header",
    "McpPartRecord",
    "McpRecord",
    "MessageRecord",
    "NoteRecord",
    "ObservationRecord",
    "Record",
    "ReplaySettings",
    "ToolResultRecord",
    "Usage",
]

FORMAT_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReplaySettings(_Record):
    """How a transcript is compared when replayed (a header's ``replay``; a test or the command line
    may add to it).  Unset fields fall back to the configuration (``screenshot_threshold``,
    ``max_diff_pixel_ratio``, ``max_diff_pixels``)."""

    screenshot_threshold: float | None = Field(None, ge=0, le=1)
    max_diff_pixel_ratio: float | None = Field(None, ge=0, le=1)
    max_diff_pixels: int | None = Field(None, ge=0)
    mask: list[Region] = Field(default_factory=list)  # painted over in both screenshots
    mask_selectors: list[str] = Field(default_factory=list)  # CSS selectors, boxes found in the live page
    ignore_console: list[str] = Field(default_factory=list)  # regular expressions (re.search) of lines
    ignore_snapshot: list[str] = Field(default_factory=list)  # the same, for the ARIA snapshot's lines
    ignore_mcp: list[str] = Field(default_factory=list)  # the same, for the text an MCP server answers

    def merged(self, other: ReplaySettings | None) -> ReplaySettings:
        """These settings with ``other``'s on top: its values win, its lists are added.

        The two limits go together: when ``other`` sets either, it sets both (an
        unset one to none), so that ``max_diff_pixels=500`` on top of a ratio is
        500 pixels, not the smaller of the two.
        """
        if other is None:
            return self
        values = self.model_dump()
        if other.max_diff_pixels is not None or other.max_diff_pixel_ratio is not None:
            values["max_diff_pixels"] = values["max_diff_pixel_ratio"] = None
        for name in type(self).model_fields:
            theirs = getattr(other, name)
            if isinstance(theirs, list):
                values[name] = [*getattr(self, name), *theirs]
            elif theirs is not None:
                values[name] = theirs
        return ReplaySettings.model_validate(values)


class Header(_Record):
    xmltools_transcript: int = FORMAT_VERSION
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    config: dict[str, Any] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)  # template name -> hash
    variant: str | None = None
    tools: list[str] = Field(default_factory=list)  # standard host tools the run offered (attempt_completion)
    title: str | None = None
    description: str | None = None
    base_url: str | None = None  # what {base_url} stood for when this was recorded
    replay: ReplaySettings | None = None  # how this transcript is compared when replayed
    # the secret names the host gave when recording: a replay needs these, and only these
    # (None: not said, as in a hand-written scenario, where every {secret:NAME} is needed)
    secrets: list[str] | None = None


class MessageRecord(_Record):
    role: Literal["system", "user"]
    content: str


class Usage(_Record):
    """What the model call that wrote a message took (a loop's :class:`~xmltools.loop.TurnUsage`)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float = 0.0  # dollars, at the run's prices
    sent_chars: int = 0  # the characters of the conversation sent
    estimated: bool = False  # the model did not say: the tokens are estimates


class AssistantRecord(_Record):
    role: Literal["assistant"] = "assistant"
    content: str
    cut: bool = False  # the host stopped the model's stream after its first complete call
    duration: float | None = None  # seconds the interpreter took on this message (browser included)
    usage: Usage | None = None  # the call's tokens, when a loop recorded them
    # the model's checklist of its task, in a dialect that has one (cline's task_progress)
    progress: str | None = None


class NoteRecord(_Record):
    """What the loop told the model between its messages: a nudge (it goes in circles) or a budget
    warning.  Kept for the report; a replay has no model to tell."""

    role: Literal["note"] = "note"
    kind: Literal["nudge", "budget"]
    text: str


class EndRecord(_Record):
    """The last record of a run: how it ended."""

    role: Literal["end"] = "end"
    # a run: completed, stopped, failed or interrupted; a replay: passed, drifted, failed or interrupted
    outcome: str
    reason: str | None = None  # the stop reason (completed, no_tool, max_turns, mistake_limit, ...)
    detail: str | None = None  # one line more, such as the error that ended the run


class CallRef(_Record):
    name: str
    params: dict[str, str]
    index: int  # the call's position among the calls of its message


class ObservationRecord(_Record):
    url: str
    title: str
    console: list[ConsoleEntry] = Field(default_factory=list)
    screenshot: str | None = None  # a path relative to the transcript
    screenshot_size: tuple[int, int] | None = None
    viewport: Viewport
    mouse: Point | None = None
    notes: list[str] = Field(default_factory=list)
    target: str | None = None  # what the action acted on (role and name)
    snapshot: str | None = None  # the ARIA snapshot the model was shown, when it was shown one
    identity: Identity | None = None  # who the element acted on was (its role, name and locators)
    rematch: Rematch | None = None  # a replay found the element again by its identity


class ErrorRecord(_Record):
    kind: str  # a browser failure kind, a call error code, a protocol violation, or not_run
    message: str
    browser_closed: bool = False


class McpPartRecord(_Record):
    """One part of an MCP server's answer: a text, an image (a file beside the transcript), a
    resource's text or a link to one."""

    kind: Literal["text", "image", "resource", "link", "other"]
    text: str = ""
    uri: str | None = None
    mime_type: str | None = None
    image: str | None = None  # a path relative to the transcript
    image_size: tuple[int, int] | None = None


class McpRecord(_Record):
    """What an MCP server answered a call, or why it could not: enough to answer the call again
    offline, and to tell in a live replay whether a tool that only reads still answers the same."""

    server: str
    tool: str | None = None  # use_mcp_tool
    uri: str | None = None  # access_mcp_resource
    read_only: bool = False  # the tool's readOnlyHint (a resource is always read)
    destructive: bool | None = None  # the tool's destructiveHint, when the server gave one
    input_schema: dict[str, Any] | None = None  # the tool's input schema, as the server listed it
    parts: list[McpPartRecord] = Field(default_factory=list)
    is_error: bool = False
    structured: str | None = None  # the structured content, as compact JSON, when there was no text
    unavailable: str | None = None  # the server broke during the call: why
    # who answered: the server, or (in a live replay, for a tool that changes the world) the recording
    source: Literal["server", "recording"] = "server"


class ToolResultRecord(_Record):
    role: Literal["tool_result"] = "tool_result"
    call: CallRef
    status: Literal["ok", "failed", "invalid", "refused", "denied", "pending", "not_run"]
    action: str | None = None
    text: str = ""
    observation: ObservationRecord | None = None
    error: ErrorRecord | None = None
    state: State = State.IDLE
    mistakes: int = 0
    mcp: McpRecord | None = None  # an MCP call's answer


class ExpectRecord(_Record):
    """An assertion the host added while recording: it must hold after the step before it."""

    role: Literal["expect"] = "expect"
    expectation: Expectation


Record = MessageRecord | AssistantRecord | ToolResultRecord | ExpectRecord | NoteRecord | EndRecord
