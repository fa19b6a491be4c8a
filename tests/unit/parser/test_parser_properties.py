"""Property tests of the parser: it never raises, streams exactly, and the anchors' modes match the oracle."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.parser_oracle import JS_WS, cline_reference, roo_reference

from xmltools import BROWSER_ACTION, Limits, StreamParser, TextBlock, ToolSyntax, ToolUse, parse

WRITE = ToolSyntax("write_to_file", ("path", "content", "line_count"), frozenset({"content"}))
# a tool with a content parameter that Roo-Code's write_to_file rule does not apply to
INSERT = ToolSyntax("insert_content", ("path", "line", "content"))
# a tool whose calls carry a checklist, as every tool of the cline dialect does
DONE = ToolSyntax("attempt_completion", ("result", "task_progress"))
TOOLS = [BROWSER_ACTION, WRITE, INSERT, DONE]
TOOL_PARAMS = {t.name: t.params for t in TOOLS}

FRAGMENTS = [
    "<browser_action>",
    "</browser_action>",
    "<write_to_file>",
    "</write_to_file>",
    "<action>",
    "</action>",
    "<coordinate>",
    "</coordinate>",
    "<text>",
    "</text>",
    "<content>",
    "</content>",
    "<path>",
    "</path>",
    "<line_count>",
    "</line_count>",
    "<insert_content>",
    "</insert_content>",
    "<line>",
    "</line>",
    "<url>",
    "</url>",
    "<attempt_completion>",
    "</attempt_completion>",
    "<task_progress>",
    "</task_progress>",
    "- [x] ",
    "</coord",
    "<browser_",
    "<",
    ">",
    "</",
    "<div>",
    "<x a='1'>",
    "`",
    "```",
    "```xml\n",
    "~~~",
    "\n",
    " ",
    "\t",
    "\r\n",
    "\u00a0",
    "\ufeff",
    "\u2028",
    "click",
    "450,300",
    "a < b && c",
    "é",
    "😀",
]

messages = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40).map("".join)
chunkings = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=50)
modes = st.sampled_from(["default", "roo", "cline"])
fences = st.sampled_from(["call", "text"])
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def feed_in_chunks(
    text: str, sizes: list[int], compat: str, fenced: str, limits: Limits | None = None
) -> StreamParser:
    sp = StreamParser(TOOLS, compat=compat, fenced=fenced, limits=limits)  # type: ignore[arg-type]
    i = 0
    k = 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        sp.feed(text[i : i + n])
        i += n
        k += 1
        assert sp.blocks() == parse(
            text[:i],
            tools=TOOLS,
            compat=compat,  # type: ignore[arg-type]
            fenced=fenced,  # type: ignore[arg-type]
            limits=limits,
            final=False,
        )
    sp.close()
    return sp


@SETTINGS
@given(messages, chunkings, modes, fences)
def test_streaming_equals_whole_parse(text: str, sizes: list[int], compat: str, fenced: str) -> None:
    sp = feed_in_chunks(text, sizes, compat, fenced)
    assert sp.blocks() == parse(text, tools=TOOLS, compat=compat, fenced=fenced)  # type: ignore[arg-type]


@SETTINGS
@given(st.text(max_size=300), chunkings, modes)
def test_arbitrary_unicode_never_raises(text: str, sizes: list[int], compat: str) -> None:
    sp = feed_in_chunks(text, sizes, compat, "call")
    for b in sp.blocks():
        assert 0 <= b.span[0] <= b.span[1] <= len(text)


@SETTINGS
@given(messages, chunkings, st.integers(1, 60), st.integers(1, 20))
def test_limits_never_raise_and_stream_exactly(text: str, sizes: list[int], mmax: int, pmax: int) -> None:
    lim = Limits(max_message_chars=mmax, max_param_chars=pmax)
    sp = feed_in_chunks(text, sizes, "default", "call", lim)
    assert sp.blocks() == parse(text, tools=TOOLS, limits=lim)
    for b in sp.blocks():
        if isinstance(b, ToolUse):
            assert all(len(v) <= pmax for v in b.params.values())


def as_oracle(blocks: list[TextBlock | ToolUse]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for b in blocks:
        if isinstance(b, TextBlock):
            out.append({"type": "text", "content": b.content, "partial": b.partial})
        else:
            out.append({"type": "tool_use", "name": b.name, "params": dict(b.params), "partial": b.partial})
    return out


@SETTINGS
@given(messages)
def test_roo_mode_matches_the_reference_model(text: str) -> None:
    assert as_oracle(parse(text, tools=TOOLS, compat="roo")) == roo_reference(text, TOOL_PARAMS)


ROO_CONTENT_MESSAGES = [
    "<write_to_file><path>a.txt</path><content>x\n</content><line_count>5</line_count></write_to_file>",
    "<write_to_file><path>a.txt</path><content>x\n</content> y </content><line_count>5</line_count></write_to_file>",
    "<write_to_file><path>a.txt</path><content>x\n</content> y </content> z </content><line_count>5</line_count>"
    "</write_to_file>",
    "<write_to_file><path>a.txt</path><line_count>5</line_count><content>x\n</content> y </content></write_to_file>",
    "<write_to_file><path>a.txt</path><content>x</content><line_count>5</line_count> z </content></write_to_file>",
    "<write_to_file><path>a.txt</path><content>x\n</content> y </content>",
    "<write_to_file><content>a</content><path>p</content>q</path></write_to_file>",
    "<write_to_file><path><content></path>q</content></write_to_file>",
    "<insert_content><path>a.txt</path><line>5</line><content>x\n</content> y </content></insert_content>",
    "<insert_content><content>x</content><content>y</content></insert_content> then <write_to_file>",
]


def test_roo_content_rule_matches_the_reference_model() -> None:
    for msg in ROO_CONTENT_MESSAGES:
        assert as_oracle(parse(msg, tools=TOOLS, compat="roo")) == roo_reference(msg, TOOL_PARAMS), msg


@SETTINGS
@given(messages)
def test_cline_mode_matches_the_reference_model(text: str) -> None:
    assert as_oracle(parse(text, tools=TOOLS, compat="cline")) == cline_reference(text, TOOL_PARAMS)


def test_cline_content_rule_matches_the_reference_model() -> None:
    for msg in ROO_CONTENT_MESSAGES:
        assert as_oracle(parse(msg, tools=TOOLS, compat="cline")) == cline_reference(msg, TOOL_PARAMS), msg


@SETTINGS
@given(messages, chunkings)
def test_cline_mode_streams_as_cline_reparses(text: str, sizes: list[int]) -> None:
    # Cline parses the whole text again after every chunk: mid-stream, the blocks so far are those
    sp = StreamParser(TOOLS, compat="cline")
    i = k = 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        sp.feed(text[i : i + n])
        i += n
        k += 1
        assert as_oracle(sp.blocks()) == cline_reference(text[:i], TOOL_PARAMS)
    sp.close()
    assert sp.blocks() == parse(text, tools=TOOLS, compat="cline")


# A well-formed call always round-trips, whatever the values (short of their own closing tags).
values = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)


@SETTINGS
@given(
    st.text(alphabet=st.characters(blacklist_characters="<`", blacklist_categories=["Cs"]), max_size=30),
    st.dictionaries(st.sampled_from(["action", "url", "coordinate", "size"]), values, max_size=4),
    values,
)
def test_well_formed_calls_round_trip(prose: str, params: dict[str, str], text_value: str) -> None:
    params = {k: v for k, v in params.items() if f"</{k}>" not in v}
    body = "".join(f"<{k}>{v}</{k}>" for k, v in params.items())
    text_value = text_value.replace("</text>", "")
    msg = f"{prose}\n<browser_action>\n{body}<text>{text_value}</text>\n</browser_action>"
    calls = [b for b in parse(msg) if isinstance(b, ToolUse)]
    assert len(calls) == 1
    call = calls[0]
    assert not call.partial
    for k, v in params.items():
        assert call.params[k] == v.strip(JS_WS)
    expected = text_value
    if expected.startswith("\r\n"):
        expected = expected[2:]
    elif expected.startswith("\n"):
        expected = expected[1:]
    if expected.endswith("\r\n"):
        expected = expected[:-2]
    elif expected.endswith("\n"):
        expected = expected[:-1]
    assert call.params["text"] == expected


# -- a few thousand random and mutated model-like messages ------------------------------

SEEDS = [
    "I'll open the app first.\n<browser_action>\n<action>launch</action>\n<url>http://localhost:3000</url>\n</browser_action>",
    "<thinking>The button is at the top.</thinking>\n<browser_action>\n<action>click</action>\n<coordinate>450,300</coordinate>\n</browser_action>",
    "Typing now.\n```xml\n<browser_action>\n<action>type</action>\n<text>a < b && </div></text>\n</browser_action>\n```",
    "Use the <browser_action> tool, e.g. `<browser_action>`.\n<browser_action><action>close</action></browser_action>",
    "<write_to_file><path>a.txt</path><content>\n</content> x </content></write_to_file> then <browser_action><action>scroll_down</action>",
    "<attempt_completion>\n<result> Done </result>\n<task_progress>\n- [x] Open\n- [ ] Close\n</task_progress>\n</attempt_completion>",
]


def mutate(rnd: random.Random, s: str) -> str:
    for _ in range(rnd.randint(1, 6)):
        op = rnd.random()
        i = rnd.randint(0, len(s))
        if op < 0.3 and s:
            j = min(len(s), i + rnd.randint(1, 8))
            s = s[:i] + s[j:]
        elif op < 0.6:
            s = s[:i] + rnd.choice(FRAGMENTS) + s[i:]
        elif op < 0.8 and s:
            j = min(len(s), i + rnd.randint(1, 30))
            s = s[:i] + s[i:j] + s[i:j] + s[j:]
        else:
            s = s[:i] + chr(rnd.randint(0, 0x2FFF)) + s[i:]
    return s


def test_thousands_of_mutated_messages() -> None:
    rnd = random.Random(20261122)
    for n in range(3000):
        msg = mutate(rnd, rnd.choice(SEEDS) * rnd.randint(1, 3))
        compat = ("roo", "cline", "default", "default")[n % 4]
        whole = parse(msg, tools=TOOLS, compat=compat)  # type: ignore[arg-type]
        if n % 10 == 0:
            sizes = [rnd.randint(1, 10) for _ in range(20)]
            sp = feed_in_chunks(msg, sizes, compat, rnd.choice(["call", "text"]))
            if sp.fenced == "call":
                assert sp.blocks() == whole
        if compat == "roo":
            assert as_oracle(whole) == roo_reference(msg, TOOL_PARAMS)
        elif compat == "cline":
            assert as_oracle(whole) == cline_reference(msg, TOOL_PARAMS)
        for b in whole:
            assert 0 <= b.span[0] <= b.span[1] <= len(msg)
            if isinstance(b, ToolUse) and b.complete:
                assert msg[b.span[0] : b.span[1]].endswith(f"</{b.name}>")
