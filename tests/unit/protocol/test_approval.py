"""The approval policy and disabled actions, at the interpreter's seam (a stand-in browser, no Chromium)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from support.fakes import FakeBrowser
from support.helpers import said as text

from xmltools import (
    Allow,
    ApprovalError,
    ApprovalPolicy,
    Ask,
    AsyncInterpreter,
    Config,
    ConfigError,
    Deny,
    Interpreter,
    State,
    Tool,
    ToolRegistry,
    UsageError,
)
from xmltools.loop import arun_loop
from xmltools.profiles import FULL, ROO
from xmltools.protocol.approval import ACTION_CATEGORIES, CATEGORIES, DEFAULT_RULES

LAUNCH = "<browser_action><action>launch</action><url>http://127.0.0.1:1/</url></browser_action>"
EVAL = "<browser_action><action>evaluate</action><script>document.title</script></browser_action>"
CLICK = "<browser_action><action>click</action><coordinate>10,10</coordinate></browser_action>"


def full(**kw: Any) -> Config:
    return Config(profile="full", **kw)


def ran(fake: FakeBrowser) -> list[str]:
    return [a.action for a in fake.actions if not isinstance(a, str)]


def test_every_action_of_every_profile_has_a_category() -> None:
    for profile in (ROO, FULL):
        missing = [a for a in profile.names if a not in ACTION_CATEGORIES]
        assert not missing, missing
    assert set(ACTION_CATEGORIES.values()) == set(CATEGORIES)
    assert ACTION_CATEGORIES["evaluate"] == "script" and ACTION_CATEGORIES["click"] == "mutate"
    assert ACTION_CATEGORIES["launch"] == "navigate" and ACTION_CATEGORIES["fill"] == "input"
    assert ACTION_CATEGORIES["switch_tab"] == "session" and ACTION_CATEGORIES["wait"] == "read"


def test_by_default_everything_is_allowed_but_scripts_ask() -> None:
    assert dict(DEFAULT_RULES) == {c: ("ask" if c == "script" else "allow") for c in CATEGORIES}
    fake = FakeBrowser()
    with Interpreter(full(), browser=fake) as it:
        assert it.handle(LAUNCH).ran is not None
        assert it.handle(CLICK).ran is not None
        turn = it.handle(EVAL)
        assert turn.ran is None and turn.approval_required is not None
        assert turn.approval_required.category == "script" and turn.approval_required.action == "evaluate"
        assert "approval required: the evaluate action (script) waits for the host's approval" in text(turn)
        assert ran(fake) == ["launch", "click"]  # the script did not run


def test_a_denied_category_is_refused_without_running_and_is_not_a_mistake() -> None:
    fake = FakeBrowser()
    with Interpreter(full(approval={"mutate": "deny"}, mistake_limit=2), browser=fake) as it:
        it.handle(LAUNCH)
        it.handle("<browser_action><action>click</action></browser_action>")  # a real mistake: 1
        for _ in range(3):  # denials neither count nor reset the count
            turn = it.handle(CLICK)
            assert turn.outcomes[0].status == "denied"
            assert "denied by policy: mutate actions are not allowed in this session" in text(turn)
            assert turn.mistakes == 1 and not turn.mistake_limit_reached
        assert ran(fake) == ["launch"]


def test_a_denied_launch_leaves_the_protocol_idle() -> None:
    fake = FakeBrowser()
    with Interpreter(full(approval={"navigate": "deny"}), browser=fake) as it:
        turn = it.handle(LAUNCH)
        assert turn.outcomes[0].status == "denied" and turn.state is State.IDLE
        assert not fake.actions
        # an illegal call is refused by the protocol first: no approval is asked for it
        assert it.handle(CLICK).outcomes[0].status == "refused"


def test_approve_runs_the_held_call_and_its_turn_replaces_the_asking_one() -> None:
    fake = FakeBrowser()
    with Interpreter(full(), browser=fake) as it:
        it.handle(LAUNCH)
        asked = it.handle("First the title.\n" + EVAL + "\n" + CLICK)
        assert asked.approval_required is not None
        assert [o.status for o in asked.outcomes] == ["pending", "not_run"]
        done = it.approve(asked.approval_required)
        assert done.approval_required is None and done.assistant == asked.assistant
        assert [o.status for o in done.outcomes] == ["ok", "not_run"]
        assert "approval required" not in text(done) and "Not run: <browser_action> (click)" in text(done)
        assert done.result is not None and ran(fake) == ["launch", "evaluate"]
        with pytest.raises(UsageError, match="no call is waiting"):
            it.approve(asked.approval_required)  # answered once already


def test_deny_tells_the_model_the_reason() -> None:
    fake = FakeBrowser()
    with Interpreter(full(), browser=fake) as it:
        it.handle(LAUNCH)
        asked = it.handle(EVAL)
        assert asked.approval_required is not None
        done = it.deny(asked.approval_required.call, "the user wants no scripts on this page")
        assert done.outcomes[0].status == "denied"
        assert "denied by policy: the user wants no scripts on this page" in text(done)
        assert ran(fake) == ["launch"] and done.state is State.ACTIVE
        with pytest.raises(UsageError):
            it.deny(asked.approval_required, "")


def test_a_new_message_drops_the_held_call() -> None:
    with Interpreter(full(), browser=FakeBrowser()) as it:
        it.handle(LAUNCH)
        asked = it.handle(EVAL)
        it.handle(CLICK)
        assert asked.approval_required is not None
        with pytest.raises(UsageError, match="no call is waiting"):
            it.approve(asked.approval_required)


def test_a_callback_decides_what_its_rule_asks_about() -> None:
    seen: list[tuple[str, str]] = []

    def callback(call: Any, category: str) -> Any:
        seen.append((call.action, category))
        script = getattr(call.args, "script", "")
        if "cookie" in script:
            return Deny("reading cookies is not allowed")
        if "title" in script:
            return Allow()
        return Ask("may it read the local storage?")

    fake = FakeBrowser()
    with Interpreter(full(approval={"mutate": "ask"}), browser=fake, approver=callback) as it:
        it.handle(LAUNCH)  # navigate is allowed: the callback is not asked
        assert it.handle(EVAL).ran is not None
        denied = it.handle(EVAL.replace("document.title", "document.cookie"))
        assert "denied by policy: reading cookies is not allowed" in text(denied)
        asked = it.handle(EVAL.replace("document.title", "localStorage.length"))
        assert "approval required: may it read the local storage?" in text(asked)
        assert it.handle(CLICK).approval_required is not None  # mutate asks too; the callback said Ask
    assert seen[:3] == [("evaluate", "script")] * 3 and seen[3] == ("click", "mutate")


async def test_an_async_callback_and_one_that_fails() -> None:
    async def slow_yes(call: Any, category: str) -> Any:
        await asyncio.sleep(0.01)
        return Allow()

    fake = FakeBrowser()
    async with AsyncInterpreter(full(), browser=fake, approver=slow_yes) as it:
        await it.handle(LAUNCH)
        assert (await it.handle(EVAL)).ran is not None

    def broken(call: Any, category: str) -> Any:
        raise RuntimeError("the approval service is down")

    async with AsyncInterpreter(full(), browser=FakeBrowser(), approver=broken) as it:
        await it.handle(LAUNCH)
        with pytest.raises(ApprovalError, match="the approval service is down"):
            await it.handle(EVAL)

    async with AsyncInterpreter(full(), browser=FakeBrowser(), approver=lambda c, k: "yes") as it:
        await it.handle(LAUNCH)
        with pytest.raises(ApprovalError, match="must return Allow"):
            await it.handle(EVAL)


class Note(BaseModel):
    body: str


def test_a_host_tool_declares_its_category() -> None:
    reg = ToolRegistry(profile="full")
    reg.register(Tool("post_note", Note, lambda p: "posted", category="mutate"))
    reg.register(Tool("read_notes", Note, lambda p: "nothing yet"))
    with Interpreter(full(approval={"mutate": "deny"}), registry=reg, browser=FakeBrowser()) as it:
        turn = it.handle("<post_note><body>hi</body></post_note>")
        assert turn.outcomes[0].status == "denied" and "denied by policy" in text(turn)
        assert it.handle("<read_notes><body>x</body></read_notes>").outcomes[0].status == "ok"
    with pytest.raises(ConfigError, match="not a category"):
        Tool("t", Note, print, category="dangerous")


def test_bad_rules_are_host_errors() -> None:
    with pytest.raises(ConfigError, match="unknown approval categories"):
        ApprovalPolicy({"scripts": "ask"})
    with pytest.raises(ConfigError, match="allow, deny or ask"):
        ApprovalPolicy({"script": "maybe"})
    with pytest.raises(ConfigError):
        Config.build(approval={"clicks": "deny"})


def test_disabled_actions_leave_the_prompt_and_are_refused() -> None:
    fake = FakeBrowser()
    with Interpreter(full(disabled_actions=("evaluate", "upload")), browser=fake) as it:
        prompt = it.system_prompt()
        assert "`evaluate`" not in prompt and "`upload`" not in prompt and "`get_text`" in prompt
        it.handle(LAUNCH)
        turn = it.handle(EVAL)
        assert turn.outcomes[0].status == "invalid" and "evaluate action is turned off here" in text(turn)
        assert ran(fake) == ["launch"]
    with pytest.raises(ConfigError, match="does not have"):
        Interpreter(full(disabled_actions=("teleport",)), browser=FakeBrowser())
    with pytest.raises(ConfigError, match="cannot be turned off"):
        Interpreter(full(disabled_actions=("launch",)), browser=FakeBrowser())
    with pytest.raises(ConfigError, match="offers the disabled actions"):
        Interpreter(full(disabled_actions=("evaluate",)), registry=ToolRegistry(profile="full"))
    assert Config.from_env({"XMLTOOLS_DISABLED_ACTIONS": "evaluate, upload"}).disabled_actions == (
        "evaluate",
        "upload",
    )


def test_the_prompt_says_what_the_script_rule_is() -> None:
    assert (
        "Each script waits for the user's approval."
        in Interpreter(full(), browser=FakeBrowser()).system_prompt()
    )
    denied = Interpreter(full(approval={"script": "deny"}), browser=FakeBrowser()).system_prompt()
    assert "Scripts are not allowed in this session." in denied
    allowed = Interpreter(full(approval={"script": "allow"}), browser=FakeBrowser()).system_prompt()
    assert "approval" not in allowed and "not allowed" not in allowed


class Script:
    """A model that replies with the next message of a list."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        return self.replies.pop(0) if self.replies else "All done."


@pytest.mark.parametrize("answer", [True, False, "not on a bank page", Allow(), Deny("no scripts, please")])
async def test_the_loop_asks_the_host_through_on_approval(answer: Any) -> None:
    fake = FakeBrowser()
    asked: list[str] = []

    async def on_approval(pending: Any) -> bool | str:
        asked.append(pending.category)
        return answer

    async with AsyncInterpreter(full(), browser=fake) as it:
        result = await arun_loop(Script(LAUNCH, EVAL), [], interpreter=it, on_approval=on_approval)
    assert asked == ["script"] and result.stop_reason == "no_tool"
    said = str(result.messages[3]["content"])
    if answer is True or isinstance(answer, Allow):
        assert ran(fake) == ["launch", "evaluate"] and "approval required" not in said
    else:
        reason = (
            answer if isinstance(answer, str) else getattr(answer, "reason", "the user did not approve it")
        )
        assert ran(fake) == ["launch"] and f"denied by policy: {reason}" in said


async def test_without_on_approval_the_loop_stops_for_the_host() -> None:
    fake = FakeBrowser()
    async with AsyncInterpreter(full(), browser=fake) as it:
        result = await arun_loop(Script(LAUNCH, EVAL, CLICK), [], interpreter=it)
        assert result.stop_reason == "approval_required"
        assert result.messages[-1]["role"] == "assistant"  # the host answers before the model reads on
        held = result.turns[-1].approval_required
        assert held is not None
        done = await it.approve(held)
        assert done.result is not None
        history = [*result.messages, done.result]
        again = await arun_loop(Script(CLICK), history, interpreter=it)
    assert ran(fake) == ["launch", "evaluate", "click"] and again.stop_reason == "no_tool"


def test_closing_the_last_tab_ends_the_protocol_session() -> None:
    class Tabs(FakeBrowser):
        async def run(self, action: Any) -> Any:
            if getattr(action, "action", "") == "close_tab":
                self.actions.append(action)
                self.open = False
                return None
            return await super().run(action)

    with Interpreter(full(), browser=Tabs()) as it:
        it.handle(LAUNCH)
        turn = it.handle("<browser_action><action>close_tab</action></browser_action>")
        assert turn.state is State.IDLE
        assert it.handle(CLICK).outcomes[0].violation == "launch_first"


def test_a_stale_answer_never_runs_a_newer_identical_call() -> None:
    fake = FakeBrowser()
    with Interpreter(full(), browser=fake) as it:
        it.handle(LAUNCH)
        first = it.handle(EVAL).approval_required
        assert first is not None
        it.approve(first)
        second = it.handle(EVAL).approval_required
        assert second is not None and second == first and second is not first
        with pytest.raises(UsageError, match="not the one waiting"):
            it.approve(first)
        assert ran(fake).count("evaluate") == 1
        it.approve(second)
        assert ran(fake).count("evaluate") == 2


async def test_answers_after_close_are_refused() -> None:
    it = AsyncInterpreter(full(), browser=FakeBrowser())
    await it.handle(LAUNCH)
    held = (await it.handle(EVAL)).approval_required
    assert held is not None
    await it.aclose()
    with pytest.raises(UsageError):
        await it.approve(held)


def test_an_approved_call_that_misses_its_target_counts_toward_the_limit() -> None:
    from xmltools import MistakeLimitError
    from xmltools.base.results import Failure

    miss = Failure(kind="target", message="nothing matches the selector '#gone'.")
    fake = FakeBrowser(fail={"click": miss})
    click = "<browser_action><action>click</action><selector>#gone</selector></browser_action>"
    with Interpreter(full(approval={"mutate": "ask"}, mistake_limit=2), browser=fake) as it:
        it.handle(LAUNCH)
        for n in (1, 2):
            held = it.handle(click).approval_required
            assert held is not None
            done = it.approve(held)
            assert done.mistakes == n
        assert done.mistake_limit_reached and "2 mistakes in a row" in text(done)
    cfg = full(approval={"mutate": "ask"}, mistake_limit=1, on_mistake_limit="raise")
    with Interpreter(cfg, browser=FakeBrowser(fail={"click": miss})) as it:
        it.handle(LAUNCH)
        held = it.handle(click).approval_required
        assert held is not None
        with pytest.raises(MistakeLimitError):
            it.approve(held)
