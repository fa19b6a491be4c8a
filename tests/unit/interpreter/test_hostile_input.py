"""Hostile model text: nothing the model writes raises out of handle() or feed(), and every answer is bounded.

Absurd numbers are the model's error; long values are quoted back shortened;
extra calls share one note; a message over max_message_chars is answered.
All at the browser seam (tests/support/fakes.py), so no Chromium is needed.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator
from support.fakes import FakeBrowser
from support.helpers import ba_inline as ba
from support.helpers import text_of

from xmltools.base.quoting import quoted, shorten
from xmltools.base.results import Point, Viewport
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.loop import arun_loop
from xmltools.protocol.machine import State
from xmltools.tools import Tool, ToolRegistry, parse_coordinate, parse_size

VP = Viewport(width=900, height=600)
NINES = "9" * 400


LAUNCH = ba("launch", url="http://127.0.0.1:9/app")
CLOSE = ba("close")


def make(
    config: Config | None = None, tools: list[Tool] | None = None
) -> tuple[AsyncInterpreter, FakeBrowser]:
    browser = FakeBrowser()
    return AsyncInterpreter(config or Config(), registry=ToolRegistry(tools or []), browser=browser), browser


# -- the shared quoting helper ----------------------------------------------------------------


def test_shorten_keeps_short_text_and_cuts_long_text_stating_its_length() -> None:
    assert shorten("450,300") == "450,300" and quoted("450,300") == "'450,300'"
    long = "1" * 900_000
    assert shorten(long) == "1" * 80 + "… (900,000 characters)"
    assert quoted(long) == "'" + "1" * 80 + "…' (900,000 characters)"
    assert shorten("x" * 81, 80).endswith("… (81 characters)") and shorten("x" * 80) == "x" * 80


# -- absurd numbers are the model's error ------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        NINES + ",1",  # float('9' * 400) is inf
        "1," + NINES,
        "-" + NINES + ",1",
        "1" + "0" * 300 + ",5",  # finite, but scaled past any int a float can hold
        "1,1@" + NINES + "x1",  # int / float overflow when scaling
        "1,1@1x" + NINES,
        "1,1@" + "9" * 5000 + "x1",  # past Python's 4,300-digit limit of int()
        "1,1@99999x1",
    ],
)
def test_absurd_coordinates_are_value_errors_with_a_short_message(value: str) -> None:
    with pytest.raises(ValueError) as e:  # not OverflowError: pydantic turns this into a CallError
        parse_coordinate(value, VP)
    assert type(e.value) is ValueError and len(str(e.value)) < 400, str(e.value)


def test_a_long_but_sensible_number_is_still_a_coordinate() -> None:
    assert parse_coordinate("0." + "9" * 5000 + ",1", VP) == Point(x=1, y=1)
    assert parse_coordinate("450,300@900x600", VP) == Point(x=450, y=300)


@pytest.mark.parametrize("value", [NINES + "x800", "1280x" + NINES, "9" * 5000 + ",1", "0x0", "1280x99999"])
def test_absurd_sizes_are_value_errors_with_a_short_message(value: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_size(value)
    assert type(e.value) is ValueError and len(str(e.value)) < 300, str(e.value)
    assert "out of range" in str(e.value) and "Exceeds the limit" not in str(e.value)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (ba("click", coordinate=NINES + ",1"), "far outside the viewport"),
        (ba("click", coordinate="1,1@" + NINES + "x1"), "the screenshot size after @ is too large"),
        (ba("hover", coordinate="1," + "9" * 5000), "far outside the viewport"),
        (ba("resize", size=NINES + "x800"), "out of range"),
        (ba("resize", size="9" * 5000 + "x800"), "out of range"),
    ],
)
async def test_absurd_numbers_reach_the_model_as_a_call_error(call: str, needle: str) -> None:
    it, br = make()
    await it.handle(LAUNCH)
    t = await it.handle(call)  # raised OverflowError before
    assert t.refused and t.refused[0].error is not None and t.refused[0].error.code == "invalid_param"
    assert needle in text_of(t) and len(text_of(t)) < 1_000
    assert t.mistakes == 1 and t.state is State.ACTIVE and [a.action for a in br.actions] == ["launch"]


def test_the_synchronous_interpreter_does_not_raise_either() -> None:
    with Interpreter(browser=FakeBrowser()) as it:
        it.handle(LAUNCH)
        t = it.handle(ba("click", coordinate="1,1@" + NINES + "x1"))
        assert t.refused and "too large" in text_of(t)


# -- long values are quoted back shortened ------------------------------------------------------

BIG = "1" * 900_000


@pytest.mark.parametrize(
    "call",
    [
        ba("click", coordinate=BIG),
        ba("click", coordinate=BIG + ",1"),
        ba("resize", size=BIG),
        ba("press", text="Control+" + "q" * 900_000),
        ba("press", text="a+b+" + "c" * 900_000),
        ba("launch", url="a" * 900_000),  # no scheme
        ba("launch", url="x" * 900_000 + ":foo"),  # an unknown scheme
        ba("launch", url="http:///" + "p" * 900_000),  # no host
        ba("launch", url="file:///" + "p" * 900_000),
        ba("a" * 900_000),  # not an action
    ],
)
async def test_a_long_value_is_quoted_back_shortened(call: str) -> None:
    it, _ = make()
    await it.handle(LAUNCH)
    t = await it.handle(call)
    text = text_of(t)
    assert t.refused and len(text) < 1_000, text[:2_000]  # it held the whole value before


@pytest.mark.parametrize("roots", [(), ("/tmp",)])
async def test_a_file_url_of_450000_folders_is_refused_at_once(roots: tuple[str, ...]) -> None:
    it, _ = make(Config(allowed_file_roots=roots))
    started = time.perf_counter()
    t = await it.handle(ba("launch", url="file:///tmp/" + "a/" * 450_000))  # resolving it took 3 minutes
    assert time.perf_counter() - started < 5 and t.refused and len(text_of(t)) < 1_000


async def test_a_900k_coordinate_gets_an_error_under_1000_characters() -> None:
    it, _ = make()
    await it.handle(LAUNCH)
    t = await it.handle(ba("click", coordinate=BIG))
    text = text_of(t)
    assert len(text) < 1_000 and "'" + "1" * 80 + "…' (900,000 characters) is not a coordinate" in text


class FindParams(BaseModel):
    word: str


class Shout(BaseModel):
    word: str

    @field_validator("word")
    @classmethod
    def _echo(cls, v: str) -> str:
        raise ValueError(f"{v} is not a word I know")


async def test_host_tool_messages_that_echo_the_model_are_bounded() -> None:
    def boom(p: Any) -> str:
        raise RuntimeError("could not find " + p.word)

    it, _ = make(tools=[Tool("shout", Shout, str), Tool("find", FindParams, boom)])
    t = await it.handle("<shout><word>" + "w" * 900_000 + "</word></shout>")  # the validator echoes it
    assert t.refused and len(text_of(t)) < 1_500 and "characters)" in text_of(t)
    t = await it.handle("<find><word>" + "w" * 900_000 + "</word></find>")  # so does the handler
    assert t.ran is not None and t.ran.status == "failed" and len(text_of(t)) < 2_500
    assert "(900,029 characters)" in text_of(t)


# -- extra calls get one note ---------------------------------------------------------------------


async def test_100000_extra_calls_get_one_short_note() -> None:
    it, br = make()
    message = LAUNCH + (ba("click", coordinate="1,1") + CLOSE) * 50_000
    started = time.perf_counter()
    t = await it.handle(message)
    elapsed = time.perf_counter() - started
    text = text_of(t)
    assert len(text) < 2_000, len(text)  # it was 15.7 million characters
    assert text.count("Not run:") == 1
    assert (
        "Not run: 100,000 more calls (<browser_action> click ×50,000, <browser_action> close ×50,000)" in text
    )
    assert [a.action for a in br.actions] == ["launch"]
    assert len(t.outcomes) == 100_001 and len(t.not_run) == 100_000
    assert sum(len(o.text) for o in t.not_run) < 2_000  # the note is carried once, by the first
    assert elapsed < 30, elapsed  # about 1 s here; a generous bound for a slow machine


async def test_many_kinds_of_extra_call_are_named_briefly() -> None:
    it, _ = make()
    message = LAUNCH + "".join(ba(f"act{i}" + "z" * 500) for i in range(1_000))
    t = await it.handle(message)
    text = text_of(t)
    assert "Not run: 1,000 more calls" in text and "and 995 other kinds" in text and len(text) < 2_000


async def test_many_broken_calls_get_one_note_after_the_first_errors() -> None:
    it, _ = make()
    broken = "<browser_action><action>click</action><coordinate>1,1</coordinate><foo>1</foo></browser_action>"
    t = await it.handle(broken * 50_000)
    text = text_of(t)
    assert len(text) < 2_000, len(text)
    assert text.count("is not a parameter of <browser_action>") == 1  # the same error is not repeated
    assert "49,999 more calls were broken as well, and none of them ran" in text
    assert len(t.refused) == 50_000 and t.mistakes == 1


# -- a message over max_message_chars is answered --------------------------------------------------


async def test_a_message_over_the_limit_is_answered_as_a_mistake() -> None:
    it, br = make(Config(max_message_chars=1_000))
    t = await it.handle("words " * 1_000)  # 6,000 characters, no call
    assert t.too_large and t.result is not None and not t.used_tool  # no reply at all before
    assert "Your message was too long: only its first 1,000 characters were read" in text_of(t)
    assert t.mistakes == 1 and br.actions == []
    assert len(t.assistant["content"]) == 1_000  # the history keeps what was read


async def test_a_call_within_the_limit_still_runs_and_the_model_is_told_of_the_rest() -> None:
    it, br = make(Config(max_message_chars=1_000))
    t = await it.handle(LAUNCH + "x" * 5_000 + CLOSE)
    assert t.too_large and [a.action for a in br.actions] == ["launch"]
    assert text_of(t).startswith("Your message was too long") and "The launch action ran." in text_of(t)
    assert t.mistakes == 1


async def test_a_call_cut_by_the_limit_is_reported_once_and_not_run() -> None:
    it, br = make(Config(max_message_chars=40))
    t = await it.handle(LAUNCH)
    assert t.too_large and br.actions == [] and t.refused
    assert t.refused[0].error is not None and t.refused[0].error.code == "truncated_call"
    assert text_of(t).count("too long") == 1


async def test_a_streamed_message_over_the_limit_is_answered_the_same_way() -> None:
    it, _ = make(Config(max_message_chars=1_000))
    whole = await make(Config(max_message_chars=1_000))[0].handle("words " * 1_000)
    s = it.stream()
    for _ in range(1_000):
        s.feed("words ")
    t = await s.finish()
    assert t.too_large and text_of(t) == text_of(whole) and t.assistant == whole.assistant


async def test_the_chat_loop_answers_a_message_over_the_limit_and_goes_on() -> None:
    replies = iter(["blah " * 1_000, "Done, no tool needed."])
    seen: list[list[dict[str, Any]]] = []

    def model(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return next(replies)

    interp, _ = make(Config(max_message_chars=1_000, shape="plain"))
    res = await arun_loop(model, [{"role": "user", "content": "hi"}], interpreter=interp)
    assert res.stop_reason == "no_tool" and len(res.turns) == 2
    assert "Your message was too long" in seen[1][-1]["content"]


# -- the stream survives hostile chunks --------------------------------------------------------------


async def test_a_stream_of_huge_and_tiny_hostile_chunks_never_raises() -> None:
    rng = random.Random(7)
    it, _ = make(Config(max_message_chars=3_000_000))
    s = it.stream()
    pieces = [
        "<browser_action>" * 10_000,
        "<action>click</action><coordinate>" + "9" * 1_000_000,
        "</coordinate></browser_action>",
        "".join(rng.choice("<>/ab_action") for _ in range(200_000)),
        "\x00\udc00\U0010ffff" * 1_000,
        "x" * 2_000_000,  # passes the limit
        "<browser_action>",
    ]
    for p in pieces:
        for i in range(0, len(p), 700_000):
            s.feed(p[i : i + 700_000])
        for ch in p[:300]:
            s.feed(ch)
    t = await s.finish()
    assert t.too_large and len(text_of(t)) < 3_000


# -- the property: no text raises ----------------------------------------------------------------------

TAGS = [
    "<browser_action>",
    "</browser_action>",
    "<action>",
    "</action>",
    "<coordinate>",
    "</coordinate>",
    "<size>",
    "</size>",
    "<text>",
    "</text>",
    "<url>",
    "</url>",
    "<thinking>",
    "</thinking>",
    "<div>",
    "<attempt_completion>",
    "<result>",
    "</result>",
    "</attempt_completion>",
    "<",
    "</",
    ">",
    "`",
    "\n```\n",
]
ACTIONS = [
    "launch",
    "click",
    "hover",
    "type",
    "press",
    "scroll_down",
    "scroll_up",
    "resize",
    "close",
    "",
    "x",
]
PARAMS = ["url", "coordinate", "text", "size", "action", "bogus"]
huge = st.integers(min_value=0, max_value=10**500).map(str)
number = st.one_of(
    st.integers(-(10**6), 10**6).map(str), huge, st.sampled_from(["1e999", "nan", "inf", "-0", "٤٥٠"])
)
value = st.one_of(
    st.text(max_size=30),
    number,
    st.builds(lambda x, y: f"{x},{y}", number, number),
    st.builds(lambda x, y, w, h: f"{x},{y}@{w}x{h}", number, number, number, number),
    st.builds(lambda w, h: f"{w}x{h}", number, number),
    st.sampled_from(
        ["http://127.0.0.1:9/", "file:///etc/passwd", "javascript:alert(1)", "http://[::1", "Enter", "+"]
    ),
)
call = st.builds(
    lambda a, ps: (
        "<browser_action><action>"
        + a
        + "</action>"
        + "".join(f"<{p}>{v}</{p}>" for p, v in ps)
        + "</browser_action>"
    ),
    st.sampled_from(ACTIONS),
    st.lists(st.tuples(st.sampled_from(PARAMS), value), max_size=3),
)
piece = st.one_of(st.sampled_from(TAGS), st.text(max_size=12), number, value, call)
message = st.lists(piece, max_size=30).map("".join)
CONFIGS = [Config(), Config(max_message_chars=300, max_param_chars=50), Config(compat="roo")]


async def _run(cfg: Config, messages: list[str], cuts: list[int]) -> None:
    it, _ = make(cfg)
    await it.handle(LAUNCH)
    for m in messages:
        t = await it.handle(m)
        if t.result is not None:
            assert len(text_of(t)) < 20_000
        # the same message streamed in pieces gives the same answer to a fresh interpreter in the same state
        a, _ = make(cfg)
        b, _ = make(cfg)
        await a.handle(LAUNCH)
        await b.handle(LAUNCH)
        whole = await a.handle(m)
        s = b.stream()
        last = 0
        for c in sorted(k % (len(m) + 1) for k in cuts):
            s.feed(m[last:c])
            last = c
        s.feed(m[last:])
        streamed = await s.finish()
        assert streamed.result == whole.result and streamed.assistant == whole.assistant


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cfg=st.sampled_from(CONFIGS),
    messages=st.lists(message, min_size=1, max_size=3),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=6),
)
def test_no_model_text_raises_out_of_handle_or_feed(
    cfg: Config, messages: list[str], cuts: list[int]
) -> None:
    asyncio.run(_run(cfg, messages, cuts))


@settings(max_examples=300, deadline=None)
@given(st.one_of(value, st.text()))
def test_parsing_a_coordinate_or_a_size_raises_only_value_error(text: str) -> None:
    for fn in (lambda: parse_coordinate(text, VP), lambda: parse_size(text)):
        try:
            fn()
        except ValueError as e:
            assert type(e) is ValueError and len(str(e)) < 500
