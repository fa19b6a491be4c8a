"""Model adapters: any model the loop can call, and its token counts.

* :class:`OpenAIModel` wraps an OpenAI-compatible client (the ``openai`` SDK,
  sync or async): it streams, cuts the stream after the first complete call,
  and collects token usage when the server reports it;
* :class:`AnthropicModel` does the same over Anthropic's Messages API, with the
  history converted by :func:`anthropic_messages` (images after the text);
* :func:`model_chunks` calls any of these, or a plain callable
  ``messages -> str | iterator of str``, and yields the reply as chunks.

Neither adapter blocks the event loop, whichever client it is given: an async
client's calls are awaited, and a sync client's request and every read of its
stream run on a daemon thread of their own (:mod:`xmltools.models.sdkcall`), so many
trials of an experiment wait on their models at once.  :func:`build_model`
(what the command line uses) makes async clients.

A failed call is a :class:`~xmltools.errors.ModelError` (the host's problem,
exit code 3), never a message to the model.  Imports no browser and no templates.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError, UsageError
from .sdkcall import SdkCall, as_async

__all__ = [
    "ADAPTERS",
    "AnthropicModel",
    "AnyModel",
    "Model",
    "OpenAIModel",
    "Usage",
    "aclose_client",
    "anthropic_messages",
    "build_model",
    "model_chunks",
]

Model = Callable[[list[dict[str, Any]]], Any]


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


class OpenAIModel:
    """An OpenAI-compatible chat model, streamed and cut after the first complete call.

    ``OpenAIModel(openai.AsyncOpenAI(base_url=..., api_key=...), "model-name")``;
    a sync ``OpenAI`` client works too, its calls made on a thread of their own
    (the event loop never waits on them).  An async client belongs to the event
    loop it first ran on: drive it from one loop (``arun_loop``, or a single
    ``run_loop``).  ``create_args`` go to
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
        call = SdkCall(self.client.chat.completions.create)
        try:
            try:
                res = await call.start(args)
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
            events = call.items(res)
            try:
                async for chunk in events:
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
                with contextlib.suppress(Exception):  # what broke the stream was said above
                    await events.aclose()
                await call.close(res)
            if not finished:
                raise ModelError(
                    "the model's stream ended without a finish reason: the reply may be cut short"
                )
        finally:
            call.end()


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

    ``AnthropicModel(anthropic.AsyncAnthropic(), "model-name")``; a sync
    ``Anthropic`` client works too, its calls made on a thread of their own (the
    event loop never waits on them).  The conversation's system messages are sent as
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
        call = SdkCall(self.client.messages.create)
        try:
            try:
                res = await call.start(args)
            except Exception as e:
                raise ModelError(_anthropic_failure("the model endpoint failed", e)) from e
            if not self.stream:
                blocks = getattr(res, "content", None) or []
                text = "".join(
                    str(getattr(b, "text", "")) for b in blocks if getattr(b, "type", None) == "text"
                )
                u = getattr(res, "usage", None)
                if u is not None and getattr(u, "output_tokens", None) is not None:
                    self.usage.add(_input_tokens(u), u.output_tokens)
                else:
                    self.usage.estimate(messages, text)
                yield text
                return
            pieces = self._pieces(messages, call, res)
            try:
                async for piece in pieces:
                    yield piece
            finally:
                await pieces.aclose()  # its stream is closed before the worker ends
        finally:
            call.end()

    async def _pieces(
        self, messages: list[dict[str, Any]], call: SdkCall, res: Any
    ) -> AsyncGenerator[str, None]:
        """The text of a stream's events, counting the tokens they report."""
        prompt: int | None = None  # message_start reports the prompt's tokens
        completion: int | None = None  # message_delta reports the completion's (a running total)
        stopped = False
        received: list[str] = []
        events = call.items(res)
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
            with contextlib.suppress(Exception):
                await call.close(res)
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


ADAPTERS = (OpenAIModel, AnthropicModel)
AnyModel = Model | OpenAIModel | AnthropicModel


async def model_chunks(model: AnyModel, messages: list[dict[str, Any]]) -> AsyncGenerator[str, None]:
    """Call any supported model and yield its reply as chunks."""
    if isinstance(model, ADAPTERS):
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
        chunks = as_async(out)
        try:
            async for c in chunks:
                yield str(c)
        finally:
            await chunks.aclose()  # a cut stream closes the model's iterator now
    else:
        raise UsageError(f"the model returned {type(out).__name__}; return str or an iterator of str chunks")


def build_model(
    provider: str,
    name: str,
    *,
    base_url: str | None,
    api_key_env: str | None,
    retries: int = 2,
    stream: bool = True,
    options: dict[str, Any] | None = None,
    flag: str = "--base-url",
    client: Any = None,
) -> OpenAIModel | AnthropicModel:
    """The model to talk to: ``provider`` openai (any compatible server, the ``openai`` SDK) or
    anthropic (its SDK), over the SDK's async client (``AsyncOpenAI``, ``AsyncAnthropic``), so that
    the trials of an experiment wait on the model together.  Use it from one event loop: an async
    client's connections belong to the loop they were opened on (:func:`aclose_client` closes them).
    ``client`` is one this function made before, to share (its address, key and retries are kept).
    A missing key variable or address is a UsageError of one line, naming ``flag`` (the option that
    gives the address)."""
    import os

    options = dict(options or {})
    key: str | None = None
    if api_key_env:
        if api_key_env not in os.environ:
            raise UsageError(
                f"{flag.replace('base-url', 'api-key-env')} {api_key_env}: that variable is not set"
            )
        key = os.environ[api_key_env]
    if provider == "anthropic":
        try:
            import anthropic
        except ImportError as e:  # pragma: no cover - the extra is missing
            raise UsageError(
                "the anthropic provider needs the anthropic package: pip install 'xmltools[anthropic]'"
            ) from e
        # without a base URL and a key variable the SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
        client_args: dict[str, Any] = {"max_retries": retries}
        if base_url:
            client_args["base_url"] = base_url
        if key is not None:
            client_args["api_key"] = key
        max_tokens = options.pop("max_tokens", 4096)
        client = client or anthropic.AsyncAnthropic(**client_args)
        return AnthropicModel(client, name, stream=stream, max_tokens=max_tokens, **options)
    try:
        import openai
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise UsageError(
            "the openai provider needs the openai package: pip install 'xmltools[openai]'"
        ) from e
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")  # as the SDK itself reads it
    if not base_url:
        raise UsageError(
            f"{flag} (or OPENAI_BASE_URL) is needed with the openai provider,"
            " such as http://127.0.0.1:8000/v1"
        )
    if key is None:
        key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    client = client or openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=retries)
    return OpenAIModel(client, name, stream=stream, **options)


async def aclose_client(client: Any) -> None:
    """Close an SDK client, async or sync (its connections; a client of a closed loop says nothing)."""
    close = getattr(client, "close", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        out = close()
        if inspect.isawaitable(out):
            await out
