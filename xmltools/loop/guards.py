"""What keeps a long loop honest: budgets the model is told about, and a model that is stuck noticed.

- :class:`Budget` holds the limits of a run (turns, tokens, cost from a price
  table, seconds).  Once any of them is 80% used, the model is told what is
  left, once per limit; once one is spent, the next turn is the last: the
  model is asked for its final answer only, browser actions are refused on
  it, and the run stops with the budget's name as its reason.
- :class:`Watchdog` notices a model going round in circles: the same call
  on an unchanged page ``repeat`` times in a row, or ``stagnant`` turns in a
  row in which neither the address nor the page changed.  Each is a nudge
  (a note to the model); after ``max_nudges`` the run stops as ``stuck``.

Pure: it reads turns and usage, and writes nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..models.adapters import Usage
from ..record.turn import Turn

__all__ = ["Budget", "Nudge", "Watchdog"]

WARN_AT = 0.8
BudgetName = Literal["max_turns", "max_tokens", "max_cost", "max_seconds"]


@dataclass
class Budget:
    """A run's limits; ``prices`` are dollars per million input and output tokens (for ``max_cost``)."""

    max_turns: int
    max_tokens: int | None = None
    max_cost: float | None = None
    max_seconds: float | None = None
    prices: tuple[float, float] = (0.0, 0.0)
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    warned: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.prices[0] + usage.completion_tokens * self.prices[1]) / 1e6

    def used(self, turns: int, usage: Usage) -> dict[BudgetName, tuple[float, float]]:
        """Each limit that is set: (used, limit)."""
        out: dict[BudgetName, tuple[float, float]] = {"max_turns": (turns, self.max_turns)}
        if self.max_tokens is not None:
            out["max_tokens"] = (usage.total_tokens, self.max_tokens)
        if self.max_cost is not None:
            out["max_cost"] = (self.cost(usage), self.max_cost)
        if self.max_seconds is not None:
            out["max_seconds"] = (self.clock() - self.started, self.max_seconds)
        return out

    def spent(self, turns: int, usage: Usage) -> BudgetName | None:
        """The limit that leaves room for one turn only (the last one), when one does."""
        for name, (used, limit) in self.used(turns, usage).items():
            room = limit - 1 if name == "max_turns" else limit
            if used >= room:
                return name
        return None

    def warnings(self, turns: int, usage: Usage) -> list[str]:
        """What to tell the model, once per limit, when 80% of it is used."""
        out = []
        for name, (used, limit) in self.used(turns, usage).items():
            if name in self.warned or used < WARN_AT * limit:
                continue
            self.warned.add(name)
            out.append(_left(name, used, limit))
        return out


def _left(name: str, used: float, limit: float) -> str:
    if name == "max_turns":
        return f"{int(used)} of your {int(limit)} turns are used: {int(limit - used)} left"
    if name == "max_tokens":
        return f"{int(used):,} of your {int(limit):,} tokens are used: {int(limit - used):,} left"
    if name == "max_cost":
        return f"${used:.4f} of your ${limit:.4f} budget is used: ${max(limit - used, 0):.4f} left"
    return f"{used:.0f} of your {limit:.0f} seconds are used: {max(limit - used, 0):.0f} left"


@dataclass(frozen=True)
class Nudge:
    kind: str  # repeat or stagnant
    turns: int  # how many turns it took to notice
    what: str  # the repeated call, or the unchanged page


class Watchdog:
    """Counts repeated calls on an unchanged page, and turns that change nothing."""

    def __init__(self, repeat: int = 3, stagnant: int = 5, max_nudges: int = 3) -> None:
        self.repeat = repeat
        self.stagnant = stagnant
        self.max_nudges = max_nudges
        self.nudges: list[Nudge] = []
        self._page: str | None = None
        self._call: str | None = None
        self._same_call = 0
        self._still = 0

    @property
    def stuck(self) -> bool:
        return len(self.nudges) >= self.max_nudges

    def step(self, turn: Turn) -> Nudge | None:
        """Look at a turn; the nudge it earns, if any."""
        ran = turn.ran
        obs = ran.observation if ran is not None else None
        if ran is None or obs is None:
            return None
        shot = hashlib.sha256(obs.screenshot.data).hexdigest() if obs.screenshot is not None else ""
        page = "\n".join((obs.url, obs.title, obs.snapshot or "", shot))
        call = f"{ran.tool} " + " ".join(f"{k}={v}" for k, v in sorted(ran.call.params.items()))
        unchanged = page == self._page
        self._same_call = self._same_call + 1 if unchanged and call == self._call else 1
        self._still = self._still + 1 if unchanged else 0
        self._page, self._call = page, call
        nudge: Nudge | None = None
        if self._same_call >= self.repeat:
            nudge = Nudge("repeat", self._same_call, f"{ran.action or ran.tool} with the same target")
        elif self._still >= self.stagnant:
            nudge = Nudge("stagnant", self._still, obs.url)
        if nudge is not None:
            self._same_call = self._still = 0
            self.nudges.append(nudge)
        return nudge
