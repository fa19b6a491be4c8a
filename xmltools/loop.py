"""The chat-completion loop: call the model, interpret its reply, append the results, repeat.

``model`` may be any of:

* a plain callable ``messages -> str`` (sync or async);
* a streaming callable ``messages -> iterator of str chunks`` (sync or async);
* an :class:`OpenAIModel` wrapping an OpenAI-compatible client (the ``openai``
  SDK, sync or async): it streams, cuts the stream after the first complete
  call, and collects token usage when the server reports it.

Only the newest ``image_budget`` screenshots stay in the history; older ones
become a short text placeholder (providers refuse more than about 20 images).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._loop import run_sync
from .approval import PendingApproval
from .config import Config
from .errors import ModelError, UsageError
from .interpreter import AsyncInterpreter, Turn
from .render import apply_image_budget

__all__ = [
    "LoopEvent",
    "LoopResult",
    "OpenAIModel",
    "StopReason",
    "Usage",
    "apply_image_budget",
    "arun_loop",
    "run_loop",
    "turn_line",
]

StopReason = Literal["no_tool", "completed", "mistake_limit", "max_turns", "approval_required"]
# the host's answer to a call held for approval: True runs it, False or a reason refuses it
Approver = Callable[[PendingApproval], "bool | str | Awaitable[bool | str]"]
Model = Callable[[list[dict[str, Any]]], Any]


@dataclass
class Usage:
    """Token counts: as the server reported them, or estimated where it could not.

    A stream cut after the first complete call never receives the server's
    usage report, so such calls are estimated (about four characters a token,
    and a flat 765 tokens an image) and counted in ``estimated_calls``.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # model calls
    estimated_calls: int = 0  # calls whose tokens are estimates

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt: int | None, completion: int | None) -> None:
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0

    def estimate(self, messages: list[dict[str, Any]], reply: str) -> None:
        chars = 0
        images = 0
        for m in messages:
            content = m.get("content")
            if isinstance(content, str):
                chars += len(content)
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "text":
                        chars += len(str(part.get("text", "")))
                    else:
                        images += 1
        self.add((chars + 3) // 4 + 765 * images, (len(reply) + 3) // 4)
        self.estimated_calls += 1


@dataclass
class LoopResult:
    stop_reason: StopReason
    messages: list[dict[str, Any]]
    turns: list[Turn] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class LoopEvent:
    kind: Literal["turn", "stop"]
    index: int
    turn: Turn | None = None
    stop_reason: StopReason | None = None


class OpenAIModel:
    """An OpenAI-compatible chat model, streamed and cut after the first complete call.

    ``OpenAIModel(openai.OpenAI(base_url=..., api_key=...), "model-name")``; an
    ``AsyncOpenAI`` client works too.  ``usage`` accumulates token counts.
    """

    def __init__(self, client: Any, model: str, *, stream: bool = True, **create_args: Any) -> None:
        self.client = client
        self.model = model
        self.stream = stream
        self.create_args = create_args
        self.usage = Usage()

    def _chunk_usage(self, chunk: Any) -> bool:
        u = getattr(chunk, "usage", None)
        if u is not None:
            self.usage.add(getattr(u, "prompt_tokens", 0), getattr(u, "completion_tokens", 0))
            return True
        return False

    async def complete(self, messages: list[dict[str, Any]]) -> AsyncGenerator[str, None]:
        self.usage.calls += 1
        args: dict[str, Any] = {"model": self.model, "messages": messages, **self.create_args}
        if self.stream:
            args["stream"] = True
            args.setdefault("stream_options", {"include_usage": True})
        try:
            res = self.client.chat.completions.create(**args)
            if inspect.isawaitable(res):
                res = await res
        except Exception as e:
            raise ModelError(f"the model endpoint failed: {type(e).__name__}: {e}") from e
        if not self.stream:
            content = (res.choices[0].message.content if res.choices else "") or ""
            if not self._chunk_usage(res):
                self.usage.estimate(messages, content)
            yield content
            return
        finished = False
        reported = False
        received: list[str] = []
        try:
            async for chunk in _as_async(res):
                reported = self._chunk_usage(chunk) or reported
                finished = finished or _finished(chunk)
                text = _delta(chunk)
                if text:
                    received.append(text)
                    yield text
        except GeneratorExit:
            raise
        except Exception as e:
            raise ModelError(f"the model's stream broke off: {type(e).__name__}: {e}") from e
        finally:
            if not reported:
                self.usage.estimate(messages, "".join(received))
            close = getattr(res, "close", None)
            if close is not None:
                out = close()
                if inspect.isawaitable(out):
                    await out
        if not finished:
            raise ModelError("the model's stream ended without a finish reason: the reply may be cut short")


async def _as_async(items: Any) -> AsyncGenerator[Any, None]:
    """Iterate a sync or an async iterable the same way."""
    if hasattr(items, "__aiter__"):
        async for x in items:
            yield x
    else:
        for x in items:
            yield x


def _finished(chunk: Any) -> bool:
    choices = getattr(chunk, "choices", None) or []
    return bool(choices) and getattr(choices[0], "finish_reason", None) is not None


def _delta(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    return getattr(delta, "content", None) or ""


async def _model_chunks(
    model: Model | OpenAIModel, messages: list[dict[str, Any]]
) -> AsyncGenerator[str, None]:
    """Call any supported model and yield its reply as chunks."""
    if isinstance(model, OpenAIModel):
        inner = model.complete(messages)
        try:
            async for c in inner:
                yield c
        finally:
            await inner.aclose()  # closes the HTTP stream now, not when garbage is collected
        return
    try:
        out = model(messages)
        if inspect.isawaitable(out):
            out = await out
    except Exception as e:
        raise ModelError(f"the model call failed: {type(e).__name__}: {e}") from e
    if isinstance(out, str):
        yield out
    elif hasattr(out, "__aiter__") or hasattr(out, "__iter__"):
        async for c in _as_async(out):
            yield str(c)
    else:
        raise UsageError(f"the model returned {type(out).__name__}; return str or an iterator of str chunks")


def turn_line(index: int, turn: Turn) -> str:
    """One line per turn, for progress on the command line."""
    head = f"turn {index + 1}:"
    if not turn.calls:
        return f"{head} no tool call"
    ran = turn.ran
    if ran is not None:
        what = f"{ran.tool} {ran.action}" if ran.action else ran.tool
        if ran.status == "ok":
            where = f" -> {ran.observation.url}" if ran.observation is not None else ""
            status = f"ok{where}"
        else:
            status = f"failed ({ran.failure.kind if ran.failure else 'error'})"
    else:
        first = turn.refused[0] if turn.refused else None
        what = first.tool if first else turn.calls[0].name
        if first is not None and first.action:
            what += f" {first.action}"
        code = (first.error.code if first and first.error else None) or (first.violation if first else None)
        status = f"refused ({code})"
    extra = f", {len(turn.not_run)} not run" if turn.not_run else ""
    cut = ", stream cut" if turn.cut else ""
    return f"{head} {what}: {status}{extra}{cut} [state {turn.state.value}, mistakes {turn.mistakes}]"


async def arun_loop(
    model: Model | OpenAIModel,
    messages: Sequence[dict[str, Any]],
    *,
    interpreter: AsyncInterpreter | None = None,
    config: Config | None = None,
    max_turns: int = 20,
    stop_on_no_tool: bool = True,
    on_event: Callable[[LoopEvent], Any] | None = None,
    on_approval: Approver | None = None,
) -> LoopResult:
    """Run the loop until the model stops using tools, completes, errs too often, or runs out of turns.

    A call the approval policy holds goes to ``on_approval``: True runs it,
    False or a reason refuses it, and the loop goes on.  Without it the loop
    stops (``"approval_required"``) with the held call in the last turn's
    ``approval_required`` and the assistant message last in the history; answer
    with ``interpreter.approve()`` or ``deny()``, append the returned turn's
    ``result``, and run the loop again on that history with the same interpreter
    (pass ``interpreter=``: the loop closes an interpreter of its own when it returns).

    The history passed in is copied; the result holds the full history.  If
    the model fails (an HTTP error, a dropped connection), :class:`ModelError`
    is raised with the history so far in its ``result`` attribute.
    """
    if max_turns < 1:
        raise UsageError("max_turns must be at least 1")
    own = interpreter is None
    interp = interpreter or AsyncInterpreter(config)
    history = [dict(m) for m in messages]
    result = LoopResult("max_turns", history)
    if isinstance(model, OpenAIModel):
        result.usage = model.usage

    async def emit(ev: LoopEvent) -> None:
        if on_event is not None:
            out = on_event(ev)
            if isinstance(out, Awaitable):
                await out

    try:
        for index in range(max_turns):
            interp.trim_history(history)
            stream = interp.stream()
            chunks = _model_chunks(model, [dict(m) for m in history])
            stopped = False
            try:
                async for chunk in chunks:
                    if stream.feed(chunk).call_complete:
                        stopped = True
                        break  # a model should not keep writing past its tool call
            except ModelError as e:
                e.result = result
                raise
            finally:
                await chunks.aclose()
            if not isinstance(model, OpenAIModel):
                result.usage.calls += 1
            turn = await stream.finish(stopped=stopped)
            held = turn.approval_required
            if held is not None and on_approval is not None:
                answer = on_approval(held)
                if isinstance(answer, Awaitable):
                    answer = await answer
                if answer is True:
                    turn = await interp.approve(held)
                else:
                    reason = (
                        answer
                        if isinstance(answer, str) and answer.strip()
                        else "the user did not approve it"
                    )
                    turn = await interp.deny(held, reason)
            result.turns.append(turn)
            history.append(turn.assistant)
            if turn.approval_required is not None:
                result.stop_reason = "approval_required"
                await emit(LoopEvent("turn", index, turn))
                break
            await emit(LoopEvent("turn", index, turn))
            if not turn.used_tool and not turn.too_large:  # a message too long to read is answered
                if stop_on_no_tool:
                    result.stop_reason = "no_tool"
                    break
                history.append(_note_message(interp, interp.renderer.no_tool()))
                continue
            if turn.result is not None:
                history.append(turn.result)
            if turn.completed:
                result.stop_reason = "completed"
                break
            if turn.mistake_limit_reached:
                result.stop_reason = "mistake_limit"
                break
        interp.trim_history(history)
        await emit(LoopEvent("stop", len(result.turns), stop_reason=result.stop_reason))
        return result
    finally:
        if own:
            await interp.aclose()


def _note_message(interp: AsyncInterpreter, part: Any) -> dict[str, Any]:
    from .render import to_message

    return to_message([part], interp.config.shape)


def run_loop(
    model: Model | OpenAIModel,
    messages: Sequence[dict[str, Any]],
    *,
    config: Config | None = None,
    max_turns: int = 20,
    stop_on_no_tool: bool = True,
    on_event: Callable[[LoopEvent], Any] | None = None,
    interpreter: AsyncInterpreter | None = None,
    on_approval: Approver | None = None,
) -> LoopResult:
    """The synchronous form of :func:`arun_loop` (works inside a running event loop too)."""
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
        )
    )
