"""Model replies cached on disk, so that a rerun reproduces every trial with no call and at no cost.

The key is the model (its provider, name and options), the messages sent and
the trial (its cell: variant, model, task and index): the same trial of the
same prompt gets the same reply, while the trials of one cell stay independent
draws, and two cells whose messages read the same (the same instruction and
start page on two served folders, whose addresses the key leaves out; one API
model name on two servers) never share a reply.
Two things are left out
of the messages' key, because they change from run to run while the page does
not: the address a served folder got this time (written ``{base_url}``), and
the screenshots' bytes (a caret's blink changes them; the observation's text
around each image still says where the page was).  Each entry is a JSON file
holding the reply and the usage the server reported for it; a hit counts that
usage again (it is the trial's cost had it run), and the trial is marked cached.
A reply is kept with the served address written ``{base_url}`` too, and
given back with this run's address in its place.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..models.adapters import AnthropicModel, OpenAIModel, Usage, model_chunks

__all__ = ["CachedModel"]


class CachedModel:
    """A model for one trial: its replies from the cache when there, else from ``inner`` (and kept).

    ``limit`` bounds the requests in flight to the model (shared by the
    trials of one model).  ``usage`` is this trial's, whether the replies were
    fetched or cached; ``hits`` and ``calls`` count each.
    """

    def __init__(
        self,
        inner: OpenAIModel | AnthropicModel | Any,
        identity: dict[str, Any],
        trial: str,
        folder: Path | None,
        limit: asyncio.Semaphore | None = None,
        base_url: str | None = None,
    ) -> None:
        self.inner = inner
        self.identity = identity
        self.trial = trial
        self.folder = folder
        self.limit = limit
        self.base_url = base_url
        self.usage = Usage()
        self.hits = 0
        self.calls = 0

    def _key(self, messages: list[dict[str, Any]]) -> str:
        shown = [_keyed(m) for m in messages]
        data = json.dumps({"model": self.identity, "trial": self.trial, "messages": shown}, sort_keys=True)
        if self.base_url:
            data = data.replace(self.base_url, "{base_url}")
        return hashlib.sha256(data.encode()).hexdigest()

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        path = self.folder / f"{self._key(messages)}.json" if self.folder is not None else None
        if path is not None and path.is_file():
            entry = json.loads(path.read_text(encoding="utf-8"))
            self.hits += 1
            self._count(entry["usage"])
            return self._filled(str(entry["reply"]))
        before = _totals(self.inner)
        async with self.limit or contextlib.nullcontext():
            reply = await self._ask(messages)
        after = _totals(self.inner)
        usage = {
            "prompt": after[0] - before[0],
            "completion": after[1] - before[1],
            "estimated": after[2] > before[2],
        }
        if usage["prompt"] == 0 and usage["completion"] == 0:  # the server said nothing: estimate
            probe = Usage()
            probe.estimate(messages, reply)
            usage = {"prompt": probe.prompt_tokens, "completion": probe.completion_tokens, "estimated": True}
        self.calls += 1
        self._count(usage)
        if path is not None:
            kept = reply.replace(self.base_url, "{base_url}") if self.base_url else reply
            _write_atomically(path, json.dumps({"reply": kept, "usage": usage}))
        return reply

    def _filled(self, reply: str) -> str:
        return reply.replace("{base_url}", self.base_url) if self.base_url else reply

    async def _ask(self, messages: list[dict[str, Any]]) -> str:
        return "".join([c async for c in model_chunks(self.inner, messages)])

    def _count(self, usage: dict[str, Any]) -> None:
        self.usage.add(int(usage["prompt"]), int(usage["completion"]))
        self.usage.calls += 1
        if usage.get("estimated"):
            self.usage.estimated_calls += 1


def _keyed(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the key sees it: each image is its place, not its bytes."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = [
        {"type": part.get("type"), "image": True}
        if isinstance(part, dict) and part.get("type") in ("image_url", "image")
        else part
        for part in content
    ]
    return {**message, "content": parts}


def _totals(model: Any) -> tuple[int, int, int]:
    u = getattr(model, "usage", None)
    if not isinstance(u, Usage):
        return 0, 0, 0
    return u.prompt_tokens, u.completion_tokens, u.estimated_calls


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
