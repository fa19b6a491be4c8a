"""The bounds of a session's waits, with the page's run of dialogs stood in for by a clock."""

from __future__ import annotations

import asyncio
import time

import pytest

from xmltools.browser.bounds import DIALOG_GAP, DIALOG_STORM, Bounds, DialogStorm, Hung
from xmltools.browser.settings import Timeouts


class Dialogs:
    """A run of dialogs that began ``lasted`` seconds ago, with one more every 20 ms while ``running``."""

    def __init__(self, running: bool, lasted: float = 0.0) -> None:
        self.since = time.monotonic() - lasted
        self.running = running
        self.stopped_at = time.monotonic() - 10 * DIALOG_GAP  # long over, when not running

    def times(self) -> tuple[float, float]:
        now = time.monotonic()
        last = now - (now - self.since) % 0.02 if self.running else self.stopped_at
        return self.since, last


def bounds(dialogs: Dialogs, navigation: float = 1.0) -> Bounds:
    return Bounds(Timeouts(navigation=navigation), dialogs.times)


async def test_an_input_action_ends_at_its_bound_when_no_dialog_keeps_it() -> None:
    start = time.monotonic()
    with pytest.raises(Hung) as e:
        await bounds(Dialogs(running=False)).input(asyncio.sleep(10), 0.2)
    assert not isinstance(e.value, DialogStorm) and time.monotonic() - start < 0.6


async def test_dialogs_extend_an_input_action_to_the_navigation_bound_then_make_a_storm() -> None:
    start = time.monotonic()
    with pytest.raises(DialogStorm, match="kept raising dialogs for 1 s"):
        await bounds(Dialogs(running=True), navigation=1.0).input(asyncio.sleep(10), 0.2)
    assert 0.9 < time.monotonic() - start < 1.5


async def test_an_input_action_that_ends_gives_its_result() -> None:
    async def answer() -> int:
        await asyncio.sleep(0.05)
        return 42

    assert await bounds(Dialogs(running=True)).input(answer(), 0.2) == 42


async def test_a_wait_is_cut_short_by_a_storm() -> None:
    start = time.monotonic()
    with pytest.raises(DialogStorm):
        await bounds(Dialogs(running=True, lasted=DIALOG_STORM - 0.3)).unless_storm(asyncio.sleep(10), 5.0)
    assert 0.25 < time.monotonic() - start < 0.8


async def test_a_short_run_or_one_that_is_over_does_not_cut_a_wait_short() -> None:
    for dialogs in (Dialogs(running=True), Dialogs(running=False, lasted=10 * DIALOG_STORM)):
        start = time.monotonic()
        with pytest.raises(Hung) as e:
            await bounds(dialogs).unless_storm(asyncio.sleep(10), 0.3)
        assert not isinstance(e.value, DialogStorm) and time.monotonic() - start < 0.7


async def test_what_is_given_up_is_cancelled() -> None:
    task = asyncio.ensure_future(asyncio.sleep(10))
    with pytest.raises(Hung):
        await bounds(Dialogs(running=False)).unless_storm(task, 0.1)
    await asyncio.sleep(0)
    assert task.cancelled()
