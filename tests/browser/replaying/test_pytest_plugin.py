"""The pytest plugin, tested with pytester: in this process (its browser and imports are shared, which
saves seconds a run), and in separate processes where the run needs its own (the xdist workers).

pytester takes back the modules an in-process run imported; numpy cannot be imported twice in one
process, so it and Pillow are imported here first.
"""

from __future__ import annotations

import fnmatch
import json
import shutil

import numpy  # noqa: F401  (see above)
import PIL.Image
import PIL.ImageChops
import PIL.ImageDraw  # noqa: F401
import pytest
from support.helpers import SITE, ba

from xmltools.record.transcript import load_transcript

pytestmark = pytest.mark.long  # make test-long's: see the Makefile

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

    # the page changes: the replay fails in a screen, led by the step and what differs, then the
    # report's path; its artefacts are left in test-results/
    form = project.path / "site" / "form.html"
    form.write_text(form.read_text().replace('document.title = "Welcome";', 'document.title = "Hello";'))
    for test in ("test_marker_alone", "test_replay"):  # one a run: each run empties test-results/
        r = _run(project, "-k", test)
        r.assert_outcomes(failed=1)
        _short_failure(
            r, "*ReplayFailed: signin.jsonl drifted: step 4: title expected 'Welcome', got 'Hello'"
        )
        r.stdout.fnmatch_lines(["E *: step 4: title *", "*report: *signin.replay.html"])
        out = project.path / "test-results" / f"test_flows.py-{test}"
        assert (out / "signin.replay.html").is_file() and (out / "signin.replay.jsonl").is_file()
    assert (out / "traces" / "signin" / "trace-1.zip").is_file()  # retain-on-failure, the default
    assert 'href="traces/signin/trace-1.zip"' in (out / "signin.replay.html").read_text()
    # the live recording kept under another name finds its screenshots beside it
    kept = load_transcript(out / "signin.replay.jsonl")
    assert kept.has_observations and not kept.missing_screenshots()

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
    r.stdout.fnmatch_lines(["*signin.jsonl not updated: step *"])
    assert transcript.read_bytes() == before


def _short_failure(r: pytest.RunResult, cause: str) -> None:
    """A failed replay as pytest shows it: at most 30 lines, the first ``E`` line its cause, and no
    traceback of xmltools, of the event loop or of an exception it chained."""
    assert len(r.outlines) <= 30, "\n".join(r.outlines)
    first = next(line for line in r.outlines if line.startswith("E "))
    assert fnmatch.fnmatch(first, "E *" + cause.lstrip("*")), "\n".join(r.outlines)
    text = r.stdout.str()
    for sign in ("RuntimeError", "During handling", "direct cause", "xmltools/replaying/", "Traceback"):
        assert sign not in text, "\n".join(r.outlines)


BROKEN = {
    "missing": ("flows/does-not-exist.jsonl", "", "*does-not-exist.jsonl: no such transcript (write *"),
    "not-json": (
        "flows/bad.jsonl",
        '{"xmltools_transcript": 1}\n{"role": "assi\n{}\n',
        "*bad.jsonl:2: not JSON (*",
    ),
    "no-header": (
        "flows/bad.jsonl",
        '{"role": "assistant", "content": "x"}\n',
        "*bad.jsonl:1: the first line *",
    ),
    "header-version": ("flows/bad.jsonl", '{"xmltools_transcript": 9}\n', "*bad.jsonl:1: format version 9 *"),
}


@pytest.mark.parametrize("how", ["marker", "fixture"])
@pytest.mark.parametrize("case", BROKEN)
def test_a_missing_or_broken_transcript_is_one_cause_line(
    project: pytest.Pytester, case: str, how: str
) -> None:
    path, text, cause = BROKEN[case]
    if text:
        (project.path / path).write_text(text)
    if how == "marker":
        body = f'@pytest.mark.xmltools_replay("{path}", serve="site")\ndef test_it():\n    pass\n'
    else:
        body = f'def test_it(xmltools_replay):\n    xmltools_replay("{path}", serve="site")\n'
    project.makepyfile(test_broken="import pytest\n\n" + body)
    r = _run(project, "test_broken.py")
    r.assert_outcomes(failed=1)
    _short_failure(r, cause)


@pytest.mark.parametrize(
    ("arguments", "cause"),
    [
        (
            '"flows/signin.jsonl", serve="site", colour="red"',
            "*UsageError: xmltools_replay: unknown keyword 'colour';*",
        ),
        ('"flows/signin.jsonl", srve="site"', "*unknown keyword 'srve'; did you mean 'serve'? (it takes*"),
        (
            '"flows/signin.jsonl", serve="site", drift="maybe"',
            "*xmltools_replay: drift='maybe': input should be 'fail' or 'warn'",
        ),
        ('"flows/signin.jsonl", ignore_console="^x"', "*xmltools_replay: ignore_console='^x': *"),
        (
            '"flows/signin.jsonl", max_diff_pixels="5"',
            "*xmltools_replay: max_diff_pixels='5': input should be a valid integer",
        ),
        (
            '"flows/signin.jsonl", screenshot_threshold=2.0',
            "*screenshot_threshold: Input should be less than or equal to 1 (got 2.0)",
        ),
        (
            '"flows/signin.jsonl", mask=[(1, 2, 3)]',
            "*xmltools_replay: mask: each region is (x, y, width, height), not (1, 2, 3)",
        ),
        ('serve="site"', "*xmltools_replay: no transcript path given: *"),
    ],
)
def test_a_bad_marker_is_one_cause_line(project: pytest.Pytester, arguments: str, cause: str) -> None:
    project.makepyfile(
        test_bad=f"import pytest\n\n@pytest.mark.xmltools_replay({arguments})\ndef test_it():\n    pass\n"
    )
    r = _run(project, "test_bad.py")
    r.assert_outcomes(failed=1)
    _short_failure(r, cause)


def test_a_transcript_cut_in_its_last_record_replays_the_steps_before_it(project: pytest.Pytester) -> None:
    transcript = project.path / "flows" / "signin.jsonl"
    text = transcript.read_text()
    transcript.write_text(text[: text.rindex('{"role": "assistant"') + 25])  # the close, cut short
    r = _run(project, "-k", "test_replay", "-W", "error::xmltools.record.reader.TranscriptWarning")
    r.assert_outcomes(failed=1)
    _short_failure(r, "*signin.jsonl:6: the last record is incomplete (cut at 25 characters);*")
    project.makepyfile(test_flows=TEST_FILE.replace("== 5", "== 4"))
    r = _run(project, "-k", "test_replay")
    r.assert_outcomes(passed=1, warnings=1)
    r.stdout.fnmatch_lines(
        ["*TranscriptWarning: *signin.jsonl:6: the last record is incomplete (cut at 25 characters)*"]
    )


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
    _short_failure(r, "*broken.jsonl not recorded: the run failed: step 2: browser_action click: failed*")
    assert path.read_bytes() == before
    r = _run(project, "test_failing.py")
    r.assert_outcomes(failed=1)
    _short_failure(r, "*broken.jsonl failed: step 2: browser_action click: failed*")
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
