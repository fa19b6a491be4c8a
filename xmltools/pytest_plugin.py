"""pytest fixtures for testing with xmltools: a ready interpreter, and transcript replay.

Installed as a ``pytest11`` entry point, so it is active wherever xmltools is.

* ``xmltools_interpreter``: an :class:`~xmltools.Interpreter` with a real
  browser, closed after the test.
* ``xmltools_replay``: a function ``replay(path, serve=None, base_url=None)``
  that replays a transcript live and fails the test on drift, naming each step
  that drifted.  The report of a failed replay is written as an artefact
  (``--xmltools-artifacts DIR``, by default the test's temporary folder).
* ``--xmltools-record``: re-record the transcripts instead of replaying them
  (the recorded observations are replaced by fresh ones), so that CI, which
  replays, never needs a model.
* ``@pytest.mark.xmltools_replay(path, serve=DIR)`` replays a transcript for a
  test without writing any code.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from .config import Config
from .interpreter import Interpreter
from .report import write_report
from .serve import serve_directory
from .transcript import ReplayResult, load_transcript, replay

__all__ = ["ReplayFailed"]


class ReplayFailed(AssertionError):
    pass


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xmltools")
    group.addoption(
        "--xmltools-record",
        action="store_true",
        default=False,
        help="re-record xmltools transcripts instead of replaying them",
    )
    group.addoption(
        "--xmltools-artifacts",
        default=None,
        metavar="DIR",
        help="where reports of failed replays are written (default: the test's tmp_path)",
    )
    group.addoption(
        "--xmltools-threshold",
        type=float,
        default=0.98,
        help="the lowest screenshot similarity that is not a drift (default 0.98)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "xmltools_replay(path, serve=None, base_url=None): replay an xmltools transcript in this test",
    )


@pytest.fixture
def xmltools_interpreter() -> Iterator[Interpreter]:
    """A ready interpreter with a real browser, configured as every command is: ``Config.load()``
    (XMLTOOLS_* variables, xmltools.toml, [tool.xmltools] of pyproject.toml, the defaults)."""
    with Interpreter(Config.load()) as it:
        yield it


ReplayFn = Callable[..., ReplayResult]


@pytest.fixture
def xmltools_replay(request: pytest.FixtureRequest, tmp_path: Path) -> ReplayFn:
    opts = request.config.option
    artifacts = Path(opts.xmltools_artifacts) if opts.xmltools_artifacts else tmp_path

    def run(
        path: str | Path, *, serve: str | Path | None = None, base_url: str | None = None
    ) -> ReplayResult:
        path = Path(path)
        if not path.is_absolute():
            path = Path(request.path).parent / path
        if serve is not None and not Path(serve).is_absolute():
            serve = Path(request.path).parent / serve
        with ExitStack() as stack:
            if serve is not None:
                base_url = stack.enter_context(serve_directory(serve))
            if opts.xmltools_record:
                return _rerecord(path, base_url)
            recording = artifacts / f"{path.stem}.replay.jsonl"
            result = asyncio.run(
                replay(path, base_url=base_url, record=recording, threshold=opts.xmltools_threshold)
            )
        if not result.ok:
            report = write_report(artifacts / f"{path.stem}.replay.html", recording, result)
            raise ReplayFailed(f"{path.name}: {result.summary()}\nreport: {report}")
        return result

    marker = request.node.get_closest_marker("xmltools_replay")
    if marker is not None:
        run(*marker.args, **marker.kwargs)
    return run


def _rerecord(path: Path, base_url: str | None) -> ReplayResult:
    """Replay live and make the new recording the transcript (screenshots beside it)."""
    t = load_transcript(path)
    with tempfile.TemporaryDirectory() as d:
        fresh = Path(d) / path.name
        result = asyncio.run(replay(t, base_url=base_url, record=fresh))
        shots = path.parent / (path.stem + ".shots")
        if shots.exists():
            shutil.rmtree(shots)
        new_shots = fresh.parent / (fresh.stem + ".shots")
        if new_shots.exists():
            shutil.copytree(new_shots, shots)
        shutil.copyfile(fresh, path)
    return result
