"""What a user installs: the wheel and the sdist, built from the working tree, then the wheel installed
into a fresh virtual environment and run from a folder outside the tree.

The fresh environment borrows nothing from the development one (see tests/support/fresh.py): it
gets the wheel and its dependencies from the package index (with pytest, to load the plugin), and
every command runs with the tree out of sight (another working folder, no ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.fresh import ROOT, Fresh, build, wheel

SKIP = ("__pycache__", ".pyc", ".pyo")

pytestmark = [pytest.mark.slow, pytest.mark.long]


def _files(folder: Path) -> set[str]:
    """Every file below ``folder``, relative to it, bytecode aside."""
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not any(s in p.as_posix() for s in SKIP)
    }


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, then the wheel built from that sdist (as ``python -m build`` does by default)."""
    return build(tmp_path_factory.mktemp("dist"))


def test_the_wheel_holds_every_file_of_the_source_tree_and_nothing_else(dist: Path) -> None:
    with zipfile.ZipFile(wheel(dist)) as z:
        shipped = {n for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}
    own = {
        f"xmltools/{f}" for f in _files(ROOT / "xmltools") if f.endswith((".py", ".j2")) or f == "py.typed"
    }
    expected = (
        own
        | {f"xmltools/prompts/{f}" for f in _files(ROOT / "prompts")}
        | {f"xmltools/fixtures/{f}" for f in _files(ROOT / "fixtures")}
        # the examples' own files; their links into fixtures/ (the site, ...) are not followed: the
        # wheel holds those folders once, as fixtures
        | {f"xmltools/examples/{f}" for f in _files(ROOT / "docs" / "examples")}
    )
    assert not expected - shipped, f"the wheel misses {sorted(expected - shipped)[:10]}"
    assert not shipped - expected, f"the wheel holds more: {sorted(shipped - expected)[:10]}"
    assert "xmltools/lab/__init__.py" in shipped and "xmltools/templates/report.html.j2" in shipped
    assert "xmltools/examples/todo/server.py" in shipped and "xmltools/fixtures/site/shop.html" in shipped


def test_the_sdist_holds_the_tests_docs_and_build_files(dist: Path) -> None:
    [sdist] = dist.glob("xmltools-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for folder in ("xmltools", "prompts", "fixtures", "tests", "docs", "bench"):
        missing = {f"{folder}/{f}" for f in _files(ROOT / folder)} - names
        assert not missing, f"the sdist misses {sorted(missing)[:10]}"
    for top in ("README.md", "Makefile", "mkdocs.yml", "pyproject.toml", "setup.py", ".ci/run"):
        assert top in names, top
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


EXPERIMENT = """\
trials = 2
[[variants]]
name = "A"
[[models]]
name = "m"
price_in = 2.0
price_out = 8.0
[[tasks]]
id = "t"
url = "http://127.0.0.1:9/"
instruction = "do it"
checks = [{ kind = "url", value = "/done.html" }]
"""

IMPORT_ALL = """\
import importlib, json, pkgutil, sys
import xmltools
names = [n for n in xmltools.__all__ if getattr(xmltools, n, None) is None]
modules = []
for m in pkgutil.walk_packages(xmltools.__path__, "xmltools."):
    if m.name.endswith(".__main__"):  # runs the command line
        continue
    importlib.import_module(m.name)
    modules.append(m.name)
print(json.dumps({"file": xmltools.__file__, "missing": names, "modules": modules}))
"""

PLUGIN_TEST = """\
from importlib import resources

RUN = {run!r}
SITE = str(resources.files("xmltools.fixtures") / "site")


def test_the_recorded_demo_replays_through_the_plugin(xmltools_replay):
    result = xmltools_replay(RUN, serve=SITE)
    assert result.ok, result.summary()
    assert len(result.steps) == 15
"""


def test_a_fresh_environment_runs_what_a_user_runs(dist: Path, tmp_path: Path) -> None:
    """A bare install (no extras) gives the version, every public name and module, the demo and an
    offline replay of its recording, an experiment's dry run, and the pytest plugin on a recording."""
    fresh = Fresh(tmp_path, str(wheel(dist)), "pytest")
    assert fresh.run("xmltools", "--version").stdout.strip().endswith("0.1.0")

    info = json.loads(fresh.run("python", "-c", IMPORT_ALL).stdout)
    assert info["file"].startswith(str(tmp_path / "venv")), info["file"]  # the installed copy, not the tree
    assert info["missing"] == []
    assert {"xmltools.lab", "xmltools.replaying.plugin", "xmltools.browser.session"} <= set(info["modules"])

    demo = fresh.run("xmltools", "demo", "--out", "demo")
    assert "task completed" in demo.stdout, demo.stdout[-2000:]
    run = fresh.work / "demo" / "run.jsonl"
    assert run.exists() and (fresh.work / "demo" / "report.html").exists()
    fresh.run("xmltools", "replay", str(run), "--offline")

    (fresh.work / "exp.toml").write_text(EXPERIMENT)
    dry = fresh.run("xmltools", "experiment", "run", "exp.toml", "--dry-run")
    assert dry.stdout.startswith("2 trials: 1 variants × 1 models × 1 tasks × 2"), dry.stdout

    (fresh.work / "test_flow.py").write_text(PLUGIN_TEST.format(run=str(run)))
    plugin = fresh.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_flow.py")
    assert "1 passed" in plugin.stdout, plugin.stdout
