"""Prompt experiments that give numbers to trust: a matrix of variants × models × tasks × trials,
each trial verified by checks on its last page, run in parallel, cached, resumable, kept in SQLite.

- :mod:`.plan`: the experiment file (TOML), read and checked whole before anything runs;
- :mod:`.specs`: its parts as data (variants, models, tasks, checks, judge, limits);
- :mod:`.rules`: what a part or the machine lacks beyond the fields' types;
- :mod:`.problems`: the mistakes found, a line each naming the field;
- :mod:`.kinds`: the fields each kind of check reads;
- :mod:`.checks`: the checks, registered by kind (url, text, element, aria, js, answer, mcp, judge);
- :mod:`.cache`: model replies kept on disk;
- :mod:`.store`: the results database;
- :mod:`.runner`: running the matrix;
- :mod:`.stats`: the rates, intervals and comparisons computed from it;
- :mod:`.variants`: variants of the prompts, a transcript re-rendered under them, and a corpus
  of recorded transcripts scored offline (no model, no browser).
"""

from __future__ import annotations

from .checks import CHECKS, CheckContext, KeptSession, register_check
from .plan import CheckSpec, Experiment, Limits, ModelSpec, TaskSpec, VariantSpec, load_experiment
from .runner import RunSummary, run_experiment
from .store import Store, TrialRow

__all__ = [
    "CHECKS",
    "CheckContext",
    "CheckSpec",
    "Experiment",
    "KeptSession",
    "Limits",
    "ModelSpec",
    "RunSummary",
    "Store",
    "TaskSpec",
    "TrialRow",
    "VariantSpec",
    "load_experiment",
    "register_check",
    "run_experiment",
]
