"""The experiment commands' command line: experiment (bare, run, show), prompt, rerender and score,
their help, the variants they take, and the one-line mistakes of the flags."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from xmltools.cli import build_parser, main
from xmltools.lab.store import Store, TrialRow

ROOT = Path(__file__).parents[3]
TERSE = ROOT / "fixtures" / "variants" / "terse"
DEMO = ROOT / "fixtures" / "transcripts" / "demo.jsonl"


def subparser(*names: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in names:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def test_experiment_run_help_is_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["experiment", "run", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: xmltools experiment run ") and "FILE.toml" in out
    assert "--task INSTRUCTION" in out and "--dry-run" in out and "--csv" not in out


@pytest.mark.parametrize(
    "names",
    [("experiment",), ("experiment", "run"), ("experiment", "show"), ("prompt",), ("rerender",), ("score",)],
)
def test_every_option_of_the_experiment_commands_says_what_it_does(names: tuple[str, ...]) -> None:
    silent = [
        "/".join(a.option_strings) or a.dest
        for a in subparser(*names)._actions
        if not isinstance(a, argparse._SubParsersAction) and not (a.help or "").strip()
    ]
    assert silent == []


@pytest.mark.parametrize("command", [["experiment"], ["experiment", "run"]])
def test_one_task_by_flags_takes_the_bundled_prompts_unless_told(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--task", "Sign in.", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--dry-run"]
    assert main([*command, *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 trials: 1 variants × 1 models × 1 tasks × 3; at most 20 turns a trial"
    assert out[1].startswith("variant default: system prompt ")
    assert main([*command, *flags, "--variants", "default", str(TERSE), "--trials", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("4 trials: 2 variants") and out[2].startswith("variant terse: ")


def test_the_flags_mistakes_are_said_at_once_each_naming_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--task", "x", "--model", "m", "--base-url", "localhost:8000", "--check", "ulr=/done.html"]
    assert main(["experiment", "run", *flags, "--check", "text", "--variants", "nope", "-v"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "xmltools: 4 mistakes: --check ulr=/done.html: no check named 'ulr'; did you mean 'url'? (and 3 more)",
        "    --check ulr=/done.html: no check named 'ulr'; did you mean 'url'?",
        "    --check text: write KIND=VALUE, such as url=/done.html or text=Saved",
        "    --variants nope: variant 'nope': no such folder (a variant is a folder of template overrides and"
        " variant.toml; 'default' is the bundled prompts)",
        "    --base-url: 'localhost:8000' is not an http:// or https:// address",
    ]
    assert main(["experiment", *flags[:4], "--base-url", "http://127.0.0.1:9/v1", *flags[6:]]) == 2
    assert capsys.readouterr().err == (
        "xmltools: --check ulr=/done.html: no check named 'ulr'; did you mean 'url'?\n"
    )


def test_a_missing_key_names_the_flag_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAB_NO_KEY", raising=False)
    flags = [
        "--task",
        "x",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "LAB_NO_KEY",
    ]
    assert main(["experiment", "run", *flags, "--out", "/nonexistent/out"]) == 2
    assert capsys.readouterr().err == "xmltools: --api-key-env: LAB_NO_KEY is not set\n"
    assert main(["experiment", *flags, "--dry-run"]) == 0
    assert (
        capsys.readouterr().err
        == "xmltools: warning: --api-key-env: LAB_NO_KEY is not set (a run needs it)\n"
    )
    assert main(["run", "--model", "m", *flags[4:], "--task", "do it"]) == 2  # run names its own flag too
    assert capsys.readouterr().err == "xmltools: --api-key-env: LAB_NO_KEY is not set\n"


def test_a_file_and_the_flags_for_one_task_do_not_mix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["experiment", "run", str(tmp_path / "exp.toml"), "--task", "x", "--model", "m"]) == 2
    assert capsys.readouterr().err == (
        f"xmltools: --task, --model: the flags of one task; not with a file ({tmp_path / 'exp.toml'})\n"
    )
    assert main(["experiment", "run", str(tmp_path / "exp.toml"), "--provider", "anthropic"]) == 2
    assert capsys.readouterr().err.startswith("xmltools: --provider: the flags of one task; not with a file")


def test_experiment_run_takes_verbose_after_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "run", str(tmp_path / "none.toml"), "-v"]) == 2
    assert "none.toml: no such experiment file" in capsys.readouterr().err


def test_show_json_gives_the_checks_as_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "r.sqlite")
    checks = [{"check": "url '/done.html'", "problem": "the address is 'x'"}]
    store.add(TrialRow("A", "m", "t", 1, False, True, "completed", 4, 1000, 100, False, False, 0.01, 1.0,
                       "ok", checks, None, None, "2026-01-01T00:00:00+00:00"))  # fmt: skip
    assert main(["experiment", "show", str(tmp_path / "r.sqlite"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["checks"] == checks
    assert main(["experiment", "show", str(tmp_path / "r.sqlite"), "--csv"]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert '"[{""check"": ""url \'/done.html\'""' in row  # a CSV cell is text: the list as JSON there


def test_every_command_that_takes_a_variant_takes_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "--variant", "default"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# variant: default\n") and "## browser_action" in out
    assert main(["rerender", str(DEMO), "--variant", "default", "--before", str(TERSE), "--no-diff"]) == 0
    assert capsys.readouterr().out.startswith(f"{DEMO}: terse -> default")
    assert main(["score", str(ROOT / "fixtures" / "corpus" / "outputs.jsonl"), "--variant", "default"]) == 0
    assert capsys.readouterr().out.split()[0] == "default"
    assert main(["prompt", "--variant", "defualt"]) == 2
    assert "variant 'defualt': no such folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--trials", "0", "argument --trials: 0: give 1 or more"),
        ("--max-turns", "x", "argument --max-turns: 'x' is not a whole number"),
        ("--concurrency", "-2", "argument --concurrency: -2: give 1 or more"),
        ("--max-cost", "-1", "argument --max-cost: -1: give 0 or more"),
    ],
)
def test_counts_and_costs_out_of_range_are_refused_before_the_file_is_read(
    flag: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["experiment", "run", "exp.toml", flag, value])
    assert done.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith(said)
