"""What a command waits for, on a terminal: one status line at the bottom of stderr, its lines above.

``xmltools run`` says each turn on stderr; between two turns it waits, for the
model's reply or for the browser's action.  On a terminal (stderr is a TTY)
:class:`Status` shows that wait as one line with a spinner and the seconds
spent (``| turn 3: waiting for the model's reply (2.4 s)``), and writes the
command's own lines above it.  Anywhere else (a file, a pipe, a test's
capture) it writes those lines alone: no spinner, no control characters.
The line is drawn by tqdm, which clears it and draws it again around each line
written.  Imports nothing of the package.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["Status"]

FRAMES = "|/-\\"  # ASCII: any terminal's encoding can show them
TICK = 0.125  # seconds between two frames


class Status:
    """A status line on ``stream`` (stderr) while a command waits, when it is a terminal (``live``)."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = _is_terminal(self.stream) if live is None else live
        self._bar: tqdm[Any] | None = None
        self._what: str | None = None
        self._since = 0.0
        self._frame = 0

    def __enter__(self) -> Status:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def say(self, line: str) -> None:
        """Write a line of the command's own (above the status line, on a terminal)."""
        bar = self._bar
        if bar is not None:
            bar.clear()
        print(line, file=self.stream, flush=True)
        if bar is not None and self._what is not None:
            self._draw()

    def wait(self, what: str) -> None:
        """Show that the command waits for ``what`` now (on a terminal only)."""
        if not self.live:
            return
        self._what, self._since = what, time.monotonic()
        self._draw()

    def done(self) -> None:
        """The wait is over: the status line is cleared until the next one."""
        self._what = None
        if self._bar is not None:
            self._bar.clear()

    def tick(self) -> None:
        """The next frame of the spinner, and the seconds spent so far."""
        if self._what is not None:
            self._frame += 1
            self._draw()

    async def ticking(self) -> None:
        """Tick until cancelled (a task of the command's event loop, on a terminal)."""
        while True:
            await asyncio.sleep(TICK)
            self.tick()

    def close(self) -> None:
        """Clear the status line for good."""
        self._what = None
        bar, self._bar = self._bar, None
        if bar is not None:
            bar.close()

    def _draw(self) -> None:
        # the terminal's size now (80x24 when it says none, as a bare pseudo-terminal may; tqdm would
        # then cut the line to nothing)
        size = shutil.get_terminal_size()
        bar = self._bar
        if bar is None:
            from tqdm import tqdm

            bar = self._bar = tqdm(
                total=None, file=self.stream, bar_format="{desc}", leave=False, nrows=size.lines
            )
        seconds = time.monotonic() - self._since
        text = f"{FRAMES[self._frame % len(FRAMES)]} {self._what} ({seconds:.1f} s)"
        width = bar.ncols = size.columns - 1
        bar.set_description_str(text if len(text) <= width else text[: max(0, width - 3)] + "...")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False
