"""Dialogs are always reported: in the observation, in a failure, and when a page raises them for ever.

A page raising dialogs one after another can be neither evaluated nor
captured; once that has lasted past the step's bound the session is closed to
stop it, and the model reads how many dialogs there were and what they said,
never a screenshot error.
"""

from __future__ import annotations

import time

from support.helpers import ok

from xmltools.base.results import Failure, Point
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig, Timeouts

GO = Point(x=190, y=70)
SHORT = BrowserConfig(timeouts=Timeouts(action=2.0, navigation=2.0))


def storm(result: object, kind: str, first: str) -> Failure:
    assert isinstance(result, Failure), result
    assert result.kind == "timeout" and result.browser_closed, result
    assert "kept raising dialogs" in result.message and f"{kind} dialogs were dismissed" in result.message
    assert f"the first said '{first}'" in result.message, result.message
    assert "screenshot" not in result.message.lower(), result.message
    return result


async def test_an_alert_loop_on_load_comes_back_within_its_bound_every_time(site: str, repeat: int) -> None:
    async with BrowserSession(SHORT) as b:
        ok(await b.launch(site + "/hostile/quiet.html"))  # the browser is started outside the bound
        for _ in range(repeat):
            start = time.monotonic()
            storm(await b.launch(site + "/hostile/alert-loop.html"), "alert", "loop alert 1")
            assert time.monotonic() - start < 2.0 + 3.0  # the storm's 2 s, and the launch itself
            assert not b.is_open
        quiet = ok(await b.launch(site + "/hostile/quiet.html"))
        assert quiet.notes == (), quiet.notes  # nothing of the storm reaches the next session


async def test_a_prompt_storm_on_a_click_comes_back_within_its_bound_every_time(
    site: str, repeat: int
) -> None:
    async with BrowserSession(SHORT) as b:
        for _ in range(repeat):
            ok(await b.launch(site + "/hostile/prompts.html"))
            start = time.monotonic()
            storm(await b.click(GO), "prompt", "question 1")
            assert time.monotonic() - start < 2.0 + 3.0  # the action's bound, then closing
        assert ok(await b.launch(site + "/hostile/quiet.html")).notes == ()


async def test_a_failed_step_says_what_dialogs_the_page_raised(site: str) -> None:
    async with BrowserSession(BrowserConfig(timeouts=Timeouts(action=1.0))) as b:
        ok(await b.launch(site + "/hostile/late-alert.html"))
        res = await b.click(GO)  # one alert, then the page's script is busy past the bound
        assert isinstance(res, Failure), res
        said = res.message + " ".join(res.observation.notes if res.observation else ())
        assert "an alert dialog was dismissed: 'one alert, then a long sum'" in said, res
