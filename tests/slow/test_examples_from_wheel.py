"""Every example of the README and the guides, run as a newcomer runs it: from the wheel installed into
a fresh environment outside the tree, in the folder that ``xmltools examples ex`` writes.

The wheel is built from the working tree and installed, with its extras, pytest, pytest-xdist,
pytest-examples and ``mcp-server-time``, into one fresh virtual environment (tests/support/fresh.py).
Then the pages are followed in the order of ``USER_PAGES`` (tests/support/docblocks.py), block by
block, as one shell session would follow them: getting-started makes the folder and enters it.

- A Python block runs in the fresh environment under pytest-examples, as the in-tree doc tests run
  it: its ``print`` output must be its ``#>`` lines.  A ``test="pytest"`` block is saved under the
  name its page gives it (:data:`PYTEST_FILES`) and run by pytest there; it must pass.
- A ``console`` block's commands run in bash, each in the folder the session is in (``cd`` moves
  it); each must exit 0, and print the output shown under it (a line ``...`` stands for any lines,
  ``...`` within a line for any text), as a terminal shows it: stdout and stderr together, each
  line as it is written.  A dry run runs with no model key set, as the page shows it (before a
  paid run).  A command that cannot run here is named in :data:`NOT_RUNNABLE`, with the reason.

The examples that need a model talk to the scripted stand-ins of tests/support (an OpenAI-compatible
and an Anthropic server on 127.0.0.1): the pages give the model server as ``127.0.0.1:8000`` and
the site, when served apart, as ``127.0.0.1:8001``; here both addresses (in the blocks, and in the
experiment files of the folder) are replaced by the stand-in's and by a server of the folder's
``site``, and ``ANTHROPIC_BASE_URL`` names the Anthropic stand-in.  The stand-in (:class:`StandIn`)
signs in on the sign-in task, forgetting Enter on every second trial under the bundled prompt, adds
the mug on the MCP task, and adds milk to the list (opening the page first when the task names one).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pytest_examples import CodeExample
from support.anthropic_server import AnthropicServer
from support.docblocks import USER_PAGES, Command, console_blocks, examples, mode
from support.fresh import Fresh, build, wheel
from support.openai_server import ScriptedServer

pytestmark = [pytest.mark.slow, pytest.mark.long]

# what each page's ``test="pytest"`` blocks are saved as, in order, as the page says
PYTEST_FILES = {"README.md": ["test_signin.py"], "transcripts.md": ["test_signin.py", "test_flows.py"]}

# commands of the pages that this test does not run, by how they start, and why
NOT_RUNNABLE = {
    "make ": "a target of the repository's Makefile: it runs in a checkout, not from an install",
    "pip install ": "installs from the package index: this test installs the wheel, with every extra, instead",
}

MODEL, SITE = "127.0.0.1:8000", "127.0.0.1:8001"  # the addresses the pages give the model and the site
KEYS = ("LOCAL_KEY", "MY_KEY", "ANTHROPIC_API_KEY")  # the variables the pages name for the models' keys
BUNDLED = "You can drive a real web browser"  # the bundled system prompt says so; the terse one does not
SURE, FORGETFUL = "I'll open the form.", "Opening the form."


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of content parts."""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


def _call(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in params.items())
    return f"<browser_action><action>{action}</action>{inner}</browser_action>"


def _mcp(server: str, tool: str, arguments: str) -> str:
    return (
        f"<use_mcp_tool><server_name>{server}</server_name><tool_name>{tool}</tool_name>"
        f"<arguments>{arguments}</arguments></use_mcp_tool>"
    )


def _done(result: str) -> str:
    return f"<attempt_completion><result>{result}</result></attempt_completion>"


class StandIn:
    """The model behind both stand-in servers: it answers a request from its messages alone."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bundled_starts: dict[
            str, int
        ] = {}  # sign-in trials started under the bundled prompt, by address

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        system = _text(body.get("system") or "") + "".join(
            _text(m["content"]) for m in messages if m["role"] == "system"
        )
        talk = [m for m in messages if m["role"] != "system"]
        task = _text(talk[0]["content"])
        said = [_text(m["content"]) for m in talk if m["role"] == "assistant"]
        url = re.search(r"https?://\S+?\.html", task)
        if url is None:  # "Add milk to the list": nothing to open
            return _done("Milk is on the list.")
        launch = _call("launch", url=url.group(0))
        if "milk" in task:
            steps = [
                launch,
                _call("click", coordinate="450,140"),  # the app's first field
                _call("close"),
                _done("Milk is on the list."),
            ]
            return steps[min(len(said), len(steps) - 1)]
        if "mug" in task:
            steps = [
                launch,
                _call("close"),
                _mcp("todo", "add_todo", '{"text": "mug: $12.50"}'),
                _done("Added."),
            ]
            return steps[min(len(said), len(steps) - 1)]
        if not said:
            return (FORGETFUL if self._forgets(system, url.group(0)) else SURE) + "\n" + launch
        steps = [
            launch,
            _call("click", coordinate="150,97"),
            _call("type", text="Ada"),
            *([] if said[0].startswith(FORGETFUL) else [_call("press", text="Enter")]),
            _call("close"),
            _done("Signed in as Ada."),
        ]
        return steps[min(len(said), len(steps) - 1)]

    def _forgets(self, system: str, url: str) -> bool:
        """Every second sign-in trial under the bundled prompt forgets to press Enter: counted by the
        address the trials start at, each run's own, so that runs at once keep their own count."""
        if BUNDLED not in system:
            return False
        with self.lock:
            self.bundled_starts[url] = self.bundled_starts.get(url, 0) + 1
            return self.bundled_starts[url] % 2 == 0


RUNNER = """\
import json
import os
from pathlib import Path

import pytest
from pytest_examples import CodeExample

BLOCKS = json.loads(Path(os.environ["DOC_BLOCKS"]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("block", BLOCKS, ids=[b["id"] for b in BLOCKS])
def test_block(block, eval_example, monkeypatch):
    monkeypatch.chdir(block["cwd"])
    example = CodeExample.create(block["source"], path=Path(block["path"]), start_line=block["line"], prefix=block["prefix"])
    eval_example.set_config(line_length=120)
    if "#>" in block["source"]:
        eval_example.run_print_check(example)
    else:
        eval_example.run(example)
"""


def shown(lines: tuple[str, ...]) -> re.Pattern[str]:
    """The output a page shows as a pattern: a line ``...`` is any lines, ``...`` in a line any text."""
    parts = []
    for line in lines:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts))


@dataclass
class Session:
    """One shell session that follows the pages, in the fresh environment."""

    fresh: Fresh
    env: dict[str, str]
    local: dict[str, str]  # the pages' addresses -> this test's servers
    cwd: Path
    failures: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    times: list[tuple[str, float]] = field(default_factory=list)  # seconds each command or batch took

    def here(self, text: str) -> str:
        for page_address, ours in self.local.items():
            text = text.replace(page_address, ours)
        return text

    def fail(self, where: str, what: str) -> None:
        self.failures.append(f"{where}: {what}")

    def command(self, c: Command) -> None:
        where = f"{c.page.name}:{c.line}: $ {c.text}"
        if any(c.text.startswith(prefix) for prefix in NOT_RUNNABLE):
            return
        self.ran.append(where)
        moved = re.fullmatch(r"cd (\S+)", c.text)
        if moved:
            self.cwd = self.cwd / moved.group(1)
            return
        env = {k: v for k, v in self.env.items() if k not in KEYS} if "--dry-run" in c.text else self.env
        started = time.monotonic()
        # stderr into stdout, each written as it comes (PYTHONUNBUFFERED): what a terminal shows
        line = f"{{ {self.here(c.text)}\n}} 2>&1"
        done = self.fresh.attempt("bash", "-c", line, cwd=self.cwd, env=env, timeout=300)
        self.times.append((where, time.monotonic() - started))
        out = "\n".join(row.rstrip() for row in done.stdout.splitlines()) + "\n"
        if done.returncode != 0:
            self.fail(where, f"exited {done.returncode}:\n{done.stdout[-3000:]}")
        elif c.output and not shown(c.output).fullmatch(out):
            self.fail(where, "printed\n" + out[-3000:] + "where the page shows\n" + "\n".join(c.output))
        if c.text.startswith("xmltools examples "):
            self._point_at_stand_ins(self.cwd / c.text.split()[2])

    def _point_at_stand_ins(self, folder: Path) -> None:
        """The experiment files name the model at the pages' address: give them the stand-in's."""
        for toml in folder.glob("*.toml"):
            toml.write_text(self.here(toml.read_text(encoding="utf-8")), encoding="utf-8")

    def python(self, blocks: list[CodeExample]) -> None:
        """Run consecutive Python blocks under pytest-examples in the fresh environment."""
        if not blocks:
            return
        data = [
            {
                "id": f"{b.path.name}:{b.start_line}",
                "path": str(b.path),
                "line": b.start_line,
                "prefix": b.prefix,
                "source": self.here(b.source),
                "cwd": str(self.cwd),
            }
            for b in blocks
        ]
        self.ran += [d["id"] for d in data]
        runner = self.fresh.home / f"runner-{self.cwd.name}"
        runner.mkdir(exist_ok=True)
        (runner / "test_blocks.py").write_text(RUNNER, encoding="utf-8")
        (runner / "blocks.json").write_text(json.dumps(data), encoding="utf-8")
        env = {**self.env, "DOC_BLOCKS": str(runner / "blocks.json")}
        started = time.monotonic()
        done = self.fresh.attempt(
            "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(runner / "test_blocks.py"),
            cwd=runner, env=env, timeout=900,
        )  # fmt: skip
        self.times.append((", ".join(d["id"] for d in data), time.monotonic() - started))
        if done.returncode != 0:
            self.fail(", ".join(d["id"] for d in data), done.stdout[-6000:] + done.stderr[-2000:])

    def pytest_module(self, block: CodeExample, name: str, run: bool) -> None:
        """Save a ``test="pytest"`` block as the page says; run it unless a command of the page does."""
        (self.cwd / name).write_text(block.source, encoding="utf-8")
        if not run:
            return
        where = f"{block.path.name}:{block.start_line} ({name})"
        self.ran.append(where)
        started = time.monotonic()
        pytest = ("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", name)
        done = self.fresh.attempt(*pytest, cwd=self.cwd, env=self.env, timeout=300)
        self.times.append((where, time.monotonic() - started))
        tests = len(re.findall(r"^def test_", block.source, re.M))
        passed = re.search(r"\b(\d+) passed", done.stdout)
        if done.returncode != 0 or passed is None or int(passed.group(1)) != tests:
            self.fail(where, f"expected {tests} passed:\n{done.stdout[-3000:]}\n{done.stderr[-1000:]}")


def follow(session: Session, page: Path) -> None:
    """Run a page's blocks in the order it shows them."""
    names = iter(PYTEST_FILES.get(page.name, []))
    commands = [c for _, block in console_blocks(page) for c in block]
    items: list[tuple[int, CodeExample | list[Command]]] = [
        *((e.start_line, e) for e in examples() if e.path == page),
        *console_blocks(page),
    ]
    batch: list[CodeExample] = []
    for _, item in sorted(items, key=lambda pair: pair[0]):
        if isinstance(item, CodeExample) and mode(item) != "pytest":
            batch.append(item)
            continue
        session.python(batch)
        batch = []
        if isinstance(item, CodeExample):
            name = next(names)
            session.pytest_module(item, name, run=not any(name in c.text for c in commands))
        else:
            for c in item:
                session.command(c)
    session.python(batch)
    assert next(names, None) is None, f"{page.name}: PYTEST_FILES names more modules than the page has"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    """The wheel, with every extra, and the tools the examples name, in one fresh environment."""
    built = wheel(build(tmp_path_factory.mktemp("dist")))
    return Fresh(
        tmp_path_factory.mktemp("fresh"),
        f"{built}[openai,anthropic,mcp]",
        "pytest",
        "pytest-xdist",
        "pytest-examples",
        "mcp-server-time",
    )


@pytest.fixture
def site(fresh: Fresh) -> Iterator[str]:
    """The site of the examples' folder, served apart (the pages' ``127.0.0.1:8001``)."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(fresh.work / "ex" / "site"))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def follow_in_own_folder(session: Session, page: Path) -> Session:
    """Follow a page in a folder of its own, got as the page says (``xmltools examples ex && cd ex``)."""
    folder = f"{page.stem.lower()}-ex"
    session.command(Command(page, 0, f"xmltools examples {folder}", ()))
    session.command(Command(page, 0, f"cd {folder}", ()))
    follow(session, page)
    return session


@pytest.mark.timeout(1800)  # the wheel, a fresh environment and some 40 examples, several in Chromium
def test_every_example_of_the_readme_and_the_guides_runs_from_the_examples_folder(
    fresh: Fresh, site: str
) -> None:
    """Getting started makes ``ex`` and shows its first example there; then each page is followed in a
    folder of its own, as a reader who opens it first would, three pages at once."""
    stand_in = StandIn()
    with (
        ScriptedServer(stand_in).running() as model_url,
        AnthropicServer(stand_in).running() as anthropic_url,
    ):
        env = {
            k: v for k, v in fresh.env.items() if not k.startswith("XMLTOOLS_") or k == "XMLTOOLS_EXECUTABLE"
        }
        env.update(dict.fromkeys(KEYS, "scripted"), ANTHROPIC_BASE_URL=anthropic_url, PYTHONUNBUFFERED="1")
        local = {MODEL: model_url.removeprefix("http://").removesuffix("/v1"), SITE: site}
        first, *others = USER_PAGES
        sessions = [Session(fresh, env, local, fresh.work)]
        follow(sessions[0], first)
        with ThreadPoolExecutor(max_workers=3) as pool:
            sessions += pool.map(
                follow_in_own_folder, [Session(fresh, env, local, fresh.work) for _ in others], others
            )
    times = sorted((t for s in sessions for t in s.times), key=lambda pair: -pair[1])
    for where, seconds in times:
        print(f"{seconds:6.1f} s  {where}")  # where the time goes (pytest -s, or -rP, shows it)
    assert not [f for s in sessions for f in s.failures], "\n\n".join(f for s in sessions for f in s.failures)
    assert (
        sessions[0].cwd == fresh.work / "ex"
        and (fresh.work / "transcripts-ex" / "flows" / "welcome.jsonl").exists()
    )
    assert sum(len(s.ran) for s in sessions) >= 40, [s.ran for s in sessions]
