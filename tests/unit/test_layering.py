"""The package's shape: the arrows between its parts, their sizes, and what importing costs.

The table below is the one place that says which part may import which, as
Playwright keeps a DEPS.list per folder.  A part is a top-level module or
package of ``xmltools``; every import counts, also one inside a function.  The
table itself must have no circle, so the code cannot have one either.  Within
a part, module by module, no circle either: the graph of every module's imports
(at the top, in a function, under ``if TYPE_CHECKING:``) is checked whole.
"""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import xmltools
from xmltools import _moved

ROOT = Path(xmltools.__file__).parent

# pure data and helpers (base/) and the host's exceptions: every part may use them
_BASE = {"errors", "base"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_moved": set(),  # the old module paths: a table and an import hook
    "base": {"errors"},
    "parser": {"errors"},
    # the model adapters call the SDKs and nothing of the package
    "models": {"errors"},
    "actions": {*_BASE},
    "protocol": {*_BASE, "actions", "parser"},
    "profiles": {*_BASE, "actions", "parser"},
    "tools": {*_BASE, "actions", "parser", "profiles"},
    # MCP servers as tools: the SDK behind one part; it never sees the configuration or the templates
    "mcp": {*_BASE, "profiles", "tools"},
    # the browser: Playwright behind one seam; it never sees the configuration, tools or templates
    "browser": {*_BASE, "actions"},
    # the configuration builds each subsystem's frozen view (the browser's among them)
    "config": {*_BASE, "browser", "mcp", "parser", "protocol", "tools"},
    "render": {*_BASE, "mcp", "profiles", "protocol", "tools"},
    # turns, transcripts and their report: below the interpreter and the three uses
    "record": {
        *_BASE,
        "actions",
        "browser",
        "config",
        "mcp",
        "parser",
        "profiles",
        "protocol",
        "render",
        "tools",
    },
    "interpreter": {
        *_BASE,
        "actions",
        "browser",
        "config",
        "mcp",
        "parser",
        "profiles",
        "protocol",
        "record",
        "render",
        "tools",
    },
    # the three uses: the loop and the replay import no other use; the experiments run both
    "loop": {*_BASE, "config", "interpreter", "models", "protocol", "record", "render", "tools"},
    # a replay reaches the browser only through the interpreter and its checks, inside functions:
    # an offline replay loads no Playwright
    "replaying": {
        *_BASE,
        "actions",
        "browser",
        "config",
        "interpreter",
        "mcp",
        "models",
        "parser",
        "profiles",
        "record",
        "tools",
    },
    "lab": {
        *_BASE,
        "actions",
        "browser",
        "config",
        "interpreter",
        "loop",
        "mcp",
        "models",
        "parser",
        "record",
        "render",
        "replaying",
        "tools",
    },
    # the command line (and the demo) may use anything, and the package root (for its version)
    "cli": {"*"},
}
USES = {"loop", "replaying", "lab"}
MAX_TOP_MODULES = 12
MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 500
MAX_FUNCTION_LINES = 80  # a longer flow is a pipeline of named steps


def _part(path: Path) -> str:
    return path.relative_to(ROOT).with_suffix("").parts[0]


def _imported_parts(path: Path) -> set[str]:
    """The parts of xmltools a file imports (relative or absolute), itself left out."""
    here = list(path.relative_to(ROOT).parent.parts)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)]
            if node.module:
                found.add([*base, *node.module.split(".")][0])
            else:  # from . import a, b: the names are modules, or names of the package root ("")
                found |= {
                    ([*base, a.name])[0]
                    if (ROOT.joinpath(*base, a.name)).exists()
                    or ROOT.joinpath(*base, f"{a.name}.py").exists()
                    else (base[0] if base else "")
                    for a in node.names
                }
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xmltools."):
            found.add(node.module.split(".")[1])  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("xmltools.")}
    return found - {_part(path)}


def _sources() -> list[Path]:
    return [p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).as_posix() != "__init__.py"]


def test_the_table_of_arrows_has_no_circle() -> None:
    graph = {part: allowed - {"*"} for part, allowed in ALLOWED.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as e:  # pragma: no cover - the message is the point
        pytest.fail(f"the allowed arrows form a circle: {e.args[1]}")


def test_the_uses_import_no_other_use_but_the_experiments_theirs() -> None:
    for use in USES - {"lab"}:
        assert not ALLOWED[use] & USES, f"{use} may import {sorted(ALLOWED[use] & USES)}"
    below = {part for part, allowed in ALLOWED.items() if part not in USES and "*" not in allowed}
    assert not any(ALLOWED[part] & USES for part in below), "a part below the uses imports one"


def test_the_top_of_the_package_holds_few_modules() -> None:
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    assert {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()} >= {*USES, "base"}


def test_the_layout_page_names_every_part_and_every_old_path() -> None:
    page = (ROOT.parent / "docs" / "concepts" / "layout.md").read_text()
    assert not [p for p in ALLOWED if p != "_moved" and f"`{p}" not in page], "a part the layout page lacks"
    assert not [old for old in MOVED if f"{old.rsplit('.', 1)[-1]}`" not in page], "an old path it lacks"


def test_every_import_follows_the_table() -> None:
    wrong = []
    for path in _sources():
        part = _part(path)
        assert part in ALLOWED, f"{path.relative_to(ROOT)}: a new part of the package needs a row in ALLOWED"
        if "*" in ALLOWED[part]:
            continue
        for target in sorted(_imported_parts(path) - ALLOWED[part]):
            wrong.append(f"{path.relative_to(ROOT)} imports {target or 'the package root'}")
    assert not wrong, "\n".join(wrong)


def _module(path: Path) -> str:
    """The dotted name of a module of xmltools (a package's ``__init__`` is the package)."""
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(name: str, package: bool, source: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that the module ``name`` imports, wherever the import stands.

    ``from .x import n`` imports ``x`` (its ``__init__`` when ``x`` is a package) and, when
    ``x.n`` is a module, that one too; ``from . import n`` imports the package itself so.
    """
    here = (name if package else name.rpartition(".")[0]).split(".")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            origin = ".".join([*base, *([node.module] if node.module else [])])
            found |= {origin, *(f"{origin}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return (found & modules) - {name}


def _module_graph() -> dict[str, set[str]]:
    paths = {_module(p): p for p in ROOT.rglob("*.py")}
    return {
        name: _imported_modules(name, p.name == "__init__.py", p.read_text(), set(paths))
        for name, p in paths.items()
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (``a, b, …, a``) for each import that closes one in a walk of the graph."""
    circles: list[list[str]] = []
    path: list[str] = []
    done: set[str] = set()

    def walk(node: str) -> None:
        path.append(node)
        for nxt in sorted(graph[node]):
            if nxt in path:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in done:
                walk(nxt)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        if node not in done:
            walk(node)
    return circles


def test_the_module_graph_reads_every_import() -> None:
    mods = {"xmltools", "xmltools.a", "xmltools.e", "xmltools.p", *(f"xmltools.p.{m}" for m in "bcd")}
    source = """
import xmltools.a
from typing import TYPE_CHECKING
from . import c
from .d import D
if TYPE_CHECKING:
    from xmltools import p
def later():
    from ..e import E
"""
    # in xmltools/p/b.py; 'from . import c' imports the package p, and its module c
    found = _imported_modules("xmltools.p.b", False, source, mods)
    assert found == {"xmltools", "xmltools.a", "xmltools.e", "xmltools.p", "xmltools.p.c", "xmltools.p.d"}
    # in xmltools/p/__init__.py, '.' is p itself
    assert _imported_modules("xmltools.p", True, "from .b import x\nfrom .. import a", mods) == {
        "xmltools.p.b",
        "xmltools",
        "xmltools.a",
    }
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_imports_itself_through_others() -> None:
    circles = _circles(_module_graph())
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_no_module_class_or_function_is_too_long() -> None:
    long = []
    for path in _sources():
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > MAX_CLASS_LINES:
                    long.append(f"{path.relative_to(ROOT)}: class {node.name} has {n} lines")
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}: {node.name}() has {n} lines")
    assert not long, "\n".join(long)


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("xmltools", ("jinja2", "playwright", "pydantic")),
        ("xmltools.parser", ("jinja2", "playwright", "pydantic")),
        ("xmltools.protocol.machine", ("jinja2", "playwright")),
        ("xmltools.tools", ("jinja2", "playwright")),
        ("xmltools.config.settings", ("jinja2", "playwright")),
        ("xmltools.interpreter", ("playwright",)),
        ("xmltools.replaying.run", ("playwright",)),
        ("xmltools.browser.base", ("playwright", "jinja2")),
    ],
)
def test_importing_a_part_loads_only_what_it_needs(module: str, absent: tuple[str, ...]) -> None:
    code = (
        f"import sys, {module}\n"
        f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({list(absent)!r}))\n"
        "print(' '.join(loaded)); sys.exit(1 if loaded else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, f"import {module} loaded {out.stdout.strip()} {out.stderr[-500:]}"


def test_an_offline_replay_loads_no_playwright() -> None:
    from xmltools.replaying.run import replay

    flow = ROOT.parent / "fixtures" / "transcripts" / "demo.jsonl"
    steps = len(asyncio.run(replay(flow, offline=True)).steps)
    code = (
        "import asyncio, sys\n"
        "from xmltools import replay\n"
        f"result = asyncio.run(replay({str(flow)!r}, offline=True))\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'playwright')\n"
        "print(len(result.steps), ' '.join(loaded[:5]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-1000:]
    ran, _, loaded = out.stdout.strip().partition(" ")
    assert int(ran) == steps > 0  # the whole replay ran
    assert not loaded, f"an offline replay loaded {loaded}"


def test_every_public_name_has_one_owner() -> None:
    owners = xmltools._OWNERS
    assert set(xmltools.__all__) == {*owners, "__version__"}
    for name, owner in owners.items():
        module = __import__(f"xmltools.{owner}", fromlist=[name])
        assert getattr(module, name) is getattr(xmltools, name), name
        assert name in getattr(module, "__all__", ()), f"{name} is not in xmltools.{owner}.__all__"


# old module paths kept for this release, each with its new place
MOVED = _moved.MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_s_old_path_warns_and_gives_the_same_names(old: str) -> None:
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({MOVED[old]!r})\n"
        "assert [w.category.__name__ for w in seen] == ['DeprecationWarning'], seen\n"
        f"assert {MOVED[old]!r} in str(seen[0].message)\n"
        "assert old.__all__ == new.__all__ and all(getattr(old, n) is getattr(new, n) for n in new.__all__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
