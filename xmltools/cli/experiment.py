"""``xmltools experiment``: run an experiment file (or one task given by flags), or show a run's matrix.

``run FILE.toml`` runs the matrix (see :mod:`xmltools.lab`) into ``--out``,
printing a line per trial and the matrix at the end; ``show DB`` prints the
matrix of a results database again, or its trials as ``--csv`` or ``--json``.
Without a file (``experiment run`` or bare ``experiment``), the flags describe
one task: ``--task``, ``--model``, ``--base-url``, ``--check KIND=VALUE``, and
``--variants`` (the bundled prompts unless given).  Either way the whole
experiment is checked before any model is asked: every mistake of the file or
the flags is said at once, a line each, and a key the environment lacks stops
the run (a dry run only warns of it).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_OK, UsageError
from .interrupt import kept, run_interruptibly
from .options import api_key_env_option, provider_option

if TYPE_CHECKING:
    from ..lab.plan import CheckSpec, Experiment
    from ..lab.problems import Problem
    from ..lab.variants import Variant
    from .options import Subparsers

__all__ = ["add_parser", "cmd_experiment"]


def cmd_experiment(args: argparse.Namespace) -> int:
    if args.what == "show":
        return _show(args)
    exp, flags = _experiment(args)
    _check_environment(exp, flags, warn_only=args.dry_run)
    if args.dry_run:
        print(dry_run(exp))
        return EXIT_OK
    return _run(exp, args)


def _show(args: argparse.Namespace) -> int:
    """``experiment show DB``: the matrix again, or the trials as JSON (checks as a list) or CSV."""
    from ..lab.matrix import format_matrix
    from ..lab.store import Store, as_records

    if not args.file or not Path(args.file).is_file():
        raise UsageError(f"{args.file or 'experiment show'}: give the results database (results.sqlite)")
    rows = Store(args.file).trials()
    if args.json:
        print(json.dumps(as_records(rows), indent=2))
    elif args.csv:
        records = as_records(rows, flat=True)
        buf = io.StringIO()
        if records:
            w = csv.DictWriter(buf, fieldnames=list(records[0]))
            w.writeheader()
            w.writerows(records)
        sys.stdout.write(buf.getvalue())
    else:
        print(format_matrix(rows))
    return EXIT_OK


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
        variant = Variant.of(v.name, v.templates, dict(v.config))
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


# the shorthand's flags, and each model field they give
SHORTHAND = ("task", "model", "base_url", "api_key_env", "check")
FLAG_OF_FIELD = {"key_env": "--api-key-env", "base_url": "--base-url"}


def _experiment(args: argparse.Namespace) -> tuple[Experiment, bool]:
    """The experiment to run, checked whole, and whether it came from the flags (not a file)."""
    if args.file:
        given = [f"--{f.replace('_', '-')}" for f in (*SHORTHAND, "variants") if getattr(args, f)]
        if getattr(args, "provider", "openai") != "openai":  # the model's API: the file's models say it
            given.append("--provider")
        if given:
            raise UsageError(f"{', '.join(given)}: the flags of one task; not with a file ({args.file})")
        return _from_file(args), False
    return _from_flags(args), True


def _from_file(args: argparse.Namespace) -> Experiment:
    from ..lab.plan import load_experiment

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


def _from_flags(args: argparse.Namespace) -> Experiment:
    """One task from the flags: every mistake in them said at once, each naming its flag."""
    from ..lab.plan import Experiment, Limits, ModelSpec, TaskSpec, VariantSpec, model_problems
    from ..lab.problems import Problem, raise_problems

    missing = [f"--{f}" for f in ("task", "model") if not getattr(args, f)]
    if missing:
        raise UsageError(
            "experiment: give an experiment file (experiment run FILE.toml) or one task's flags;"
            f" missing {', '.join(missing)}"
        )
    checks, problems = _checks(args.check)
    variants = []
    for name in args.variants or ["default"]:
        variant, found = _variant(name)
        problems += found
        if variant is not None:
            variants.append(
                VariantSpec(name=variant.name, templates=variant.templates, config=variant.config)
            )
    model = ModelSpec(
        name=args.model, provider=args.provider, base_url=args.base_url, key_env=args.api_key_env
    )
    problems += [Problem(FLAG_OF_FIELD.get(p.where, p.where), p.what) for p in model_problems(model)]
    twice = sorted({v.name for v in variants if [w.name for w in variants].count(v.name) > 1})
    problems += [Problem("--variants", f"two variants are named {n!r}") for n in twice]
    raise_problems("", problems)
    return Experiment(
        variants=tuple(variants),
        models=(model,),
        tasks=(TaskSpec(id="task", instruction=args.task, checks=tuple(checks)),),
        trials=args.trials or 3,
        limits=Limits(turns=args.max_turns or 20, cost=args.max_cost),
    )


def _checks(given: Sequence[str]) -> tuple[list[CheckSpec], list[Problem]]:
    """Each ``--check KIND=VALUE``, and what is wrong with it (``--check ulr=/done.html: ...``)."""
    from ..lab.plan import CheckSpec, check_problems
    from ..lab.problems import Problem

    checks, problems = [], []
    for c in given:
        kind, sep, value = c.partition("=")
        if not sep or not kind.strip():
            problems.append(Problem(f"--check {c}", "write KIND=VALUE, such as url=/done.html or text=Saved"))
            continue
        spec = CheckSpec(kind=kind.strip(), value=value)
        found = check_problems(spec, judged=False)
        problems += [
            Problem(f"--check {c}", p.what if p.where in ("", "kind", "value") else p.line("")) for p in found
        ]
        checks.append(spec)
    return checks, problems


def _variant(name: str) -> tuple[Variant | None, list[Problem]]:
    """A ``--variants`` entry, and what keeps it from being used (``--variants NAME: ...``)."""
    from ..errors import ConfigError
    from ..lab.problems import Problem
    from ..lab.variants import Variant, variant_problems

    try:
        variant = Variant.named(name)
    except ConfigError as e:
        return None, [Problem(f"--variants {name}", str(e))]
    return variant, [Problem(f"--variants {name}", p.line("")) for p in variant_problems(variant)]


def _check_environment(exp: Experiment, flags: bool, *, warn_only: bool) -> None:
    """The keys and addresses the environment lacks, named by the file's field or the flag (a usage
    error), and the MCP servers' programs the machine lacks (the environment's, exit code 3): an error
    before any model is asked; with ``warn_only`` (a dry run, which asks none) a warning."""
    from ..errors import ConfigError, McpServerError
    from ..lab.plan import environment_problems, server_problems
    from ..lab.problems import Problem, problems_error

    keys = environment_problems(exp)
    if flags:
        keys = [Problem(FLAG_OF_FIELD[p.where.rpartition(".")[2]], p.what) for p in keys]
    label = "" if flags else str(exp.path)
    for problems, error in ((keys, ConfigError), (server_problems(exp), McpServerError)):
        if problems and not warn_only:
            raise problems_error(label, problems, error)
        for p in problems:
            print(f"xmltools: warning: {p.line(label)} (a run needs it)", file=sys.stderr)


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
        summary = run_interruptibly(
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
        again = "the same command without --fresh resumes" if args.fresh else "the same command resumes"
        kept(f"{finished} finished trials in {db} ({again})")
        raise
    from ..lab.report import write_experiment_report

    bar.close()
    print()
    print(format_matrix(summary.rows))
    print(f"report: {write_experiment_report(args.out, summary.rows, title=exp.report_title())}")
    if summary.resumed:
        print(f"resumed: {summary.resumed} trials were already in {summary.store.path}")
    if summary.skipped:
        print(f"stopped: the cost limit was reached; {len(summary.skipped)} trials were not started")
    print(f"results: {summary.store.path}")
    return EXIT_OK


def add_parser(sub: Subparsers) -> None:
    """``xmltools experiment [run [FILE.toml] | show DB]``; without a file, one task's flags."""
    p = sub.add_parser(
        "experiment",
        help="prompt experiments: a matrix of variants, models and tasks, each trial checked on its page",
        description="xmltools experiment run FILE.toml runs an experiment file; xmltools experiment show"
        " DB prints its matrix again. Without a file, the flags below run one task (as experiment run"
        " does). The file or the flags are checked whole before any model is asked: each mistake is a"
        " line naming its field or flag. Exit codes: 0 the run ended; 2 a usage error (a bad file or"
        " flag, a key variable that is not set); 3 the environment (an MCP server's program not found,"
        " no browser, a model that cannot be reached: what was done is kept, and a rerun resumes).",
    )
    _add_run_arguments(p)
    p.set_defaults(func=cmd_experiment, what=None, file=None, csv=False, json=False)
    inner = p.add_subparsers(
        dest="what", metavar="{run,show}", title="commands", help="run a file, or show a run's results"
    )
    run = inner.add_parser(
        "run",
        help="run an experiment file, or one task given by flags",
        description="Run every trial of an experiment file (or of one task given by the flags) into"
        " --out; a rerun resumes. The file or the flags are checked whole first, and a key variable"
        " that is not set stops the run before any model is asked (--dry-run only warns).",
    )
    run.add_argument(
        "file", nargs="?", metavar="FILE.toml", help="the experiment file (none: the flags' one task)"
    )
    _add_run_arguments(run)
    for action in run._actions:  # given after 'run' they count; else what was given before it stands
        if action.option_strings and action.default is not argparse.SUPPRESS:
            action.default = argparse.SUPPRESS
    show = inner.add_parser(
        "show",
        help="print a run's matrix again, or export its trials",
        description="Print the matrix of"
        " a results database again, or its trials as CSV or JSON (checks as a list of objects).",
    )
    show.add_argument("file", metavar="DB", help="the results database (results.sqlite in a run's --out)")
    show.add_argument("--csv", action="store_true", help="the trials as CSV, one row each")
    show.add_argument("--json", action="store_true", help="the trials as a JSON list")


def _add_run_arguments(p: argparse.ArgumentParser) -> None:
    """What a run takes: one task's flags (without a file), the counts and limits, where it runs."""
    _add_task_arguments(p)
    p.add_argument(
        "--trials",
        type=_count,
        default=None,
        metavar="N",
        help="trials per cell (default: the file's trials, else 8; with the flags, 3)",
    )
    p.add_argument(
        "--max-turns",
        type=_count,
        default=None,
        metavar="N",
        help="turns a trial may take (default: the file's [limits] turns, else 20)",
    )
    p.add_argument(
        "--max-cost",
        type=_dollars,
        default=None,
        metavar="DOLLARS",
        help="start no trial once the run has cost this much (default: the file's, else none)",
    )
    p.add_argument(
        "--concurrency",
        type=_count,
        default=None,
        metavar="N",
        help="trials at once (default: the file's, else what the browser pool allows)",
    )
    p.add_argument(
        "--remote",
        default=None,
        metavar="URL[,URL...]",
        help="run the browsers at these endpoints (Playwright servers ws://HOST:PORT/, or DevTools)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="ask the model every time (default: reuse its replies)"
    )
    p.add_argument("--fresh", action="store_true", help="start over: forget the earlier results in --out")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the file, render the prompts, count the trials, estimate the cost; call no model"
        " (a key that is not set is a warning)",
    )
    p.add_argument(
        "--out",
        default="out/experiment",
        metavar="DIR",
        help="where results.sqlite, the transcripts, the cache and report.html go (default: out/experiment)",
    )


def _count(text: str) -> int:
    """A count of at least 1 (trials, turns, trials at once)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: give 1 or more")
    return n


def _dollars(text: str) -> float:
    """An amount of dollars, 0 or more."""
    try:
        n = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of dollars") from None
    if not n >= 0:
        raise argparse.ArgumentTypeError(f"{text}: give 0 or more")
    return n


def _add_task_arguments(p: argparse.ArgumentParser) -> None:
    """The flags for one task without a file: the variants, the task, the model and the checks."""
    p.add_argument(
        "--variants",
        nargs="+",
        metavar="DIR",
        help="variant folders (template overrides and variant.toml), or 'default' for the bundled"
        " prompts (default: default)",
    )
    p.add_argument("--task", metavar="INSTRUCTION", help="what the model is asked to do (one task, no file)")
    p.add_argument("--model", metavar="NAME", help="the model's name at its server")
    p.add_argument(
        "--base-url", default=None, metavar="URL", help="the model's server (default: OPENAI_BASE_URL)"
    )
    provider_option(p, help="the model's API: openai (any compatible server) or anthropic (default: openai)")
    api_key_env_option(
        p, help="the variable holding the model's key (default: OPENAI_API_KEY, or ANTHROPIC_API_KEY)"
    )
    p.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="KIND=VALUE",
        help="a check of the final page or answer (url=/done.html, text=Saved, js=..., answer=...)",
    )
