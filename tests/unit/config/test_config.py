"""Settings: one Config, layered by Config.load (arguments > environment > TOML file > pyproject > defaults).

Every test runs in an empty folder with no XMLTOOLS_ variable of the real environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from xmltools.base.results import Viewport
from xmltools.cli import main
from xmltools.cli.common import load_config
from xmltools.config.explain import Setting, explain, settings_table
from xmltools.config.settings import Config
from xmltools.errors import ConfigError
from xmltools.protocol.machine import Policy
from xmltools.render.prompts import Renderer, bundled_templates, template_table, template_variables

ROOT = Path(__file__).parents[3]


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No XMLTOOLS_ variable from outside, and an empty current folder."""
    for key in list(os.environ):
        if key.upper().startswith("XMLTOOLS_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sources(**kwargs: object) -> dict[str, str]:
    return {s.name: s.source for s in explain(**kwargs)}  # type: ignore[arg-type]


def write_pyproject(folder: Path, table: str) -> None:
    (folder / "pyproject.toml").write_text(f'[project]\nname = "app"\n\n[tool.xmltools]\n{table}\n')


# -- each source alone --------------------------------------------------------------------


def test_the_defaults_when_nothing_is_set(tmp_path: Path) -> None:
    assert Config.load(environ={}, cwd=tmp_path) == Config()
    assert set(sources(environ={}, cwd=tmp_path).values()) == {"default"}


def test_the_environment_alone(tmp_path: Path) -> None:
    env = {
        "XMLTOOLS_VIEWPORT": "1280x800",
        "XMLTOOLS_HEADLESS": "false",
        "XMLTOOLS_ALLOWED_ORIGINS": "http://localhost:*, https://*.example.com",
        "XMLTOOLS_APPROVAL": '{"script": "allow"}',
        "XMLTOOLS_IDLE_TIMEOUT": "none",
        "XMLTOOLS_POLICY": "allow",
    }
    c = Config.load(environ=env, cwd=tmp_path)
    assert c.viewport == Viewport(width=1280, height=800)
    assert c.headless is False and c.policy is Policy.ALLOW and c.idle_timeout is None
    assert c.allowed_origins == ("http://localhost:*", "https://*.example.com")
    assert c.approval == {"script": "allow"}
    assert sources(environ=env, cwd=tmp_path)["viewport"] == "environment (XMLTOOLS_VIEWPORT)"


def test_the_real_environment_is_read_when_none_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XMLTOOLS_MISTAKE_LIMIT", "7")
    assert Config.load().mistake_limit == 7
    assert Config.load(environ={}).mistake_limit == 3


@pytest.mark.parametrize("table", [False, True])
def test_xmltools_toml_alone(tmp_path: Path, table: bool) -> None:
    body = 'profile = "full"\nviewport = "1024x768"\nallowed_schemes = ["file"]\n'
    (tmp_path / "xmltools.toml").write_text(("[xmltools]\n" if table else "") + body)
    c = Config.load(environ={}, cwd=tmp_path)
    assert c.profile == "full" and c.viewport == Viewport(width=1024, height=768)
    assert c.allowed_schemes == ("file",)
    assert sources(environ={}, cwd=tmp_path)["profile"] == "xmltools.toml"


def test_a_named_file_replaces_xmltools_toml(tmp_path: Path) -> None:
    (tmp_path / "xmltools.toml").write_text('profile = "full"\nmax_notes = 9\n')
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "ci.toml").write_text('observe = "both"\n')
    c = Config.load("conf/ci.toml", environ={}, cwd=tmp_path)
    assert c.observe == "both" and c.profile == "roo" and c.max_notes == 20
    assert sources(path="conf/ci.toml", environ={}, cwd=tmp_path)["observe"] == "conf/ci.toml"
    with pytest.raises(ConfigError, match=r"cannot read nope.toml"):
        Config.load("nope.toml", environ={}, cwd=tmp_path)


def test_pyproject_alone(tmp_path: Path) -> None:
    write_pyproject(tmp_path, 'shape = "anthropic"\nimage_budget = 2\napproval = { read = "deny" }')
    c = Config.load(environ={}, cwd=tmp_path)
    assert c.shape == "anthropic" and c.image_budget == 2 and c.approval == {"read": "deny"}
    assert sources(environ={}, cwd=tmp_path)["shape"] == "pyproject.toml"


def test_a_pyproject_without_the_table_gives_nothing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n[tool.other]\nprofile = 1\n')
    assert Config.load(environ={}, cwd=tmp_path) == Config()


def test_arguments_alone(tmp_path: Path) -> None:
    c = Config.load(environ={}, cwd=tmp_path, profile="forge", viewport="800x600")
    assert c.profile == "forge" and c.viewport == Viewport(width=800, height=600)
    assert sources(environ={}, cwd=tmp_path, profile="forge")["profile"] == "argument"


# -- all together ---------------------------------------------------------------------------


def test_each_setting_comes_from_the_highest_source_that_sets_it(tmp_path: Path) -> None:
    write_pyproject(
        tmp_path, 'profile = "aleph"\nobserve = "both"\nmax_notes = 5\nimage_budget = 1\nfenced = "text"'
    )
    (tmp_path / "xmltools.toml").write_text('profile = "fractal"\nobserve = "snapshot"\nmax_notes = 6\n')
    env = {"XMLTOOLS_PROFILE": "forge", "XMLTOOLS_OBSERVE": "screenshot"}
    c = Config.load(environ=env, cwd=tmp_path, profile="full")
    assert (c.profile, c.observe, c.max_notes, c.image_budget, c.fenced, c.shape) == (
        "full",  # argument over all
        "screenshot",  # environment over the files
        6,  # xmltools.toml over pyproject
        1,  # pyproject over the default
        "text",
        "openai",  # the default
    )
    where = sources(environ=env, cwd=tmp_path, profile="full")
    assert [where[k] for k in ("profile", "observe", "max_notes", "image_budget", "shape")] == [
        "argument",
        "environment (XMLTOOLS_OBSERVE)",
        "xmltools.toml",
        "pyproject.toml",
        "default",
    ]


def test_a_table_comes_whole_from_one_source(tmp_path: Path) -> None:
    (tmp_path / "xmltools.toml").write_text('approval = { read = "deny", script = "allow" }\n')
    c = Config.load(environ={"XMLTOOLS_APPROVAL": '{"navigate": "ask"}'}, cwd=tmp_path)
    assert c.approval == {"navigate": "ask"}


def test_none_in_the_environment_unsets_a_file_value(tmp_path: Path) -> None:
    (tmp_path / "xmltools.toml").write_text("idle_timeout = 30.0\n")
    assert Config.load(environ={}, cwd=tmp_path).idle_timeout == 30.0
    assert Config.load(environ={"XMLTOOLS_IDLE_TIMEOUT": "none"}, cwd=tmp_path).idle_timeout is None


def test_config_in_code_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XMLTOOLS_PROFILE", "full")
    (tmp_path / "xmltools.toml").write_text('observe = "both"\n')
    write_pyproject(tmp_path, "max_notes = 4")
    assert Config(image_budget=2) == Config().model_copy(update={"image_budget": 2})
    assert (Config().profile, Config().observe, Config().max_notes) == ("roo", "screenshot", 20)
    assert Config.load().profile == "full"  # while the layered one reads all three
    assert (Config.load().observe, Config.load().max_notes) == ("both", 4)


def test_from_env_and_from_toml_read_only_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "xmltools.toml").write_text('profile = "full"\n')
    monkeypatch.setenv("XMLTOOLS_OBSERVE", "both")
    assert (Config.from_env().profile, Config.from_env().observe) == ("roo", "both")
    assert Config.from_env({"XMLTOOLS_VIEWPORT": "1024x768"}, max_notes=4).max_notes == 4
    c = Config.from_toml(tmp_path / "xmltools.toml", image_budget=1)
    assert (c.profile, c.observe, c.image_budget) == ("full", "screenshot", 1)


def test_the_run_command_loads_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "xmltools.toml").write_text('profile = "full"\nviewport = "640x480"\n')
    monkeypatch.setenv("XMLTOOLS_MAX_NOTES", "8")
    c = load_config(argparse.Namespace(config=None, viewport="1000x700"))
    assert (c.profile, c.max_notes, c.viewport) == ("full", 8, Viewport(width=1000, height=700))


def test_a_replay_keeps_the_recorded_settings_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xmltools.record.transcript import load_transcript
    from xmltools.replaying.run import replay

    monkeypatch.setenv("XMLTOOLS_PROFILE", "full")  # the header says aleph: the header wins
    monkeypatch.setenv("XMLTOOLS_MAX_NOTES", "7")  # the header does not say: the environment fills it in
    out = tmp_path / "again.jsonl"
    asyncio.run(replay(ROOT / "fixtures" / "transcripts" / "aleph.jsonl", offline=True, record=out))
    recorded = load_transcript(out).header.config
    assert recorded["profile"] == "aleph" and recorded["approval"] == {"script": "deny"}
    assert recorded["max_notes"] == 7


# -- unknown names and bad values ------------------------------------------------------------


def test_a_typo_in_the_environment_names_the_closest_setting(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"XMLTOOLS_VIEWPROT is not a setting; did you mean XMLTOOLS_VIEWPORT\?"
    ):
        Config.load(environ={"XMLTOOLS_VIEWPROT": "1280x800"}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="did you mean XMLTOOLS_MISTAKE_LIMIT"):
        Config.from_env({"XMLTOOLS_MISTAKES_LIMIT": "4"})


def test_variables_read_elsewhere_are_no_typo(tmp_path: Path) -> None:
    env = {"XMLTOOLS_UPDATE_GOLDEN": "1", "XMLTOOLS_CHROMIUM": "", "OTHER_VIEWPROT": "x"}
    assert Config.load(environ=env, cwd=tmp_path) == Config()


def test_a_typo_in_xmltools_toml_names_the_closest_setting(tmp_path: Path) -> None:
    (tmp_path / "xmltools.toml").write_text('[xmltools]\nobserv = "both"\n')
    with pytest.raises(
        ConfigError, match=r"observ \(in xmltools.toml\) is not a setting; did you mean observe\?"
    ):
        Config.load(environ={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="did you mean observe"):
        Config.from_toml(tmp_path / "xmltools.toml")


def test_a_typo_in_pyproject_names_the_closest_setting(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "image_budjet = 2")
    with pytest.raises(
        ConfigError, match=r"image_budjet \(in pyproject.toml \[tool.xmltools\]\).*image_budget\?"
    ):
        Config.load(environ={}, cwd=tmp_path)


def test_a_typo_in_the_arguments_names_the_closest_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"headles .*did you mean headless"):
        Config.load(environ={}, cwd=tmp_path, headles=False)


def test_a_bad_value_names_where_it_came_from(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"viewport: .*\(from XMLTOOLS_VIEWPORT\)"):
        Config.load(environ={"XMLTOOLS_VIEWPORT": "wide"}, cwd=tmp_path)
    write_pyproject(tmp_path, "mistake_limit = 0")
    with pytest.raises(ConfigError, match=r"mistake_limit: .*\(from pyproject.toml\)"):
        Config.load(environ={}, cwd=tmp_path)


def test_a_broken_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "xmltools.toml").write_text("profile = \n")
    with pytest.raises(ConfigError, match=r"cannot read xmltools.toml"):
        Config.load(environ={}, cwd=tmp_path)
    (tmp_path / "xmltools.toml").write_text('profile = "full"\n[xmltools]\nobserve = "both"\n')
    with pytest.raises(ConfigError, match="profile outside \\[xmltools\\]"):
        Config.load(environ={}, cwd=tmp_path)


# -- XMLTOOLS_CHROMIUM ------------------------------------------------------------------------


def test_xmltools_chromium_is_an_alias_of_executable(tmp_path: Path) -> None:
    env = {"XMLTOOLS_CHROMIUM": "/opt/chrome"}
    assert Config.load(environ=env, cwd=tmp_path).executable == "/opt/chrome"
    assert sources(environ=env, cwd=tmp_path)["executable"] == "environment (XMLTOOLS_CHROMIUM)"
    both = {**env, "XMLTOOLS_EXECUTABLE": "/usr/bin/chromium"}
    assert Config.load(environ=both, cwd=tmp_path).executable == "/usr/bin/chromium"
    assert sources(environ=both, cwd=tmp_path)["executable"] == "environment (XMLTOOLS_EXECUTABLE)"
    (tmp_path / "xmltools.toml").write_text('executable = "/from/file"\n')
    assert Config.load(environ=env, cwd=tmp_path).executable == "/opt/chrome"
    assert Config.load(environ={}, cwd=tmp_path, executable="/arg").executable == "/arg"


# -- xmltools config -----------------------------------------------------------------------------


def config_lines(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, tuple[str, str]]:
    assert main(["config", *args]) == 0
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        name, value, source = re.split(r"\s{2,}", line.strip(), maxsplit=2)
        rows[name] = (value, source)
    return rows


def test_the_config_command_prints_every_value_and_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_pyproject(tmp_path, 'shape = "plain"')
    (tmp_path / "xmltools.toml").write_text('profile = "full"\n')
    monkeypatch.setenv("XMLTOOLS_VIEWPORT", "1280x800")
    monkeypatch.setenv("XMLTOOLS_CHROMIUM", "/opt/chrome")
    rows = config_lines(capsys)
    assert list(rows) == list(Config.model_fields)
    assert rows["viewport"] == ("1280x800", "environment (XMLTOOLS_VIEWPORT)")
    assert rows["executable"] == ("/opt/chrome", "environment (XMLTOOLS_CHROMIUM)")
    assert rows["profile"] == ("full", "xmltools.toml")
    assert rows["shape"] == ("plain", "pyproject.toml")
    assert rows["policy"] == ("reject", "default")
    assert rows["allowed_origins"] == ("[]", "default") and rows["idle_timeout"] == ("none", "default")

    (tmp_path / "other.toml").write_text('observe = "both"\n')
    rows = config_lines(capsys, "--config", "other.toml")
    assert rows["observe"] == ("both", "other.toml") and rows["profile"] == ("roo", "default")


def test_the_config_command_reports_a_typo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XMLTOOLS_HEADLES", "false")
    assert main(["config"]) == 2
    assert "XMLTOOLS_HEADLES is not a setting; did you mean XMLTOOLS_HEADLESS?" in capsys.readouterr().err


def test_explain_gives_data() -> None:
    got = explain(environ={"XMLTOOLS_MAX_NOTES": "4"})
    assert Setting("max_notes", 4, "environment (XMLTOOLS_MAX_NOTES)") in got
    assert len(got) == len(Config.model_fields)


# -- templates ----------------------------------------------------------------------------------


def test_an_override_that_matches_no_template_names_the_closest(tmp_path: Path) -> None:
    (tmp_path / "t" / "system").mkdir(parents=True)
    (tmp_path / "t" / "system" / "browser_actoin.j2").write_text("x")
    (tmp_path / "t" / "notes.txt").write_text("not a template: ignored")
    with pytest.raises(
        ConfigError,
        match=r"system/browser_actoin.j2 matches no template; did you mean system/browser_action.j2\?",
    ):
        Renderer(tmp_path / "t")
    (tmp_path / "t" / "system" / "browser_actoin.j2").rename(tmp_path / "t" / "system" / "browser_action.j2")
    assert Renderer(tmp_path / "t").override_dir == tmp_path / "t"


def test_prompt_list_prints_each_template_and_its_variables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in out[:-1]]
    assert names == bundled_templates() and "system/browser_action.j2" in names
    rows = {line.split()[0]: line for line in out[:-1]}
    assert "action, obs" in rows["result/browser.j2"]
    assert "viewport" in rows["system/browser_action.j2"]
    assert out[-1] == "every template also gets: tool, policy"


def test_prompt_list_marks_overrides_and_reports_typos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    terse = ROOT / "fixtures" / "variants" / "terse"
    assert main(["prompt", "--list", "--templates", str(terse)]) == 0
    out = capsys.readouterr().out
    assert "(overridden)" in next(
        line for line in out.splitlines() if line.startswith("system/browser_action.j2")
    )
    assert out.count("(overridden)") == 1
    (tmp_path / "result").mkdir()
    (tmp_path / "result" / "browsr.j2").write_text("x")
    assert main(["prompt", "--list", "--templates", str(tmp_path)]) == 2
    assert "did you mean result/browser.j2?" in capsys.readouterr().err


def test_template_variables_come_from_the_templates() -> None:
    found = template_variables()
    assert set(found) == set(bundled_templates())
    assert found["error/message_too_large.j2"] == ("limit",)
    assert all("tool" not in v and "policy" not in v for v in found.values())


# -- the reference pages of the documentation ----------------------------------------------------


def test_the_docs_have_the_settings_table() -> None:
    from docgen import part

    assert part("reference/settings.md", "xmltools.config.explain.settings_table()") == settings_table(), (
        "docs/reference/settings.md's settings table is stale: run python tests/docgen.py"
    )
    rows = settings_table().splitlines()[2:]
    assert [r.split("`")[1] for r in rows] == list(Config.model_fields)


def test_the_docs_have_the_template_table() -> None:
    from docgen import part

    assert part("reference/templates.md", "xmltools.render.template_table()") == template_table(), (
        "docs/reference/templates.md's template table is stale: run python tests/docgen.py"
    )


def test_the_settings_table_shows_defaults_and_variables() -> None:
    rows = {r.split("`")[1]: r for r in settings_table().splitlines()[2:]}
    assert rows["viewport"].startswith("| `viewport` | `900x600` | `XMLTOOLS_VIEWPORT` |")
    assert "`XMLTOOLS_EXECUTABLE`, `XMLTOOLS_CHROMIUM`" in rows["executable"]
    assert json.loads(rows["approval"].split("`")[3]) == {}


def test_prompt_reads_the_settings_like_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from xmltools.cli import main

    for name in [k for k in os.environ if k.startswith("XMLTOOLS_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "xmltools.toml").write_text('profile = "forge"\n')
    assert main(["prompt"]) == 0
    assert "start_browser_session" in capsys.readouterr().out
    monkeypatch.setenv("XMLTOOLS_PROFILE", "aleph")
    assert main(["prompt"]) == 0
    assert "## browser\n" in capsys.readouterr().out


def test_an_interpreter_without_a_config_reads_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.fakes import FakeBrowser

    from xmltools import Interpreter

    for name in [k for k in os.environ if k.startswith("XMLTOOLS_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.xmltools]\npolicy = "allow"\n')
    monkeypatch.setenv("XMLTOOLS_VIEWPORT", "1280x800")
    with Interpreter(browser=FakeBrowser()) as it:
        assert it.config.viewport == Viewport(width=1280, height=800) and it.config.policy is Policy.ALLOW
    with Interpreter(Config(), browser=FakeBrowser()) as it:  # a config given is taken as it is
        assert it.config.viewport == Viewport(width=900, height=600)
    monkeypatch.setenv("XMLTOOLS_VIEWPROT", "1x1")
    with pytest.raises(ConfigError, match="XMLTOOLS_VIEWPORT"):
        Interpreter(browser=FakeBrowser())


def test_the_policy_lists_are_checked_as_the_configuration_loads() -> None:
    c = Config(blocked_addresses="127.0.0.2, 10.0.0.0/8", host_map={"Shop.Test": "127.0.0.2"})
    b = c.browser_settings()
    assert b.url_policy.blocked_addresses == ("127.0.0.2", "10.0.0.0/8")
    assert b.host_map == (("shop.test", "127.0.0.2"),)
    assert any(a == "--host-resolver-rules=MAP shop.test 127.0.0.2" for a in b.backends[0].args)
    with pytest.raises(ValidationError, match="is not an address or a range"):
        Config(blocked_addresses="nope")
    with pytest.raises(ValidationError, match="an origin has no path"):
        Config(blocked_origins=["http://a/b"])
