"""Browser failures in the conversation: never the model's mistake, honest, bounded, with a way back."""

from __future__ import annotations

import re

from support.fakes import FakeBrowser
from support.helpers import ba_inline as call

from xmltools import Config
from xmltools.base.results import ConsoleEntry, Failure, Observation, Viewport
from xmltools.interpreter import AsyncInterpreter

LOST = Failure(
    kind="crashed",
    message="the page's renderer process crashed.",
    browser_closed=True,
    last_url="http://127.0.0.1:8000/cart.html",
)


async def test_a_browser_failure_is_not_a_mistake_and_the_hint_names_the_last_url() -> None:
    browser = FakeBrowser(fail={"click": LOST})
    it = AsyncInterpreter(Config(mistake_limit=2), browser=browser)
    await it.handle(call("launch", url="http://127.0.0.1:8000/"))
    await it.handle(call("scroll_down", extra="x"))  # a real mistake: an unknown parameter
    assert it.session.mistakes == 1
    turn = await it.handle(call("click", coordinate="10,10"))
    assert turn.outcomes[0].status == "failed"
    assert turn.mistakes == 1 and not turn.mistake_limit_reached  # neither counted nor forgiven
    text = turn.parts[0].text
    assert "launch it again" in text and "http://127.0.0.1:8000/cart.html" in text
    assert turn.state.name == "IDLE"


async def test_a_huge_observation_is_cut_to_the_result_cap() -> None:
    class Flooding(FakeBrowser):
        def observation(self, action: object, mouse: object) -> Observation:
            return Observation(
                url=self.url,
                title="t" * 50_000,
                console=tuple(ConsoleEntry(type="log", text="x" * 1_000) for _ in range(500)),
                viewport=Viewport(width=900, height=600),
            )

    it = AsyncInterpreter(Config(max_result_chars=5_000), browser=Flooding())
    turn = await it.handle(call("launch", url="http://127.0.0.1:8000/"))
    text = turn.parts[0].text
    assert len(text) <= 5_000 and re.search(r"\n… \([\d,]+ more characters were left out of [\d,]+\)$", text)


async def test_a_missing_browser_is_raised_to_the_host_not_told_to_the_model() -> None:
    import pytest

    from xmltools.errors import BrowserError

    it = AsyncInterpreter(Config(executable="/nonexistent/chromium"))
    try:
        with pytest.raises(BrowserError, match="/nonexistent/chromium"):
            await it.handle(call("launch", url="http://127.0.0.1:8000/"))
        assert it.session.mistakes == 0 and it.state.name == "IDLE"
    finally:
        await it.aclose()
