"""The interpreter end to end, in a real Chromium: a session from launch to close on the fixture app."""

from __future__ import annotations

from support.helpers import ba

from xmltools.config.settings import Config
from xmltools.interpreter import Interpreter
from xmltools.protocol.machine import State

CLOSE = ba("close")


def test_end_to_end_in_chromium(site: str) -> None:
    with Interpreter(Config()) as it:
        t = it.handle("Let me open the app.\n" + ba("launch", url=site + "/app/index.html"))
        assert (
            t.ran is not None
            and t.ran.observation is not None
            and t.ran.observation.title.startswith("Shopping")
        )
        it.handle(ba("click", coordinate="450,140"))
        it.handle(ba("type", text="ada"))
        it.handle(ba("click", coordinate="450,200"))
        it.handle(ba("type", text="lovelace"))
        t = it.handle(ba("press", text="Enter"))
        assert t.ran is not None and t.ran.observation is not None
        assert "signed in as ada" in [c.text for c in t.ran.observation.console]
        t = it.handle(ba("click", coordinate="880,580"))  # nothing there
        assert t.ran is not None and t.ran.failure is not None and t.ran.failure.kind == "no_target"
        t = it.handle(CLOSE)
        assert t.state is State.IDLE
