"""The interpreter: protocol flow at the browser seam, host tools, streaming, config."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel
from support.fakes import FakeBrowser
from support.helpers import ba, text_of

from xmltools import ConfigError, MistakeLimitError, UsageError
from xmltools.base.results import Failure, Viewport
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.protocol.machine import Policy, State
from xmltools.tools import Tool, ToolRegistry

LAUNCH = ba("launch", url="http://127.0.0.1:9/app")
CLICK = ba("click", coordinate="450,300")
CLOSE = ba("close")


class NoteParams(BaseModel):
    title: str


def make(
    config: Config | None = None, tools: list[Tool] | None = None, **kw: object
) -> tuple[AsyncInterpreter, FakeBrowser]:
    browser = FakeBrowser(**kw)  # type: ignore[arg-type]
    reg = ToolRegistry(tools or [])
    return AsyncInterpreter(config or Config(), registry=reg, browser=browser), browser


async def test_a_browser_session_from_launch_to_close() -> None:
    it, br = make()
    t = await it.handle("I'll open the app.\n" + LAUNCH)
    assert t.state is State.ACTIVE and t.ran is not None and t.ran.status == "ok"
    assert t.ran.observation is not None and "The launch action ran." in text_of(t)
    assert t.result is not None and [p["type"] for p in t.result["content"]] == ["text", "image_url"]
    assert t.messages == [t.assistant, t.result]
    t = await it.handle(CLICK)
    assert t.ran is not None and t.ran.action == "click" and "Mouse: 450,300" in text_of(t)
    t = await it.handle(CLOSE)
    assert t.state is State.IDLE and "The browser is closed." in text_of(t)
    assert t.result is not None and [p["type"] for p in t.result["content"]] == ["text"]
    assert [a.action for a in br.actions] == ["launch", "click", "close"]


async def test_protocol_violations_are_rendered_and_change_nothing() -> None:
    it, br = make(tools=[Tool("write_note", NoteParams, lambda p: f"saved {p.title}")])
    t = await it.handle(CLICK)
    assert t.refused[0].violation == "launch_first" and "The browser is not open" in text_of(t)
    assert t.state is State.IDLE and br.actions == [] and t.mistakes == 1
    await it.handle(LAUNCH)
    t = await it.handle("<write_note><title>x</title></write_note>")
    assert t.refused[0].violation == "close_first" and t.state is State.ACTIVE
    assert "Close the browser first" in text_of(t)


@pytest.mark.parametrize(
    ("policy", "state", "closed"),
    [(Policy.AUTO_CLOSE, State.IDLE, True), (Policy.ALLOW, State.ACTIVE, False)],
)
async def test_other_tool_policies(policy: Policy, state: State, closed: bool) -> None:
    it, br = make(Config(policy=policy), tools=[Tool("write_note", NoteParams, lambda p: f"saved {p.title}")])
    await it.handle(LAUNCH)
    t = await it.handle("<write_note><title>x</title></write_note>")
    assert t.ran is not None and t.ran.output == "saved x" and t.state is state
    assert ("close()" in br.actions) is closed
    assert ("The browser was closed first" in text_of(t)) is closed


async def test_one_tool_per_message() -> None:
    it, br = make()
    t = await it.handle(LAUNCH + "\nThen:\n" + CLICK + "\n" + CLOSE)
    assert [a.action for a in br.actions] == ["launch"]
    assert [o.action for o in t.not_run] == ["click", "close"]
    assert text_of(t).count("Not run:") == 1  # one note for both
    assert "Not run: 2 more calls (<browser_action> click, <browser_action> close)" in text_of(t)
    assert t.not_run[0].text.startswith("Not run:") and t.not_run[1].text == ""


async def test_broken_calls_and_invalid_parameters_are_mistakes() -> None:
    it, _ = make(Config(mistake_limit=3))
    t = await it.handle("<browser_action><action>launch</action><url>http://a</url>")  # truncated
    assert t.refused[0].error is not None and t.refused[0].error.code == "truncated_call"
    assert "cut off" in text_of(t) and t.mistakes == 1
    t = await it.handle(ba("launch", url="javascript:alert(1)"))
    assert t.refused[0].error is not None and t.refused[0].error.code == "invalid_param"
    assert t.mistakes == 2 and not t.mistake_limit_reached
    t = await it.handle(ba("dance"))
    assert t.mistakes == 3 and t.mistake_limit_reached and "3 mistakes in a row" in text_of(t)
    t = await it.handle(LAUNCH)  # a success resets the counter
    assert t.mistakes == 0 and not t.mistake_limit_reached


async def test_mistake_limit_can_raise() -> None:
    it, _ = make(Config(mistake_limit=1, on_mistake_limit="raise"))
    with pytest.raises(MistakeLimitError) as e:
        await it.handle(CLICK)
    assert e.value.turn is not None and e.value.turn.mistake_limit_reached  # type: ignore[attr-defined]


async def test_browser_failures_are_reported_not_counted_as_mistakes() -> None:
    crash = Failure(kind="crashed", message="the renderer died.", browser_closed=True)
    it, _ = make(fail={"click": crash})
    await it.handle(LAUNCH)
    t = await it.handle(CLICK)
    assert t.ran is not None and t.ran.status == "failed" and t.ran.failure == crash
    assert t.state is State.IDLE and t.mistakes == 0
    assert "crashed" in text_of(t)
    t = await it.handle(CLICK)
    assert t.refused[0].violation == "launch_first"


async def test_host_tools_sync_async_failing_and_completing() -> None:
    async def slow(p: NoteParams) -> str:
        await asyncio.sleep(0)
        return f"async {p.title}"

    def boom(p: NoteParams) -> str:
        raise RuntimeError("disk full")

    tools = [
        Tool("note", NoteParams, lambda p: f"sync {p.title}"),
        Tool("anote", NoteParams, slow),
        Tool("broken", NoteParams, boom),
        Tool("done", NoteParams, lambda p: "finished", completes=True),
    ]
    it, _ = make(tools=tools)
    assert "sync a" in text_of(await it.handle("<note><title>a</title></note>"))
    assert "async b" in text_of(await it.handle("<anote><title>b</title></anote>"))
    t = await it.handle("<broken><title>c</title></broken>")
    assert t.ran is not None and t.ran.status == "failed" and "RuntimeError: disk full" in text_of(t)
    assert t.mistakes == 0
    t = await it.handle("<done><title>d</title></done>")
    assert t.completed


async def test_viewport_follows_resize_for_coordinate_checks() -> None:
    it, _ = make()
    await it.handle(LAUNCH)
    t = await it.handle(ba("click", coordinate="1000,700"))
    assert t.refused and "900x600" in text_of(t)
    await it.handle(ba("resize", size="1280x800"))
    t = await it.handle(ba("click", coordinate="1000,700"))
    assert t.ran is not None and t.ran.status == "ok"
    assert it.viewport == Viewport(width=1280, height=800)


async def test_idle_timeout_closes_the_browser() -> None:
    now = [1000.0]
    br = FakeBrowser()
    it = AsyncInterpreter(Config(idle_timeout=60), browser=br, clock=lambda: now[0])
    await it.handle(LAUNCH)
    now[0] += 61
    t = await it.handle(CLICK)
    assert t.idle_closed and t.refused[0].violation == "launch_first"
    assert "without use" in text_of(t)


async def test_no_tool_gives_no_result_message() -> None:
    it, _ = make()
    t = await it.handle("All done, the list has three items.")
    assert not t.used_tool and t.result is None and t.messages == [t.assistant]


async def test_streaming_says_when_the_first_call_is_complete_and_cuts() -> None:
    it, br = make()
    s = it.stream()
    text = "Opening it.\n" + LAUNCH + "\nAnd now I will also click " + CLICK
    seen_at = None
    for i in range(0, len(text), 5):
        if s.feed(text[i : i + 5]).call_complete:
            seen_at = i + 5
            break
    end = text.index("</browser_action>") + len("</browser_action>")
    assert seen_at is not None and end <= seen_at < end + 5  # in the very chunk that closed the call
    t = await s.finish(stopped=True)
    assert t.cut and t.assistant["content"] == "Opening it.\n" + LAUNCH
    assert [a.action for a in br.actions] == ["launch"] and not t.not_run


async def test_a_stream_fed_to_the_end_is_not_cut_by_default() -> None:
    it, _ = make()
    s = it.stream()
    for ch in LAUNCH:
        s.feed(ch)
    t = await s.finish()
    assert not t.cut and t.assistant["content"] == LAUNCH


async def test_host_misuse_raises() -> None:
    it, _ = make()
    with pytest.raises(UsageError):
        await it.handle(b"bytes")  # type: ignore[arg-type]
    s = it.stream()
    await s.finish()
    with pytest.raises(UsageError):
        s.feed("x")
    await it.aclose()
    with pytest.raises(UsageError):
        await it.handle("x")


@pytest.mark.parametrize("shape", ["openai", "anthropic", "plain"])
async def test_message_shapes(shape: str) -> None:
    it, _ = make(Config(shape=shape))  # type: ignore[arg-type]
    t = await it.handle(LAUNCH)
    assert t.result is not None and t.result["role"] == "user"
    if shape == "plain":
        assert isinstance(t.result["content"], str)
    else:
        kinds = [p["type"] for p in t.result["content"]]
        assert kinds == ["text", "image_url" if shape == "openai" else "image"]


def test_sync_interpreter_has_the_same_behaviour() -> None:
    br = FakeBrowser()
    with Interpreter(browser=br) as it:
        assert it.handle(LAUNCH).state is State.ACTIVE
        s = it.stream()
        s.feed(CLICK)
        assert s.call_complete
        assert s.finish().ran is not None
    assert br.shutdowns == 1


def test_context_manager_closes_on_exceptions() -> None:
    br = FakeBrowser()
    with pytest.raises(RuntimeError), Interpreter(browser=br) as it:
        it.handle(LAUNCH)
        raise RuntimeError("host bug")
    assert br.shutdowns == 1 and not br.open


# -- configuration ------------------------------------------------------------------


def test_config_defaults_toml_and_env(tmp_path: Path) -> None:
    c = Config()
    assert (c.viewport, c.screenshot_format, c.screenshot_quality, c.policy, c.mistake_limit) == (
        Viewport(width=900, height=600),
        "webp",
        75,
        Policy.REJECT,
        3,
    )
    f = tmp_path / "xmltools.toml"
    f.write_text(
        '[xmltools]\nviewport = "1280x800"\npolicy = "allow"\nimage_budget = 2\nallowed_schemes = ["data"]\n'
    )
    c = Config.from_toml(f)
    assert c.viewport == Viewport(width=1280, height=800) and c.policy is Policy.ALLOW and c.image_budget == 2
    assert c.allowed_schemes == ("data",)
    c = Config.from_env(
        {"XMLTOOLS_VIEWPORT": "1024x768", "XMLTOOLS_MISTAKE_LIMIT": "5", "XMLTOOLS_HEADLESS": "false"}
    )
    assert c.viewport == Viewport(width=1024, height=768) and c.mistake_limit == 5 and c.headless is False
    with pytest.raises(ConfigError, match="mistake_limit"):
        Config.from_env({"XMLTOOLS_MISTAKE_LIMIT": "0"})
    with pytest.raises(ConfigError, match="viewport"):
        Config.build(viewport="tiny")
    with pytest.raises(ConfigError):
        Config.from_toml(tmp_path / "missing.toml")


async def test_a_fully_read_stream_keeps_every_call() -> None:
    it, br = make()
    s = it.stream()
    text = LAUNCH + "\n" + CLOSE
    for i in range(0, len(text), 7):
        s.feed(text[i : i + 7])
    t = await s.finish()  # the host read the whole stream: nothing was cut
    assert not t.cut and t.assistant["content"] == text
    assert [o.action for o in t.not_run] == ["close"] and [a.action for a in br.actions] == ["launch"]


async def test_trim_history_keeps_the_newest_screenshots() -> None:
    it, _ = make(Config(image_budget=1))
    history: list[dict[str, object]] = []
    for text in (LAUNCH, CLICK, CLICK):
        history += (await it.handle(text)).messages
    assert it.trim_history(history) == 2
    kinds = [p["type"] for m in history if isinstance(m["content"], list) for p in m["content"]]  # type: ignore[union-attr]
    assert kinds.count("image_url") == 1 and kinds[-1] == "image_url"
