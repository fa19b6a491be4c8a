"""What a replay found, as data: each step with its drifts, failures and checks, and the whole.

The replay (:mod:`xmltools.replaying`) makes these, and the report of a
transcript shows them, so they live here, below both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..base.comparison import Comparison
from ..base.expectations import Expectation
from ..base.results import Rematch, Screenshot
from .format import ToolResultRecord
from .transcript import Transcript
from .turn import Turn

__all__ = ["Drift", "ReplayOutcome", "ReplayResult", "ReplayStep", "ShotCheck", "Verdict"]


@dataclass(frozen=True)
class Drift:
    step: int  # 1-based index of the assistant message
    field: str  # url, title, console, status, screenshot, action, ...
    expected: Any
    actual: Any
    detail: str | None = None  # one line that says it better than the two values (a screenshot's drift)

    def __str__(self) -> str:
        if self.detail is not None:
            return f"step {self.step}: {self.field}: {self.detail}"
        return f"step {self.step}: {self.field} expected {self.expected!r}, got {self.actual!r}"


@dataclass(frozen=True)
class ShotCheck:
    """One screenshot of a step compared with its recording."""

    position: int  # the outcome's index among the step's outcomes
    recorded: Screenshot
    live: Screenshot
    comparison: Comparison


@dataclass(frozen=True)
class Verdict:
    """An assertion recorded after a step, checked in the live page after the replayed step."""

    expectation: Expectation
    problem: str | None  # None: it holds; else what is there instead

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        said = self.expectation.describe()
        return f"{said}: holds" if self.ok else f"expected {said}: {self.problem}"


@dataclass
class ReplayStep:
    index: int  # 1-based index of the assistant message
    assistant: str
    turn: Turn
    recorded: list[ToolResultRecord]
    drifts: list[Drift] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # failed or refused calls the recording did not have
    shots: list[ShotCheck] = field(default_factory=list)
    rematched: list[Rematch] = field(default_factory=list)  # elements found again by their identity
    verdicts: list[Verdict] = field(default_factory=list)  # the assertions recorded after the step
    network: list[str] = field(default_factory=list)  # its requests, when the replay was traced
    healed: str | None = None  # the model's call that took the step's place (healing)

    @property
    def duration(self) -> float:
        return self.turn.duration


ReplayOutcome = Literal["passed", "drifted", "failed"]


@dataclass
class ReplayResult:
    """What a replay found: each step with its outcome, and the replay's outcome (passed, drifted or failed).

    ``summary()`` says it in a few lines; ``drifts``, ``failures``, ``rematched`` and ``healed``
    list the steps.
    """

    steps: list[ReplayStep]
    mode: Literal["live", "offline"]
    transcript: Transcript | None = None  # what was replayed
    base_url: str | None = None  # what {base_url} stood for
    allow_failures: bool = False  # failed steps were not counted
    differences: list[str] = field(default_factory=list)  # the recording's settings that differ from here
    drift: Literal["fail", "warn"] = "fail"  # warn: a drift is reported, and the replay still passes
    traces: list[Path] = field(default_factory=list)  # the Playwright traces kept (tracing on)

    @property
    def drifts(self) -> list[Drift]:
        return [d for s in self.steps for d in s.drifts]

    @property
    def failures(self) -> list[str]:
        """Each failed or refused call the recording did not have, as ``step N: ...``."""
        return [f"step {s.index}: {f}" for s in self.steps for f in s.failures]

    @property
    def rematched(self) -> list[str]:
        """Each element found again by its recorded identity, as ``step N: ...``."""
        return [
            f"step {s.index}: re-matched {r.expected} with {r.found_by}"
            f" (the step's target now reaches {r.reached or 'nothing'})"
            for s in self.steps
            for r in s.rematched
        ]

    @property
    def healed(self) -> list[str]:
        """Each step the model mended, as ``step N: healed: <its call>``."""
        return [f"step {s.index}: healed: {' '.join(s.healed.split())[:200]}" for s in self.steps if s.healed]

    @property
    def broken(self) -> list[str]:
        """Each recorded assertion that did not hold, as ``step N: expected ...: what is there``."""
        return [f"step {s.index}: {v}" for s in self.steps for v in s.verdicts if not v.ok]

    @property
    def checked(self) -> int:
        """How many recorded assertions were checked (a live replay checks them all)."""
        return sum(len(s.verdicts) for s in self.steps)

    @property
    def outcome(self) -> ReplayOutcome:
        if (self.failures and not self.allow_failures) or self.broken:
            return "failed"
        return "drifted" if self.drifts and self.drift == "fail" else "passed"

    @property
    def ok(self) -> bool:
        return self.outcome == "passed"

    @property
    def mcp_from_recording(self) -> int:
        """The MCP calls answered from the recording rather than by their server."""
        return sum(
            1
            for s in self.steps
            for o in s.turn.outcomes
            if o.mcp is not None and o.mcp.source == "recording"
        )

    def summary(self) -> str:
        n = len(self.steps)
        failures = [*([] if self.allow_failures else self.failures), *self.broken]
        again = [*self.rematched, *self.healed]
        held = f", {self.checked} assertions held" if self.checked and not self.broken else ""
        recorded = self.mcp_from_recording if self.mode == "live" else 0
        answered = f"{recorded} MCP call{'s' if recorded != 1 else ''} answered from the recording"
        counts = (f"{len(self.rematched)} re-matched", f"{len(self.healed)} healed", answered)
        mended = "".join(f", {c}" for c in counts if not c.startswith("0 "))
        if not self.drifts and not failures:
            head = f"{n} steps replayed ({self.mode}): no drift{held}{mended}"
            return "\n".join([head + (":" if again else ""), *(f"  {r}" for r in again)])
        parts = []
        if failures:
            parts.append(f"{len(failures)} failed step{'s' if len(failures) != 1 else ''}")
        if self.drifts:
            warned = " (warnings: drift = warn)" if self.drift == "warn" else ""
            parts.append(f"{len(self.drifts)} drift{'s' if len(self.drifts) != 1 else ''}{warned}")
        lines = [f"{' and '.join(parts)} in {n} steps ({self.mode}){held}{mended}:"]
        lines += [f"  {f}" for f in failures]
        lines += [f"  {d}" for d in self.drifts]
        lines += [f"  {r}" for r in again]
        if self.differences:  # they may explain what went wrong
            lines.append("the recording's settings that differ from this machine's:")
            lines += [f"  {d}" for d in self.differences]
        return "\n".join(lines)
