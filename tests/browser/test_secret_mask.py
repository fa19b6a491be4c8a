"""A field that received a secret is painted over in every screenshot of the session, pixel for pixel;
a field that received ordinary text is not."""

from __future__ import annotations

import io
from typing import Any

import pytest
from helpers import ba
from PIL import Image

from xmltools.config import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.results import Observation

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
    from helpers import SITE

    from xmltools.secrets import Secret
    from xmltools.serve import serve_directory

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
    from helpers import SITE

    from xmltools.replaying import replay
    from xmltools.secrets import Secret
    from xmltools.serve import serve_directory

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
