"""The matrix of an experiment's results: one cell per variant × model × task, and the comparisons.

Computed from the database's rows (:mod:`xmltools.lab.store`) with
:mod:`.stats`: each cell's rate with its Wilson interval, pass@k and
pass^k, false claims, tokens, cost and time; and, for each variant after the
first, a paired comparison with the first on the same models, tasks and
trial indexes, said in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .stats import Comparison, Rate, compare, pass_at_k, pass_hat_k, rate
from .store import TrialRow

__all__ = ["Cell", "cells", "comparisons", "format_matrix"]


@dataclass(frozen=True)
class Cell:
    variant: str
    model: str
    task: str
    rate: Rate
    claimed: int
    false_claims: int
    pass_at: dict[int, float]  # k -> pass@k
    pass_hat: dict[int, float]  # k -> pass^k
    tokens: int
    estimated: bool
    cost: float
    seconds: float  # mean per trial
    unverified: bool  # the task has no checks: the model's claim is all there is

    def row(self) -> list[str]:
        ks = sorted(self.pass_at)
        at = " ".join(f"{self.pass_at[k]:.2f}" for k in ks)
        hat = " ".join(f"{self.pass_hat[k]:.2f}" for k in ks)
        return [
            self.variant,
            self.model,
            self.task,
            str(self.rate) + (" (claims only)" if self.unverified else ""),
            at,
            hat,
            f"{self.false_claims}/{self.claimed}",
            ("~" if self.estimated else "") + f"{self.tokens:,}",
            f"${self.cost:.4f}",
            f"{self.seconds:.1f} s",
        ]


def cells(rows: Sequence[TrialRow], ks: Sequence[int] = (1, 3)) -> list[Cell]:
    groups: dict[tuple[str, str, str], list[TrialRow]] = {}
    for r in rows:
        groups.setdefault((r.variant, r.model, r.task), []).append(r)
    out = []
    for (v, m, t), rs in groups.items():
        n = len(rs)
        c = sum(r.passed for r in rs)
        usable = [k for k in ks if 1 <= k <= n]
        out.append(
            Cell(
                v,
                m,
                t,
                rate([r.passed for r in rs]),
                sum(r.claimed for r in rs),
                sum(r.false_claim for r in rs),
                {k: pass_at_k(n, c, k) for k in usable},
                {k: pass_hat_k(n, c, k) for k in usable},
                sum(r.prompt_tokens + r.completion_tokens for r in rs),
                any(r.estimated for r in rs),
                sum(r.cost for r in rs),
                sum(r.seconds for r in rs) / n,
                all(not r.checks for r in rs),
            )
        )
    return out


def comparisons(rows: Sequence[TrialRow]) -> list[Comparison]:
    """Each variant after the first against the first, paired on (model, task, trial index)."""
    variants: list[str] = []
    for r in rows:
        if r.variant not in variants:
            variants.append(r.variant)
    if len(variants) < 2:
        return []
    by = {(r.variant, r.model, r.task, r.idx): r.passed for r in rows}
    base = variants[0]
    out = []
    for other in variants[1:]:
        keys = sorted((m, t, k) for (v, m, t, k) in by if v == base and (other, m, t, k) in by)
        a = [by[(base, *key)] for key in keys]
        b = [by[(other, *key)] for key in keys]
        out.append(compare(base, a, other, b))
    return out


def format_matrix(rows: Sequence[TrialRow]) -> str:
    """The matrix as text, then the comparisons in words."""
    head = ["variant", "model", "task", "passed (95% CI)", "pass@1 @3", "pass^1 ^3", "false claims"]
    head += ["tokens", "cost", "time/trial"]
    table = [head] + [c.row() for c in cells(rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip() for r in table]
    total = sum(r.cost for r in rows)
    lines.append(f"{len(rows)} trials, ${total:.4f} in all")
    lines += [c.sentence() for c in comparisons(rows)]
    return "\n".join(lines)
