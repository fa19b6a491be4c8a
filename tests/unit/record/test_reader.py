"""Reading transcripts as real life leaves them: a last record cut mid-line, and a recording renamed
or moved with (or without) its screenshots folder."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from support.fakes import FakeBrowser
from support.helpers import ba, scenario

from xmltools.config.settings import Config
from xmltools.errors import TranscriptError
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.reader import TranscriptWarning
from xmltools.record.transcript import ToolResultRecord, TranscriptWriter, load_transcript
from xmltools.replaying.run import replay

ROOT = Path(__file__).parents[3]


async def _record(path: Path, *messages: str) -> Path:
    """A recording made through an interpreter with the stub browser (a screenshot per step)."""
    async with AsyncInterpreter(Config(), browser=FakeBrowser()) as it:
        it.record(path)
        for m in messages:
            await it.handle(m)
    return path


STEPS = (ba("launch", url="http://a/"), ba("click", coordinate="10,10"), ba("type", text="Ada é ☃"))


# -- a last record cut mid-line --------------------------------------------------------------------


async def test_every_cut_of_the_last_record_is_one_warning_and_the_records_before_it_load(
    tmp_path: Path,
) -> None:
    whole = (await _record(tmp_path / "run.jsonl", *STEPS)).read_bytes()
    lines = whole.split(b"\n")[:-1]
    assert json.loads(lines[-1])["role"] == "tool_result" and "é ☃" in lines[-1].decode()
    before = load_transcript(tmp_path / "run.jsonl").records[:-1]
    cut_path = tmp_path / "cut.jsonl"
    for k in range(1, len(lines[-1])):  # every byte of it, a character cut in two among them
        cut_path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][:k])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = load_transcript(cut_path)
        assert t.records == before, k
        assert t.incomplete is not None and t.incomplete.line == len(lines)
        said = [str(w.message) for w in caught if issubclass(w.category, TranscriptWarning)]
        assert said == [str(t.incomplete)] and len(caught) == 1
        assert said[0].startswith(f"{cut_path}:{len(lines)}: the last record is incomplete (cut at ")
        assert said[0].endswith(f"; the {len(lines) - 1} complete records before it are kept")


async def test_a_cut_transcript_replays_its_complete_steps(tmp_path: Path) -> None:
    path = await _record(tmp_path / "run.jsonl", *STEPS)
    text = path.read_text()
    cut = text[: text.rindex('{"role": "assistant"') + 30]  # the third message, cut in its content
    path.write_text(cut)
    with pytest.warns(TranscriptWarning, match=r"run.jsonl:\d+: the last record is incomplete \(cut at 30 "):
        result = await replay(path, offline=True)
    assert result.ok and len(result.steps) == 2, result.summary()


async def test_appending_to_a_cut_transcript_cuts_the_incomplete_line_off_first(tmp_path: Path) -> None:
    """Appended after a crash: the cut line goes (said once), the next record starts a line of its
    own, and the file loads whole, the record written after the crash last."""
    path = await _record(tmp_path / "run.jsonl", *STEPS)
    text = path.read_text()
    path.write_text(text[: text.rindex('{"role": "assistant"') + 30])
    complete = len(text[: text.rindex('{"role": "assistant"')].splitlines())
    with pytest.warns(
        TranscriptWarning, match=r"run.jsonl: the last record was incomplete \(30 bytes, cut off\)"
    ):
        writer = TranscriptWriter(path, append=True)
    writer.message("user", "once more")
    writer.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing cut any more
        t = load_transcript(path)
    assert t.incomplete is None and len(t.records) == complete
    assert t.records[-1].content == "once more"  # type: ignore[union-attr]


def test_a_broken_line_before_the_last_stays_an_error_naming_it(tmp_path: Path) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"), ba("close"))
    lines = path.read_text().split("\n")
    lines[1] = lines[1][:40]  # cut, but a line follows it
    path.write_text("\n".join(lines))
    with pytest.raises(TranscriptError, match=r"s\.jsonl:2: not JSON \(Unterminated string"):
        load_transcript(path)


@pytest.mark.parametrize(
    "last",
    [
        '{"role": "assistant", "content": "x"]',  # written wrong, not cut: JSON never reads like this
        "{'role': 'assistant'}",
        '{"role": "assistant", "content": x}',
    ],
)
def test_a_last_line_written_wrong_is_an_error_with_or_without_its_newline(tmp_path: Path, last: str) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("close"))
    for end in ("", "\n"):
        path.write_text(path.read_text().split("\n", 2)[0] + "\n" + last + end)
        with pytest.raises(TranscriptError, match=r"s\.jsonl:2: not JSON"):
            load_transcript(path)


def test_a_whole_last_record_without_its_newline_loads_whole_and_quietly(tmp_path: Path) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"), ba("close"))
    path.write_text(path.read_text().rstrip("\n"))  # as an editor may leave a hand-written file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = load_transcript(path)
    assert len(t.assistant_messages) == 2 and t.incomplete is None


def test_a_cut_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"xmltools_transcript": 1, "tit')
    with pytest.raises(
        TranscriptError, match=r"s\.jsonl:1: the header is incomplete \(cut at 31 characters\)"
    ):
        load_transcript(path)


def test_windows_line_ends_load_as_before(tmp_path: Path) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"), ba("close"))
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert len(load_transcript(path).assistant_messages) == 2


def test_the_shipped_transcripts_load_whole() -> None:
    found = sorted([*(ROOT / "fixtures").rglob("*.jsonl"), *(ROOT / "docs").rglob("*.jsonl")])
    assert found
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranscriptWarning)
        for path in found:
            if '"xmltools_transcript"' in path.read_text().split("\n", 1)[0]:
                t = load_transcript(path)
                assert t.incomplete is None and not t.missing_screenshots(), path


# -- a recording renamed or moved --------------------------------------------------------------------


def _shots(t_path: Path) -> list[bytes]:
    t = load_transcript(t_path)
    observations = [r.observation for r in t.records if isinstance(r, ToolResultRecord) and r.observation]
    return [shot.data for o in observations if (shot := t.screenshot(o)) is not None]


@pytest.mark.parametrize("folder_too", [True, False], ids=["with-its-folder", "file-alone"])
async def test_a_renamed_recording_finds_its_screenshots_and_replays(
    tmp_path: Path, folder_too: bool
) -> None:
    path = await _record(tmp_path / "run.jsonl", *STEPS)
    shots = _shots(path)
    assert len(shots) == 3
    moved = tmp_path / "elsewhere" / "b.jsonl"
    moved.parent.mkdir()
    path.rename(moved)
    (tmp_path / "run.shots").rename(moved.parent / ("b.shots" if folder_too else "run.shots"))
    assert _shots(moved) == shots and not load_transcript(moved).missing_screenshots()
    result = await replay(moved, offline=True)
    assert result.ok, result.summary()
    notes = [n for s in result.steps for o in s.turn.outcomes if o.observation for n in o.observation.notes]
    assert not any("screenshot" in n for n in notes), notes  # each step had its screenshot


async def test_a_recording_kept_under_a_new_name_beside_a_newer_one_keeps_its_own_screenshots(
    tmp_path: Path,
) -> None:
    path = await _record(tmp_path / "run.jsonl", *STEPS)
    path.rename(tmp_path / "old.jsonl")
    (tmp_path / "run.shots").rename(tmp_path / "old.shots")
    for f in (tmp_path / "old.shots").iterdir():
        f.write_bytes(b"old " + f.name.encode())
    await _record(tmp_path / "run.jsonl", *STEPS)  # a newer run.shots/ beside it
    assert _shots(tmp_path / "old.jsonl") == [b"old 0001.webp", b"old 0002.webp", b"old 0003.webp"]


async def test_adding_to_a_file_renamed_alone_goes_on_in_its_recorded_folder(tmp_path: Path) -> None:
    path = await _record(tmp_path / "run.jsonl", *STEPS[:2])
    path.rename(tmp_path / "b.jsonl")
    before = _shots(tmp_path / "b.jsonl")
    async with AsyncInterpreter(Config(), browser=FakeBrowser()) as it:
        with TranscriptWriter(tmp_path / "b.jsonl", append=True) as w:
            w.turn(await it.handle(ba("launch", url="http://c/")))
    assert not (tmp_path / "b.shots").exists()
    assert sorted(p.name for p in (tmp_path / "run.shots").iterdir()) == [
        "0001.webp",
        "0002.webp",
        "0003.webp",
    ]
    assert _shots(tmp_path / "b.jsonl")[:2] == before and len(_shots(tmp_path / "b.jsonl")) == 3


async def test_a_missing_screenshot_names_both_folders_looked_in(tmp_path: Path) -> None:
    path = await _record(tmp_path / "run.jsonl", *STEPS[:1])
    shutil.rmtree(tmp_path / "run.shots")
    t = load_transcript(path.rename(tmp_path / "b.jsonl"))
    assert t.missing_screenshots() == ["run.shots/0001.webp"]
    with pytest.raises(
        TranscriptError, match=r"looked for in b\.shots/ or run\.shots/ beside the transcript"
    ):
        _shots(t.path)  # type: ignore[arg-type]
