"""An Anthropic Messages API model: streamed, cut after the first complete call, its usage counted.

The chat history is converted by :func:`anthropic_messages` (system text apart,
images after the text).  A failed call is a :class:`~xmltools.errors.ModelError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ..errors import ModelError, UsageError
from .sdkcall import SdkCall
from .usage import Usage

__all__ = ["AnthropicModel", "anthropic_messages"]


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
