"""The pytest plugin, tested with pytester in a separate pytest process."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SITE

pytestmark = pytest.mark.browser


def ba(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"<browser_action>\n{inner}</browser_action>"


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
def test_marker(xmltools_replay):
    pass

def test_interpreter(xmltools_interpreter):
    assert xmltools_interpreter.system_prompt().startswith("## browser_action")
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


def test_record_then_replay_then_catch_drift(project: pytest.Pytester) -> None:
    transcript = project.path / "flows" / "signin.jsonl"
    # 1. record: the hand-written scenario gains observations and screenshots
    r = project.runpytest_subprocess("--xmltools-record", "-k", "test_replay", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=1)
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    results = [x for x in records if x.get("role") == "tool_result"]
    assert len(results) == 5 and results[3]["observation"]["title"] == "Welcome"
    assert (project.path / "flows" / "signin.shots").is_dir()

    # 2. replay (the default): no drift, with the fixture and with the marker
    r = project.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=3)

    # 3. the page changes: the replay fails, names the step, and leaves the report as an artefact
    form = project.path / "site" / "form.html"
    form.write_text(form.read_text().replace('document.title = "Welcome";', 'document.title = "Hello";'))
    artifacts = project.path / "artifacts"
    r = project.runpytest_subprocess(
        "-k", "test_replay", f"--xmltools-artifacts={artifacts}", "-p", "no:cacheprovider"
    )
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(
        ["*step 4: title expected 'Welcome', got 'Hello'*", "*report: *signin.replay.html*"]
    )
    assert (artifacts / "signin.replay.html").exists()


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
