"""Transcripts: the format, durable recording, redaction, replay live and offline, the report, the demo."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from support.fakes import FakeBrowser
from support.helpers import ba, scenario

from xmltools import ConfigError
from xmltools.base.results import ConsoleEntry, Observation, Point
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.transcript import (
    Header,
    ToolResultRecord,
    TranscriptWriter,
    load_transcript,
)

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "fixtures" / "transcripts" / "demo.jsonl"


# -- format ---------------------------------------------------------------------------


def test_a_hand_written_scenario_is_valid(tmp_path: Path) -> None:
    t = load_transcript(scenario(tmp_path / "s.jsonl", ba("launch", url="{base_url}/form.html"), ba("close")))
    assert [a.content for a in t.assistant_messages][1] == ba("close")
    assert [len(r) for _, r in t.steps()] == [0, 0]
    t = load_transcript(DEMO)
    assert t.header.title and len(t.assistant_messages) == 15 and t.header.tools == ["attempt_completion"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ('{"role": "assistant", "content": "x"}\n', "header"),
        ('{"xmltools_transcript": 1}\n{"role": "wizard"}\n', ":2"),
        ('{"xmltools_transcript": 1}\nnot json\n', ":2"),
        ('{"xmltools_transcript": 7}\n', "version"),
    ],
)
def test_malformed_transcripts_name_the_line(tmp_path: Path, text: str, match: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_transcript(p)


async def test_recording_writes_every_record_with_screenshots_beside(tmp_path: Path) -> None:
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    out = tmp_path / "run.jsonl"
    with TranscriptWriter(
        out, Header(templates=it.renderer.template_hashes()), base_url="http://127.0.0.1:9"
    ) as w:
        w.message("user", "do it")
        w.turn(await it.handle("Opening.\n" + ba("launch", url="http://127.0.0.1:9/app") + ba("close")))
        w.turn(await it.handle(ba("click", coordinate="2000,1")))
    t = load_transcript(out)
    assert t.header.templates["result/browser.j2"]
    kinds = [type(r).__name__ for r in t.records]
    assert kinds == [
        "MessageRecord",
        "AssistantRecord",
        "ToolResultRecord",
        "ToolResultRecord",
        "AssistantRecord",
        "ToolResultRecord",
    ]
    launch = t.records[2]
    assert isinstance(launch, ToolResultRecord) and launch.status == "ok" and launch.observation is not None
    assert launch.observation.url == "{base_url}/app"  # the base URL became a placeholder again
    assert launch.observation.screenshot == "run.shots/0001.webp"
    assert (tmp_path / "run.shots" / "0001.webp").read_bytes().startswith(b"RIFF")
    assert "The launch action ran." in launch.text
    not_run = t.records[3]
    assert isinstance(not_run, ToolResultRecord) and not_run.status == "not_run" and not_run.error is not None
    bad = t.records[5]
    assert isinstance(bad, ToolResultRecord) and bad.status == "invalid" and bad.error is not None
    assert bad.error.kind == "invalid_param" and "900x600" in bad.error.message


async def test_secrets_are_redacted_before_writing(tmp_path: Path) -> None:
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    out = tmp_path / "run.jsonl"
    with TranscriptWriter(out, secrets=["hunter2"]) as w:
        await it.handle(ba("launch", url="http://a/"))
        w.turn(await it.handle(ba("type", text="my password is hunter2")))
    raw = out.read_text()
    assert "hunter2" not in raw and "[redacted]" in raw


# -- text UTF-8 cannot encode (issue 10, item 7) ------------------------------------------------------


class OddPage(FakeBrowser):
    """A page whose title, console or notes hold what UTF-8 cannot encode (lone surrogates)."""

    def __init__(self, **odd: Any) -> None:
        super().__init__()
        self.odd = odd

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        return super().observation(action, mouse).model_copy(update=self.odd)


ODD = "T\udc00 and \ud83d, one\u2028two\x85three"  # two lone surrogates, and two characters splitlines() cuts at


@pytest.mark.parametrize("where", ["title", "console", "notes", "assistant", "message", "header"])
async def test_lone_surrogates_are_escaped_and_every_record_is_written(tmp_path: Path, where: str) -> None:
    page = {"title": ODD} if where == "title" else {}
    page |= {"console": (ConsoleEntry(type="log", text=ODD),)} if where == "console" else {}
    page |= {"notes": (ODD,)} if where == "notes" else {}
    it = AsyncInterpreter(Config(), browser=OddPage(**page))
    said = [ba("launch", url="http://127.0.0.1:9/"), ba("click", coordinate="1,1")]
    if where == "assistant":
        said[1] = ODD + "\n" + said[1]
    path = tmp_path / "odd.jsonl"
    with TranscriptWriter(path, Header(title=ODD if where == "header" else None)) as w:  # this raised
        w.message("user", ODD if where == "message" else "the task")
        for m in said:
            w.turn(await it.handle(m))
    text = path.read_bytes().decode("utf-8")  # strict: the file is valid UTF-8
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == 6  # header, task, and two (assistant, result) pairs
    assert all(isinstance(json.loads(ln), dict) for ln in lines[:-1])
    assert "\\udc00" in text and "\\ud83d" in text
    t = load_transcript(path)  # reads back the very same strings, with no line cut in two
    assert len(t.records) == 5 and [a.content for a in t.assistant_messages] == said
    results = [r for r in t.records if isinstance(r, ToolResultRecord)]
    assert [r.status for r in results] == ["ok", "ok"]
    obs = results[1].observation
    assert obs is not None
    got = {
        "title": obs.title,
        "console": obs.console[0].text,
        "notes": obs.notes[0] if obs.notes else "",
        "assistant": t.assistant_messages[1].content.split("\n")[0],
        "message": t.records[0].content,  # type: ignore[union-attr]
        "header": t.header.title,
    }
    assert got[where] == ODD


async def test_a_line_separator_inside_a_string_does_not_cut_the_record(tmp_path: Path) -> None:
    text = "one\u2028two\u2029three\x85four\x1cfive"  # str.splitlines() cuts at each of these
    it = AsyncInterpreter(Config(), browser=OddPage(title=text))
    with TranscriptWriter(tmp_path / "sep.jsonl") as w:
        w.turn(await it.handle(ba("launch", url="http://127.0.0.1:9/")))
    [_, result] = load_transcript(tmp_path / "sep.jsonl").records
    assert isinstance(result, ToolResultRecord) and result.observation is not None
    assert result.observation.title == text


async def test_a_turn_of_many_calls_is_synced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    t = await it.handle(ba("launch", url="http://127.0.0.1:9/") + ba("close") * 5_000)
    with TranscriptWriter(tmp_path / "many.jsonl") as w:
        synced.clear()
        started = time.perf_counter()
        w.turn(t)
        elapsed = time.perf_counter() - started
    assert len(synced) == 1 and elapsed < 20  # one fsync per record (and a quadratic index) took minutes
    records = load_transcript(tmp_path / "many.jsonl").records
    assert len(records) == 5_002 and [r.call.index for r in records[-3:]] == [4_998, 4_999, 5_000]  # type: ignore[union-attr]


def test_an_open_writer_s_secrets_are_masked_where_the_model_writes_them_out(tmp_path: Path) -> None:
    """While a writer that keeps a value out of its file is open, a call that types that value written
    out counts as typing a secret (its field is painted over in screenshots); once closed, not."""
    from xmltools.base.secrets import recorded_secrets
    from xmltools.interpreter.secrecy import SecretGuard
    from xmltools.parser import ToolUse

    guard = SecretGuard(None)
    typed = ToolUse("browser_action", {"action": "type", "text": "hunter2"})
    assert not guard.types_secret(typed)
    assert guard.types_secret(ToolUse("browser_action", {"action": "type", "text": "{secret:PASSWORD}"}))
    with TranscriptWriter(tmp_path / "a.jsonl", secrets={"PASSWORD": "hunter2"}):
        assert "hunter2" in recorded_secrets()
        assert guard.types_secret(typed)
        assert not guard.types_secret(ToolUse("browser_action", {"action": "type", "text": "ada"}))
    assert "hunter2" not in recorded_secrets() and not guard.types_secret(typed)
    with TranscriptWriter(tmp_path / "b.jsonl", secrets=["sk-live-1"]):  # a plain value, [redacted]
        assert guard.types_secret(ToolUse("browser_action", {"action": "type", "text": "sk-live-1"}))
