"""Any model the loop can call: the adapters, how a host's model is called, and the command line's maker.

* :class:`OpenAIModel` (:mod:`.openai`) wraps an OpenAI-compatible client (the ``openai`` SDK,
  sync or async): it streams, cuts the stream after the first complete call,
  and collects token usage when the server reports it;
* :class:`AnthropicModel` (:mod:`.anthropic`) does the same over Anthropic's Messages API, with the
  history converted by :func:`anthropic_messages` (images after the text);
* :func:`model_chunks` calls any of these, or a plain callable
  ``messages -> str | iterator of str``, and yields the reply as chunks.

Neither adapter blocks the event loop, whichever client it is given: an async
client's calls are awaited, and a sync client's request and every read of its
stream run on a daemon thread of their own (:mod:`xmltools.models.sdkcall`), so many
trials of an experiment wait on their models at once.  :func:`build_model`
(what the command line uses) makes async clients.

A failed call is a :class:`~xmltools.errors.ModelError` (the host's problem,
exit code 3), never a message to the model.  Token counts are :class:`Usage`
(:mod:`.usage`).  Imports no browser and no templates.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncGenerator, Callable
from typing import Any

from ..errors import ModelError, UsageError
from .anthropic import AnthropicModel, anthropic_messages
from .openai import OpenAIModel
from .sdkcall import as_async
from .usage import Usage

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
    key_flag: str | None = None,
    client: Any = None,
) -> OpenAIModel | AnthropicModel:
    """The model to talk to: ``provider`` openai (any compatible server, the ``openai`` SDK) or
    anthropic (its SDK), over the SDK's async client (``AsyncOpenAI``, ``AsyncAnthropic``), so that
    the trials of an experiment wait on the model together.  Use it from one event loop: an async
    client's connections belong to the loop they were opened on (:func:`aclose_client` closes them).
    ``client`` is one this function made before, to share (its address, key and retries are kept).
    A missing key variable or address is a UsageError of one line naming where it was expected:
    ``flag``, the option (or the file's field) that gives the address, and ``key_flag``, the one that
    names the key's variable (by default ``flag``'s ``--api-key-env`` twin)."""
    import os

    options = dict(options or {})
    key: str | None = None
    if api_key_env:
        if api_key_env not in os.environ:
            where = key_flag or flag.replace("base-url", "api-key-env")
            raise UsageError(f"{where}: {api_key_env} is not set")
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
