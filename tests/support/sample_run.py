"""A recorded run for the report tests: a stand-in browser with real screenshots, five steps, a system prompt and a task.

Both tests/unit/record/test_report.py and tests/browser/record/test_report_chromium.py read it; nothing here starts a browser.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from support.fakes import FakeBrowser
from support.helpers import ba
from xmltools.actions import Click, Hover
from xmltools.base.results import Failure, Observation, Point, Screenshot
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.transcript import (
    TranscriptWriter,
)

BASE = "http://127.0.0.1:8123"


SYSTEM = "You drive a browser. Never write <script>alert(1)</script> anywhere."


TASK = "Press the blue button, then the one in the corner."


COLOURS = ["#fde68a", "#bfdbfe", "#bbf7d0", "#fecaca", "#e9d5ff", "#fed7aa"]


def png(
    width: int, height: int, colour: str = "white", box: tuple[int, int, int, int] | None = None
) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (width, height), colour)
    if box is not None:
        ImageDraw.Draw(im).rectangle(box, fill="red")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


class PageBrowser(FakeBrowser):
    """The stand-in browser with real screenshots, one colour per action, at twice the viewport's size.

    A click at 700,500 fails (the spot is covered), with the page still to be
    seen; a hover by selector leaves the mouse at 300,200.
    """

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    async def run(self, action: Any) -> Observation | Failure | None:
        if isinstance(action, Click) and action.coordinate == Point(x=700, y=500):
            self.actions.append(action)
            return Failure(
                kind="target",
                message="the spot 700,500 is covered by a banner",
                observation=self.observation(action, None),
            )
        if isinstance(action, Hover) and action.coordinate is None:
            self.actions.append(action)
            return self.observation(action, Point(x=300, y=200))
        return await super().run(action)

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        obs = super().observation(action, mouse)
        self.n += 1
        w, h = self.viewport.width * 2, self.viewport.height * 2
        shot = Screenshot(data=png(w, h, COLOURS[self.n % len(COLOURS)]), format="png", width=w, height=h)
        return obs.model_copy(update={"screenshot": shot, "title": f"Page {self.n}"})


async def record_run(path: Path) -> Path:
    """Launch, a click, a click that fails, a message whose stream was cut, close; each step 1.234 s."""
    it = AsyncInterpreter(Config(), browser=PageBrowser())
    with TranscriptWriter(path, base_url=BASE, config=Config()) as w:
        w.message("system", SYSTEM)
        w.message("user", TASK)
        for text in (
            "Opening the app.\n" + ba("launch", url=f"{BASE}/app"),
            "The blue button.\n" + ba("click", coordinate="450,300"),
            "The corner one.\n" + ba("click", coordinate="700,500"),
        ):
            turn = await it.handle(text)
            turn.duration = 1.234
            w.turn(turn)
        stream = it.stream()
        stream.feed("Scrolling.\n" + ba("scroll_down") + "\nand then " + ba("close"))
        turn = await stream.finish(stopped=True)
        turn.duration = 1.234
        w.turn(turn)
        turn = await it.handle(ba("close"))
        turn.duration = 1.234
        w.turn(turn)
        w.end("completed", "completed", "5 turns")
    return path
