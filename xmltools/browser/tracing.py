"""Debugging artefacts of a session: a Playwright trace of each context, and its network requests.

When the configuration names a ``trace_dir``, each context this session opens
is traced with Playwright's own tracing (screenshots and DOM snapshots, for
``playwright show-trace``), and the trace is written as ``trace-N.zip`` there
when the context is given back.  Meanwhile the context's responses and failed
requests are kept, the newest :data:`MAX_REQUESTS`, for a report to list
under a failed step.  Must not import the session, the handlers or the observer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from pathlib import Path

from playwright.async_api import BrowserContext, Request, Response
from playwright.async_api import Error as PlaywrightError

from .collect import clip

__all__ = ["MAX_REQUESTS", "Tracer"]

log = logging.getLogger("xmltools.browser")

MAX_REQUESTS = 200  # requests kept between two looks
MAX_REQUEST_CHARS = 300


class Tracer:
    """The trace and the network log of one session's contexts (none when ``folder`` is None)."""

    def __init__(self, folder: Path | None, bound: float) -> None:
        self.folder = folder
        self.bound = bound
        self.files: list[Path] = []  # the traces written, in order
        self._ctx: BrowserContext | None = None
        self._requests: deque[str] = deque(maxlen=MAX_REQUESTS)

    @property
    def on(self) -> bool:
        return self.folder is not None

    async def start(self, ctx: BrowserContext) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        await ctx.tracing.start(screenshots=True, snapshots=True)
        ctx.on("response", self._response)
        ctx.on("requestfailed", self._failed)
        self._ctx = ctx

    async def stop(self) -> None:
        """Write the context's trace (bounded); a browser that went away leaves none, and a log line."""
        ctx, self._ctx = self._ctx, None
        if ctx is None or self.folder is None:
            return
        ctx.remove_listener("response", self._response)
        ctx.remove_listener("requestfailed", self._failed)
        path = self._free_name(self.folder)
        try:
            await asyncio.wait_for(ctx.tracing.stop(path=str(path)), self.bound)
        except (TimeoutError, PlaywrightError) as e:
            log.warning("the trace of a session could not be written to %s: %s", path, e)
            path.unlink(missing_ok=True)
            return
        self.files.append(path)

    def take_network(self) -> list[str]:
        """The requests seen since the last call: ``200 GET http://...``, ``failed GET ...: reason``."""
        out = list(self._requests)
        self._requests.clear()
        return out

    def _response(self, response: Response) -> None:
        line = f"{response.status} {response.request.method} {response.url}"
        self._requests.append(clip(line, MAX_REQUEST_CHARS))

    def _failed(self, request: Request) -> None:
        line = f"failed {request.method} {request.url}: {request.failure or 'no reason given'}"
        self._requests.append(clip(line, MAX_REQUEST_CHARS))

    @staticmethod
    def _free_name(folder: Path) -> Path:
        """The first ``trace-N.zip`` not taken (several sessions may share the folder); taken at once."""
        n = 1
        while True:
            path = folder / f"trace-{n}.zip"
            try:
                path.touch(exist_ok=False)
            except FileExistsError:
                n += 1
                continue
            return path
