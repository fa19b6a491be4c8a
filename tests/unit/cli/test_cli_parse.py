"""`xmltools parse`: stdin to JSON, identical whole and chunked."""

from __future__ import annotations

import json
import sys

import pytest

from xmltools.cli import main

MSG = (
    "Let me look.\n<browser_action>\n<action>click</action>\n<coordinate>450,300</coordinate>\n"
    "</browser_action>\nand <note><title>t</title></note> then <browser_action><action>close</action>"
)


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> object:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(MSG))
    assert main(["parse", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_parse_prints_the_design_shape(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run(capsys, monkeypatch)
    assert isinstance(out, list)
    assert out[0] == {"type": "text", "content": "Let me look.", "partial": False, "span": [0, 12]}
    assert out[1]["params"] == {"action": "click", "coordinate": "450,300"}
    assert out[-1]["partial"] is True and out[-1]["diagnostics"][0]["code"] == "truncated_call"


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 1000])
def test_chunked_output_is_identical(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    assert run(capsys, monkeypatch, "--chunk", str(n)) == run(capsys, monkeypatch)


def test_host_tool_and_roo_mode(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = run(capsys, monkeypatch, "--tool", "note=title,body*")
    assert isinstance(out, list) and out[2]["content"] == "and"
    assert (out[3]["name"], out[3]["params"], out[3]["partial"]) == ("note", {"title": "t"}, False)
    roo = run(capsys, monkeypatch, "--compat", "roo")
    assert roo[-1]["params"] == {"action": "close"} and "diagnostics" not in roo[-1]
