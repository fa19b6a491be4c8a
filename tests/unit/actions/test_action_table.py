"""The one action table of the browser: every action model has exactly one handler (no browser)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import xmltools
from xmltools.actions import ACTIONS, ActionModel, Click, Hover, Launch
from xmltools.browser.perform import HANDLERS, handles
from xmltools.profiles import PROFILES


def _browser_models() -> set[type[ActionModel]]:
    """Every model an action can reach the browser as: the canonical ones, and each profile's own."""
    models = set(ACTIONS.values())
    for profile in PROFILES.values():
        for form in profile.actions.values():
            models.add(form.model)
    return models


def test_every_action_model_has_a_handler() -> None:
    missing = {
        m.__name__
        for m in _browser_models()
        if m not in HANDLERS and not hasattr(m, "canonical")  # a canonical() model becomes another first
    }
    assert not missing, missing


def test_a_model_that_becomes_another_is_not_in_the_table() -> None:
    for model in _browser_models():
        if hasattr(model, "canonical"):
            assert model not in HANDLERS, model.__name__


def test_the_table_holds_action_models_only() -> None:
    assert set(HANDLERS) <= set(ACTIONS.values())


def test_a_second_handler_for_a_model_is_refused() -> None:
    async def another(action: Click, scope: object, act: object) -> None:
        return None

    with pytest.raises(RuntimeError, match="Click has a handler already"):
        handles(Click)(another)  # type: ignore[arg-type]
    assert HANDLERS[Click].fn is not another


def test_a_point_and_an_element_click_share_one_handler() -> None:
    assert HANDLERS[Click].name == "click" and HANDLERS[Hover].name == "hover"
    assert HANDLERS[Launch].flow == "open"
    assert {m.__name__ for m, h in HANDLERS.items() if h.flow != "page"} == {"Launch", "Close"}


_ALLOWED = {
    "errors",
    "base.results",
    "base.expectations",
    "actions",
    "base.urlpolicy",
    "base.quoting",
    "base.threadloop",
    "browser",
}


def _allowed(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in _ALLOWED or ".".join(parts[:2]) in _ALLOWED


def test_the_browser_imports_only_what_it_may() -> None:
    """browser/ reaches none of config, tools, profiles, render or interpreter (DESIGN §2)."""
    root = Path(xmltools.__file__).parent / "browser"
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        depth = len(path.relative_to(root).parts)  # 1: browser/x.py, 2: browser/perform/x.py
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > depth:  # beyond browser/: xmltools.*
                assert _allowed(node.module or ""), f"{path.name} imports {'.' * node.level}{node.module}"
            mods = []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                mods = [node.module or ""]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            for m in mods:
                if m.startswith("xmltools."):
                    assert _allowed(m.removeprefix("xmltools.")), f"{path.name} imports {m}"


def test_the_seam_and_the_settings_load_no_playwright() -> None:
    code = (
        "import sys, xmltools.browser.base, xmltools.browser.settings, xmltools.config.settings;"
        " xmltools.config.settings.Config().browser_settings();"
        " sys.exit(1 if any(m.startswith('playwright') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
