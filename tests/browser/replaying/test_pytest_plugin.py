"""The pytest plugin, tested with pytester: in this process (its browser and imports are shared, which
saves seconds a run), and in separate processes where the run needs its own (the xdist workers).

pytester takes back the modules an in-process run imported; numpy cannot be imported twice in one
process, so it and Pillow are imported here first.
"""

from __future__ import annotations

import json
import shutil

import numpy  # noqa: F401  (see above)
import PIL.Image
import PIL.ImageChops
import PIL.ImageDraw  # noqa: F401
import pytest
from support.helpers import SITE, ba

SCENARIO = [
    "Opening the form.\n" + ba("launch", url="{base_url}/form.html"),
    ba("click", coordinate="150,97"),
    ba("type", text="Ada"),
    ba("press", text="Enter"),
    ba("close"),
]

TEST_FILE = """
import pytest

def test_replay(xmltools_replay):
    result = xmltools_replay("flows/signin.jsonl", serve="site")
    assert len(result.steps) == 5

@pytest.mark.xmltools_replay("flows/signin.jsonl", serve="site")
def test_marker_alone():
    pass

@pytest.mark.asyncio
async def test_in_an_async_test(xmltools_replay):
    result = xmltools_replay("flows/signin.jsonl", serve="site")
    again = await xmltools_replay.run_async("flows/signin.jsonl", serve="site")
    assert result.ok and again.ok

def test_interpreter(xmltools_interpreter):
    assert xmltools_interpreter.system_prompt().startswith("## browser_action")
"""

MISSING = """
import pytest

@pytest.mark.xmltools_replay("flows/does-not-exist.jsonl", serve="site")
def test_missing():
    pass
"""

FAILING = """
def test_scenario_that_fails(xmltools_replay):
    xmltools_replay("flows/broken.jsonl", serve="site")
"""

ALLOWED = """
def test_failures_allowed(xmltools_replay):
    xmltools_replay("flows/broken.jsonl", serve="site", allow_failures=True)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(SITE, pytester.path / "site")
    flows = pytester.path / "flows"
    flows.mkdir()
    lines = [json.dumps({"xmltools_transcript": 1, "title": "sign in"})]
    lines += [json.dumps({"role": "assistant", "content": m}) for m in SCENARIO]
    (flows / "signin.jsonl").write_text("\n".join(lines) + "\n")
    pytester.makepyfile(test_flows=TEST_FILE)
    return pytester


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(*args, "-p", "no:cacheprovider")


def test_record_once_then_replay_then_catch_drift(project: pytest.Pytester) -> None:
    transcript = project.path / "flows" / "signin.jsonl"
    # none, the default: a scenario with no observations replays (and passes: nothing fails)
    r = _run(project, "-k", "test_replay")
    r.assert_outcomes(passed=1)
    assert "tool_result" not in transcript.read_text()

    # once: the hand-written scenario gains observations and screenshots
    r = _run(project, "--xmltools-record-mode=once", "-k", "test_replay")
    r.assert_outcomes(passed=1)
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    results = [x for x in records if x.get("role") == "tool_result"]
    assert len(results) == 5 and results[3]["observation"]["title"] == "Welcome"
    assert records[0]["title"] == "sign in" and records[-1]["role"] == "end"
    assert (project.path / "flows" / "signin.shots").is_dir()

    # once again: a recorded transcript is left alone; all: recorded again
    before = transcript.read_bytes()
    r = _run(project, "--xmltools-record-mode=once", "-k", "test_replay")
    r.assert_outcomes(passed=1)
    assert transcript.read_bytes() == before
    r = _run(project, "--xmltools-record-mode=all", "-k", "test_replay")
    r.assert_outcomes(passed=1)
    assert transcript.read_bytes() != before
    assert len(list((project.path / "flows" / "signin.shots").iterdir())) == 4  # no leftovers

    # replay: the fixture, the marker alone and an async test all pass
    r = _run(project)
    r.assert_outcomes(passed=4)

    # the page changes: the replay fails, names the step, and leaves its artefacts in test-results/
    form = project.path / "site" / "form.html"
    form.write_text(form.read_text().replace('document.title = "Welcome";', 'document.title = "Hello";'))
    r = _run(project, "-k", "test_replay or test_marker_alone")
    r.assert_outcomes(failed=2)
    r.stdout.fnmatch_lines(
        ["*step 4: title expected 'Welcome', got 'Hello'*", "*report: *signin.replay.html*"]
    )
    out = project.path / "test-results" / "test_flows.py-test_replay"
    assert (out / "signin.replay.html").is_file() and (out / "signin.replay.jsonl").is_file()
    assert (out / "traces" / "signin" / "trace-1.zip").is_file()  # retain-on-failure, the default
    assert 'href="traces/signin/trace-1.zip"' in (out / "signin.replay.html").read_text()
    assert (
        project.path / "test-results" / "test_flows.py-test_marker_alone" / "signin.replay.html"
    ).is_file()

    # the page is mended: the test passes, and what its failed run left is gone
    form.write_text(form.read_text().replace('document.title = "Hello";', 'document.title = "Welcome";'))
    r = _run(project, "-k", "test_replay")
    r.assert_outcomes(passed=1)
    assert not out.exists()


def test_rewrite_writes_a_changed_app_back_and_the_next_run_passes(project: pytest.Pytester) -> None:
    transcript = project.path / "flows" / "signin.jsonl"
    _run(project, "--xmltools-record-mode=once", "-k", "test_replay").assert_outcomes(passed=1)
    header = transcript.read_text().splitlines()[0]
    form = project.path / "site" / "form.html"
    form.write_text(form.read_text().replace('document.title = "Welcome";', 'document.title = "Hello";'))
    _run(project, "-k", "test_replay").assert_outcomes(failed=1)
    r = _run(project, "--xmltools-record-mode=rewrite", "-k", "test_replay")
    r.assert_outcomes(passed=1)
    assert transcript.read_text().splitlines()[0] == header  # the header is kept
    assert '"title": "Hello"' in transcript.read_text()
    _run(project, "-k", "test_replay").assert_outcomes(passed=1)
    # a step that fails is never written back as good
    form.write_text(form.read_text().replace('id="name"', 'id="gone" hidden'))
    before = transcript.read_bytes()
    r = _run(project, "--xmltools-record-mode=rewrite", "-k", "test_replay")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*signin.jsonl not updated: * failed steps*"])
    assert transcript.read_bytes() == before


def test_the_marker_alone_fails_on_a_missing_transcript(project: pytest.Pytester) -> None:
    project.makepyfile(test_missing=MISSING)
    r = _run(project, "test_missing.py")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*does-not-exist.jsonl: no such transcript*"])


def test_a_scenario_whose_step_fails_fails_and_is_not_recorded(project: pytest.Pytester) -> None:
    broken = [SCENARIO[0], ba("click", coordinate="890,590"), ba("close")]  # nothing is down there
    lines = [json.dumps({"xmltools_transcript": 1})]
    lines += [json.dumps({"role": "assistant", "content": m}) for m in broken]
    path = project.path / "flows" / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    project.makepyfile(test_failing=FAILING)
    before = path.read_bytes()
    r = _run(project, "test_failing.py", "--xmltools-record-mode=once")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(
        ["*broken.jsonl not recorded: the run failed*", "*step 2: browser_action click: failed*"]
    )
    assert path.read_bytes() == before
    r = _run(project, "test_failing.py")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*broken.jsonl failed: 1 failed step*"])
    # a test that allows failures records the run, failure included
    project.makepyfile(test_allowed=ALLOWED)
    r = _run(project, "test_allowed.py", "--xmltools-record-mode=once")
    r.assert_outcomes(passed=1)
    results = [json.loads(x) for x in path.read_text().splitlines() if '"tool_result"' in x]
    assert [x["status"] for x in results] == ["ok", "failed", "ok"]


def test_headed_is_refused_cleanly_without_a_display(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    r = _run(project, "--headed", "-k", "test_replay")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--headed shows the browser window, and this machine has no display*xvfb-run*"])


def test_the_browser_options_choose_the_browser(project: pytest.Pytester) -> None:
    r = _run(project, "--xmltools-executable=/nonexistent/chromium", "-k", "test_replay")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*/nonexistent/chromium*"])
    r = _run(project, "--xmltools-remote=ws://127.0.0.1:9/", "-k", "test_replay")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*127.0.0.1:9*"])


SHARDED = """
import pathlib, pytest

FLOWS = sorted(pathlib.Path("flows").glob("*.jsonl"))

@pytest.mark.parametrize("flow", FLOWS, ids=[f.stem for f in FLOWS])
def test_flow(xmltools_replay, flow):
    result = xmltools_replay(flow, serve="site")
    assert len(result.steps) == 5
"""


def test_a_corpus_shards_over_two_xdist_workers(project: pytest.Pytester) -> None:
    """The README's recipe: four transcripts, two workers, each with its own pool and server."""
    source = project.path / "flows" / "signin.jsonl"
    for n in range(2, 5):
        shutil.copy(source, project.path / "flows" / f"signin{n}.jsonl")
    project.makepyfile(test_sharded=SHARDED)
    r = project.runpytest_subprocess("-n", "2", "test_sharded.py", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=4)
    r.stdout.fnmatch_lines(["*2 workers*"])
