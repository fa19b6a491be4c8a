"""The run's status line on a real pseudo-terminal, one that says it has no size (0x0, as a terminal
opened by a program without one is): the spinner is drawn all the same, then cleared."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

SCRIPT = """
import time
from xmltools.cli.status import Status
with Status() as status:
    status.wait("turn 1: waiting for the model's reply")
    for _ in range(3):
        time.sleep(0.05)
        status.tick()
    status.done()
    status.say("turn 1: no tool call")
"""


def test_the_spinner_is_drawn_on_a_terminal_that_says_no_size() -> None:
    master, slave = pty.openpty()  # a new pseudo-terminal: 0 rows, 0 columns
    try:
        p = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=slave,
            env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
            timeout=60,
        )
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert p.returncode == 0
    text = shown.decode()
    assert "| turn 1: waiting for the model's reply (" in text
    assert "/ turn 1: waiting for the model's reply (" in text  # the next frame
    assert text.rstrip().endswith("turn 1: no tool call")
