"""A recorder killed mid-run (SIGKILL, in a subprocess) loses nothing it wrote before."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from xmltools.record.transcript import (
    load_transcript,
)


def test_a_killed_recorder_loses_nothing_before_the_kill(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    code = textwrap.dedent(
        f"""
        import asyncio, sys, time
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from support.fakes import FakeBrowser
        from xmltools.interpreter import AsyncInterpreter
        from xmltools.record.transcript import TranscriptWriter

        async def main():
            it = AsyncInterpreter(browser=FakeBrowser())
            w = TranscriptWriter({str(out)!r})
            await it.handle("<browser_action><action>launch</action><url>http://a/</url></browser_action>")
            for i in range(1000):
                w.turn(await it.handle("<browser_action><action>scroll_down</action></browser_action>"))
                print(i, flush=True)
                time.sleep(0.01)

        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for _ in range(5):
        proc.stdout.readline()  # five turns were recorded
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    t = load_transcript(out)  # every line that was written is whole
    steps = list(t.steps())
    assert len(steps) >= 5
    assert all(len(results) == 1 and results[0].status == "ok" for _, results in steps[:5])
