"""Named browser sessions (full profile): per-session protocol state, limits, idle closing, other tools.

Stand-in browsers at the interpreter's seam, one per session; test_sessions_browser drives real ones.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from support.fakes import FakeBrowser
from support.helpers import ba_inline as ba
from support.helpers import said as text

from xmltools import BrowserError, Config, Interpreter, Policy, State, Tool, ToolRegistry
from xmltools.base.results import Failure


class FakeNote(BaseModel):
    body: str


def launch(session: str | None = None) -> str:
    return ba("launch", session, url="http://127.0.0.1:1/")


class Browsers:
    """A factory of stand-in browsers, one per session name, kept for the test to look at."""

    def __init__(self) -> None:
        self.made: dict[str, FakeBrowser] = {}

    def __call__(self, name: str) -> FakeBrowser:
        self.made[name] = FakeBrowser()
        return self.made[name]

    def ran(self, name: str) -> list[str]:
        return [a.action for a in self.made[name].actions if not isinstance(a, str)]


def interp(browsers: Browsers, **kw: Any) -> Interpreter:
    return Interpreter(Config(profile="full", **kw), browser_factory=browsers)


def test_each_session_has_its_own_browser_and_state() -> None:
    b = Browsers()
    with interp(b) as it:
        assert it.handle(launch()).sessions == ("default",)
        turn = it.handle(launch("shop"))
        assert turn.sessions == ("default", "shop") and turn.state is State.ACTIVE
        assert turn.outcomes[0].session == "shop"
        assert "Browser sessions (2 open): default, shop (this one)" in text(turn)
        it.handle(ba("click", "shop", coordinate="5,5"))
        turn = it.handle(ba("click", coordinate="7,7"))  # no <session>: the default one
        assert "default (this one), shop" in text(turn) and turn.outcomes[0].session is None
        assert b.ran("shop") == ["launch", "click"] and b.ran("default") == ["launch", "click"]
        turn = it.handle(ba("close", "shop"))
        assert turn.sessions == ("default",) and turn.state is State.ACTIVE
        assert not b.made["shop"].open and b.made["default"].open
        assert "Browser sessions" not in text(it.handle(ba("click", coordinate="1,1")))  # one open: no list
        assert it.handle(ba("close")).state is State.IDLE


def test_a_session_that_is_not_open_is_named_in_the_refusal() -> None:
    b = Browsers()
    with interp(b) as it:
        it.handle(launch())
        turn = it.handle(ba("click", "docs", coordinate="5,5"))
        assert turn.outcomes[0].violation == "launch_first" and turn.outcomes[0].session == "docs"
        assert "The browser session docs is not open" in text(turn) and "<session>docs</session>" in text(
            turn
        )
        assert "Open sessions: default." in text(turn)
        assert "docs" not in it.core.sessions and "docs" not in b.made  # nothing was made for it
        turn = it.handle(ba("close", "docs"))
        assert turn.outcomes[0].violation == "nothing_to_close" and "session docs is not open" in text(turn)


def test_at_most_max_sessions_per_interpreter_and_the_refusal_is_visible() -> None:
    b = Browsers()
    with interp(b, max_sessions_per_interpreter=2) as it:
        it.handle(launch("a"))
        it.handle(launch("b"))
        turn = it.handle(launch("c"))
        assert turn.outcomes[0].status == "refused" and turn.outcomes[0].violation == "too_many_sessions"
        assert "2 browser sessions are open already (a, b)" in text(turn) and "c" not in b.made
        assert turn.sessions == ("a", "b")
        relaunch = it.handle(launch("b"))  # a session already open may launch again
        assert relaunch.outcomes[0].status == "ok" and b.ran("b") == ["launch", "launch"]
        it.handle(ba("close", "a"))
        assert it.handle(launch("c")).outcomes[0].status == "ok"
    assert (
        "at most 2 sessions"
        in Interpreter(
            Config(profile="full", max_sessions_per_interpreter=2), browser_factory=b
        ).system_prompt()
    )


def test_other_tools_wait_until_every_session_is_closed() -> None:
    reg = ToolRegistry(profile="full")
    reg.register(Tool("note", FakeNote, lambda p: "noted"))
    b = Browsers()
    with Interpreter(Config(profile="full"), registry=reg, browser_factory=b) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        it.handle(ba("close"))  # default closed, shop still open
        turn = it.handle("<note><body>x</body></note>")
        assert turn.outcomes[0].violation == "close_first" and "<session>shop</session>" in text(turn)
        it.handle(ba("close", "shop"))
        assert it.handle("<note><body>x</body></note>").outcomes[0].status == "ok"


def test_auto_close_closes_every_session() -> None:
    reg = ToolRegistry(profile="full")
    reg.register(Tool("note", FakeNote, lambda p: "noted"))
    b = Browsers()
    with Interpreter(Config(profile="full", policy=Policy.AUTO_CLOSE), registry=reg, browser_factory=b) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        turn = it.handle("<note><body>x</body></note>")
        assert "The browser sessions default, shop were closed first" in text(turn)
        assert turn.state is State.IDLE and not b.made["default"].open and not b.made["shop"].open


def test_a_session_name_must_be_a_name() -> None:
    with interp(Browsers()) as it:
        turn = it.handle(launch("my shop!"))
        assert turn.outcomes[0].status == "invalid" and "is not a session name" in text(turn)
        assert it.handle(launch(" shop ")).sessions == ("shop",)  # trimmed


def test_idle_sessions_close_one_by_one() -> None:
    now = [0.0]
    b = Browsers()
    cfg = Config(profile="full", idle_timeout=60)
    with Interpreter(cfg, browser_factory=b, clock=lambda: now[0]) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        now[0] = 40
        it.handle(ba("click", coordinate="1,1"))  # only the default session is used
        now[0] = 70
        turn = it.handle(ba("click", coordinate="1,1"))
        assert turn.idle_closed and "The browser session shop was closed after 60 s without use" in text(turn)
        assert turn.sessions == ("default",) and not b.made["shop"].open


def test_a_lost_browser_ends_only_its_own_session() -> None:
    b = Browsers()
    with interp(b) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        b.made["shop"].fail["click"] = Failure(
            kind="crashed", message="the page crashed.", browser_closed=True
        )
        turn = it.handle(ba("click", "shop", coordinate="1,1"))
        assert turn.outcomes[0].status == "failed" and turn.sessions == ("default",)

    class Broken(FakeBrowser):
        async def run(self, action: Any) -> Any:
            raise BrowserError("no browser at that path")

    def factory(name: str) -> FakeBrowser:
        return Broken() if name == "remote" else FakeBrowser()

    with Interpreter(Config(profile="full"), browser_factory=factory) as it:
        it.handle(launch())
        with pytest.raises(BrowserError):
            it.handle(launch("remote"))
        assert it.core.open_sessions == ("default",)


def test_an_approved_call_runs_in_its_own_session() -> None:
    b = Browsers()
    with interp(b) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        asked = it.handle(ba("evaluate", "shop", script="document.title"))
        assert asked.approval_required is not None
        it.approve(asked.approval_required)
        assert b.ran("shop") == ["launch", "evaluate"] and b.ran("default") == ["launch"]


def test_roo_has_no_sessions() -> None:
    with Interpreter(browser=FakeBrowser()) as it:
        assert "session" not in it.system_prompt().lower()
        assert "session" not in it.registry.vocabulary.all_params


def test_messages_name_the_default_session_when_others_are_open() -> None:
    now = [0.0]
    b = Browsers()
    with Interpreter(Config(profile="full", idle_timeout=10), browser_factory=b, clock=lambda: now[0]) as it:
        it.handle(launch())
        it.handle(launch("shop"))
        now[0] = 6
        it.handle(ba("click", "shop", coordinate="1,1"))
        now[0] = 12
        turn = it.handle(ba("click", "shop", coordinate="1,1"))
        assert "The browser session default was closed after 10 s" in text(turn)
        turn = it.handle(ba("close"))  # the default one is closed already; shop is open
        assert turn.outcomes[0].violation == "nothing_to_close"
        assert "The open sessions are shop: to close one, name it in <session>" in text(turn)
    with interp(Browsers(), max_sessions_per_interpreter=1) as it:
        it.handle(launch("shop"))
        turn = it.handle(launch())
        assert "so session default was not started" in text(turn)
