"""pytest support for xmltools: a ready interpreter, and transcript replay.

Installed as a ``pytest11`` entry point, so it is active wherever xmltools is.

* ``@pytest.mark.xmltools_replay("flows/signin.jsonl", serve="site")`` replays
  a transcript for the test, with no fixture and no code.  Paths are relative
  to the test file.  Keyword arguments: ``serve``, ``base_url``, ``secrets``,
  ``mask`` (regions ``(x, y, w, h)`` in CSS pixels), ``mask_selectors``,
  ``ignore_console`` and ``ignore_snapshot`` (regular expressions), ``screenshot_threshold``,
  ``max_diff_pixel_ratio``, ``max_diff_pixels``, ``allow_failures``, ``rematch``, ``drift``.
* ``xmltools_replay``: a function ``replay(path, **same keywords)`` that
  returns the :class:`~xmltools.record.transcript.ReplayResult`; it works in sync and
  async tests alike (``await xmltools_replay.run_async(...)`` in async ones
  keeps the event loop free).
* ``xmltools_interpreter``: an :class:`~xmltools.Interpreter` with a real
  browser, closed after the test.

A replay fails the test when a step drifts (URL, title, console, screenshot
beyond the allowed pixels) or when a call fails or is refused where the
recording has no such outcome.  Then the HTML report, the live recording and
the diff images are saved in ``test-results/<test>/`` (``--xmltools-output``),
as pytest-playwright keeps its artefacts.

The failure reads in a screen, its cause first: the missing transcript, or
the first step that went wrong and how (``signin.jsonl drifted: step 4: title
expected 'Welcome', got 'Hello'``), the other steps in brief, then the
report's path.  A broken transcript, a keyword or value the marker does not
take, and a browser that cannot be had are one line each.  Nothing of
xmltools, the event loop or the hooks the error went through is shown
(``__tracebackhide__``, and :func:`pytest_runtest_makereport` keeping the test
file's own lines); ``--full-trace`` and ``--tb=native`` show it all.

Options, in the manner of pytest-recording and pytest-playwright:

* ``--xmltools-record-mode``: ``none`` (the default) replays only, and a
  missing transcript fails; ``once`` records the observations of transcripts
  that have none (a hand-written scenario) and replays the others; ``all``
  records every transcript again; ``rewrite`` updates each transcript in place
  (as ``xmltools replay --update``: re-matched targets and new observations,
  the header kept).  A run that fails is never written, unless the test
  allows failures (``allow_failures=True``); ``rewrite`` never writes one.
* ``--headed``, ``--xmltools-executable``, ``--xmltools-remote``: the browser
  of this machine, whatever the transcript was recorded with.
* ``--xmltools-tracing``: ``retain-on-failure`` (the default) keeps a
  Playwright trace of a replay that fails, in its output folder
  (``traces/<transcript>/trace-N.zip``), and the report lists the failed
  step's network requests; ``on`` keeps every trace, ``off`` records none.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import inspect
import re
import shutil
import tempfile
import threading
from collections.abc import Coroutine, Generator, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar, get_type_hints

import pytest
from pydantic import ConfigDict, TypeAdapter, ValidationError

from ..base.quoting import shorten
from ..base.secrets import Secret
from ..base.spelling import did_you_mean
from ..browser.locate import browser_options, has_display, no_display
from ..config.settings import Config
from ..errors import UsageError, XmltoolsError
from ..interpreter import Interpreter
from ..record.reader import TranscriptWarning
from .compare import Region
from .mcp import McpCalls
from .run import ReplayResult
from .runner import Replayed, ReplayOptions, ReplayRunner

__all__ = ["ReplayFailed", "Replayer"]

T = TypeVar("T")
RECORD_MODES = ("none", "once", "all", "rewrite")


class ReplayFailed(AssertionError):
    pass


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xmltools")
    group.addoption(
        "--xmltools-record-mode",
        choices=RECORD_MODES,
        default="none",
        help="none: replay only (default); once: record transcripts that have no observations;"
        " all: record every transcript again; rewrite: write what the live app does now back into"
        " each transcript (re-matched targets, new observations), keeping its header",
    )
    group.addoption(
        "--xmltools-output",
        default="test-results",
        metavar="DIR",
        help="where the report, recording and diff images of a failed replay go (default test-results)",
    )
    from ..base.tracing import PYTEST_TRACING  # the modes, and the command line's option beside it

    group.addoption(PYTEST_TRACING.flag, **PYTEST_TRACING.keywords())
    group.addoption("--xmltools-executable", default=None, metavar="PATH", help="the Chromium to run")
    group.addoption("--xmltools-remote", default=None, metavar="URL", help="connect to this browser")
    if importlib.util.find_spec("pytest_playwright") is None:  # nothing else offers --headed
        _add_headed(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(parser: pytest.Parser) -> Iterator[None]:
    """``--headed``, once every plugin is in: pytest-playwright has the same option, and of two
    plugins adding it the second fails, in whichever order they load.  Its value is read then."""
    try:
        return (yield)
    finally:
        _add_headed(parser)


def _add_headed(parser: pytest.Parser) -> None:
    taken = {name for g in parser._groups for o in g.options for name in o.names()}
    if "--headed" not in taken:
        parser.getgroup("xmltools").addoption(
            "--headed", action="store_true", default=False, help="show the browser window"
        )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "xmltools_replay(path, serve=None, base_url=None, ...): replay an xmltools transcript in this test",
    )
    if config.getoption("headed", False) and not has_display():
        raise pytest.UsageError(no_display("--headed"))


@pytest.fixture
def xmltools_interpreter(pytestconfig: pytest.Config) -> Iterator[Interpreter]:
    """A ready interpreter with a real browser, configured as every command is: ``Config.load()``
    (XMLTOOLS_* variables, xmltools.toml, [tool.xmltools] of pyproject.toml, the defaults), with
    the browser options of this run (``--headed``, ``--xmltools-executable``, ``--xmltools-remote``)."""
    with Interpreter(Config.load(**_machine(pytestconfig))) as it:
        yield it


def _machine(config: pytest.Config) -> dict[str, Any]:
    return browser_options(**_browser(config))


def _browser(config: pytest.Config) -> dict[str, Any]:
    """The browser of this run: ``--xmltools-executable``, ``--headed``, ``--xmltools-remote``."""
    return {
        "executable": config.getoption("xmltools_executable", None),
        "headed": bool(config.getoption("headed", False)),
        "remote": config.getoption("xmltools_remote", None),
    }


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from sync code, also where an event loop is running (async tests)."""
    __tracebackhide__ = True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # asyncio.run() below, not here: its errors would carry this one as context
    else:
        running = True
    if not running:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:
            box["error"] = e

    worker = threading.Thread(target=target, name="xmltools-replay")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


class Replayer:
    """The ``xmltools_replay`` fixture: ``replay(path, **options)``, or ``await replay.run_async(...)``."""

    def __init__(self, config: pytest.Config, test_file: Path, nodeid: str) -> None:
        self._config = config
        self._here = test_file.parent
        self._nodeid = nodeid
        self.results: list[ReplayResult] = []
        # what an earlier run of this test left there would read as this run's
        shutil.rmtree(self._output_dir(), ignore_errors=True)

    def __call__(self, *args: Any, **options: Any) -> ReplayResult:
        """``replay(path, **options)``: the keywords of :meth:`run_async`.  A failure is one short
        error, its cause first: no traceback into xmltools, no chained exceptions."""
        __tracebackhide__ = True
        try:
            checked_keywords(args, options)
            return _run(self.run_async(*args, **options))
        except (XmltoolsError, ReplayFailed, TranscriptWarning) as e:  # what the replay says, not how
            raise bare(e) from None

    async def run_async(
        self,
        path: str | Path,
        *,
        serve: str | Path | None = None,
        base_url: str | None = None,
        secrets: Mapping[str, str | Secret] | None = None,
        mask: Sequence[Sequence[float] | Region] = (),
        mask_selectors: Sequence[str] = (),
        ignore_console: Sequence[str] = (),
        ignore_snapshot: Sequence[str] = (),
        ignore_mcp: Sequence[str] = (),
        screenshot_threshold: float | None = None,
        max_diff_pixel_ratio: float | None = None,
        max_diff_pixels: int | None = None,
        allow_failures: bool = False,
        rematch: Literal["on", "off", "strict"] | None = None,
        drift: Literal["fail", "warn"] | None = None,
        mcp_calls: McpCalls = "read-only",
    ) -> ReplayResult:
        given = {k: v for k, v in locals().items() if k not in ("self", "path")}
        __tracebackhide__ = True
        try:
            checked_keywords((path,), given)
        except UsageError as e:
            raise bare(e) from None
        path = self._here / path  # relative to the test file (an absolute path stays itself)
        options = ReplayOptions(
            serve=None if serve is None else self._here / serve,
            base_url=base_url,
            secrets=secrets,
            mask=mask,
            mask_selectors=mask_selectors,
            ignore_console=ignore_console,
            ignore_snapshot=ignore_snapshot,
            ignore_mcp=ignore_mcp,
            mcp_calls=mcp_calls,
            screenshot_threshold=screenshot_threshold,
            max_diff_pixel_ratio=max_diff_pixel_ratio,
            max_diff_pixels=max_diff_pixels,
            allow_failures=allow_failures,
            rematch=rematch,
            drift=drift,
            **_browser(self._config),
        )
        try:
            if not path.is_file():
                raise ReplayFailed(
                    f"{path}: no such transcript (write the scenario's assistant messages in it, then"
                    " record its observations with --xmltools-record-mode=once)"
                )
            mode = self._config.getoption("xmltools_record_mode")
            if mode == "rewrite":
                return await self._rewrite(path, options)
            return await self._replay(path, options, mode)
        except (XmltoolsError, ReplayFailed, TranscriptWarning) as e:  # a broken transcript, a bad
            raise bare(e) from None  # option, no browser, a drift (a warning made an error, -W error)

    async def _rewrite(self, path: Path, options: ReplayOptions) -> ReplayResult:
        """Update the transcript in place (as ``xmltools replay --update``); a failed run writes nothing."""
        done = await ReplayRunner(path, replace(options, update=True), named=str).run()
        self.results.append(done.result)
        if done.update is not None and done.update.why_not is not None:
            raise ReplayFailed(failure_message(path.name, "not updated", done.result, None))
        return done.result

    async def _replay(self, path: Path, options: ReplayOptions, mode: str) -> ReplayResult:
        """Replay, or record in the record modes; a failed run leaves its artefacts in the output folder."""
        out = self._output_dir()
        with tempfile.TemporaryDirectory(prefix="xmltools-replay-") as scratch:
            live = Path(scratch) / path.name
            runner = ReplayRunner(
                path,
                replace(
                    options,
                    record=live,
                    diff_dir=Path(scratch) / "diffs",
                    tracing=self._config.getoption("xmltools_tracing"),
                    trace_dir=Path(scratch) / "traces",
                ),
                named=str,  # a value out of range names the keyword
            )
            recording = mode == "all" or (mode == "once" and not runner.transcript.has_observations)
            done = await runner.run()
            result = done.result
            self.results.append(result)
            _keep_traces(result, out / "traces" / path.stem)  # beside the report, by transcript
            if recording and (options.allow_failures or not result.failures):
                _replace_transcript(path, live)
                return result
            if result.ok and not recording:
                return result
            report = _keep_artefacts(done, path, out, live, Path(scratch) / "diffs")
        what = "not recorded: the run failed" if recording else result.outcome
        raise ReplayFailed(failure_message(path.name, what, result, report))

    def _output_dir(self) -> Path:
        root = Path(str(self._config.getoption("xmltools_output")))
        if not root.is_absolute():
            root = Path(str(self._config.rootpath)) / root
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", self._nodeid).strip("-")
        return root / name


def _keep_traces(result: ReplayResult, kept: Path) -> None:
    """Copy the replay's traces into ``kept``; the result lists the copies."""
    if result.traces:
        kept.mkdir(parents=True, exist_ok=True)
        for k, trace in enumerate(result.traces):
            result.traces[k] = Path(shutil.copy2(trace, kept / trace.name))


def _keep_artefacts(done: Replayed, path: Path, out: Path, live: Path, diffs: Path) -> Path:
    """Keep a failed run's recording (``live``), its screenshots and its diff images (``diffs``) in
    ``out``, and write its report there; the report's path."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(live, out / f"{path.stem}.replay.jsonl")
    shots = live.parent / (live.stem + ".shots")
    if shots.is_dir():
        shutil.copytree(shots, out / f"{path.stem}.replay.shots", dirs_exist_ok=True)
    if diffs.is_dir():  # by transcript: a test may replay several
        shutil.copytree(diffs, out / "diffs" / path.stem, dirs_exist_ok=True)
    return done.write_report(out / f"{path.stem}.replay.html")


def _replace_transcript(path: Path, fresh: Path) -> None:
    """Make a new recording the transcript, its screenshots beside it (the old ones go)."""
    shots = path.parent / (path.stem + ".shots")
    if shots.exists():
        shutil.rmtree(shots)
    new_shots = fresh.parent / (fresh.stem + ".shots")
    if new_shots.exists():
        shutil.copytree(new_shots, shots)
    shutil.copyfile(fresh, path)


# -- a failure as a test shows it: its cause first, in a screen ------------------------------------

MAX_PROBLEMS = 8  # the steps named in a failure; the report has them all
LINE_CHARS = 240  # each problem's line, cut to this
_STEP = re.compile(r"step (\d+):")


E = TypeVar("E", bound=Exception)
_TOLD = "_xmltools_replay_told"  # set on an error a replay raised: its report is made short


def bare(e: E) -> E:
    """``e`` without its traceback into xmltools, the event loop and the thread that ran it, and
    marked as a replay's: raised ``from None``, a test shows its message under the test's own line
    (see :func:`pytest_runtest_makereport`)."""
    setattr(e, _TOLD, True)
    return e.with_traceback(None)


def failure_message(name: str, what: str, result: ReplayResult, report: Path | None) -> str:
    """A failed replay in a few lines: the first step that went wrong and how (its cause), the
    others in brief, then the report's path."""
    problems = _problems(result)
    lines = [f"{name} {what}: {problems[0] if problems else result.summary().splitlines()[0]}"]
    lines += [f"  {p}" for p in problems[1 : MAX_PROBLEMS + 1]]
    if len(problems) > MAX_PROBLEMS + 1:
        lines.append(f"  and {len(problems) - MAX_PROBLEMS - 1} more, in the report")
    if result.differences:  # they may explain it
        lines.append(f"settings of the recording that differ from here: {'; '.join(result.differences)}")
    if report is not None:
        lines.append(f"report: {report}")
    return "\n".join(shorten(line, LINE_CHARS) for line in lines)


def _problems(result: ReplayResult) -> list[str]:
    """What made the replay fail, step by step (``step N: ...``): failed calls, broken assertions,
    then drifts (unless they only warn), in the order of the steps."""
    found = [*([] if result.allow_failures else result.failures), *result.broken]
    if result.drift == "fail":
        found += [str(d) for d in result.drifts]
    found = [" ".join(p.split()) for p in found]

    def step(p: str) -> int:
        m = _STEP.match(p)
        return int(m.group(1)) if m else 0

    return sorted(found, key=step)


def checked_keywords(args: tuple[Any, ...], keywords: Mapping[str, Any]) -> None:
    """The marker's (or the fixture's) arguments, checked against :meth:`Replayer.run_async` before
    anything runs: a missing path, an unknown keyword or a value of the wrong type is a UsageError
    in one line."""
    __tracebackhide__ = True
    known = _keywords()
    params = [n for n in known if n != "path"]
    unknown = [k for k in keywords if k not in known]
    if unknown:
        hint = did_you_mean(unknown[0], params)  # "; did you mean 'serve'?", or nothing
        takes = f"it takes the transcript's path, then {', '.join(params)}"
        raise UsageError(
            f"xmltools_replay: unknown keyword {unknown[0]!r}"
            + (f"{hint} ({takes})" if hint else f"; {takes}")
        )
    if len(args) != 1 or "path" in keywords:
        given = "no" if not args and "path" not in keywords else "more than one"
        raise UsageError(
            f"xmltools_replay: {given} transcript path given: it takes one, first, then keywords"
            ' (xmltools_replay("flows/signin.jsonl", serve="site"))'
        )
    for name, value in {"path": args[0], **keywords}.items():
        try:
            known[name].validate_python(value)
        except ValidationError as e:
            first = e.errors()[0]
            msg = first["msg"][:1].lower() + first["msg"][1:]
            raise UsageError(f"xmltools_replay: {name}={shorten(repr(value))}: {msg}") from None
        if name == "mask":
            bad = [m for m in value if not isinstance(m, Region) and len(m) != 4]
            if bad:
                raise UsageError(
                    f"xmltools_replay: mask: each region is (x, y, width, height), not {bad[0]!r}"
                )


@pytest.fixture
def xmltools_replay(request: pytest.FixtureRequest) -> Replayer:
    """Replay a transcript in a test: ``xmltools_replay(path, serve=..., ...)`` (see the module)."""
    return Replayer(request.config, Path(request.path), request.node.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """The marker alone replays: before the test's own body, whether it asks for a fixture or not."""
    __tracebackhide__ = True
    marker = item.get_closest_marker("xmltools_replay")
    if marker is not None and isinstance(item, pytest.Function):
        replayer = item.funcargs.get("xmltools_replay")
        if not isinstance(replayer, Replayer):
            replayer = Replayer(item.config, Path(item.path), item.nodeid)
        replayer(*marker.args, **marker.kwargs)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A replay's failure, as pytest shows it: the test's own line (the call that replayed; its
    whole source with ``--tb=long``), then the error's lines, and nothing of xmltools, of the event
    loop or of other plugins' hooks that the error passed through (the marker replays in a hook).
    ``--full-trace`` and ``--tb=native`` show everything, as they do for any failure."""
    report = yield
    error = call.excinfo.value if call.excinfo is not None else None
    style = item.config.getoption("tbstyle", "auto")
    if (
        call.excinfo is None
        or not getattr(error, _TOLD, False)
        or style not in ("auto", "long", "short")
        or item.config.getoption("fulltrace", False)
    ):
        return report
    here = Path(item.path)

    def own(info: pytest.ExceptionInfo[BaseException]) -> Any:
        return info.traceback.filter(lambda entry: Path(entry.path) == here and not entry.ishidden(info))

    # the cause is in the message: the test's own line is enough (all its source, with --tb=long)
    report.longrepr = call.excinfo.getrepr(
        style="long" if style == "long" else "short", tbfilter=own, chain=False
    )
    return report


@functools.cache
def _keywords() -> dict[str, TypeAdapter[Any]]:
    """How each argument of :meth:`Replayer.run_async` is checked: its annotation, strictly (made
    when first needed: the plugin is loaded by every pytest run)."""
    hints = get_type_hints(Replayer.run_async)
    strict = ConfigDict(arbitrary_types_allowed=True, strict=True)
    names = [n for n in inspect.signature(Replayer.run_async).parameters if n != "self"]
    return {n: TypeAdapter(hints[n], config=strict) for n in names}
