"""``xmltools experiment``: run an experiment file (or one task given by flags), or show a run's matrix.

``run FILE.toml`` runs the matrix (see :mod:`xmltools.lab`) into ``--out``,
printing a line per trial and the matrix at the end; ``show DB`` prints the
matrix of a results database again, or its trials as ``--csv`` or ``--json``.
Without ``run`` or ``show``, the flags describe one task: ``--variants``,
``--task``, ``--model``, ``--base-url``, ``--check KIND=VALUE`` and the rest.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_OK, UsageError
from . import interrupt
from .options import api_key_env_option, provider_option

if TYPE_CHECKING:
    from ..lab.plan import Experiment
    from .options import Subparsers

__all__ = ["add_parser", "cmd_experiment"]


def cmd_experiment(args: argparse.Namespace) -> int:
    from ..lab.matrix import format_matrix
    from ..lab.store import Store, as_records

    if args.what == "show":
        if not args.file or not Path(args.file).is_file():
            raise UsageError(f"{args.file or 'experiment show'}: give the results database (results.sqlite)")
        rows = Store(args.file).trials()
        if args.json or args.csv:
            records = as_records(rows)
            if args.json:
                print(json.dumps(records, indent=2))
            else:
                buf = io.StringIO()
                if records:
                    w = csv.DictWriter(buf, fieldnames=list(records[0]))
                    w.writeheader()
                    w.writerows(records)
                sys.stdout.write(buf.getvalue())
            return EXIT_OK
        print(format_matrix(rows))
        return EXIT_OK
    exp = _experiment(args)
    if args.dry_run:
        print(dry_run(exp))
        return EXIT_OK
    return _run(exp, args)


def dry_run(exp: Experiment) -> str:
    """What a run would send, with no model called: each variant's prompt, the trial count, and the
    tokens and cost it would take at the least (one call a trial) and with every turn used (each
    call holding at least the system prompt and the task; the growing history is not counted)."""
    from ..lab.variants import Variant, estimate_tokens
    from ..loop import loop_registry
    from ..tools import COMPLETION_TOOL

    lines = [f"{len(exp.cells())} trials: {len(exp.variants)} variants × {len(exp.models)} models ×"
             f" {len(exp.tasks)} tasks × {exp.trials}; at most {exp.limits.turns} turns a trial"]  # fmt: skip
    prompt_tokens: dict[str, int] = {}
    for v in exp.variants:
        variant = Variant(v.name, v.templates, dict(v.config))
        cfg = variant.make_config()
        system = variant.system_prompt(loop_registry(cfg, COMPLETION_TOOL))
        prompt_tokens[v.name] = estimate_tokens(system)
        lines.append(
            f"variant {v.name}: system prompt {len(system):,} characters, ~{prompt_tokens[v.name]:,} tokens"
        )
    for m in exp.models:
        least = most = 0.0
        for v in exp.variants:
            for t in exp.tasks:
                first = prompt_tokens[v.name] + estimate_tokens(t.instruction)
                least += exp.trials * m.cost(first, 50)
                most += exp.trials * exp.limits.turns * m.cost(first, 50)
        lines.append(
            f"model {m.name}: at least ${least:.4f}; about ${most:.4f} if every trial used every turn"
        )
    return "\n".join(lines)


def _experiment(args: argparse.Namespace) -> Experiment:
    from ..lab.plan import CheckSpec, Experiment, Limits, ModelSpec, TaskSpec, VariantSpec, load_experiment
    from ..lab.variants import Variant

    if args.what == "run":
        if not args.file:
            raise UsageError("experiment run needs the experiment file: xmltools experiment run FILE.toml")
        exp = load_experiment(args.file)
        changes: dict[str, object] = {}
        if args.trials is not None:
            changes["trials"] = args.trials
        limits = {}
        if args.max_turns is not None:
            limits["turns"] = args.max_turns
        if args.max_cost is not None:
            limits["cost"] = args.max_cost
        if limits:
            changes["limits"] = exp.limits.model_copy(update=limits)
        return exp.model_copy(update=changes)
    missing = [f for f in ("variants", "task", "model") if not getattr(args, f)]
    if missing:
        raise UsageError(
            "experiment: give an experiment file (experiment run FILE.toml) or the shorthand flags;"
            f" missing {', '.join('--' + m for m in missing)}"
        )
    checks = []
    for c in args.check:
        kind, sep, value = c.partition("=")
        if not sep or not kind.strip():
            raise UsageError(f"--check {c!r}: write KIND=VALUE, such as url=/done.html or text=Saved")
        checks.append(CheckSpec(kind=kind.strip(), value=value))
    variants = []
    for v in args.variants:
        loaded = Variant.load(v) if v != "default" else Variant.default()
        variants.append(VariantSpec(name=loaded.name, templates=loaded.templates, config=loaded.config))
    model = ModelSpec(
        name=args.model, provider=args.provider, base_url=args.base_url, key_env=args.api_key_env
    )
    return Experiment(
        variants=tuple(variants),
        models=(model,),
        tasks=(TaskSpec(id="task", instruction=args.task, checks=tuple(checks)),),
        trials=args.trials or 3,
        limits=Limits(turns=args.max_turns or 20, cost=args.max_cost),
    )


def _run(exp: Experiment, args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..lab.matrix import format_matrix
    from ..lab.runner import run_experiment
    from ..lab.store import TrialRow

    # a live bar on a terminal (done of total, passes, cost, time left); a plain line a trial otherwise
    bar = tqdm(total=len(exp.cells()), unit="trial", disable=not sys.stderr.isatty(), dynamic_ncols=True)
    passes = 0
    cost = 0.0

    def line(row: TrialRow, done: int, total: int) -> None:
        nonlocal passes, cost
        passes += row.passed
        cost += row.cost
        if not bar.disable:
            bar.n = done
            bar.set_postfix_str(f"{passes} passed, ${cost:.4f}")
            return
        verdict = "PASS" if row.passed else "FAIL"
        claim = " (false claim)" if row.false_claim else ""
        cached = " cached" if row.cached else ""
        where = f" on {row.browser}" if row.browser and row.browser != "local" else ""
        print(
            f"[{done}/{total}] {row.variant} × {row.model} × {row.task} #{row.idx}: {verdict}{claim},"
            f" {row.stop_reason}, {row.turns} turns, ${row.cost:.4f}, {row.seconds:.1f} s{cached}{where}",
            flush=True,
        )

    finished = 0

    def counted(row: TrialRow, done: int, total: int) -> None:
        nonlocal finished
        finished += 1
        line(row, done, total)

    try:
        summary = interrupt.run(
            run_experiment(
                exp,
                args.out,
                concurrency=args.concurrency,
                cache=not args.no_cache,
                fresh=args.fresh,
                remote=args.remote,
                on_trial=counted,
            )
        )
    except KeyboardInterrupt:
        bar.close()
        db = Path(args.out) / "results.sqlite"
        interrupt.kept(f"{finished} finished trials in {db} (the same command resumes)")
        raise
    from ..lab.report import write_experiment_report

    bar.close()
    print()
    print(format_matrix(summary.rows))
    title = f"Experiment {Path(args.file).stem}" if args.file else "Prompt experiment"
    print(f"report: {write_experiment_report(args.out, summary.rows, title=title)}")
    if summary.resumed:
        print(f"resumed: {summary.resumed} trials were already in {summary.store.path}")
    if summary.skipped:
        print(f"stopped: the cost limit was reached; {len(summary.skipped)} trials were not started")
    print(f"results: {summary.store.path}")
    return EXIT_OK


def add_parser(sub: Subparsers) -> None:
    """``xmltools experiment [run FILE.toml | show DB]``, or one task's shorthand flags."""
    p = sub.add_parser(
        "experiment",
        help="prompt experiments: a matrix of variants, models and tasks, each trial checked on its page",
        description="xmltools experiment run FILE.toml runs an experiment file; xmltools experiment show"
        " DB prints its matrix again. The flags below run one task as a shorthand. Exit codes: 0 the run"
        " ended; 2 a usage error (a bad file or flag); 3 the environment (no browser, a model that"
        " cannot be reached: what was done is kept, and a rerun resumes).",
    )
    p.add_argument("what", nargs="?", choices=["run", "show"], help="run an experiment file, or show a run")
    p.add_argument("file", nargs="?", help="the experiment file (run), or the results database (show)")
    _add_task_arguments(p)
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--max-cost", type=float, default=None, help="start no trial once the run cost this much")
    p.add_argument("--concurrency", type=int, default=None, help="trials at once (default: the pool's)")
    p.add_argument(
        "--remote",
        default=None,
        metavar="URL[,URL...]",
        help="run the browsers at these endpoints (Playwright servers ws://HOST:PORT/, or DevTools)",
    )
    p.add_argument("--no-cache", action="store_true", help="ask the model every time")
    p.add_argument("--fresh", action="store_true", help="start over: forget the earlier results in --out")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="render the prompts, count the trials, estimate the cost; call no model",
    )
    p.add_argument("--csv", action="store_true", help="show: the trials as CSV")
    p.add_argument("--json", action="store_true", help="show: the trials as JSON")
    p.add_argument(
        "--out", default="out/experiment", help="where results.sqlite, transcripts and the cache go"
    )
    p.set_defaults(func=cmd_experiment)


def _add_task_arguments(p: argparse.ArgumentParser) -> None:
    """The shorthand for one task: the variants, the task, the model and the checks of the page."""
    p.add_argument("--variants", nargs="+", metavar="DIR", help="variant folders ('default' for none)")
    p.add_argument("--task", help="the instruction (shorthand for one task)")
    p.add_argument("--model", help="the model's name")
    p.add_argument("--base-url", default=None)
    provider_option(p)
    api_key_env_option(p)
    p.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="KIND=VALUE",
        help="a check of the final page or answer (url=/done.html, text=Saved, js=..., answer=...)",
    )
