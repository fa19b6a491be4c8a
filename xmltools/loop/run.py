"""The chat-completion loop: call the model, interpret its reply, append the results, repeat.

``model`` may be any of:

* a plain callable ``messages -> str`` (sync or async);
* a streaming callable ``messages -> iterator of str chunks`` (sync or async);
* an :class:`OpenAIModel` wrapping an OpenAI-compatible client (the ``openai``
  SDK, sync or async): it streams, cuts the stream after the first complete
  call, and collects token usage when the server reports it;
* an :class:`AnthropicModel` wrapping an ``anthropic`` SDK client (sync or
  async): the same, over Anthropic's Messages API.

When the loop makes its own interpreter, it registers the completion tool
(``attempt_completion``) beside the browser, so that a model can end the task
(stop reason ``"completed"``); :func:`loop_system_prompt` is the system prompt
that goes with it.

Only the newest ``image_budget`` screenshots stay in the history; older ones
become a short text placeholder (providers refuse more than about 20 images).

The host's log (the ``logging`` module; logger ``xmltools.loop``): one INFO
line a turn with its tokens (``~`` when estimated), the characters sent, its
cost when prices are given, and what became of its calls; WARNING lines for
nudges, budget warnings and the last turn; one INFO line when the loop stops.
Refused secrets are WARNING lines of ``xmltools.interpreter``.  Each turn's
usage is also :class:`TurnUsage`, on its ``"turn"`` event and in
``LoopResult.turn_usage``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..base.threadloop import LoopThread, run_sync
from ..config.settings import Config
from ..errors import ModelError, UsageError
from ..interpreter import AsyncInterpreter, Interpreter, TurnStream, default_registry
from ..models.adapters import AnyModel, Usage, model_chunks
from ..protocol.approval import Allow, Deny, PendingApproval
from ..record.turn import Turn, turn_summary
from ..tools import COMPLETION_TOOL, Tool, ToolRegistry, result_tool
from .guards import Budget, Nudge, Watchdog
from .history import TurnMark, compact
from .lines import MODEL_REPLY, Call, final_answer, turn_line, waiting_for

__all__ = [
    "LoopEvent",
    "LoopResult",
    "StopReason",
    "TurnUsage",
    "arun_loop",
    "loop_registry",
    "loop_system_prompt",
    "run_loop",
    "turn_line",
]

StopReason = Literal[
    "no_tool",
    "completed",
    "mistake_limit",
    "max_turns",
    "max_tokens",
    "max_cost",
    "max_seconds",
    "stuck",
    "approval_required",
]
# the host's answer to a held call: True or Allow() runs it; False, a reason or Deny(reason) refuses it
Approver = Callable[[PendingApproval], "bool | str | Allow | Deny | Awaitable[bool | str | Allow | Deny]"]

log = logging.getLogger("xmltools.loop")  # the name the loop guide gives hosts


@dataclass
class LoopResult:
    """How a loop ended: the stop reason, the whole history, every turn, the tokens used and their cost,
    the typed result (``result=``) and the nudges the model was given."""

    stop_reason: StopReason
    messages: list[dict[str, Any]]
    turns: list[Turn] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    output: Any = None  # the typed result (``result=``) of a valid answer: completed, or a budget's last turn
    nudges: list[Nudge] = field(default_factory=list)  # each time the model was told it goes in circles
    cost: float = 0.0  # dollars, from the usage and ``prices``
    turn_usage: list[TurnUsage] = field(default_factory=list)  # each turn's call, in order

    @property
    def answer(self) -> str | None:
        """The model's final answer: what it gave the completion tool (``<result>``) in the turn that
        ended the run, or its last reply's text when that used no tool; None when the loop stopped the
        run on a turn that did something else (a browser call, a mistake)."""
        return final_answer(self.turns[-1]) if self.turns else None


@dataclass(frozen=True)
class TurnUsage:
    """What one model call took: its tokens (``estimated`` when the model did not say), their cost
    at the loop's ``prices``, and the characters of text in the conversation sent to it (images
    count in the tokens, not here)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float
    sent_chars: int
    estimated: bool = False


@dataclass(frozen=True)
class LoopEvent:
    """What ``on_event`` is told: a turn interpreted, the model's checklist of its task (``progress``,
    right after its turn, in a dialect that has one: cline's task_progress), a nudge given to the
    model, a budget warning, or the loop's stop."""

    kind: Literal["turn", "progress", "nudge", "budget", "stop"]
    index: int
    turn: Turn | None = None
    stop_reason: StopReason | None = None
    note: str | None = None  # a nudge's or a budget's words to the model; a progress event's checklist
    usage: TurnUsage | None = None  # a turn's model call


def loop_registry(
    config: Config | None = None, completion_tool: Tool | None = COMPLETION_TOOL
) -> ToolRegistry:
    """The registry of the interpreter a loop makes: the config's browser actions and the completion tool."""
    registry = default_registry(config if config is not None else Config.load())
    if completion_tool is not None:
        registry.register(completion_tool)
    return registry


def loop_system_prompt(
    config: Config | None = None, *, completion_tool: Tool | None = COMPLETION_TOOL
) -> str:
    """The system prompt for a loop that makes its own interpreter: it describes the completion tool too."""
    cfg = config if config is not None else Config.load()
    interp = AsyncInterpreter(cfg, registry=loop_registry(cfg, completion_tool))
    if not interp.mcp:
        return interp.system_prompt()
    # MCP servers: started (in a loop of their own) to list their tools, then closed again
    loop = LoopThread("xmltools-prompt")
    try:
        return loop.call(_prompt_with_servers(interp))
    finally:
        loop.stop()


async def _prompt_with_servers(interp: AsyncInterpreter) -> str:
    try:
        await interp.start_servers()
        return interp.system_prompt()
    finally:
        await interp.aclose()


async def arun_loop(
    model: AnyModel,
    messages: Sequence[dict[str, Any]],
    *,
    interpreter: AsyncInterpreter | None = None,
    config: Config | None = None,
    max_turns: int = 20,
    stop_on_no_tool: bool = True,
    on_event: Callable[[LoopEvent], Any] | None = None,
    on_approval: Approver | None = None,
    completion_tool: Tool | None = COMPLETION_TOOL,
    result: type[BaseModel] | Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    prices: tuple[float, float] = (0.0, 0.0),
    max_seconds: float | None = None,
    on_wait: Callable[[str], Any] | None = None,
) -> LoopResult:
    """Run the loop until the model stops using tools, completes, errs too often, or runs out of turns.

    Without ``interpreter=`` the loop makes one from ``config`` and closes it
    when it returns; that interpreter offers ``completion_tool``
    (``attempt_completion`` by default: the model calls it to say the task is
    done, and the loop stops with ``"completed"``; the system prompt to go with
    it is :func:`loop_system_prompt`).  ``completion_tool=None`` leaves it out.
    An interpreter passed in keeps its own tools, and ``completion_tool`` is
    not used.

    A call the approval policy holds goes to ``on_approval``: True runs it,
    False or a reason refuses it, and the loop goes on.  Without it the loop
    stops (``"approval_required"``) with the held call in the last turn's
    ``approval_required`` and the assistant message last in the history; answer
    with ``interpreter.approve()`` or ``deny()``, append the returned turn's
    ``result``, and run the loop again on that history with the same interpreter
    (pass ``interpreter=``: the loop closes an interpreter of its own when it returns).

    ``result`` types the outcome: a pydantic model class (or a JSON Schema
    as a dict) that the completion tool's ``<result>`` must hold as JSON
    (:func:`~xmltools.tools.result_tool`; the system prompt shows the schema).
    A result that does not fit goes back to the model as its mistake, saying
    what is wrong; a valid one ends the loop, and ``LoopResult.output`` is the
    typed object (the parsed JSON for a schema).  With an interpreter passed
    in, register ``result_tool(...)`` in its registry yourself.

    Budgets (see :mod:`xmltools.loop.guards`): ``max_turns``, ``max_tokens``,
    ``max_cost`` (dollars, with ``prices`` per million input and output
    tokens) and ``max_seconds``.  At 80% of any, the model is told what is
    left (a ``"budget"`` event); when one is spent, the next turn is the last:
    the model is asked for its final answer, browser calls are refused, and
    the stop reason names the budget, even when the model answers (with the
    completion tool: ``output`` is then its typed result, as for
    ``"completed"``; or without a tool).  ``"completed"`` is kept for a model
    that ended the task before any budget did.  A model going round in
    circles is nudged (``LoopResult.nudges``, a ``"nudge"`` event), and
    stopped as ``"stuck"`` after the configured number of nudges
    (``stuck_repeat``, ``stuck_turns``, ``stuck_nudges``).

    ``on_wait`` is told what the loop waits for next (``"the model's reply"``,
    then the call about to run: ``"browser_action click"``); the turn's event
    ends the wait.  ``xmltools run`` shows it with a spinner.

    The history passed in is copied; the result holds the full history.  If
    the model fails (an HTTP error, a dropped connection), :class:`ModelError`
    is raised with the history so far in its ``result`` attribute.
    """
    interp, own = _interpreter(interpreter, config, max_turns, completion_tool, result)
    history = [dict(m) for m in messages]
    run = _Run(
        model,
        interp,
        history,
        LoopResult("max_turns", history),
        Budget(max_turns, max_tokens, max_cost, max_seconds, prices),
        result,
        stop_on_no_tool,
        on_event,
        on_approval,
        on_wait,
    )
    return await _run_handling_interpreter(run, own)


@dataclass
class _Run:
    """One run of the loop: what it was given, and the state it builds turn by turn (the history, the
    result, the budget and the watchdog, the last turn once a budget is spent, each turn's place)."""

    model: AnyModel
    interp: AsyncInterpreter
    history: list[dict[str, Any]]  # the whole history (the result's messages)
    out: LoopResult  # the result being built
    budget: Budget
    shape: type[BaseModel] | Mapping[str, Any] | None  # ``result=``
    stop_on_no_tool: bool
    on_event: Callable[[LoopEvent], Any] | None
    on_approval: Approver | None
    on_wait: Callable[[str], Any] | None
    priced: bool = field(init=False)  # prices are given: the turn's log line says its cost
    counts: bool = field(init=False)  # the model keeps its own token counts
    config: Config = field(init=False)  # the interpreter's
    dog: Watchdog = field(init=False)
    finishing: str | None = field(init=False)  # the name of the tool that ends the task, if any
    last: StopReason | None = None  # once a budget is spent: its name, the next turn being the last
    marks: list[TurnMark] = field(default_factory=list)  # each turn's place in the history, for what is sent

    def __post_init__(self) -> None:
        self.priced = self.budget.prices != (0.0, 0.0)
        self.counts = isinstance(getattr(self.model, "usage", None), Usage)
        if self.counts:
            self.out.usage = self.model.usage  # type: ignore[union-attr]
        c = self.config = self.interp.config
        self.dog = Watchdog(c.stuck_repeat, c.stuck_turns, c.stuck_nudges)
        self.finishing = next((t.name for t in self.interp.registry.host_tools if t.completes), None)

    async def emit(self, ev: LoopEvent) -> None:
        """Tell the host (``on_event``), waiting for it when it answers with an awaitable."""
        if self.on_event is not None:
            out = self.on_event(ev)
            if isinstance(out, Awaitable):
                await out

    async def waiting(self, what: str) -> None:
        """Tell the host what the loop waits for next (``on_wait``)."""
        if self.on_wait is not None:
            out = self.on_wait(what)
            if isinstance(out, Awaitable):
                await out

    def note(self, text: str) -> None:
        """Tell the model ``text`` (see :func:`_add_note`)."""
        _add_note(self.history, self.interp, text)


def _interpreter(
    interpreter: AsyncInterpreter | None,
    config: Config | None,
    max_turns: int,
    completion_tool: Tool | None,
    shape: type[BaseModel] | Mapping[str, Any] | None,
) -> tuple[AsyncInterpreter, bool]:
    """The run's interpreter, and whether the loop made it (and so closes it), the arguments checked.
    One the loop makes offers ``completion_tool``, its result typed by ``shape`` (``result=``)."""
    if shape is not None and completion_tool is not None:
        completion_tool = result_tool(shape, completion_tool.name)
    if max_turns < 1:
        raise UsageError("max_turns must be at least 1")
    if isinstance(interpreter, Interpreter):
        raise UsageError(
            "arun_loop needs an AsyncInterpreter, and this is the synchronous Interpreter, whose core runs"
            " on an event loop of its own: call run_loop with it, or pass an AsyncInterpreter here"
            " (its .core, if its browser and tools may be used from this event loop)"
        )
    own = interpreter is None
    if interpreter is None and config is None:
        config = Config.load()  # what an interpreter without a config reads; its registry follows it
    return interpreter or AsyncInterpreter(config, registry=loop_registry(config, completion_tool)), own


async def _run_handling_interpreter(run: _Run, own: bool) -> LoopResult:
    """The run, with the interpreter lent to it: its own turn lines DEBUG for the run, then the host's
    again (or closed, when the loop made it)."""
    interp = run.interp
    turn_level = interp.turn_log_level
    interp.turn_log_level = logging.DEBUG  # the loop's line a turn is the INFO one
    try:
        if interp.mcp and interp.config.mcp_start == "eager":
            await interp.start_servers()
        return await _run_turns(run)
    finally:
        interp.approval.closed_reason = None  # an interpreter passed in is the host's again
        interp.turn_log_level = turn_level
        if own:
            await interp.aclose()


async def _run_turns(run: _Run) -> LoopResult:
    """Turn after turn until one stops the run or the turns run out; then the run's end."""
    for index in range(run.budget.max_turns):
        if await _turn(run, index):
            break
    out = run.out
    out.cost = run.budget.cost(out.usage)
    run.interp.trim_history(run.history)
    log.info(
        "loop stopped: %s after %d turns%s",
        out.stop_reason,
        len(out.turns),
        f"; {out.usage.describe()}" if run.counts else "",
    )
    await run.emit(LoopEvent("stop", len(out.turns), stop_reason=out.stop_reason))
    return out


async def _emit_turn(run: _Run, index: int, turn: Turn, used: TurnUsage) -> None:
    """Tell the host of the turn, then of the checklist it gave (when its dialect has one)."""
    await run.emit(LoopEvent("turn", index, turn, usage=used))
    if turn.progress is not None:
        await run.emit(LoopEvent("progress", index, turn, note=turn.progress.text))


async def _turn(run: _Run, index: int) -> bool:
    """One turn: the model called, its reply interpreted (a held call answered), the turn recorded and
    told; then what it leads to.  True when it stops the run."""
    await _start_last_turn(run, index)
    turn, used = await _call_model(run, index)
    turn = await _answer_held(run, turn)
    run.out.turns.append(turn)
    at = len(run.history)
    run.history.append(turn.assistant)
    _log_turn(index, turn, used, run.priced)
    if turn.approval_required is not None:
        run.out.stop_reason = "approval_required"
        await _emit_turn(run, index, turn, used)
        return True
    await _emit_turn(run, index, turn, used)
    if not turn.used_tool and not turn.too_large:  # a message too long to read is answered
        return _no_tool(run)
    if turn.result is not None:
        run.history.append(turn.result)
    run.marks.append(_mark(index, turn, at, at + 1 if turn.result is not None else None))
    if _ends(run, turn):
        return True
    await _warn_budget(run, index)
    return await _watch(run, index, turn)


async def _start_last_turn(run: _Run, index: int) -> None:
    """When a budget is spent (before any turn but the first), the turn about to start is the last: the
    browser is closed and refused, and the model is asked for its final answer."""
    spent = run.budget.spent(index, run.out.usage)
    if spent is None or run.last is not None or index == 0:  # a one-turn run has no last turn
        return
    interp = run.interp
    run.last = spent
    interp.approval.closed_reason = f"the run's {spent.removeprefix('max_')} budget is spent"
    closed = await interp.close_sessions()  # so that the answer needs no close first
    log.warning("budget: %s is spent; the next turn is the last", spent)
    note = interp.renderer.budget([], last=spent, tool=run.finishing, closed=bool(closed))
    run.note(note.text)
    await run.emit(LoopEvent("budget", index, note=note.text))


async def _call_model(run: _Run, index: int) -> tuple[Turn, TurnUsage]:
    """Send the history as it is sent (trimmed, then compacted), interpret the reply as it streams in,
    and count what the call took."""
    interp, usage, c = run.interp, run.out.usage, run.config
    interp.trim_history(run.history)
    sent = compact(run.history, run.marks, keep=c.keep_observations, window=c.history_window)
    before = (usage.prompt_tokens, usage.completion_tokens, usage.estimated_calls)
    stream = interp.stream()
    await run.waiting(MODEL_REPLY)
    stopped, call = await _stream_reply(run, index, sent, stream)
    if call is not None:
        await run.waiting(waiting_for(call))
    turn = await stream.finish(stopped=stopped)
    if not run.counts:  # a callable says nothing of tokens: estimated
        usage.estimate(sent, str(turn.assistant.get("content", "")))
    used = _turn_usage(usage, before, run.budget, sent)
    run.out.turn_usage.append(used)
    return turn, used


async def _stream_reply(
    run: _Run, index: int, sent: list[dict[str, Any]], stream: TurnStream
) -> tuple[bool, Call | None]:
    """Feed the model's reply to ``stream``: whether it was cut after the first complete call, and that
    call.  A model that fails raises :class:`ModelError` with the result so far."""
    chunks = model_chunks(run.model, sent)
    stopped, call = False, None
    started = time.monotonic()
    try:
        async for chunk in chunks:
            if stream.feed(chunk).call_complete:
                stopped, call = True, stream.call
                break  # a model should not keep writing past its tool call
    except ModelError as e:
        e.result = run.out
        raise
    finally:
        await chunks.aclose()
    if not run.counts:
        run.out.usage.calls += 1
    log.debug(
        "model call %d: replied in %.0f ms%s",
        index + 1,
        (time.monotonic() - started) * 1000,
        " (stream cut after the first complete call)" if stopped else "",
    )
    return stopped, call


async def _answer_held(run: _Run, turn: Turn) -> Turn:
    """A call held for approval, put to ``on_approval`` when there is one: the turn that runs or refuses
    it replaces the one that held it."""
    held = turn.approval_required
    if held is None or run.on_approval is None:
        return turn
    answer = run.on_approval(held)
    if isinstance(answer, Awaitable):
        answer = await answer
    return await run.interp.answer(held, answer)


def _no_tool(run: _Run) -> bool:
    """A reply without a tool call ends the run (``stop_on_no_tool``, or a budget's last turn, whatever
    it says); else the model is told to use a tool.  True when it ends the run."""
    if run.stop_on_no_tool or run.last is not None:
        run.out.stop_reason = run.last or "no_tool"
        return True
    run.history.append(_note_message(run.interp, run.interp.renderer.no_tool()))
    return False


def _ends(run: _Run, turn: Turn) -> bool:
    """Whether a turn that used a tool ends the run, and why: the task completed (on a budget's last
    turn, an answer it asked for: the stop names the budget), the last turn, or too many mistakes."""
    out = run.out
    if turn.completed:
        out.stop_reason = run.last or "completed"
        out.output = _output(turn, run.shape)
        return True
    if run.last is not None:
        out.stop_reason = run.last
        return True
    if turn.mistake_limit_reached:
        out.stop_reason = "mistake_limit"
        return True
    return False


async def _warn_budget(run: _Run, index: int) -> None:
    """Tell the model what is left of a budget once 80% of it is used (once a budget)."""
    left = run.budget.warnings(index + 1, run.out.usage)
    if left:
        log.warning("budget: %s", "; ".join(left))
        warning = run.interp.renderer.budget(left).text
        run.note(warning)
        await run.emit(LoopEvent("budget", index, note=warning))


async def _watch(run: _Run, index: int, turn: Turn) -> bool:
    """Nudge a model going round in circles; True when it has been nudged enough: it is stuck."""
    nudge = run.dog.step(turn)
    if nudge is None:
        return False
    log.warning("nudged (%s): %s", nudge.kind, nudge.what)
    run.out.nudges.append(nudge)
    text = run.interp.renderer.stuck(nudge.kind, nudge.turns, nudge.what).text
    await run.emit(LoopEvent("nudge", index, turn, note=text))
    if run.dog.stuck:
        run.out.stop_reason = "stuck"
        return True
    run.note(text)
    return False


def _turn_usage(
    usage: Usage, before: tuple[int, int, int], budget: Budget, sent: list[dict[str, Any]]
) -> TurnUsage:
    delta = Usage(
        prompt_tokens=usage.prompt_tokens - before[0], completion_tokens=usage.completion_tokens - before[1]
    )
    chars = sum(_text_chars(m.get("content")) for m in sent)
    estimated = usage.estimated_calls > before[2]
    return TurnUsage(delta.prompt_tokens, delta.completion_tokens, budget.cost(delta), chars, estimated)


def _text_chars(content: Any) -> int:
    """The characters of text in a message's content (images not counted: their tokens are)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(_text_chars(part) for part in content)
    if isinstance(content, dict):
        text = content.get("text")
        return (len(text) if isinstance(text, str) else 0) + _text_chars(content.get("content"))
    return 0


def _log_turn(index: int, turn: Turn, used: TurnUsage, priced: bool) -> None:
    """The host's line a turn (INFO): tokens (``~`` when estimated), characters sent, cost, outcome."""
    if log.isEnabledFor(logging.INFO):
        about = "~" if used.estimated else ""
        cost = f", ${used.cost:.4f}" if priced else ""
        log.info(
            "turn %d: %s%d tokens in, %s%d out, %d characters sent%s; %s",
            index + 1,
            about,
            used.prompt_tokens,
            about,
            used.completion_tokens,
            used.sent_chars,
            cost,
            turn_summary(turn).removeprefix("turn: "),
        )


def _mark(index: int, turn: Turn, at: int, result_at: int | None) -> TurnMark:
    ran = turn.ran
    obs = ran.observation if ran is not None else None
    failed = None
    if ran is not None and ran.status != "ok":
        failed = ran.failure.message.splitlines()[0][:160] if ran.failure else ran.status
    what = (ran.action or ran.tool) if ran is not None else None
    return TurnMark(at, result_at, turn_line(index, turn), what, obs.url if obs else None, failed)


def _add_note(history: list[dict[str, Any]], interp: AsyncInterpreter, text: str) -> None:
    """Tell the model ``text``: in the last user message when the history ends with one (roles keep
    alternating), else as a user message of its own."""
    last = history[-1] if history else None
    if last is not None and last.get("role") == "user":
        content = last.get("content")
        if isinstance(content, str):
            history[-1] = {**last, "content": f"{content}\n\n{text}"}
            return
        if isinstance(content, list):
            history[-1] = {**last, "content": [*content, {"type": "text", "text": text}]}
            return
    history.append({"role": "user", "content": text})


def _note_message(interp: AsyncInterpreter, part: Any) -> dict[str, Any]:
    from ..render.messages import to_message

    return to_message([part], interp.config.shape)


def run_loop(
    model: AnyModel,
    messages: Sequence[dict[str, Any]],
    *,
    config: Config | None = None,
    max_turns: int = 20,
    stop_on_no_tool: bool = True,
    on_event: Callable[[LoopEvent], Any] | None = None,
    interpreter: AsyncInterpreter | Interpreter | None = None,
    on_approval: Approver | None = None,
    completion_tool: Tool | None = COMPLETION_TOOL,
    result: type[BaseModel] | Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    prices: tuple[float, float] = (0.0, 0.0),
    max_seconds: float | None = None,
    on_wait: Callable[[str], Any] | None = None,
) -> LoopResult:
    """The synchronous form of :func:`arun_loop` (works inside a running event loop too).

    ``interpreter`` may also be a synchronous :class:`~xmltools.Interpreter`:
    the loop then runs on that interpreter's own event loop thread, where its
    methods always run, and leaves it open.  The callbacks (``on_event``,
    ``on_approval``) and the model run on that thread too.
    """
    if isinstance(interpreter, Interpreter):
        it = interpreter
        if it._loop.loop.is_closed():
            raise UsageError("this interpreter is closed")
        coro = arun_loop(
            model,
            messages,
            interpreter=it.core,
            max_turns=max_turns,
            stop_on_no_tool=stop_on_no_tool,
            on_event=on_event,
            on_approval=on_approval,
            result=result,
            max_tokens=max_tokens,
            max_cost=max_cost,
            prices=prices,
            max_seconds=max_seconds,
            on_wait=on_wait,
        )
        try:
            return it._call(coro)
        except BaseException:
            coro.close()  # never started when the call itself failed (from the loop's own thread, say)
            raise
    return run_sync(
        arun_loop(
            model,
            messages,
            interpreter=interpreter,
            config=config,
            max_turns=max_turns,
            stop_on_no_tool=stop_on_no_tool,
            on_event=on_event,
            on_approval=on_approval,
            completion_tool=completion_tool,
            result=result,
            max_tokens=max_tokens,
            max_cost=max_cost,
            prices=prices,
            max_seconds=max_seconds,
            on_wait=on_wait,
        )
    )


def _output(turn: Turn, shape: type[BaseModel] | Mapping[str, Any] | None) -> Any:
    """The typed result of the completion call that ended the loop (None without ``result=``)."""
    if shape is None:
        return None
    for o in turn.outcomes:
        if o.status == "ok" and o.action is None and "result" in o.call.params:  # the host's tool
            value = json.loads(o.call.params["result"])
            return shape.model_validate(value) if isinstance(shape, type) else value
    return None
