"""The public API: __all__ is exact, and the layering of DESIGN §2 holds."""

from __future__ import annotations

import subprocess
import sys

import xmltools


def test_all_names_exist_and_are_sorted() -> None:
    for name in xmltools.__all__:
        assert hasattr(xmltools, name), name
    assert sorted(xmltools.__all__, key=str.lower) == sorted(set(xmltools.__all__), key=str.lower)


def test_public_names_are_in_all() -> None:
    public = {
        n
        for n in vars(xmltools)
        if not n.startswith("_") and n != "annotations" and not isinstance(getattr(xmltools, n), type(sys))
    }
    assert public <= set(xmltools.__all__), public - set(xmltools.__all__)


# the pure core's arrows, and every other part's, are held by tests/test_layering.py


def test_importing_the_package_does_not_start_playwright() -> None:
    code = "import sys, xmltools; sys.exit(1 if any(m.startswith('playwright') for m in sys.modules) else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_only_render_imports_jinja2_and_only_browser_imports_playwright() -> None:
    from pathlib import Path

    root = Path(xmltools.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        rel = path.relative_to(root).as_posix()
        if "import jinja2" in text or "from jinja2" in text:
            assert rel.startswith("render/"), rel
        if "from playwright" in text or "import playwright" in text:
            assert rel.startswith("browser/"), rel
