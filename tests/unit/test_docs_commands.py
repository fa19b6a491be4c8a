"""The commands the README and the guides show are in ``console`` blocks, each after a ``$ ``: there the
test of the installed wheel (tests/slow/test_examples_from_wheel.py) finds them, runs them and
checks the output shown under them, so none can be shown without being run.  A ``text`` block
shows what is not run as it stands (a session with a broken file, say); a block with no language
holds no command but make's, which need a checkout (the README's quick start)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.docblocks import ROOT, USER_PAGES, console_blocks, fences

# make's targets run in a checkout only (the README's quick start): the wheel's test leaves them out
COMMAND = re.compile(r"(\$ |(xmltools|pytest|pip|python) )")


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_is_in_a_console_block_after_a_prompt(page: Path) -> None:
    for line, info, body in fences(page):
        rows = body.splitlines()
        if info == "console":
            assert rows and rows[0].startswith("$ "), (
                f"{page.name}:{line}: a console block opens with a command"
            )
        elif not info:
            commands = [row for row in rows if COMMAND.match(row)]
            assert not commands, (
                f"{page.name}:{line}: commands in a block with no language (console runs them): {commands}"
            )


def test_console_blocks_are_read_as_commands_and_their_output() -> None:
    page = ROOT / "docs" / "guides" / "experiments.md"
    [score] = [c for _, block in console_blocks(page) for c in block if c.text.startswith("xmltools score")]
    assert score.text == "xmltools score corpus/outputs.jsonl --variant default --variant variants/terse"
    assert score.output[0].split() == ["default", "terse"] and score.output[-1].startswith(
        "calls per message"
    )
