"""Replay that catches what a person would see, and transcripts that travel.

Screenshot drift (pixelmatch), failures that the recording did not have, the
settings of the recording against this machine's, secrets by name, `{base_url}`
asked for before any browser starts, recording that starts afresh.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from support.fakes import FakeBrowser
from support.helpers import SITE, ba, scenario

from xmltools import UsageError
from xmltools.base.results import Observation
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.transcript import (
    ReplaySettings,
    ToolResultRecord,
    TranscriptError,
    TranscriptWriter,
    load_transcript,
)
from xmltools.replaying.compare import Region, compare_images
from xmltools.replaying.run import replay, replay_config

DRIFT = SITE / "drift"


def png(width: int, height: int, draw: str = "") -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(im)
    if "box" in draw:
        d.rectangle((100, 100, 300, 200), fill="red")
    if "dot" in draw:
        d.point((10, 10), fill="black")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


# -- the comparison itself ---------------------------------------------------------------


def test_a_changed_area_drifts_and_its_diff_image_shows_it() -> None:
    c = compare_images(png(900, 600), png(900, 600, "box"), max_diff_pixel_ratio=0.0001)
    assert not c.ok and c.diff_pixels == 201 * 101 and c.allowed == 54
    assert c.diff_png is not None and c.diff_png.startswith(b"\x89PNG")
    from PIL import Image

    diff = Image.open(io.BytesIO(c.diff_png)).convert("RGB")
    assert diff.size == (900, 600) and diff.getpixel((200, 150)) == (255, 0, 0)  # red where it changed
    assert diff.getpixel((600, 400)) != (255, 0, 0)


def test_the_limits_follow_playwright_the_smaller_one_wins() -> None:
    a, b = png(900, 600), png(900, 600, "dot")
    assert not compare_images(a, b).ok  # no limit given: not one pixel may differ
    assert compare_images(a, b, max_diff_pixels=1).ok
    assert compare_images(a, b, max_diff_pixel_ratio=0.01).ok
    assert not compare_images(a, b, max_diff_pixels=0, max_diff_pixel_ratio=0.01).ok
    # the threshold: a pale change is no difference at 0.2, and one at 0
    from PIL import Image

    im = Image.new("RGB", (50, 50), (250, 250, 250))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    assert compare_images(png(50, 50), buf.getvalue(), threshold=0.2).ok
    assert not compare_images(png(50, 50), buf.getvalue(), threshold=0.0).ok


def test_a_masked_region_is_left_out_in_both_images_scaled_to_the_image() -> None:
    a, b = png(900, 600), png(900, 600, "box")
    assert compare_images(a, b, mask=[Region(x=90, y=90, width=230, height=120)]).ok
    # the same region in CSS pixels of a 450-wide viewport, on a screenshot twice as wide
    assert compare_images(a, b, mask=[Region(x=45, y=45, width=115, height=60)], scale=2.0).ok
    assert not compare_images(a, b, mask=[Region(x=90, y=90, width=100, height=50)]).ok


def test_a_different_size_is_reported_as_such() -> None:
    c = compare_images(png(900, 600), png(800, 500))
    assert (
        not c.ok and c.size_differs and c.describe() == "the screenshot is 800x500, the recording's 900x600"
    )
    assert c.diff_png is not None  # both, side by side


def test_a_layer_that_sets_one_limit_sets_both() -> None:
    # a count given in a test loosens a ratio inherited from the configuration or the header
    base = ReplaySettings(max_diff_pixel_ratio=0.0001, mask_selectors=["#a"])
    top = base.merged(ReplaySettings(max_diff_pixels=500, mask_selectors=["#b"]))
    assert top.max_diff_pixels == 500 and top.max_diff_pixel_ratio is None
    assert top.mask_selectors == ["#a", "#b"]
    both = base.merged(ReplaySettings(max_diff_pixels=500, max_diff_pixel_ratio=0.01))
    assert (both.max_diff_pixels, both.max_diff_pixel_ratio) == (500, 0.01)  # then the smaller wins
    assert base.merged(ReplaySettings(mask=[])).max_diff_pixel_ratio == 0.0001  # no limit: kept
    assert Config().max_diff_pixel_ratio is None  # unset everywhere: the replay's default


def test_a_bad_region_or_threshold_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="X,Y,WIDTH,HEIGHT"):
        Region.parse("1,2,3")
    assert Region.parse("1, 2, 30, 40") == Region(x=1, y=2, width=30, height=40)
    with pytest.raises(UsageError, match="between 0 and 1"):
        compare_images(png(10, 10), png(10, 10), threshold=2)


# -- recording -----------------------------------------------------------------------------


async def test_recording_starts_the_file_afresh_unless_appending(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    for _ in range(2):
        it = AsyncInterpreter(Config(), browser=FakeBrowser())
        with TranscriptWriter(out, config=it.config) as w:
            w.turn(await it.handle(ba("launch", url="http://a/")))
    t = load_transcript(out)
    assert len(t.assistant_messages) == 1 and sorted(p.name for p in (tmp_path / "run.shots").iterdir()) == [
        "0001.webp"
    ]
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    with TranscriptWriter(out, append=True) as w:
        w.turn(await it.handle(ba("launch", url="http://b/")))
    assert len(load_transcript(out).assistant_messages) == 2


def test_a_header_keeps_the_base_url_it_was_given(tmp_path: Path) -> None:
    from xmltools.record.transcript import Header

    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path, Header(base_url="http://127.0.0.1:8000")) as w:
        w.message("user", "open http://127.0.0.1:8000/x.html")
    t = load_transcript(path)
    assert t.header.base_url == "http://127.0.0.1:8000"
    assert "open http://127.0.0.1:8000/x.html" in path.read_text()  # no writer base_url: left as is


def test_a_file_holding_two_runs_is_refused(tmp_path: Path) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"))
    path.write_text(path.read_text() * 2)
    with pytest.raises(TranscriptError, match=r"s.jsonl:3: a second header: this file holds two runs"):
        load_transcript(path)


def test_a_writer_without_a_config_writes_the_layered_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XMLTOOLS_VIEWPORT", "800x500")
    with TranscriptWriter(tmp_path / "a.jsonl"):
        pass
    assert load_transcript(tmp_path / "a.jsonl").header.config["viewport"] == {"width": 800, "height": 500}
    with TranscriptWriter(tmp_path / "b.jsonl", config=Config(viewport="640x480")):  # type: ignore[arg-type]
        pass
    assert load_transcript(tmp_path / "b.jsonl").header.config["viewport"] == {"width": 640, "height": 480}


async def test_the_interpreter_records_its_settings_prompt_and_every_turn(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    async with AsyncInterpreter(Config(viewport="800x500"), browser=FakeBrowser()) as it:  # type: ignore[arg-type]
        w = it.record(out, base_url="http://a")
        w.message("user", "open the page")
        await it.handle(ba("launch", url="http://a/page.html"))
        await it.handle(ba("click", coordinate="10,10"))
        stream = it.stream()
        stream.feed(ba("close") + " and more")
        await stream.finish(stopped=True)
    t = load_transcript(out)
    assert t.header.config["viewport"] == {"width": 800, "height": 500}
    assert t.header.base_url == "http://a" and t.header.templates
    assert t.message("system") == it.system_prompt() and t.message("user") == "open the page"
    assert [a.content.startswith("<browser_action>") for a in t.assistant_messages] == [True] * 3
    assert t.assistant_messages[2].cut and all(a.duration is not None for a in t.assistant_messages)
    first = next(r for r in t.records if isinstance(r, ToolResultRecord))
    assert first.observation is not None and first.observation.url == "{base_url}/page.html"
    it2 = AsyncInterpreter(Config(), browser=FakeBrowser())
    it2.record(out, append=True)
    await it2.handle(ba("launch", url="http://a/"))
    await it2.aclose()
    t = load_transcript(out)
    assert len(t.assistant_messages) == 4 and [r.role for r in t.records].count("system") == 1


# -- secrets -------------------------------------------------------------------------------


class EchoBrowser(FakeBrowser):
    """A stand-in page that shows what was typed in its title and console, as a careless page would."""

    def observation(self, action: object, mouse: object) -> Observation:
        obs = super().observation(action, None)
        typed = getattr(action, "text", "") or ""
        return obs.model_copy(update={"title": f"typed {typed}", "url": f"{self.url}?q={typed}"})


async def test_a_secret_reaches_the_browser_and_nothing_else(tmp_path: Path) -> None:
    browser = EchoBrowser()
    out = tmp_path / "s.jsonl"
    async with AsyncInterpreter(Config(), browser=browser, secrets={"PASSWORD": "hunter2"}) as it:
        it.record(out)
        await it.handle(ba("launch", url="http://a/"))
        turn = await it.handle(ba("type", text="{secret:PASSWORD}"))
        assert browser.actions[-1].text == "hunter2"  # the browser got the value
        assert "hunter2" not in json.dumps(turn.result) and "{secret:PASSWORD}" in json.dumps(turn.result)
        obs = turn.outcomes[0].observation
        assert obs is not None and obs.title == "typed {secret:PASSWORD}"
        assert "hunter2" not in obs.url
        # the model wrote the value itself (the host gave it in the task): recorded by name
        await it.handle(ba("type", text="hunter2!"))
        bad = await it.handle(ba("type", text="{secret:PASWORD}"))
        assert bad.outcomes[0].status == "invalid"
        assert "no secret named PASWORD (the secrets you may use: PASSWORD)" in bad.outcomes[0].text
    raw = out.read_text()
    assert "hunter2" not in raw and raw.count("{secret:PASSWORD}") >= 4
    assert "{secret:PASSWORD}!" in raw


def test_secret_names_are_checked(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="a secret's name"):
        AsyncInterpreter(Config(), browser=FakeBrowser(), secrets={"MY-PASS": "x"})
    with pytest.raises(UsageError, match="a secret's name"):
        TranscriptWriter(tmp_path / "x.jsonl", secrets={"1X": "x"})


async def test_a_missing_secret_is_a_host_error_naming_it_before_any_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario(
        tmp_path / "s.jsonl",
        ba("launch", url="http://127.0.0.1:9/"),
        ba("type", text="{secret:PASSWORD} and {secret:PIN}"),
    )
    monkeypatch.delenv("PASSWORD", raising=False)
    monkeypatch.delenv("PIN", raising=False)
    with pytest.raises(UsageError, match=r"the transcript uses the secrets PASSWORD, PIN"):
        await replay(path, local=Config(executable="/nonexistent/chromium"))
    # a variable of the secret's bare name is not read: a transcript from elsewhere could name any
    monkeypatch.setenv("PIN", "1234")
    with pytest.raises(UsageError, match=r"or set XMLTOOLS_SECRET_PASSWORD, XMLTOOLS_SECRET_PIN$"):
        await replay(path, local=Config(executable="/nonexistent/chromium"))
    monkeypatch.setenv("XMLTOOLS_SECRET_PIN", "1234")
    with pytest.raises(UsageError, match=r"the transcript uses the secret PASSWORD:"):
        await replay(path, local=Config(executable="/nonexistent/chromium"))


async def test_a_replay_needs_only_the_secrets_the_host_gave_when_recording(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    async with AsyncInterpreter(Config(), browser=EchoBrowser(), secrets={"PASSWORD": "hunter2"}) as it:
        it.record(out)
        await it.handle(ba("launch", url="http://a/"))
        await it.handle(ba("type", text="{secret:PASSWORD}"))
        made_up = await it.handle(ba("type", text="{secret:HOME}"))  # the model's own idea
        assert made_up.outcomes[0].status == "invalid"
    t = load_transcript(out)
    assert t.header.secrets == ["PASSWORD"]
    with pytest.raises(UsageError, match=r"uses the secret PASSWORD:"):  # HOME is not asked for
        await replay(out, local=Config(executable="/nonexistent/chromium"), environ={"HOME": "/root"})
    # and it is the same error as when recorded, with nothing of this machine typed
    browser = EchoBrowser()
    it = AsyncInterpreter(Config(), browser=browser, secrets={"PASSWORD": "x"})
    result = await replay(out, offline=True, interpreter=it, secrets={"PASSWORD": "x"})
    assert result.steps[2].turn.outcomes[0].status == "invalid" and not result.failures
    assert [getattr(a, "text", None) for a in browser.actions][1:] == ["x"]


def test_secret_values_are_hidden_in_one_pass_in_every_form_a_page_gives_them() -> None:
    from xmltools.base.secrets import Hider, hide

    secrets = {"PASSWORD": "hunter2", "WORD": "secret"}
    # a placeholder just written is not searched again: "secret" stays inside {secret:PASSWORD}
    assert hide("hunter2 and secret", secrets) == "{secret:PASSWORD} and {secret:WORD}"
    # the longest value first: a secret holding another is hidden whole
    assert hide("hunter2x", {"A": "hunter2", "B": "hunter2x"}) == "{secret:B}"
    odd = Hider({"P": "p@ss word&<"}, ["tok/en"])
    assert odd("/login?u=p%40ss%20word%26%3C") == "/login?u={secret:P}"  # percent-encoded
    assert odd("q=p%40ss+word%26%3C") == "q={secret:P}"  # as a form sends it
    assert odd("<b>p@ss word&amp;&lt;</b>") == "<b>{secret:P}</b>"  # HTML-escaped
    assert odd("key tok/en, tok%2Fen") == "key [redacted], [redacted]"
    assert not Hider({}) and Hider({}, [])("text") == "text"


async def test_a_call_refused_for_its_filled_value_quotes_the_placeholder(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    async with AsyncInterpreter(Config(), browser=FakeBrowser(), secrets={"KEY": "hunter2"}) as it:
        it.record(out)
        await it.handle(ba("launch", url="http://a/"))
        turn = await it.handle(ba("press", text="{secret:KEY}"))  # not a key: the value is refused
        o = turn.outcomes[0]
        assert o.status == "invalid" and o.error is not None
        assert "'{secret:KEY}' is not a key" in o.error.message and "hunter2" not in o.error.message
        assert "hunter2" not in o.text
    assert "hunter2" not in out.read_text()


async def test_an_offline_replay_fills_secrets_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "s.jsonl"
    async with AsyncInterpreter(Config(), browser=EchoBrowser(), secrets={"PASSWORD": "hunter2"}) as it:
        it.record(out)
        await it.handle(ba("launch", url="http://a/"))
        await it.handle(ba("type", text="{secret:PASSWORD}"))
    monkeypatch.setenv("XMLTOOLS_SECRET_PASSWORD", "hunter2")
    result = await replay(out, offline=True)
    assert result.ok, result.summary()


# -- {base_url} ---------------------------------------------------------------------------


async def test_base_url_is_asked_for_before_any_browser_starts(tmp_path: Path) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="{base_url}/form.html"))
    with pytest.raises(
        UsageError, match=r"uses \{base_url\}: give the address .*--base-url URL.*--serve DIR"
    ):
        await replay(path, local=Config(executable="/nonexistent/chromium"))


# -- whose settings ------------------------------------------------------------------------


def test_behaviour_comes_from_the_recording_and_the_browser_from_this_machine(tmp_path: Path) -> None:
    recorded = Config(
        viewport="800x500",  # type: ignore[arg-type]
        observe="both",
        executable="/their/chromium",
        headless=False,
        remote="ws://their-host:3000/",
        downloads_dir=Path("/their/downloads"),
        max_diff_pixel_ratio=0.5,
    )
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path, config=recorded):
        pass
    t = load_transcript(path)
    # this machine's browser settings are not written at all (a remote endpoint may hold a token)
    assert not {"executable", "headless", "remote", "downloads_dir"} & set(t.header.config)
    assert "their-host" not in path.read_text()
    local = Config(executable="/usr/bin/chromium", max_diff_pixel_ratio=0.001)
    config, differences = replay_config(t, local)
    assert config.viewport.width == 800 and config.observe == "both"
    assert config.executable == "/usr/bin/chromium" and config.headless and config.remote is None
    assert config.downloads_dir is None and config.max_diff_pixel_ratio == 0.001
    assert "viewport: 800x500 from the recording (this machine: 900x600)" in differences
    assert "observe: both from the recording (this machine: screenshot)" in differences
    assert not any("executable" in d or "headless" in d for d in differences)
    # a folder of the recording's machine that is not here: this machine's setting, said
    header = json.loads(path.read_text().splitlines()[0])
    header["config"]["templates"] = "/their/templates"
    header["config"]["allowed_file_roots"] = [str(tmp_path), "/their/files"]
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps(header) + "\n")
    config, differences = replay_config(load_transcript(odd), local)
    assert config.templates is None and config.allowed_file_roots == ()
    assert "templates: the recording's /their/templates is not on this machine; this machine's is used" in (
        differences
    )
    assert any(d.startswith("allowed_file_roots: the recording's /their/files") for d in differences)
    # the command line wins over both
    config, _ = replay_config(t, local, {"headless": False, "viewport": "640x480"})
    assert not config.headless and config.viewport.width == 640
    # a recorded setting this version rejects is left out, and said
    bad = path.read_text().replace('"observe": "both"', '"observe": "everything"')
    path.write_text(bad)
    config, differences = replay_config(load_transcript(path), local)
    assert config.observe == "screenshot" and config.viewport.width == 800
    assert any(d.startswith("observe: the recording's 'everything' is not valid here") for d in differences)


# -- failures ------------------------------------------------------------------------------


async def test_a_scenario_that_fails_fails_the_replay_unless_failures_are_allowed(tmp_path: Path) -> None:
    path = scenario(
        tmp_path / "s.jsonl",
        ba("launch", url="http://a/"),
        ba("click", coordinate="10,10"),
        ba("scroll_down"),
        ba("close"),
    )
    from xmltools.base.results import Failure

    died = Failure(kind="crashed", message="the page crashed", browser_closed=True)

    async def run(allow: bool) -> object:
        it = AsyncInterpreter(Config(), browser=FakeBrowser(fail={"click": died}))
        return await replay(path, offline=False, interpreter=it, allow_failures=allow, base_url="http://a")

    result = await run(False)
    assert not result.ok and result.outcome == "failed"  # type: ignore[attr-defined]
    assert result.failures[0].startswith("step 2: browser_action click: failed (the page crashed")  # type: ignore[attr-defined]
    assert "step 3: browser_action scroll_down: refused" in result.failures[1]  # type: ignore[attr-defined]
    assert "failed steps" in result.summary()  # type: ignore[attr-defined]
    assert (await run(True)).ok  # type: ignore[attr-defined]


async def test_a_recorded_failure_replayed_alike_is_no_failure(tmp_path: Path) -> None:
    from xmltools.base.results import Failure

    out = tmp_path / "r.jsonl"
    slow = Failure(kind="timeout", message="no page within 1 s")
    async with AsyncInterpreter(Config(), browser=FakeBrowser(fail={"click": slow})) as it:
        it.record(out)
        await it.handle(ba("launch", url="http://a/"))
        await it.handle(ba("click", coordinate="10,10"))
    result = await replay(out, offline=True)
    assert result.ok and not result.failures, result.summary()


async def test_an_approval_recorded_is_answered_alike_in_replay(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    cfg = Config(approval={"navigate": "ask"})
    async with AsyncInterpreter(cfg, browser=FakeBrowser()) as it:
        it.record(out)
        turn = await it.handle(ba("launch", url="http://a/"))
        assert turn.approval_required is not None
        await it.approve(turn.approval_required)
        turn = await it.handle(ba("launch", url="http://b/"))
        assert turn.approval_required is not None
        await it.deny(turn.approval_required, "not that site")
    t = load_transcript(out)
    statuses = [r.status for r in t.records if isinstance(r, ToolResultRecord)]
    assert statuses == ["pending", "ok", "pending", "denied"]
    again = tmp_path / "again.jsonl"
    result = await replay(out, offline=True, record=again)
    assert result.ok, result.summary()
    assert [s.turn.outcomes[0].status for s in result.steps] == ["ok", "denied"]
    assert "not that site" in result.steps[1].turn.outcomes[0].text
    # the replay's own recording holds the held calls and their answers: it replays alike
    statuses = [r.status for r in load_transcript(again).records if isinstance(r, ToolResultRecord)]
    assert statuses == ["pending", "ok", "pending", "denied"]
    assert (await replay(again, offline=True)).ok
    with pytest.raises(UsageError, match="cannot record over the transcript it replays"):
        await replay(again, offline=True, record=again)


# -- the command ---------------------------------------------------------------------------


def test_the_command_exits_2_for_a_missing_base_url_secret_or_display(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xmltools.cli import main

    path = scenario(
        tmp_path / "s.jsonl", ba("launch", url="{base_url}/x.html"), ba("type", text="{secret:PIN}")
    )
    monkeypatch.delenv("PIN", raising=False)
    assert main(["replay", str(path)]) == 2
    assert "uses {base_url}: give the address" in capsys.readouterr().err
    assert main(["replay", str(path), "--base-url", "http://127.0.0.1:9"]) == 2
    assert "the transcript uses the secret PIN" in capsys.readouterr().err
    assert main(["replay", str(path), "--secret", "PIN"]) == 2
    assert "--secret takes NAME=VALUE" in capsys.readouterr().err
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["replay", str(path), "--headed", "--base-url", "http://127.0.0.1:9"]) == 2
    assert "--headed shows the browser window" in capsys.readouterr().err
    # a comparison setting out of range is the command line's mistake, said as such
    assert main(["replay", str(path), "--offline", "--screenshot-threshold", "2"]) == 2
    assert "--screenshot-threshold: Input should be less than or equal to 1" in capsys.readouterr().err


def test_an_offline_replay_of_a_failing_recording_exits_1_unless_failures_are_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xmltools.cli import main

    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"), ba("click", coordinate="5,5"))
    assert main(["replay", str(path), "--offline"]) == 1
    out = capsys.readouterr().out
    assert "FAILED browser_action launch: failed" in out and "failed steps" in out
    assert main(["replay", str(path), "--offline", "--allow-failures"]) == 0


def test_a_snapshot_compares_without_refs_boxes_and_the_focus_mark() -> None:
    from xmltools.replaying.checks import _snapshot_lines

    recorded = (
        '- generic:\n  - button "Send order" [disabled] [active] [ref=e7]\n  - text: done [box=1,2,3,4]'
    )
    live = '- generic [active]:\n  - button "Send order" [disabled] [ref=e9]\n  - text: done'
    assert _snapshot_lines(recorded, []) == _snapshot_lines(live, [])
    assert _snapshot_lines('- button "Send"', []) != _snapshot_lines('- button "Sent"', [])
