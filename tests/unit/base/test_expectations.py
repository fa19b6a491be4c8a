"""Assertions as data: what each kind needs, how it reads, how it travels in a transcript, and what an
offline replay does with it (keeps it, checks nothing: there is no page)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from support.fakes import FakeBrowser
from support.helpers import ba

from xmltools.base.expectations import Expectation, ExpectationFailed
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.transcript import ExpectRecord, TranscriptError, TranscriptWriter, load_transcript
from xmltools.replaying.run import replay


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"kind": "text"}, "a text expectation needs the text"),
        ({"kind": "element", "name": "Save"}, "an? element expectation needs a role"),
        ({"kind": "value", "value": "x"}, "needs the target field"),
        ({"kind": "url"}, "needs the address"),
        ({"kind": "aria", "value": "  \n"}, "needs the ARIA snapshot"),
        ({"kind": "text", "value": "(", "regex": True}, "is not a regular expression"),
        ({"kind": "value", "target": "#a", "value": "x", "regex": True}, "only text and url"),
        ({"kind": "text", "value": "a", "colour": "red"}, "Extra inputs"),
    ],
)
def test_an_incomplete_expectation_is_refused_with_what_it_lacks(
    fields: dict[str, object], said: str
) -> None:
    with pytest.raises(ValidationError, match=said):
        Expectation.model_validate(fields)


def test_each_kind_reads_as_one_line() -> None:
    assert Expectation(kind="text", value="Saved").describe() == "text 'Saved' is visible"
    assert Expectation(kind="url", value="/done$", regex=True).describe() == "the address matches //done$/"
    assert Expectation(kind="element", role="button", name="Save", session="shop").describe() == (
        "button 'Save' is visible (session shop)"
    )
    assert Expectation(kind="value", target="label=Email", value="a@b").describe() == (
        "label=Email has the value 'a@b'"
    )
    assert Expectation(kind="aria", value='- heading "A"\n- button "B"').describe() == (
        "the page contains the ARIA snapshot '- heading \"A\"' (+1 lines)"
    )


def test_a_writer_without_a_browser_writes_assertions_as_given(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path, base_url="http://127.0.0.1:9") as w:
        w.expect_url("http://127.0.0.1:9/done.html")
        w.expect_aria('- heading "Done"')
    t = load_transcript(path)
    kept = [r.expectation for r in t.records if isinstance(r, ExpectRecord)]
    assert [e.value for e in kept] == ["{base_url}/done.html", '- heading "Done"']
    assert t.expectations() == {0: kept}


def test_a_broken_expect_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"xmltools_transcript": 1})
        + "\n"
        + json.dumps({"role": "expect", "expectation": {"kind": "url"}})
    )
    with pytest.raises(TranscriptError, match=r"t\.jsonl:2: .*needs the address"):
        load_transcript(path)


class Checking(FakeBrowser):
    """The stand-in browser, with assertions that hold when their text is in its address."""

    async def verify(self, exp: Expectation) -> str | None:
        return None if exp.value in self.url else f"the address is {self.url!r}"


def test_offline_a_replay_keeps_its_assertions_and_checks_none(tmp_path: Path) -> None:
    flow = tmp_path / "flow.jsonl"

    async def record() -> None:
        async with AsyncInterpreter(Config(), browser=Checking()) as it:
            rec = it.record(flow)
            await it.handle(ba("launch", url="http://127.0.0.1:9/a.html"))
            rec.expect_url("a.html")
            rec.expect_url("b.html")
            with pytest.raises(ExpectationFailed, match=r"b\.html"):
                await it.handle(ba("close"))
            await it.handle(ba("close"))

    asyncio.run(record())
    assert load_transcript(flow).expectations() == {1: [Expectation(kind="url", value="a.html")]}
    out = tmp_path / "out.jsonl"
    result = asyncio.run(replay(flow, offline=True, record=out))
    assert result.ok and result.checked == 0, result.summary()
    assert load_transcript(out).expectations() == {1: [Expectation(kind="url", value="a.html")]}


def test_an_update_moves_a_point_only_to_a_place_in_view() -> None:
    from xmltools.base.results import Identity
    from xmltools.replaying.update import _Found, _same_kind

    seen = Identity(described='link "Intro"', role="link", name="Intro", box=(40.0, 100.0, 80.0, 20.0))
    below = seen.model_copy(update={"box": (470.0, 700.0, 80.0, 20.0)})  # found below the fold
    assert _same_kind("coordinate", _Found(seen, "#a", None, (900, 600))) == ("80,110", "")
    new, why = _same_kind("coordinate", _Found(below, "#a", None, (900, 600)))
    assert (
        new is None
        and why == "its centre 510,710 is below the fold of the 900x600 viewport: no point reaches it"
    )


def test_an_update_gives_a_ref_only_when_one_ref_is_the_element() -> None:
    from xmltools.base.results import Identity
    from xmltools.replaying.update import _Found, _same_kind

    box = Identity(
        described='textbox "What needs to be done?"', role="textbox", name="What needs to be done?"
    )
    one = '- textbox "What needs to be done?" [ref=e4]: Buy milk\n- textbox "Search" [ref=e5]'
    two = one + '\n- textbox "What needs to be done?" [ref=e7]'
    assert _same_kind("ref", _Found(box, "#a", one, (900, 600))) == ("e4", "")
    new, why = _same_kind("ref", _Found(box, "#a", two, (900, 600)))
    assert new is None and why.startswith('2 refs of the snapshot before the step are textbox "What'), why
