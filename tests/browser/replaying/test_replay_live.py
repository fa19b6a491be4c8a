"""Replay live in Chromium: a page that changed drifts, one that did not (or changed below the limits) does not; secrets, viewports and the command."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from support.helpers import SITE, ba, scenario

from xmltools.base.serve import serve_directory
from xmltools.config.settings import Config
from xmltools.record.transcript import ReplaySettings, load_transcript
from xmltools.replaying.run import replay

DRIFT = SITE / "drift"


DRIFT_FLOW = [
    ba("launch", url="{base_url}/index.html"),
    ba("scroll_down"),  # a short page: it stays as it is
    ba("close"),
]


def _record(site: Path, out: Path, **kw: object) -> None:
    with serve_directory(site) as base:
        scenario(out.parent / "scenario.jsonl", *DRIFT_FLOW)
        r = asyncio.run(replay(out.parent / "scenario.jsonl", base_url=base, record=out, **kw))  # type: ignore[arg-type]
    assert r.ok, r.summary()


def _replay(site: Path, transcript: Path, **kw: object) -> object:
    with serve_directory(site) as base:
        return asyncio.run(replay(transcript, base_url=base, **kw))  # type: ignore[arg-type]


CLOCK = ReplaySettings(mask_selectors=["#clock"])  # the page shows the time it was opened


@pytest.fixture
def drift_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(DRIFT, site)
    return site


@pytest.fixture
def recorded(drift_site: Path, tmp_path: Path) -> Path:
    out = tmp_path / "rec" / "flow.jsonl"
    out.parent.mkdir()
    _record(drift_site, out)
    t = load_transcript(out)
    t.header.replay = CLOCK
    lines = out.read_text().splitlines()
    lines[0] = t.header.model_dump_json()
    out.write_text("\n".join(lines) + "\n")
    return out


def _edit(site: Path, old: str, new: str) -> None:
    page = site / "index.html"
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new))


def test_an_unchanged_page_replays_without_drift(recorded: Path, drift_site: Path) -> None:
    result = _replay(drift_site, recorded)
    assert result.ok, result.summary()  # type: ignore[attr-defined]
    shots = [s for st in result.steps for s in st.shots]  # type: ignore[attr-defined]
    assert len(shots) == 2 and all(s.comparison.diff_pixels <= s.comparison.allowed for s in shots)
    assert {s.comparison.allowed for s in shots} == {54}  # no limit set anywhere: 0.0001 of 900x600


@pytest.mark.long
def test_without_its_mask_the_clock_drifts(recorded: Path, drift_site: Path) -> None:
    # the same run, without the transcript's mask: the time shown differs, and that is caught
    text = recorded.read_text().splitlines()
    header = json.loads(text[0])
    header["replay"] = None
    recorded.write_text("\n".join([json.dumps(header), *text[1:]]) + "\n")
    result = _replay(drift_site, recorded)
    assert [d.field for d in result.drifts] == ["screenshot", "screenshot"]  # type: ignore[attr-defined]
    # a mask given per test does the same as the transcript's
    assert _replay(drift_site, recorded, settings=CLOCK).ok  # type: ignore[attr-defined]


def test_a_heading_replaced_by_a_red_one_of_other_text_drifts(
    recorded: Path, drift_site: Path, tmp_path: Path
) -> None:
    _edit(drift_site, "<h1>Order summary</h1>", '<h2 style="color: red">Your basket</h2>')
    # a count given for this test wins over the ratio of this machine's configuration
    loose = ReplaySettings(max_diff_pixels=100_000)
    assert _replay(drift_site, recorded, local=Config(max_diff_pixel_ratio=0.0001), settings=loose).ok  # type: ignore[attr-defined]
    result = _replay(drift_site, recorded, diff_dir=tmp_path / "diffs")
    assert not result.ok and result.outcome == "drifted"  # type: ignore[attr-defined]
    d = result.drifts[0]  # type: ignore[attr-defined]
    assert d.step == 1 and d.field == "screenshot" and "pixels differ" in str(d)
    diffs = sorted(p.name for p in (tmp_path / "diffs").iterdir())
    assert diffs[:3] == ["step-001-1-diff.png", "step-001-1-live.webp", "step-001-1-recorded.webp"]


@pytest.mark.parametrize("folder_too", [True, False], ids=["with-its-folder", "file-alone"])
def test_a_renamed_recording_replays_live_and_compares_its_screenshots(
    recorded: Path, drift_site: Path, tmp_path: Path, folder_too: bool
) -> None:
    moved = tmp_path / "moved" / "renamed.jsonl"
    moved.parent.mkdir()
    recorded.rename(moved)
    (recorded.parent / "flow.shots").rename(moved.parent / ("renamed.shots" if folder_too else "flow.shots"))
    result = _replay(drift_site, moved)
    assert result.ok, result.summary()  # type: ignore[attr-defined]
    assert len([s for st in result.steps for s in st.shots]) == 2  # type: ignore[attr-defined]
    _edit(drift_site, "<h1>", '<h1 style="color: red">')  # and compared for real: a change drifts
    assert _replay(drift_site, moved).outcome == "drifted"  # type: ignore[attr-defined]


@pytest.mark.long
def test_a_button_moved_300_px_drifts(recorded: Path, drift_site: Path) -> None:
    _edit(drift_site, '<button id="go"', '<button style="margin-left: 300px" id="go"')
    result = _replay(drift_site, recorded)
    assert [d.field for d in result.drifts] == ["screenshot", "screenshot"]  # type: ignore[attr-defined]


@pytest.mark.long
def test_a_sub_pixel_shift_changes_pixels_and_is_no_drift(recorded: Path, drift_site: Path) -> None:
    # the round badge moves by less than a pixel: only the anti-aliasing of its edge changes
    _edit(drift_site, "transform: translateX(0px)", "transform: translateX(0.3px)")
    result = _replay(drift_site, recorded)
    assert result.ok, result.summary()  # type: ignore[attr-defined]
    shots = [s for st in result.steps for s in st.shots]  # type: ignore[attr-defined]
    from PIL import ImageChops

    from xmltools.replaying.compare import load_image

    for s in shots:  # the edge's pixels did change, and pixelmatch tells them for anti-aliasing
        changed = ImageChops.difference(load_image(s.recorded.data), load_image(s.live.data))
        assert changed.crop((20, 188, 90, 258)).getbbox(alpha_only=False) is not None  # the badge's edge
        assert s.comparison.diff_pixels <= 5


@pytest.mark.long
def test_a_blinking_caret_is_no_drift(drift_site: Path, tmp_path: Path) -> None:
    flow = [
        ba("launch", url="{base_url}/index.html"),
        ba("click", coordinate="260,286"),  # into the voucher field
        ba("type", text="SPRING"),
        *[ba("scroll_up") for _ in range(8)],  # the page stays; the caret blinks on and off
        ba("close"),
    ]
    out = tmp_path / "caret" / "flow.jsonl"
    out.parent.mkdir()
    with serve_directory(drift_site) as base:
        scenario(tmp_path / "caret.jsonl", *flow)
        first = asyncio.run(replay(tmp_path / "caret.jsonl", base_url=base, record=out, settings=CLOCK))
        assert first.ok, first.summary()
        blinked = 0
        for _ in range(3):
            again = asyncio.run(replay(out, base_url=base, settings=CLOCK))
            assert again.ok, again.summary()
            blinked += sum(s.comparison.diff_pixels > 0 for st in again.steps for s in st.shots)
        assert blinked  # the caret was caught in another phase than recorded, and that was no drift


@pytest.mark.long
def test_recorded_at_800x500_replays_at_800x500_on_a_machine_set_to_900x600(
    drift_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "rec" / "flow.jsonl"
    out.parent.mkdir()
    _record(drift_site, out, config=Config(viewport="800x500", executable="/usr/bin/chromium"))  # type: ignore[arg-type]
    t = load_transcript(out)
    assert t.header.config["viewport"] == {"width": 800, "height": 500}
    # this machine: another viewport, and its own browser setting in the environment
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XMLTOOLS_VIEWPORT", "900x600")
    monkeypatch.setenv("XMLTOOLS_EXECUTABLE", "/usr/bin/chromium")
    result = _replay(drift_site, out, settings=CLOCK)
    assert result.ok, result.summary()  # type: ignore[attr-defined]
    assert result.differences == ["viewport: 800x500 from the recording (this machine: 900x600)"]  # type: ignore[attr-defined]
    # the recording's own browser path would not exist here: it is never used
    header = json.loads(out.read_text().splitlines()[0])
    header["config"]["executable"] = "/their/machine/chrome"
    out.write_text("\n".join([json.dumps(header), *out.read_text().splitlines()[1:]]) + "\n")
    assert _replay(drift_site, out, settings=CLOCK).ok  # type: ignore[attr-defined]


def test_a_secret_round_trips_through_recording_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    out = tmp_path / "rec" / "login.jsonl"
    out.parent.mkdir()
    flow = [
        ba("launch", url="{base_url}/form.html"),
        ba("click", coordinate="150,97"),
        ba("type", text="{secret:NAME}"),
        ba("press", text="Enter"),
        ba("close"),
    ]
    scenario(tmp_path / "login.jsonl", *flow)
    with serve_directory(site) as base:
        first = asyncio.run(
            replay(tmp_path / "login.jsonl", base_url=base, record=out, secrets={"NAME": "Grace"})
        )
        assert first.ok, first.summary()
        raw = out.read_text()
        assert "Grace" not in raw and "{secret:NAME}" in raw
        # the value comes back from the environment
        monkeypatch.setenv("XMLTOOLS_SECRET_NAME", "Grace")
        again = asyncio.run(replay(out, base_url=base))
        assert again.ok, again.summary()
        # another value types another name: the page the form leads to shows it, and that drifts
        monkeypatch.setenv("XMLTOOLS_SECRET_NAME", "Alan")
        other = asyncio.run(replay(out, base_url=base))
        assert not other.ok


def test_the_command_names_the_drift_keeps_the_diff_and_says_whose_settings(
    recorded: Path,
    drift_site: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from xmltools.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XMLTOOLS_OBSERVE", "both")  # this machine's own setting; the recording's wins
    _edit(drift_site, '<button id="go"', '<button style="margin-left: 300px" id="go"')
    diffs = tmp_path / "diffs"
    rc = main(["replay", str(recorded), "--serve", str(drift_site), "--diffs", str(diffs)])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "DRIFT screenshot: " in out and "pixels differ" in out
    setting = "setting observe: screenshot from the recording (this machine: both)"
    assert out.index(setting) < out.index("[1/3]")  # said before the run
    # and again with the result, since it may explain the drift
    assert out.rindex("observe: screenshot from the recording") > out.index("DRIFT")
    assert (diffs / "step-001-1-diff.png").is_file()
    # masking the moved button makes the same replay pass
    rc = main(["replay", str(recorded), "--serve", str(drift_site), "--mask", "0,130,500,60"])
    assert rc == 0, capsys.readouterr().out
