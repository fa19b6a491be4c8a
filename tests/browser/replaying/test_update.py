"""Update mode: a replay on a changed app writes the re-matched targets and the new observations back
into the transcript, so that the next replay reaches every element without re-matching; a run with a
failed step writes nothing."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.helpers import SITE, ba

from xmltools.base.serve import serve_directory
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import Interpreter
from xmltools.record.transcript import AssistantRecord, EndRecord, MessageRecord, load_transcript
from xmltools.replaying.run import replay
from xmltools.replaying.update import update


def record_flow(site: Path, path: Path) -> None:
    """Save clicked three ways (ref, point, selector) on the order page, and one assertion."""
    with serve_directory(site) as base, Interpreter(Config(profile="full")) as it:
        rec = it.record(path, base_url=base)
        rec.message("user", "save the order three times")
        it.handle(ba("launch", url=f"{base}/order.html"))
        snap = it.handle(ba("snapshot")).outcomes[0].observation
        assert snap is not None and snap.snapshot is not None
        ref = re.search(r'button "Save" \[ref=(\w+)\]', snap.snapshot)
        assert ref is not None, snap.snapshot
        it.handle(ba("click", ref=ref.group(1)))
        it.handle(ba("click", coordinate="100,110"))
        it.handle(ba("click", selector="button >> nth=0"))
        rec.expect_text("Order 42")
        it.handle(ba("close"))
        rec.end("completed", "completed")


@pytest.mark.long
def test_an_update_rewrites_the_targets_and_the_next_replay_re_matches_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "flow.jsonl"
    record_flow(site, path)
    before = load_transcript(path)
    (site / "order.html").write_text((site / "changed.html").read_text())
    with serve_directory(site) as base:
        changed = asyncio.run(replay(path, base_url=base))
        assert [len(s.rematched) for s in changed.steps] == [0, 0, 1, 1, 1, 0], changed.summary()
        done = asyncio.run(update(path, base_url=base))
        assert done.written, done.summary()
        again = asyncio.run(replay(path, base_url=base))
    assert again.ok and not again.rematched and again.checked == 1, again.summary()
    lines = done.summary().splitlines()
    assert lines[0] == f"{path} updated: {len(done.changes)} changes"
    said = "\n".join(lines)
    assert re.search(r'step 3: button "Save": ref e\d+ -> e\d+ \(found by testid="save"\)', said), said
    assert 'step 4: button "Save": coordinate 100,110 -> 100,' in said, said
    assert 'step 5: button "Save": selector button >> nth=0 -> testid="save"' in said, said
    assert "  step 2: screenshot, snapshot recorded anew" in lines, said
    assert lines.index("  step 1: screenshot recorded anew") == 1  # by step, in order
    after = load_transcript(path)
    assert after.header == before.header  # the header, its creation time and its settings, kept
    assert [r for r in after.records if isinstance(r, MessageRecord)] == [
        r for r in before.records if isinstance(r, MessageRecord)
    ]
    assert after.end == EndRecord(outcome="completed", reason="completed")
    assert after.expectations() == before.expectations()
    clicks = [r.content for r in after.assistant_messages][2:5]
    assert '<selector>testid="save"</selector>' in clicks[2], clicks
    assert not list(tmp_path.glob(".xmltools-update-*"))  # the work folder went
    assert not after.missing_screenshots()


@pytest.mark.long
def test_an_update_with_a_failed_step_writes_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "flow.jsonl"
    record_flow(site, path)
    was = path.read_bytes()
    shots = sorted(p.read_bytes() for p in (tmp_path / "flow.shots").iterdir())
    page = site / "order.html"
    page.write_text(re.sub(r"<button[^>]*data-testid=\"save\"[^>]*>Save</button>", "", page.read_text()))
    with serve_directory(site) as base:
        done = asyncio.run(update(path, base_url=base))
    assert not done.written and done.why_not is not None and "failed steps" in done.why_not, done.summary()
    assert path.read_bytes() == was
    assert sorted(p.read_bytes() for p in (tmp_path / "flow.shots").iterdir()) == shots
    assert not list(tmp_path.glob(".xmltools-update-*"))
    assert isinstance(load_transcript(path).records[1], AssistantRecord | MessageRecord)


def record_todo(site: Path, path: Path) -> None:
    """A todo typed, by ref, into the second of two textboxes named "What needs to be done?"."""
    with serve_directory(site) as base, Interpreter(Config(profile="full")) as it:
        rec = it.record(path, base_url=base)
        it.handle(ba("launch", url=f"{base}/todos.html"))
        snap = it.handle(ba("snapshot")).outcomes[0].observation
        assert snap is not None and snap.snapshot is not None
        refs = re.findall(r'textbox "What needs to be done\?" \[ref=(\w+)\]', snap.snapshot)
        assert len(refs) == 2, snap.snapshot
        it.handle(ba("fill", ref=refs[1], text="Buy milk"))
        rec.expect_value("#work input", "Buy milk")
        it.handle(ba("close"))


def test_a_ref_whose_role_and_name_are_not_unique_becomes_the_locator_that_found_it(
    tmp_path: Path, capsys: Any
) -> None:
    """On the changed page the recorded ref reaches a heading, and two textboxes share the recorded
    role and name, so no ref can say which: the update writes the locator that found the element,
    and the next replay re-matches nothing."""
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "todo.jsonl"
    record_todo(site, path)
    (site / "todos.html").write_text((site / "todos-changed.html").read_text())
    with serve_directory(site) as base:
        assert main(["replay", str(path), "--base-url", base, "--update"]) == 0
        updated = capsys.readouterr().out
        assert main(["replay", str(path), "--base-url", base]) == 0
        again = capsys.readouterr().out
    assert 'RE-MATCHED textbox "What needs to be done?" with #work >> ' in updated, updated
    locator = '#work >> role=textbox[name="What needs to be done?"s]'
    assert re.search(
        rf'step 3: textbox "What needs to be done\?": ref e\d+ -> selector {re.escape(locator)}', updated
    ), updated
    assert "will still re-match" not in updated, updated
    fill = load_transcript(path).assistant_messages[2].content
    assert f"<selector>{locator}</selector>" in fill and "<ref>" not in fill, fill
    assert "RE-MATCHED" not in again and "re-matched" not in again, again
    assert "4 steps replayed (live): no drift, 1 assertions held" in again, again


@pytest.mark.parametrize("profile", ["roo", "full"])
def test_a_point_below_the_fold_is_named_when_no_selector_can_take_its_place(
    tmp_path: Path, capsys: Any, profile: str
) -> None:
    """On the changed page a tall banner covers the recorded point and pushes Save below the fold:
    no point reaches Save. In roo, which clicks by point only, the update says that the step will
    re-match on each replay, and why; in full, the locator that found Save takes the point's place."""
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "flow.jsonl"
    with serve_directory(site) as base, Interpreter(Config(profile=profile)) as it:  # type: ignore[arg-type]
        it.record(path, base_url=base)
        it.handle(ba("launch", url=f"{base}/order.html"))
        it.handle(ba("click", coordinate="100,110"))
        it.handle(ba("close"))
    (site / "order.html").write_text((site / "pushed.html").read_text())
    with serve_directory(site) as base:
        assert main(["replay", str(path), "--base-url", base, "--update"]) == 0
        updated = capsys.readouterr().out
        assert main(["replay", str(path), "--base-url", base]) == 0
        again = capsys.readouterr().out
    assert 'RE-MATCHED button "Save" with testid="save" (the target now reaches link "Help")' in updated
    if profile == "full":
        assert 'step 2: button "Save": coordinate 100,110 -> selector testid="save"' in updated, updated
        assert "will still re-match" not in updated and "RE-MATCHED" not in again, (updated, again)
        return
    assert "1 step will still re-match on each replay:" in updated, updated
    assert re.search(
        r'  step 2: button "Save" \(found by testid="save"\): its centre 100,\d+ is below the fold of the'
        r" 900x600 viewport: no point reaches it, and click takes no selector in the roo profile",
        updated,
    ), updated
    assert 'RE-MATCHED button "Save" with testid="save"' in again, again
    assert "<coordinate>100,110</coordinate>" in load_transcript(path).assistant_messages[1].content
