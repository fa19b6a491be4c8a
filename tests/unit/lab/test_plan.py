"""The experiment file read whole: every mistake found at load, before any model is asked, each one
line naming the file and the field, in the project's own words."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import ScriptedServer

from xmltools.cli import main
from xmltools.errors import ConfigError
from xmltools.lab import register_check, run_experiment
from xmltools.lab.checks import CHECKS
from xmltools.lab.kinds import KINDS
from xmltools.lab.plan import CheckSpec, Experiment, environment_problems, load_experiment

ROOT = Path(__file__).parents[3]
TERSE = ROOT / "fixtures" / "variants" / "terse"

GOOD = """
trials = 2
[[variants]]
name = "A"
[[models]]
name = "m"
base_url = "http://127.0.0.1:9/v1"
[[tasks]]
id = "t"
serve = "site"
start = "form.html"
instruction = "Sign in."
checks = [{ kind = "url", value = "/done.html" }]
"""

# pydantic's own words, which a mistake in a file must never be said in
PYDANTIC = (
    "Extra inputs are not permitted",
    "Field required",
    "Input should",
    "Value error",
    "validation error",
)


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "form.html").write_text("<title>form</title>")
    path = tmp_path / name
    path.write_text(text)
    return path


def mistakes(tmp_path: Path, text: str) -> list[str]:
    """The lines of the ConfigError the file gives, its path left out (the first line of several
    counts them; then one a mistake)."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_experiment(path)
    lines = str(caught.value).splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines), lines
    assert not [line for line in lines if any(p in line for p in PYDANTIC)], lines
    return [line.removeprefix(f"{path}: ") for line in lines]


def test_the_good_file_loads(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, GOOD))
    assert len(exp.cells()) == 2 and exp.tasks[0].serve == tmp_path / "site"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (("trials = 2", "trails = 3"), "trails: not a field; did you mean 'trials'?"),
        (("trials = 2", "trials = 0"), "trials: must be at least 1, got 0"),
        (("trials = 2", 'trials = "x"'), "trials: expected a whole number, got 'x'"),
        (("[[variants]]", "[[variant]]"), "variant: not a field; did you mean 'variants'? (variants is missing)"),
        (('name = "A"', 'name = "A"\nconfig = { observ = "both" }'), "variants[0].config.observ: not a setting;"
         " did you mean 'observe'?"),
        (('name = "A"', 'name = "A"\nconfig = { observe = "all" }'), "variants[0].config.observe: 'all' is not"
         " one of 'screenshot', 'snapshot', 'both'"),
        (('name = "A"', 'name = "A"\ntemplates = "nope"'), "variants[0].templates: {tmp}/nope is not a folder"),
        (('name = "m"', 'name = "m"\nprovider = "opena"'), "models[0].provider: 'opena' is not one of 'openai',"
         " 'anthropic'; did you mean 'openai'?"),
        (('name = "m"', 'name = "m"\nkey_env = "sk-abc-123"'), "models[0].key_env: not a variable's name: give"
         " the name of the variable that holds the key"),
        (('base_url = "http://127.0.0.1:9/v1"', 'base_url = "127.0.0.1:9"'), "models[0].base_url: '127.0.0.1:9'"
         " is not an http:// or https:// address"),
        (('name = "m"', 'name = "m"\nprice_in = -1'), "models[0].price_in: must be at least 0.0, got -1"),
        (('instruction = "Sign in."', 'instrution = "Sign in."'), "tasks[0].instrution: not a field; did you"
         " mean 'instruction'? (instruction is missing)"),
        (('id = "t"', ""), "tasks[0].id: missing"),
        (('serve = "site"', 'serve = "sight"'), "tasks[0].serve: {tmp}/sight is not a folder"),
        (('start = "form.html"', 'start = "from.html"'), "tasks[0].start: 'from.html' is not in {tmp}/site;"
         " did you mean 'form.html'?"),
        (('serve = "site"', 'url = "http://127.0.0.1:9/"'), "tasks[0].start: a path in the served folder: give"
         " serve too (or the whole address as url)"),
        (('serve = "site"', 'serve = "site"\nurl = "http://x/"'), "tasks[0]: url and serve are both given:"
         " give one"),
        (('kind = "url"', 'kind = "ulr"'), "tasks[0].checks[0].kind: no check named 'ulr'; did you mean 'url'?"),
        (('kind = "url"', 'kind = "zzz"'), "tasks[0].checks[0].kind: no check named 'zzz'; the kinds are: answer,"
         " aria, element, js, judge, mcp, text, url"),
        (('value = "/done.html"', 'valeu = "/done.html"'), "tasks[0].checks[0].valeu: not a field; did you"
         " mean 'value'?"),
        (('value = "/done.html"', 'value = "/done.html", role = "button"'), "tasks[0].checks[0].role: not a"
         " field of a url check (it reads regex, value)"),
        (('kind = "url", value = "/done.html"', 'kind = "text"'), "tasks[0].checks[0].value: missing (a text"
         " check needs it)"),
        (('kind = "url", value = "/done.html"', 'kind = "element"'), "tasks[0].checks[0]: an element check"
         " needs role or value"),
        (('value = "/done.html"', 'value = "(", regex = true'), "tasks[0].checks[0].value: not a regular"
         " expression (missing ), unterminated subpattern at position 0)"),
        (('kind = "url", value = "/done.html"', 'kind = "judge", value = "greets Ada"'), "tasks[0].checks[0]"
         ".kind: a judge check asks the [judge] model, and the file names none"),
        (('kind = "url", value = "/done.html"', 'kind = "mcp", server = "todo", tool = "list"'),
         "tasks[0].checks[0].server: the task's trials have no server named 'todo'"),
        ([('kind = "url", value = "/done.html"', 'kind = "mcp", server = "todo"'),
          ('instruction = "Sign in."', 'instruction = "Sign in."\nmcp_servers = { todo = { command = "t" } }')],
         "tasks[0].checks[0]: an mcp check reads a resource (uri) or calls a tool (tool): give one"),
        (("trials = 2", 'trials = 2\nshared_servers = ["tim"]\n[mcp_servers]\ntime = { command = "t" }'),
         "shared_servers: 'tim' is not one of the experiment's mcp_servers; did you mean 'time'?"),
        (("trials = 2", "trials = 2\n[mcp_servers]\ntime = { cmd = 't' }"), "mcp_servers: mcpServers.time.cmd:"
         " not a field; the fields are: alwaysAllow, args, autoApprove, command, cwd, disabled, env, headers,"
         " timeout, transport, type, url"),
        (("trials = 2", "trials = 2\nmcp_servers = 3"), "mcp_servers: expected a table of servers (the"
         " mcpServers shape) or an mcp.json's path"),
        (("trials = 2", "trials = 2\n[limits]\nturns = 0"), "limits.turns: must be at least 1, got 0"),
        (("trials = 2", "trials = 2\n[judge]\nname = 'j'"), "judge.model: missing"),
        (('[[variants]]\nname = "A"', '[[variants]]\nname = "A"\n[[variants]]\nname = "A"'),
         "variants: names ['A'] are used twice"),
    ],
)  # fmt: skip
def test_each_mistake_is_one_line_naming_the_field(
    tmp_path: Path, change: tuple[str, str] | list[tuple[str, str]], said: str
) -> None:
    text = GOOD
    for old, new in [change] if isinstance(change, tuple) else change:
        assert text.count(old) == 1
        text = text.replace(old, new)
    assert mistakes(tmp_path, text) == [said.replace("{tmp}", str(tmp_path))]


def test_every_mistake_is_said_at_once_in_the_files_order(tmp_path: Path) -> None:
    text = (
        GOOD.replace("trials = 2", "trails = 3")
        .replace('kind = "url"', 'kind = "ulr"')
        .replace('start = "form.html"', 'start = "from.html"')
        .replace('name = "A"', 'name = "A"\ntemplates = "nope"')
        .replace("instruction =", "instrution =")  # the task is still checked, the rest of it read
        .replace('name = "m"', 'name = "m"\nprovider = "opena"\nkey_env = "sk-1"')
    )
    lines = mistakes(tmp_path, text)
    assert lines == [
        "7 mistakes: trails: not a field; did you mean 'trials'? (and 6 more)",
        "trails: not a field; did you mean 'trials'?",
        f"variants[0].templates: {tmp_path}/nope is not a folder",
        "models[0].key_env: not a variable's name: give the name of the variable that holds the key",
        "models[0].provider: 'opena' is not one of 'openai', 'anthropic'; did you mean 'openai'?",
        "tasks[0].checks[0].kind: no check named 'ulr'; did you mean 'url'?",
        "tasks[0].instrution: not a field; did you mean 'instruction'? (instruction is missing)",
        f"tasks[0].start: 'from.html' is not in {tmp_path}/site; did you mean 'form.html'?",
    ]


def test_a_file_without_its_tables_says_which_and_how_to_write_them(tmp_path: Path) -> None:
    assert mistakes(tmp_path, "trials = 2\n") == [
        "3 mistakes: variants: missing: give at least one [[variants]] table (and 2 more)",
        "variants: missing: give at least one [[variants]] table",
        "models: missing: give at least one [[models]] table",
        "tasks: missing: give at least one [[tasks]] table",
    ]


def test_a_file_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"exp\.toml: not valid TOML"):
        load_experiment(write(tmp_path, "trials = ["))
    with pytest.raises(ConfigError, match=r"nope\.toml: no such experiment file"):
        load_experiment(tmp_path / "nope.toml")


def test_a_variant_folder_is_checked_and_brings_its_settings(tmp_path: Path) -> None:
    """An experiment's variant whose templates folder has a variant.toml takes its settings (the file's
    own config over them); a template there that matches none, or does not render, is said at load."""
    from xmltools.lab.variants import Variant

    shutil.copytree(TERSE, tmp_path / "terse")
    text = GOOD.replace('name = "A"', 'name = "A"\ntemplates = "terse"\nconfig = { observe = "both" }')
    exp = load_experiment(write(tmp_path, text))
    v = exp.variants[0]
    assert Variant.of(v.name, v.templates, v.config).config == {"viewport": "1280x800", "observe": "both"}
    (tmp_path / "terse" / "system" / "browser_actoin.j2").write_text("x")
    (tmp_path / "terse" / "system" / "browser_action.j2").write_text("{{ nope }}")
    (line,) = mistakes(tmp_path, text)
    assert (
        line.startswith("variants[0].templates: templates folder ") and "browser_actoin.j2 matches no" in line
    )
    (tmp_path / "terse" / "system" / "browser_actoin.j2").unlink()
    assert mistakes(tmp_path, text) == [
        "variants[0].templates: template 'system/browser_action.j2' failed: 'nope' is undefined"
    ]
    (tmp_path / "terse" / "variant.toml").write_text("[config\n")
    (line,) = mistakes(tmp_path, text)
    assert line.startswith(f"variants[0].templates: {tmp_path}/terse/variant.toml: not valid TOML (")


def test_a_kind_registered_with_its_fields_is_checked_like_the_bundled_ones(tmp_path: Path) -> None:
    @register_check("title", fields=["value"], needs=["value"])
    async def title(spec: CheckSpec, ctx: Any) -> str | None:  # pragma: no cover - never run here
        return None

    try:
        text = GOOD.replace('kind = "url", value = "/done.html"', 'kind = "title", name = "x"')
        assert mistakes(tmp_path, text) == [
            "2 mistakes: tasks[0].checks[0].name: not a field of a title check (it reads value) (and 1 more)",
            "tasks[0].checks[0].name: not a field of a title check (it reads value)",
            "tasks[0].checks[0].value: missing (a title check needs it)",
        ]
    finally:
        CHECKS.pop("title")
        KINDS.pop("title")


def test_a_missing_key_names_the_field_that_names_it(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, GOOD.replace('name = "m"', 'name = "m"\nkey_env = "LAB_NO_KEY"')))
    assert [p.line(str(exp.path)) for p in environment_problems(exp, {})] == [
        f"{exp.path}: models[0].key_env: LAB_NO_KEY is not set"
    ]
    assert environment_problems(exp, {"LAB_NO_KEY": "k"}) == []
    bare = load_experiment(write(tmp_path, GOOD.replace('base_url = "http://127.0.0.1:9/v1"', "")))
    assert [p.line("") for p in environment_problems(bare, {})] == [
        "models[0].base_url: missing, and OPENAI_BASE_URL is not set: the openai provider needs the"
        " server's address, such as http://127.0.0.1:8000/v1"
    ]
    assert environment_problems(bare, {"OPENAI_BASE_URL": "http://x/v1"}) == []


# -- nothing is asked of a model before the mistakes are found -------------------------------------

ANSWERS = GOOD.replace('serve = "site"\nstart = "form.html"\n', "").replace(
    'kind = "url", value = "/done.html"', 'kind = "answer", value = "42"'
)


def test_a_bad_check_kind_makes_no_request_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ScriptedServer(lambda body: "<attempt_completion><result>42</result></attempt_completion>")
    with server.running() as base:
        good = write(tmp_path, ANSWERS.replace("http://127.0.0.1:9/v1", base))
        bad = write(tmp_path, good.read_text().replace('kind = "answer"', 'kind = "ulr"'), "bad.toml")
        assert main(["experiment", "run", str(bad), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err == f"xmltools: {bad}: tasks[0].checks[0].kind: no check named 'ulr'; did you mean 'url'?\n"
        assert server.requests == [] and not (tmp_path / "out").exists()
        assert main(["experiment", "run", str(good), "--out", str(tmp_path / "out")]) == 0  # the same, right
        assert len(server.requests) == 2
    report = (tmp_path / "out" / "report.html").read_text()
    assert f"<title>Experiment {tmp_path.name}</title>" in report  # exp.toml names nothing: its folder does


def test_a_bad_check_kind_in_code_makes_no_request(tmp_path: Path) -> None:
    """An experiment made in code (not read from a file) is checked by run_experiment before its first
    trial: a kind of no check, and a key that is not set for the command line's models."""
    server = ScriptedServer(lambda body: "<attempt_completion><result>42</result></attempt_completion>")
    with server.running() as base:
        exp = load_experiment(write(tmp_path, ANSWERS.replace("http://127.0.0.1:9/v1", base)))
        task = exp.tasks[0]
        bad = task.model_copy(update={"checks": (CheckSpec(kind="ansewr", value="42"),)})
        with pytest.raises(ConfigError, match=r"tasks\[0\]\.checks\[0\]\.kind: no check named 'ansewr'; did"):
            asyncio.run(run_experiment(exp.model_copy(update={"tasks": (bad,)}), tmp_path / "out"))
        keyless = exp.model_copy(
            update={"models": (exp.models[0].model_copy(update={"key_env": "LAB_NO_KEY"}),)}
        )
        with pytest.raises(ConfigError, match=r"exp\.toml: models\[0\]\.key_env: LAB_NO_KEY is not set$"):
            asyncio.run(run_experiment(keyless, tmp_path / "out"))
    assert server.requests == []


def test_a_dry_run_warns_of_a_missing_key_and_a_run_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD.replace('name = "m"', 'name = "m"\nkey_env = "LAB_NO_KEY"'))
    assert main(["experiment", "run", str(path), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("2 trials: 1 variants × 1 models × 1 tasks × 2")
    assert err == f"xmltools: warning: {path}: models[0].key_env: LAB_NO_KEY is not set (a run needs it)\n"
    assert main(["experiment", "run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"xmltools: {path}: models[0].key_env: LAB_NO_KEY is not set\n"
    assert not (tmp_path / "out").exists()


# -- the report's title -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extra", "title"),
    [
        ("sign-in.toml", "", "Experiment sign-in"),
        ("experiment.toml", "", "Experiment {folder}"),
        ("exp.toml", 'title = "Terse against default"', "Terse against default"),
    ],
)
def test_the_reports_title_names_the_experiment(tmp_path: Path, name: str, extra: str, title: str) -> None:
    exp = load_experiment(write(tmp_path, f"{extra}\n{GOOD}", name))
    assert exp.report_title() == title.replace("{folder}", tmp_path.name)
    assert Experiment(**{k: getattr(exp, k) for k in ("variants", "models", "tasks")}).report_title() == (
        "Prompt experiment"
    )
    assert exp.fingerprint() == load_experiment(write(tmp_path, GOOD)).fingerprint()  # the title is no part


def test_an_mcp_check_may_name_a_server_every_variant_brings(tmp_path: Path) -> None:
    check = 'kind = "mcp", server = "todo", tool = "list", value = "milk"'
    text = GOOD.replace('kind = "url", value = "/done.html"', check)
    brings = '[[variants]]\nname = "A"\nconfig = { mcp_servers = { todo = { command = "t" } } }'
    assert load_experiment(write(tmp_path, text.replace('[[variants]]\nname = "A"', brings)))
    both = f'{brings}\n[[variants]]\nname = "B"'  # B's trials would not have it
    assert mistakes(tmp_path, text.replace('[[variants]]\nname = "A"', both)) == [
        "tasks[0].checks[0].server: the task's trials have no server named 'todo'"
    ]


def test_an_mcp_servers_program_the_machine_lacks_stops_the_run_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 3 (the environment's), its field named; a dry run warns; run_experiment raises it too."""
    from xmltools.errors import McpServerError

    server = ScriptedServer(lambda body: "<attempt_completion><result>42</result></attempt_completion>")
    with server.running() as base:
        text = ANSWERS.replace("http://127.0.0.1:9/v1", base)
        text = text.replace(
            "trials = 2", 'trials = 2\n[mcp_servers]\ntodo = { command = "no-such-program-xyz" }'
        )
        path = write(tmp_path, text)
        said = f"{path}: mcp_servers.todo.command: 'no-such-program-xyz' is not found (a program on PATH, or its path)"
        assert main(["experiment", "run", str(path), "--out", str(tmp_path / "out")]) == 3
        assert capsys.readouterr().err == f"xmltools: {said}\n"
        assert main(["experiment", "run", str(path), "--dry-run"]) == 0
        assert capsys.readouterr().err == f"xmltools: warning: {said} (a run needs it)\n"
        with pytest.raises(McpServerError, match="no-such-program-xyz"):
            asyncio.run(run_experiment(load_experiment(path), tmp_path / "out"))
    assert server.requests == [] and not (tmp_path / "out").exists()
