"""The main job on the bundled default: replay the demo transcript live and write a report.

It serves the bundled ``fixtures/site`` on 127.0.0.1, replays
``fixtures/transcripts/demo.jsonl`` (written the way a model writes) in a real
Chromium, prints the conversation as it goes, records the run with its
screenshots, and writes the HTML report.  No model, no API key, no network.
"""

from __future__ import annotations

import contextlib
import textwrap
from importlib import resources
from pathlib import Path

from ..base.serve import serve_directory
from ..errors import XmltoolsError
from ..loop import turn_line
from ..record.report import write_report
from ..record.transcript import load_transcript
from ..replaying.run import ReplayResult, ReplayStep, replay
from .interrupt import kept, run_interruptibly

__all__ = ["FIXTURES", "run_demo"]

FIXTURES = Path(str(resources.files("xmltools.fixtures")))


def _print_step(step: ReplayStep, total: int) -> None:
    print(f"\n[{step.index:2d}/{total}] assistant:")
    print(textwrap.indent(step.assistant.strip(), "    | ", lambda _: True))
    print("        " + turn_line(step.index - 1, step.turn).split(": ", 1)[1])
    for o in step.turn.outcomes:
        if o.status in ("invalid", "refused"):
            first = o.text.strip().splitlines()[0] if o.text.strip() else o.status
            print(f"        the model is told: {first}")


def run_demo(out_dir: str | Path = "out/demo") -> int:
    site = FIXTURES / "site"
    transcript = load_transcript(FIXTURES / "transcripts" / "demo.jsonl")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recording = out / "run.jsonl"
    total = len(transcript.assistant_messages)
    print(f"xmltools demo: {transcript.header.title}")
    print(textwrap.fill(transcript.header.description or "", 100))
    steps: list[ReplayStep] = []

    def show(step: ReplayStep) -> None:
        steps.append(step)
        _print_step(step, total)

    with serve_directory(site) as base:
        print(f"serving {site} at {base}; replaying {total} assistant messages in Chromium")
        try:
            result: ReplayResult = run_interruptibly(
                replay(
                    transcript,
                    base_url=base,
                    record=recording,
                    allow_failures=True,  # the run shows the mistakes the protocol catches
                    on_step=show,
                )
            )
        except KeyboardInterrupt:
            kept(f"{len(steps)} of {total} steps in {recording}")
            with contextlib.suppress(XmltoolsError, OSError):
                kept(f"the report {write_report(out / 'report.html', recording)}")
            raise
    report = write_report(out / "report.html", recording)
    failures = [
        o for s in result.steps for o in s.turn.outcomes if o.status == "failed" and o.failure is not None
    ]
    refused = sum(1 for s in result.steps for o in s.turn.outcomes if o.status in ("invalid", "refused"))
    done = any(s.turn.completed for s in result.steps)
    print(
        f"\n{len(result.steps)} steps; {refused} protocol mistake(s) caught; "
        f"{len(failures)} browser failure(s); task {'completed' if done else 'NOT completed'}"
    )
    print(f"recording: {recording.resolve()}")
    print(f"report: {report.resolve()}")
    if not result.ok:
        print(result.summary())
    # 1: the task was not completed, a step failed in the browser, or the replay drifted; a browser
    # that cannot be found or started is raised (BrowserError) before any step is shown
    return 0 if done and not failures and result.ok else 1
