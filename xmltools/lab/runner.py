"""Running an experiment: every trial of the matrix, many at once over the browser pool, into SQLite.

Each trial is a chat loop of one variant with one model on one task, in a
browser session of its own (the pool's).  When the loop ends, the task's
checks run on the page the trial ended on (kept open for them, see
:class:`~xmltools.lab.checks.KeptSession`) and on its final answer; the trial
passes when they all hold.  Its row goes into the run's database at once, so
a killed run resumes where it stopped and no trial runs twice.

- ``concurrency`` trials run at once (by default what the pool allows), and
  each model takes at most its ``max_requests`` requests at once.  Each
  trial's replies depend only on its own messages and its cell, so a parallel
  run gives the same results as a serial one.
- Model replies are cached (:mod:`xmltools.lab.cache`): a rerun makes no call.
- ``limits.cost`` stops new trials once the run's cost reaches it, and says so.
- A ``judge`` check asks the ``[judge]`` model, through the same cache; what
  it costs is added to the trial's cost (its tokens are not the trial's).
- A model that cannot be reached stops the run (the host's problem): what was
  done is kept, and a rerun resumes.
- The command line's models (:func:`default_model`) talk over the SDKs' async
  clients, one per model address shared by a run's trials and closed at its
  end, so that trials wait on their models together.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import shutil
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..base.serve import serve_directory
from ..browser.pool import default_pool
from ..config.settings import Config
from ..errors import McpServerError
from ..interpreter import AsyncInterpreter
from ..loop import LoopEvent, arun_loop, loop_registry
from ..mcp.hub import McpHub
from ..mcp.server import McpServer
from ..mcp.settings import ServerSettings, read_servers
from ..models.adapters import aclose_client, build_model
from ..record.transcript import TranscriptWriter, new_header
from ..record.turn import Turn
from ..tools import COMPLETION_TOOL
from .cache import CachedModel
from .checks import CheckContext, KeptSession, run_checks
from .plan import (
    CheckSpec,
    Experiment,
    ModelSpec,
    TaskSpec,
    VariantSpec,
    environment_problems,
    experiment_problems,
    server_problems,
)
from .problems import raise_problems
from .store import Store, TrialRow, TurnRow
from .variants import Variant

__all__ = ["RunSummary", "run_experiment"]

Cell = tuple[str, str, str, int]
ModelMaker = Callable[[ModelSpec, Cell], Any]  # a model for one trial (its cell: variant, model, task, index)


@dataclass
class RunSummary:
    """What a run did: its rows (earlier runs' included), what it ran now, and what it skipped."""

    store: Store
    rows: list[TrialRow]
    ran: int = 0
    resumed: int = 0  # trials already in the database
    skipped: list[Cell] = field(default_factory=list)  # not started: the cost limit was reached
    seconds: float = 0.0

    @property
    def cost(self) -> float:
        return sum(r.cost for r in self.rows)


# the SDK clients of the run going on (in its context), by address and key: its trials share them
_CLIENTS: contextvars.ContextVar[dict[tuple[str, str | None, str | None], Any] | None]
_CLIENTS = contextvars.ContextVar("xmltools_lab_clients", default=None)


def default_model(spec: ModelSpec, cell: Cell) -> Any:
    """A trial's model as ``xmltools experiment run`` makes it (:func:`~xmltools.models.adapters.build_model`,
    an async client).  Within :func:`run_experiment`, the trials of a model share one client (made
    once: an SDK client takes tens of milliseconds to make), which the run closes when it ends."""
    clients = _CLIENTS.get()
    key = (spec.provider, spec.base_url, spec.key_env)
    model = build_model(
        spec.provider,
        spec.api_name,
        base_url=spec.base_url,
        api_key_env=spec.key_env,
        options=spec.options,
        flag=f"model {spec.name!r}: base_url",
        key_flag=f"model {spec.name!r}: key_env",
        client=clients.get(key) if clients is not None else None,
    )
    if clients is not None:
        clients.setdefault(key, model.client)
    return model


@contextlib.asynccontextmanager
async def _shared_clients() -> AsyncIterator[None]:
    """The clients :func:`default_model` makes in the block are shared by address, and closed after it."""
    clients: dict[tuple[str, str | None, str | None], Any] = {}
    token = _CLIENTS.set(clients)
    try:
        yield
    finally:
        _CLIENTS.reset(token)
        for client in clients.values():
            await aclose_client(client)


async def run_experiment(
    exp: Experiment,
    out: str | Path,
    *,
    concurrency: int | None = None,
    cache: bool = True,
    fresh: bool = False,
    remote: str | None = None,
    make_model: ModelMaker = default_model,
    on_trial: Callable[[TrialRow, int, int], object] | None = None,
) -> RunSummary:
    """Run every trial of ``exp`` not yet in ``out``/results.sqlite; see the module.

    ``remote`` (else the file's ``remote``) names the browser endpoints,
    comma-separated, that trials spread over, least loaded first; a variant
    that sets ``remote`` itself keeps its own.
    """
    _refuse_mistakes(exp, make_model)
    out = Path(out)
    if remote is not None:
        exp = exp.model_copy(update={"remote": remote})
    db = out / "results.sqlite"
    if fresh:
        db.unlink(missing_ok=True)
        shutil.rmtree(out / "trials", ignore_errors=True)
    store = Store(db)
    store.start(exp.fingerprint())
    done = store.done()
    todo = [c for c in exp.cells() if c not in done]
    summary = RunSummary(store, [], resumed=len(exp.cells()) - len(todo))
    width = concurrency or exp.concurrency or default_pool().max_sessions
    slots = asyncio.Semaphore(max(1, min(width, len(todo) or 1)))
    limits = {m.name: asyncio.Semaphore(m.max_requests) for m in exp.models}
    if exp.judge is not None:
        limits[_JUDGE] = asyncio.Semaphore(exp.judge.max_requests)
    spent = sum(r.cost for r in store.trials())
    total = len(exp.cells())
    finished = summary.resumed
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(_shared_clients())
        bases = {
            t.id: stack.enter_context(serve_directory(t.serve)) for t in exp.tasks if t.serve is not None
        }
        shared = _shared_servers(exp)
        stack.push_async_callback(_close_all, list(shared.values()))

        async def one(cell: Cell) -> None:
            nonlocal spent, finished
            async with slots:
                if exp.limits.cost is not None and spent >= exp.limits.cost:
                    summary.skipped.append(cell)
                    return
                row = await _trial(exp, cell, _Place(bases, out, shared), cache, limits, make_model)
                spent += row.cost
                store.add(row)
                summary.ran += 1
                finished += 1
                if on_trial is not None:
                    on_trial(row, finished, total)

        tasks = [asyncio.ensure_future(one(c)) for c in todo]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:  # a model that failed stops the run: the others end now, unrecorded
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    summary.rows = store.trials()
    summary.seconds = time.monotonic() - started
    return summary


def _refuse_mistakes(exp: Experiment, make_model: ModelMaker) -> None:
    """Before any trial: the experiment's mistakes (a file's were found when it was read; one made in
    code is checked here); for the command line's models, a key or address the environment lacks; an
    MCP server's program the machine lacks (an McpServerError)."""
    label = str(exp.path) if exp.path is not None else "experiment"
    problems = experiment_problems(exp)
    if make_model is default_model:
        problems += environment_problems(exp)
    raise_problems(label, problems)
    raise_problems(label, server_problems(exp), McpServerError)  # a program the machine lacks


@dataclass(frozen=True)
class _Place:
    """What the trials of a run share: the served sites' addresses, the output folder, the servers."""

    bases: dict[str, str]
    out: Path
    shared: dict[str, McpServer]


def _shared_servers(exp: Experiment) -> dict[str, McpServer]:
    """The experiment's shared MCP servers: one each for the whole run, started on first use."""
    return {s.name: McpServer(s) for s in read_servers(exp.mcp_servers) if s.name in exp.shared_servers}


async def _close_all(servers: list[McpServer]) -> None:
    await asyncio.gather(*(s.aclose() for s in servers))


def _servers_of(exp: Experiment, task: TaskSpec, cfg: Config) -> list[ServerSettings]:
    """A trial's own servers: the variant's, then the experiment's, then the task's, by name (the
    shared ones are lent to it instead)."""
    by_name = {s.name: s for s in cfg.mcp_settings()}
    by_name.update({s.name: s for s in read_servers(exp.mcp_servers)})
    by_name.update({s.name: s for s in read_servers(task.mcp_servers)})
    return [s for n, s in by_name.items() if n not in exp.shared_servers]


async def _trial(
    exp: Experiment,
    cell: Cell,
    place: _Place,
    cache: bool,
    limits: dict[str, asyncio.Semaphore],
    make_model: ModelMaker,
) -> TrialRow:
    """One trial: set up, its loop played, its checks run, its browser and transcript closed; its row."""
    trial = await _set_up(exp, cell, place, cache, limits, make_model)
    began = time.monotonic()
    await _play(trial)
    try:
        trial.seconds = time.monotonic() - began
        await _check(trial)
    finally:
        await _wind_up(trial)
    return _row(trial)


@dataclass
class _Trial:
    """One trial as it goes: what it is (its cell, its experiment's specs), what it runs on (its
    browser session, interpreter, model and judge, transcript), and what it has come to so far."""

    exp: Experiment
    cell: Cell
    out: Path
    mspec: ModelSpec
    task: TaskSpec
    session: KeptSession
    interp: AsyncInterpreter
    model: CachedModel
    judge: _Judge | None
    instruction: str
    system: str
    path: Path  # its transcript
    writer: TranscriptWriter
    turns: list[Turn] = field(default_factory=list)
    stop: str = "max_turns"
    seconds: float = 0.0
    answer: str | None = None
    claimed: bool = False  # the model said it was done
    where: str | None = None  # where its browser ran
    checks: list[tuple[CheckSpec, str | None]] = field(default_factory=list)

    def record(self, event: LoopEvent) -> None:
        """The loop's event in the transcript; a turn that reaches the token limit stops the loop."""
        if event.kind in ("nudge", "budget") and event.note is not None:
            self.writer.note(event.kind, event.note)
        if event.kind == "turn" and event.turn is not None:
            self.writer.turn(event.turn, event.usage)
            self.turns.append(event.turn)
            used = self.model.usage.total_tokens
            if self.exp.limits.tokens is not None and used >= self.exp.limits.tokens:
                raise _Budget("tokens")


async def _set_up(
    exp: Experiment,
    cell: Cell,
    place: _Place,
    cache: bool,
    limits: dict[str, asyncio.Semaphore],
    make_model: ModelMaker,
) -> _Trial:
    """A trial ready to run: its config, browser session and interpreter (with its MCP servers
    started, so that the prompt lists their tools), its model (and judge) through the cache, its
    instruction, and its transcript begun."""
    v, m, t, k = cell
    vspec, mspec, task = exp.variant(v), exp.model(m), exp.task(t)
    out = place.out
    cfg = _trial_config(exp, vspec, mspec)
    session = KeptSession(cfg.browser_settings())
    hub = McpHub(_servers_of(exp, task, cfg), result_chars=cfg.max_result_chars, shared=place.shared)
    interp = AsyncInterpreter(cfg, registry=loop_registry(cfg, COMPLETION_TOOL), browser=session, mcp=hub)
    try:
        await interp.start_servers()  # one that cannot start is the host's: the run stops, said
    except BaseException:
        await interp.aclose()
        raise
    base_url = place.bases.get(task.id)
    folder = out / "cache" if cache else None
    model = CachedModel(
        make_model(mspec, cell),
        {"provider": mspec.provider, "model": mspec.api_name, "options": mspec.options},
        json.dumps(cell),  # the cell: two tasks, variants or models whose messages read the same stay apart
        folder,
        limits[m],
        base_url,
    )
    judge = None
    if exp.judge is not None and any(c.kind == "judge" for c in task.checks):
        judge = _judge_model(exp.judge, cell, folder, limits[_JUDGE], make_model, base_url)
    instruction = _instruction(task, base_url)
    system = interp.system_prompt()
    path = out / "trials" / f"{v}--{m}--{t}--{k}.jsonl"
    writer = _transcript(path, cell, cfg, interp, task, base_url)
    writer.message("system", system)
    writer.message("user", instruction)
    return _Trial(
        exp, cell, out, mspec, task, session, interp, model, judge, instruction, system, path, writer
    )


def _trial_config(exp: Experiment, vspec: VariantSpec, mspec: ModelSpec) -> Config:
    """The variant's config, on the experiment's browser endpoints unless it names its own."""
    overrides = dict(vspec.config)
    if exp.remote and "remote" not in overrides:
        overrides["remote"] = exp.remote
    cfg = Variant.of(vspec.name, vspec.templates, overrides).make_config()
    if mspec.provider == "anthropic":  # results in the Messages API's own shape, as xmltools run sends them
        cfg = cfg.model_copy(update={"shape": "anthropic"})
    return cfg


def _instruction(task: TaskSpec, base_url: str | None) -> str:
    """The task's instruction, with where to start: the task's address, or the page of the site it serves."""
    start_url = task.url if task.url is not None else None
    if base_url is not None:
        start_url = f"{base_url}/{task.start.lstrip('/')}"
    return task.instruction + (f"\n\nStart at {start_url}" if start_url else "")


def _transcript(
    path: Path, cell: Cell, cfg: Config, interp: AsyncInterpreter, task: TaskSpec, base_url: str | None
) -> TranscriptWriter:
    """The trial's transcript, its header written."""
    v, m, t, k = cell
    header = new_header(
        cfg,
        interp.renderer.template_hashes(),
        variant=v,
        tools=[COMPLETION_TOOL.name],
        title=f"{v} × {m} × {t}, trial {k}",
        description=task.instruction,
    )
    return TranscriptWriter(path, header, base_url=base_url)


async def _play(trial: _Trial) -> None:
    """The trial's chat loop, within the experiment's limits: its stop reason (a spent limit of the
    experiment's names it: ``tokens``, ``seconds``)."""
    limits = trial.exp.limits
    try:
        async with asyncio.timeout(limits.seconds):
            res = await arun_loop(
                trial.model,
                [{"role": "system", "content": trial.system}, {"role": "user", "content": trial.instruction}],
                interpreter=trial.interp,
                max_turns=limits.turns,
                on_event=trial.record,
                prices=(trial.mspec.price_in, trial.mspec.price_out),
            )
        trial.stop = res.stop_reason
    except _Budget as e:
        trial.stop = e.args[0]
    except TimeoutError:
        trial.stop = "seconds"


async def _check(trial: _Trial) -> None:
    """The task's checks, on the page the trial ended on and its final answer."""
    trial.answer = _answer(trial.turns)
    trial.claimed = (
        trial.stop == "completed"
    )  # an answer a spent budget asked for (max_turns, ...) claims nothing
    trial.where = trial.session.where
    ctx = CheckContext(
        session=trial.session,
        answer=trial.answer,
        claimed=trial.claimed,
        instruction=trial.instruction,
        judge=trial.judge.grade if trial.judge else None,
        renderer=trial.interp.renderer,
        wait=trial.exp.limits.check_seconds,
        mcp=trial.interp.mcp,
    )
    trial.checks = await run_checks(trial.task.checks, ctx)


async def _wind_up(trial: _Trial) -> None:
    """The transcript ended and closed, the browser session released, the interpreter closed."""
    trial.writer.end("completed" if trial.stop == "completed" else "stopped", trial.stop)
    trial.writer.close()
    await trial.session.release()
    await trial.interp.aclose()


def _row(trial: _Trial) -> TrialRow:
    """The trial's row in the run's database."""
    v, m, t, k = trial.cell
    checks, judge, turns = trial.checks, trial.judge, trial.turns
    passed = all(problem is None for _, problem in checks) if checks else trial.claimed
    usage = trial.model.usage
    return TrialRow(
        variant=v,
        model=m,
        task=t,
        idx=k,
        passed=passed,
        claimed=trial.claimed,
        stop_reason=trial.stop,
        turns=len(turns),
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        estimated=usage.estimated_calls > 0,
        cached=trial.model.calls == 0 and trial.model.hits > 0,
        cost=round(
            trial.mspec.cost(usage.prompt_tokens, usage.completion_tokens) + (judge.cost if judge else 0), 8
        ),
        seconds=round(trial.seconds, 3),
        answer=trial.answer,
        checks=[{"check": spec.describe(), "problem": problem} for spec, problem in checks],
        first_error=_first_error(turns),
        transcript=str(trial.path.relative_to(trial.out)),
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
        browser=trial.where,
        turn_rows=[_turn_row(n, turn) for n, turn in enumerate(turns, 1)],
    )


_JUDGE = "\0judge"  # the judge's request limit, beside the models' (no model can take this name)


@dataclass
class _Judge:
    """The judge model for one trial: a prompt in, its reply out, through the cache."""

    spec: ModelSpec
    model: CachedModel

    async def grade(self, prompt: str) -> str:
        return await self.model([{"role": "user", "content": prompt}])

    @property
    def cost(self) -> float:
        return self.spec.cost(self.model.usage.prompt_tokens, self.model.usage.completion_tokens)


def _judge_model(
    spec: ModelSpec,
    cell: Cell,
    folder: Path | None,
    limit: asyncio.Semaphore,
    make_model: ModelMaker,
    base_url: str | None,
) -> _Judge:
    identity = {"judge": True, "provider": spec.provider, "model": spec.api_name, "options": spec.options}
    trial = json.dumps(cell)  # per cell, as the trial's own replies
    return _Judge(spec, CachedModel(make_model(spec, cell), identity, trial, folder, limit, base_url))


class _Budget(Exception):
    """A trial's token budget ran out: the loop stops, and the stop reason names the budget."""


def _answer(turns: list[Turn]) -> str | None:
    for turn in reversed(turns):
        for o in turn.outcomes:
            if o.tool == COMPLETION_TOOL.name and o.status == "ok":
                return o.call.params.get("result", "").strip() or None
    return None


def _first_error(turns: list[Turn]) -> str | None:
    for turn in turns:
        for o in turn.outcomes:
            if o.status not in ("ok", "pending"):
                why = o.failure.message if o.failure is not None else o.text
                line = why.strip().splitlines()[0] if why and why.strip() else o.status
                return f"{o.tool} {o.action or ''}: {o.status}: {line[:160]}".replace("  ", " ")
    return None


def _turn_row(n: int, turn: Turn) -> TurnRow:
    ran = turn.ran
    if ran is None:
        return TurnRow(n, None, "no_tool" if not turn.calls else turn.outcomes[0].status, None)
    url = ran.observation.url if ran.observation is not None else None
    return TurnRow(n, ran.action or ran.tool, ran.status, url)
