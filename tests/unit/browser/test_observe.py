"""The caps on what one observation carries, and the table that classifies browser failures (no browser)."""

from __future__ import annotations

import pytest

from xmltools.browser.collect import ConsoleCollector, NoteCollector, clip
from xmltools.browser.failures import (
    TABLE,
    ElementGone,
    FailureClass,
    NavigationError,
    TargetError,
    classify,
    first_line,
    to_failure,
)
from xmltools.browser.settings import Caps


def test_clip_states_the_cut() -> None:
    assert clip("short", 10) == "short"
    cut = clip("x" * 1_000_000, 300)
    assert len(cut) <= 300 and cut.endswith("(999,764 more characters were left out of 1,000,000)")


def test_console_keeps_the_first_and_last_halves_and_counts_the_rest() -> None:
    c = ConsoleCollector(Caps(console_entries=10))
    for i in range(100_000):
        c.add("log", f"line {i}")
    entries, notes = c.take()
    assert [e.text for e in entries] == [
        f"line {i}" for i in (0, 1, 2, 3, 4, 99995, 99996, 99997, 99998, 99999)
    ]
    assert notes == ["99,990 console entries between the first 5 and the last 5 were left out"]
    assert c.take() == ((), [])  # taking empties it


def test_console_folds_repeats_and_caps_each_entry_and_the_total() -> None:
    c = ConsoleCollector(Caps(console_entry_chars=100, console_chars=350))
    for _ in range(1_000):
        c.add("warning", "same again")
    c.add("log", "y" * 5_000)
    for i in range(5):
        c.add("log", f"{i}" * 90)
    entries, notes = c.take()
    assert entries[0].text == "same again (repeated 1,000 times)"
    assert len(entries[1].text) <= 100 and "more characters" in entries[1].text
    assert sum(len(e.text) for e in entries) <= 350
    assert any("more console entries were left out" in n for n in notes)


def test_notes_fold_dialogs_and_duplicates_and_stay_capped() -> None:
    n = NoteCollector(Caps(notes=5, note_chars=100))
    for i in range(1, 1605):
        n.dialog("alert", f"alert number {i}")
    n.dialog("confirm", "sure?")
    for _ in range(3):
        n.add("the same note")
    for i in range(50):
        n.add(f"note {i} " + "z" * 500)
    notes = n.take()
    assert (
        notes[0]
        == "1,604 alert dialogs were dismissed (the first said 'alert number 1', the last 'alert number 1604')"
    )
    assert notes[1] == "a confirm dialog was dismissed: 'sure?'"
    assert notes[2] == "the same note (3 times)"
    assert len(notes) == 5 and notes[-1].endswith("more notes were left out")
    assert all(len(x) <= 100 for x in notes)
    assert n.take() == ()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Page.evaluate: Execution context was destroyed, most likely because of a navigation", "transient"),
        ("Protocol error (Page.captureScreenshot): Not attached to an active page", "transient"),
        ("Frame was detached", "transient"),
        ("Timeout 5000ms exceeded.", "page"),
        ("net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/", "page"),
        ("something nobody has seen before", "page"),
    ],
)
def test_the_failure_table(message: str, expected: str) -> None:
    assert classify(message, alive=True, page_open=True).value == expected


def test_a_dead_browser_makes_every_failure_lost() -> None:
    for fragment, _ in TABLE:
        assert classify(fragment, alive=False, page_open=False) is FailureClass.LOST
    assert classify("Target crashed", alive=True, page_open=False) is FailureClass.LOST
    assert classify("Target page, context or browser has been closed", alive=True, page_open=False) is (
        FailureClass.TRANSIENT
    )


def test_a_failure_says_when_the_recorded_element_is_gone() -> None:
    """Healing checks this flag, not the words: a wrong target that says 'was not found' is not it."""
    gone = to_failure(ElementGone('the recorded element button "Save" was not found: ...'), None)
    assert (gone.kind, gone.element_gone) == ("target", True)
    wrong = to_failure(TargetError("the file was not found"), None)
    assert (wrong.kind, wrong.element_gone) == ("target", False)
    assert not to_failure(NavigationError("net::ERR_NAME_NOT_RESOLVED"), None).element_gone


def test_first_line_drops_the_api_prefix() -> None:
    assert first_line(Exception("Page.goto: net::ERR_ABORTED at x\nCall log: ...")) == "net::ERR_ABORTED at x"
    assert first_line(Exception("plain words: here")) == "plain words: here"
    assert first_line(Exception("")) == "Exception"


def test_dialogs_are_taken_alone_for_a_failure_and_leave_the_notes() -> None:
    n = NoteCollector(Caps())
    n.dialog("alert", "hello")
    n.dialog("prompt", "name?")
    n.dialog("prompt", "age?")
    n.add("a tab opened")
    assert n.take_dialogs() == [
        "an alert dialog was dismissed: 'hello'",
        "2 prompt dialogs were dismissed (the first said 'name?', the last 'age?')",
    ]
    assert n.take_dialogs() == []
    assert n.take() == ("a tab opened",)
