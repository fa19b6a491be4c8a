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
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._loop import run_sync
from .approval import Allow, Deny, PendingApproval
from .config import Config
from .errors import ModelError, UsageError
from .interpreter import AsyncInterpreter, Interpreter, default_registry
from .render import apply_image_budget
from .tools import COMPLETION_TOOL, Tool, ToolRegistry
from .turn import Turn

__all__ = [
    "AnthropicModel",
    "LoopEvent",
    "LoopResult",
    "OpenAIModel",
    "StopReason",
    "Usage",
    "anthropic_messages",
    "apply_image_budget",
    "arun_loop",
    "loop_registry",
    "loop_system_prompt",
    "run_loop",
    "turn_line",
]

StopReason = Literal["no_tool", "completed", "mistake_limit", "max_turns", "approval_required"]
# the host's answer to a held call: True or Allow() runs it; False, a reason or Deny(reason) refuses it
Approver = Callable[[PendingApproval], "bool | str | Allow | Deny | Awaitable[bool | str | Allow | Deny]"]
Model = Callable[[list[dict[str, Any]]], Any]

log = logging.getLogger(__name__)


@dataclass
class Usage:
    """Token counts: as the server reported them, or estimated where it could not.

    A stream cut after the first complete call never receives the server's
    usage report, so such calls are estimated (about four characters a token,
    and a flat 765 tokens an image) and counted in ``estimated_calls``.  An
    Anthropic stream reports the prompt's tokens at its start: when it is cut,
    only the completion's tokens are estimated (the call still counts as
    estimated).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # model calls
    estimated_calls: int = 0  # calls whose tokens are estimates

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def describe(self) -> str:
        """The counts for a person: ``tokens: 1,234 in, 56 out``; estimates are marked ``~``.

        ``tokens: ~1,234 in, ~56 out (estimated for 2 of 3 calls)``: when any
        call was estimated, both totals are marked, since either may hold an
        estimate.
        """
        if not self.calls and not self.total_tokens:
            return "tokens: none (no model call)"
        mark = "~" if self.estimated_calls else ""
        text = f"tokens: {mark}{self.prompt_tokens:,} in, {mark}{self.completion_tokens:,} out"
        if self.estimated_calls:
            calls = f"{self.calls} call{'s' if self.calls != 1 else ''}"
            text += f" (estimated for {self.estimated_calls} of {calls})"
        return text

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
    ``AsyncOpenAI`` client works too.  ``create_args`` go to
    ``client.chat.completions.create``; those the SDK does not name (``top_k``
    for a vLLM server, say) go in its ``extra_body``, into the request.
    ``usage`` accumulates token counts.
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
            create = self.client.chat.completions.create
            res = create(**_fit_args(create, args))
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
    """Iterate a sync or an async iterable the same way; closing this closes the iterator under it."""
    if hasattr(items, "__aiter__"):
        ait = items.__aiter__()
        try:
            async for x in ait:
                yield x
        finally:
            aclose = getattr(ait, "aclose", None)
            if aclose is not None:
                await aclose()
    else:
        it = iter(items)
        try:
            for x in it:
                yield x
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


def _finished(chunk: Any) -> bool:
    choices = getattr(chunk, "choices", None) or []
    return bool(choices) and getattr(choices[0], "finish_reason", None) is not None


def _delta(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    return getattr(delta, "content", None) or ""


class AnthropicModel:
    """A model behind Anthropic's Messages API, streamed and cut after the first complete call.

    ``AnthropicModel(anthropic.Anthropic(), "model-name")``; an ``AsyncAnthropic``
    client works too.  The conversation's system messages are sent as
    ``system=``; the others are put in the Messages API's shape: OpenAI-style
    ``image_url`` parts become image blocks (so a history rendered in either
    shape works), and consecutive messages of one role are merged into one, as
    the API wants the roles to alternate.  ``create_args`` go to
    ``client.messages.create`` (``temperature=``, ``top_k=``, ...); those the
    SDK's ``create`` does not name go in its ``extra_body``, into the request.
    ``usage`` accumulates token counts.  Any failure of the SDK (an HTTP error
    such as 529 overloaded, a dropped connection, an ``error`` event in the
    stream) raises :class:`ModelError`.
    """

    def __init__(
        self, client: Any, model: str, *, stream: bool = True, max_tokens: int = 4096, **create_args: Any
    ) -> None:
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise UsageError(f"max_tokens must be a positive number, not {max_tokens!r}")
        self.client = client
        self.model = model
        self.stream = stream
        self.max_tokens = max_tokens
        self.create_args = create_args
        self.usage = Usage()

    def request(self, messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The arguments of ``client.messages.create`` for this conversation (without ``stream``)."""
        system, converted = anthropic_messages(messages)
        args: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": converted,
            **self.create_args,
        }
        if system:
            if "system" in self.create_args:
                raise UsageError(
                    "the conversation has a system message and AnthropicModel was given system= too;"
                    " give the system prompt one way"
                )
            args["system"] = system
        return args

    async def complete(self, messages: list[dict[str, Any]]) -> AsyncGenerator[str, None]:
        args = self.request(messages)
        self.usage.calls += 1
        if self.stream:
            args["stream"] = True
        try:
            create = self.client.messages.create
            res = create(**_fit_args(create, args))
            if inspect.isawaitable(res):
                res = await res
        except Exception as e:
            raise ModelError(_anthropic_failure("the model endpoint failed", e)) from e
        if not self.stream:
            blocks = getattr(res, "content", None) or []
            text = "".join(str(getattr(b, "text", "")) for b in blocks if getattr(b, "type", None) == "text")
            u = getattr(res, "usage", None)
            if u is not None and getattr(u, "output_tokens", None) is not None:
                self.usage.add(_input_tokens(u), u.output_tokens)
            else:
                self.usage.estimate(messages, text)
            yield text
            return
        prompt: int | None = None  # message_start reports the prompt's tokens
        completion: int | None = None  # message_delta reports the completion's (a running total)
        stopped = False
        received: list[str] = []
        events = _as_async(res)
        try:
            async for event in events:
                kind = getattr(event, "type", None)
                if kind == "content_block_delta":
                    delta = getattr(event, "delta", None)
                    if getattr(delta, "type", None) != "text_delta":
                        continue  # thinking, signature and tool input deltas are not the reply's text
                    piece = str(getattr(delta, "text", "") or "")
                    if piece:
                        received.append(piece)
                        yield piece
                elif kind == "message_start":
                    u = getattr(getattr(event, "message", None), "usage", None)
                    if u is not None:
                        prompt = _input_tokens(u)
                elif kind == "message_delta":
                    u = getattr(event, "usage", None)
                    if u is not None:
                        completion = getattr(u, "output_tokens", None)
                        if getattr(u, "input_tokens", None) is not None:
                            prompt = _input_tokens(u)
                elif kind == "message_stop":
                    stopped = True
        except GeneratorExit:
            raise
        except Exception as e:
            raise ModelError(_anthropic_failure("the model's stream broke off", e)) from e
        finally:
            self._count(messages, "".join(received), prompt, completion)
            with contextlib.suppress(Exception):  # a connection already broken may fail to close
                await events.aclose()
            close = getattr(res, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    out = close()
                    if inspect.isawaitable(out):
                        await out
        if not stopped:
            raise ModelError("the model's stream ended without message_stop: the reply may be cut short")

    def _count(
        self, messages: list[dict[str, Any]], reply: str, prompt: int | None, completion: int | None
    ) -> None:
        if prompt is not None and completion is not None:
            self.usage.add(prompt, completion)
        elif prompt is not None:  # cut before message_delta: the prompt is known, the reply estimated
            self.usage.add(prompt, (len(reply) + 3) // 4)
            self.usage.estimated_calls += 1
        else:
            self.usage.estimate(messages, reply)


def _fit_args(create: Callable[..., Any], args: dict[str, Any]) -> dict[str, Any]:
    """Move the options this SDK's ``create`` does not name into ``extra_body``, to be sent as they are.

    SDK versions differ in the request fields they name (recent ones have no
    ``temperature`` or ``top_k``); the API is the judge of what it accepts.
    """
    try:
        params = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return args
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return args
    unnamed = {k: v for k, v in args.items() if k not in params}
    if not unnamed or "extra_body" not in params:
        return args
    fitted = {k: v for k, v in args.items() if k in params}
    fitted["extra_body"] = {**unnamed, **(args.get("extra_body") or {})}
    return fitted


def _input_tokens(u: Any) -> int:
    """The prompt's tokens: Anthropic counts those read from or written to its cache apart."""
    return sum(
        int(getattr(u, k, None) or 0)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def _anthropic_failure(what: str, e: Exception) -> str:
    """Name what happened: the HTTP status and the API's error type and message when there are some."""
    status = getattr(e, "status_code", None)
    body = getattr(e, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if kind is not None or (isinstance(status, int) and status >= 400):
        # an error event in a stream that began well comes with the stream's status, 200
        head = f"HTTP {status}" if isinstance(status, int) and status >= 400 else "an error event"
        detail = ": ".join(str(x) for x in (kind, message) if x) or str(e)
        return f"{what}: {head} ({detail}) [{type(e).__name__}]"
    text = f"{what}: {type(e).__name__}: {e}"
    cause = e.__cause__ or e.__context__
    if cause is not None and str(cause) and str(cause) not in str(e):  # "Connection error." says little
        text += f" ({type(cause).__name__}: {cause})"
    return text


# the roles whose messages become the Messages API's system=
_SYSTEM_ROLES = ("system", "developer")


def anthropic_messages(messages: Sequence[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A chat history in the Messages API's shape: ``(system, messages)``.

    System messages (text, or text parts) are joined into ``system``.  The
    other messages' content becomes a list of blocks: text parts stay, blank
    text is dropped (the API refuses it), OpenAI ``image_url`` parts become
    ``image`` blocks (a ``data:`` URL as a base64 source, any other URL as a
    URL source), and blocks already in Anthropic's shape pass through.  A
    message left empty is dropped, and consecutive messages of one role are
    merged, each message's blocks in their order (so a result's screenshot
    stays after its text).  The history given is not changed.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        content = m.get("content")
        if role in _SYSTEM_ROLES:
            system += [b["text"] for b in _blocks(content, i) if b.get("type") == "text"]
            if any(b.get("type") != "text" for b in _blocks(content, i)):
                raise UsageError(f"message {i}: a system message may hold only text")
            continue
        if role not in ("user", "assistant"):
            raise UsageError(
                f"message {i}: role {role!r} has no place in the Messages API; use user, assistant or system"
            )
        blocks = _blocks(content, i)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return "\n\n".join(system), out


def _blocks(content: Any, index: int) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        raise UsageError(
            f"message {index}: content must be text or a list of parts, not {type(content).__name__}"
        )
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            part = {"type": "text", "text": part}
        if not isinstance(part, dict):
            raise UsageError(f"message {index}: a content part must be a dict, not {type(part).__name__}")
        kind = part.get("type")
        if kind == "text":
            if str(part.get("text") or "").strip():
                out.append(dict(part))
        elif kind == "image_url":
            out.append(_image_block(part.get("image_url"), index))
        else:  # image, document, tool_use, tool_result, ...: already in Anthropic's shape
            out.append(dict(part))
    return out


def _image_block(spec: Any, index: int) -> dict[str, Any]:
    """An OpenAI ``image_url`` part's URL as an Anthropic image block."""
    url = spec.get("url") if isinstance(spec, dict) else spec
    if not isinstance(url, str) or not url:
        raise UsageError(f"message {index}: an image_url part without a url")
    if not url.startswith("data:"):
        return {"type": "image", "source": {"type": "url", "url": url}}
    head, sep, data = url[5:].partition(",")
    media_type, _, encoding = head.partition(";")
    if not sep or encoding != "base64" or not media_type or not data:
        raise UsageError(f"message {index}: an image data URL must be data:<type>;base64,<data>")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


_ADAPTERS = (OpenAIModel, AnthropicModel)
AnyModel = Model | OpenAIModel | AnthropicModel


async def _model_chunks(model: AnyModel, messages: list[dict[str, Any]]) -> AsyncGenerator[str, None]:
    """Call any supported model and yield its reply as chunks."""
    if isinstance(model, _ADAPTERS):
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
        chunks = _as_async(out)
        try:
            async for c in chunks:
                yield str(c)
        finally:
            await chunks.aclose()  # a cut stream closes the model's iterator now
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
    return AsyncInterpreter(cfg, registry=loop_registry(cfg, completion_tool)).system_prompt()


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

    The history passed in is copied; the result holds the full history.  If
    the model fails (an HTTP error, a dropped connection), :class:`ModelError`
    is raised with the history so far in its ``result`` attribute.
    """
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
    interp = interpreter or AsyncInterpreter(config, registry=loop_registry(config, completion_tool))
    history = [dict(m) for m in messages]
    result = LoopResult("max_turns", history)
    if isinstance(model, _ADAPTERS):
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
            started = time.monotonic()
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
            if not isinstance(model, _ADAPTERS):
                result.usage.calls += 1
            log.debug(
                "model call %d: replied in %.0f ms%s",
                index + 1,
                (time.monotonic() - started) * 1000,
                " (stream cut after the first complete call)" if stopped else "",
            )
            turn = await stream.finish(stopped=stopped)
            held = turn.approval_required
            if held is not None and on_approval is not None:
                answer = on_approval(held)
                if isinstance(answer, Awaitable):
                    answer = await answer
                if answer is True or isinstance(answer, Allow):
                    turn = await interp.approve(held)
                else:
                    if isinstance(answer, Deny):
                        answer = answer.reason
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
        log.info(
            "loop stopped: %s after %d turns%s",
            result.stop_reason,
            len(result.turns),
            f"; {result.usage.describe()}" if isinstance(model, _ADAPTERS) else "",
        )
        await emit(LoopEvent("stop", len(result.turns), stop_reason=result.stop_reason))
        return result
    finally:
        if own:
            await interp.aclose()


def _note_message(interp: AsyncInterpreter, part: Any) -> dict[str, Any]:
    from .render import to_message

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
        )
    )
