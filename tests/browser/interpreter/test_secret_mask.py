"""A field that received a secret is painted over in every screenshot of the session, pixel for pixel;
a field that received ordinary text is not.  A recording that keeps a secret masks its field as it
records, so that its replay has no drift there; a recording made before it did still replays."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.helpers import SITE, ba

from xmltools.base.results import Observation
from xmltools.base.serve import serve_directory
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.record.transcript import TranscriptWriter, load_transcript
from xmltools.replaying.run import replay

MAGENTA = (255, 0, 255)
SECRET = "correct horse battery staple"


def _inside(obs: Observation, box: dict[str, float]) -> tuple[float, int]:
    """The share of the field's inner pixels that have the mask's colour, and how many are dark
    (the strokes of text or of a password's dots)."""
    assert obs.screenshot is not None
    img = Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")
    left, top = int(box["x"]) + 4, int(box["y"]) + 4
    right, bottom = int(box["x"] + box["width"]) - 4, int(box["y"] + box["height"]) - 4
    pixels = [img.getpixel((x, y)) for x in range(left, right) for y in range(top, bottom)]
    near = [p for p in pixels if all(abs(a - b) <= 48 for a, b in zip(p, MAGENTA, strict=True))]  # type: ignore[arg-type]
    dark = [p for p in pixels if sum(p) < 3 * 110]  # type: ignore[arg-type]
    return len(near) / len(pixels), len(dark)


@pytest.mark.parametrize(("text", "masked"), [("{secret:PASSWORD}", True), ("an ordinary note", False)])
async def test_a_field_that_received_a_secret_is_painted_over(site: str, text: str, masked: bool) -> None:
    async with AsyncInterpreter(Config(), secrets={"PASSWORD": SECRET}) as it:
        await it.handle(ba("launch", url=f"{site}/rematch/order.html"))
        browser = it.browser_of()
        assert browser is not None
        box = await browser.on_page(lambda p: p.locator("#note").bounding_box())  # type: ignore[attr-defined]
        point = f"{int(box['x'] + 20)},{int(box['y'] + box['height'] / 2)}"
        await it.handle(ba("click", coordinate=point))
        typed = await it.handle(ba("type", text=text))
        value = await browser.on_page(lambda p: p.locator("#note").input_value())  # type: ignore[attr-defined]
        assert value == (SECRET if masked else text)
        later = await it.handle(ba("scroll_down"))  # every later screenshot too
        for turn in (typed, later):
            obs = turn.outcomes[0].observation
            assert obs is not None
            share, dark = _inside(obs, box)
            if masked:
                assert share > 0.95 and dark == 0, (share, dark)
            else:
                assert share < 0.01 and dark > 20, (share, dark)
        assert SECRET not in str(typed.messages)


async def test_a_bound_secret_never_reaches_another_origin(tmp_path: Any) -> None:
    """The same sign-in page served on two loopback ports: the secret bound to the first is typed
    there, and refused on the second before anything is typed; the field stays empty."""
    from support.helpers import SITE

    from xmltools.base.secrets import Secret
    from xmltools.base.serve import serve_directory

    with serve_directory(SITE / "rematch") as good, serve_directory(SITE / "rematch") as other:
        secrets = {"PASSWORD": Secret(SECRET, origins=[good])}
        async with AsyncInterpreter(Config(), secrets=secrets) as it:
            for base, allowed in ((good, True), (other, False)):
                await it.handle(ba("launch", url=f"{base}/order.html"))
                browser = it.browser_of()
                assert browser is not None
                box = await browser.on_page(lambda p: p.locator("#note").bounding_box())  # type: ignore[attr-defined]
                await it.handle(ba("click", coordinate=f"{int(box['x'] + 20)},{int(box['y'] + 10)}"))
                turn = await it.handle(ba("type", text="{secret:PASSWORD}"))
                value = await browser.on_page(lambda p: p.locator("#note").input_value())  # type: ignore[attr-defined]
                assert value == (SECRET if allowed else ""), base
                assert turn.outcomes[0].status == ("ok" if allowed else "denied")
                assert SECRET not in str(turn.messages)
                await it.handle(ba("close"))


async def test_a_replay_keeps_a_bound_secret_to_its_origin(tmp_path: Any) -> None:
    """A run recorded on one origin, replayed at another address (``{base_url}``): with the secret
    bound to the recording's origin the typing step is refused, before anything is typed, and the
    replay fails there; bound to the replay's own origin, it passes, and no file holds the value."""
    from support.helpers import SITE

    from xmltools.base.secrets import Secret
    from xmltools.base.serve import serve_directory
    from xmltools.replaying.run import replay

    record = tmp_path / "run.jsonl"
    with serve_directory(SITE / "rematch") as first:
        async with AsyncInterpreter(Config(), secrets={"PASSWORD": Secret(SECRET, origins=[first])}) as it:
            it.record(record, base_url=first)
            await it.handle(ba("launch", url=f"{first}/order.html"))
            browser = it.browser_of()
            assert browser is not None
            box = await browser.on_page(lambda p: p.locator("#note").bounding_box())  # type: ignore[attr-defined]
            await it.handle(ba("click", coordinate=f"{int(box['x'] + 20)},{int(box['y'] + 10)}"))
            await it.handle(ba("type", text="{secret:PASSWORD}"))
            await it.handle(ba("close"))
    with serve_directory(SITE / "rematch") as second:
        elsewhere = await replay(
            record,
            base_url=second,
            secrets={"PASSWORD": Secret(SECRET, origins=[first])},
            record=tmp_path / "a.jsonl",
        )
        here = await replay(
            record,
            base_url=second,
            secrets={"PASSWORD": Secret(SECRET, origins=[second])},
            record=tmp_path / "b.jsonl",
        )
    assert [s.index for s in elsewhere.steps if s.failures] == [3], elsewhere.summary()
    assert "the secret PASSWORD is only for" in elsewhere.steps[2].failures[0]
    assert not here.failures and not here.drifts, here.summary()
    for path in tmp_path.glob("*.jsonl"):
        assert SECRET not in path.read_text() and "{secret:PASSWORD}" in path.read_text()


PASSWORD = "lovelace"  # fixtures/site/app signs ada in with it
PASSWORD_BOX = {"x": 300, "y": 180, "width": 300, "height": 40}  # the password field, as the page places it


def record_sign_in(path: Path, base: str, known_by: str) -> None:
    """A host's own loop signs ada in; the model writes the password out (its task told it). The
    secret is known to the host's TranscriptWriter (``writer``), to the interpreter that records
    (``interpreter``), or to nobody (``nobody``: as a recording made before fields were masked at
    record time looks, once its password is written as ``{secret:PASSWORD}``)."""
    secrets = {"PASSWORD": PASSWORD}
    with Interpreter(Config(), secrets=secrets if known_by == "interpreter" else None) as it:
        if known_by == "interpreter":
            rec = it.record(path, base_url=base)
        else:
            rec = TranscriptWriter(
                path, config=it.config, secrets=secrets if known_by == "writer" else {}, base_url=base
            )
        steps = [
            ba("launch", url=f"{base}/index.html"),
            ba("click", coordinate="450,140"),
            ba("type", text="ada"),
            ba("click", coordinate="450,200"),
            ba("type", text=PASSWORD),
            ba("click", coordinate="450,140"),  # the password field is still in view, not focused
            ba("click", coordinate="450,262"),  # Sign in
            ba("close"),
        ]
        for step in steps:
            turn = it.handle(step)
            assert [o.status for o in turn.outcomes] == ["ok"], turn.outcomes
            if known_by != "interpreter":
                rec.turn(turn)
        rec.close()


def shot_of(path: Path, step: int) -> Observation:
    """The recorded observation of a step, with its screenshot."""
    t = load_transcript(path)
    obs = list(t.steps())[step - 1][1][0].observation
    assert obs is not None
    shot = t.screenshot(obs)
    assert shot is not None
    return Observation(url=obs.url, title=obs.title, viewport=obs.viewport, screenshot=shot)


@pytest.mark.parametrize("known_by", ["writer", "interpreter"])
def test_a_sign_in_recorded_with_a_secret_shows_it_masked_and_replays_without_drift(
    tmp_path: Path, capsys: Any, known_by: str
) -> None:
    """The password is written out by the model: the recording that keeps it secret masks its field
    at record time, in the screenshot of the step that typed it and of the next, as the replay
    (which types {secret:PASSWORD}) masks it; the replay has no drift."""
    path = tmp_path / "signin.jsonl"
    with serve_directory(SITE / "app") as base:
        record_sign_in(path, base, known_by)
        assert main(["replay", str(path), "--base-url", base, "--secret", f"PASSWORD={PASSWORD}"]) == 0
    out = capsys.readouterr().out
    assert "8 steps replayed (live): no drift" in out, out
    assert PASSWORD not in path.read_text() and "<text>{secret:PASSWORD}</text>" in path.read_text()
    for step in (5, 6):
        share, dark = _inside(shot_of(path, step), PASSWORD_BOX)
        assert share > 0.95 and dark == 0, (step, share, dark)


@pytest.mark.long
def test_a_recording_whose_field_was_not_masked_still_replays_without_drift(tmp_path: Path) -> None:
    """A recording made before fields were masked at record time: the password's dots are in its
    screenshots, the replay paints the field over, and that field is left out of the comparison on
    both sides."""
    path = tmp_path / "signin.jsonl"
    with serve_directory(SITE / "app") as base:
        record_sign_in(path, base, "nobody")
        lines = path.read_text().splitlines()
        header = json.loads(lines[0])
        header["secrets"] = ["PASSWORD"]
        old = "\n".join([json.dumps(header), *lines[1:]]).replace(PASSWORD, "{secret:PASSWORD}")
        path.write_text(old + "\n")
        result = asyncio.run(replay(path, base_url=base, secrets={"PASSWORD": PASSWORD}))
    assert result.ok and not result.drifts, result.summary()
    for step in (5, 6):
        share, dark = _inside(shot_of(path, step), PASSWORD_BOX)
        assert share < 0.01 and dark > 20, (step, share, dark)  # the dots, as recorded
        live = result.steps[step - 1].shots[0].live
        share, dark = _inside(shot_of(path, step).model_copy(update={"screenshot": live}), PASSWORD_BOX)
        assert share > 0.95 and dark == 0, (step, share, dark)  # painted over, live
