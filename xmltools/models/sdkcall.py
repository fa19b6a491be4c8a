"""One call of a model SDK's client that never blocks the event loop, whichever kind of client it is.

An async client's ``create`` is awaited on the loop.  A sync client's request,
each read of its stream and its close run on a :class:`Worker`, a daemon thread
of the call's own, one step at a time.  Used by the model adapters
(:mod:`xmltools.models.adapters`); imports nothing of the package.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import queue
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any

__all__ = ["SdkCall", "Worker", "as_async", "fit_args", "is_async"]


class Worker:
    """A daemon thread that runs the blocking steps given to it, one at a time, for an event loop.

    A daemon, and not a pool's thread: a read the loop gave up on (a trial
    cancelled mid-stream) never holds the process, nor ``asyncio.run``, at exit.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None]
        self._jobs = queue.SimpleQueue()
        self._current: concurrent.futures.Future[Any] | None = None
        self._ended = False
        threading.Thread(target=self._main, name="xmltools-model", daemon=True).start()

    def _main(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, done = job
            if not done.set_running_or_notify_cancel():
                continue  # cancelled before it began
            try:
                done.set_result(fn())
            except BaseException as e:  # handed to whoever waits; nobody may
                done.set_exception(e)

    async def run(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the thread; the loop goes on meanwhile (once the thread has ended, here)."""
        if self._ended:
            return fn()
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._current = done
        self._jobs.put((fn, done))
        return await asyncio.wrap_future(done)

    @property
    def busy(self) -> bool:
        """A step is still running (its caller was cancelled while it waited on the server)."""
        return self._current is not None and not self._current.done()

    def later(self, fn: Callable[[], Any]) -> None:
        """``fn()`` after the steps given so far; nobody waits for it, and what it raises is dropped."""
        self._jobs.put((fn, concurrent.futures.Future()))

    def end(self) -> None:
        self._ended = True
        self._jobs.put(None)


class SdkCall:
    """One request of an SDK client, its stream and its close, without blocking the event loop.

    An async client's ``create`` is awaited on the loop.  A sync client's runs
    on a :class:`Worker`, and so does each read of its stream, one read at a
    time: a stream cut between two reads (after the first complete call) is
    closed at once, on that thread; one cut during a read (a cancelled trial)
    is closed as soon as that read returns.
    """

    def __init__(self, create: Callable[..., Any]) -> None:
        self.create = create
        self.worker = None if is_async(create) else Worker()

    async def start(self, args: dict[str, Any]) -> Any:
        fitted = fit_args(self.create, args)
        if self.worker is None:
            res = self.create(**fitted)
        else:
            made: list[Any] = []

            def create() -> Any:
                made.append(self.create(**fitted))
                return made[0]

            try:
                res = await self.worker.run(create)
            except asyncio.CancelledError:
                self.worker.later(lambda: _close_made(made))  # the request may still answer: close it
                raise
        if inspect.isawaitable(res):
            res = await res
        return res

    def items(self, res: Any) -> AsyncGenerator[Any, None]:
        """The stream's events: an async stream's as they come, a sync stream's read on the worker."""
        if self.worker is None or hasattr(res, "__aiter__"):
            return as_async(res)
        return self._read(res, self.worker)

    @staticmethod
    async def _read(res: Any, worker: Worker) -> AsyncGenerator[Any, None]:
        it = iter(res)
        end = object()
        while (item := await worker.run(lambda: next(it, end))) is not end:
            yield item

    async def close(self, res: Any) -> None:
        """Close the stream (its HTTP response), so that the server sees the cut now."""
        close = getattr(res, "close", None)
        if close is None:
            return
        if self.worker is None or is_async(close):
            out = close()
            if inspect.isawaitable(out):
                await out
        elif self.worker.busy:  # a read still waits on the server: close after it, without waiting
            self.worker.later(close)
        else:
            await self.worker.run(close)

    def end(self) -> None:
        if self.worker is not None:
            self.worker.end()


def is_async(fn: Callable[..., Any]) -> bool:
    """An ``async def`` (the SDKs wrap theirs in plain functions that keep ``__wrapped__``)."""
    return inspect.iscoroutinefunction(inspect.unwrap(fn))


def _close_made(made: list[Any]) -> None:
    close = getattr(made[0], "close", None) if made else None
    if close is not None and not is_async(close):
        close()


async def as_async(items: Any) -> AsyncGenerator[Any, None]:
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


def fit_args(create: Callable[..., Any], args: dict[str, Any]) -> dict[str, Any]:
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
