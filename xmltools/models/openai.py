"""An OpenAI-compatible chat model: streamed, cut after the first complete call, its usage counted.

Works with the ``openai`` SDK's sync and async clients (a sync one on a thread
of its own, :mod:`.sdkcall`).  A failed call is a :class:`~xmltools.errors.ModelError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from ..errors import ModelError
from .sdkcall import SdkCall
from .usage import Usage

__all__ = ["OpenAIModel"]


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
