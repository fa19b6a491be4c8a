"""An action's facts live with the action: each model states them, and nothing else names actions to learn them.

Whether an action opens or closes the session, loads a page, opens the address
in its ``url`` or points at a place is class data on the model (``facts``).
The guard below fails when a new action does not state them, and the count
fails when code outside the actions, the profiles and the browser's handlers
goes back to comparing action names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import xmltools
from xmltools.actions import ACTIONS, ActionModel, Facts, InTab, Navigate, facts_of
from xmltools.browser.perform import HANDLERS
from xmltools.profiles import PROFILES
from xmltools.protocol.machine import Event, event_for

ROOT = Path(xmltools.__file__).parent


def _models() -> list[type[ActionModel]]:
    """Every concrete action model: the canonical ones, and those only a dialect offers."""
    offered = {form.model for p in PROFILES.values() for form in p.actions.values()}
    return sorted({*ACTIONS.values(), *offered}, key=lambda m: m.__name__)


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_every_action_states_its_facts(model: type[ActionModel]) -> None:
    assert "facts" in vars(model), f"{model.__name__} states no facts: add facts = Facts(...) to its class"
    assert isinstance(model.facts, Facts)


def test_the_facts_agree_with_what_the_browser_does() -> None:
    # the browser opens on its "open" flow, and its "session" flow is the one that ends the session
    flows = {flow: {m for m, h in HANDLERS.items() if h.flow == flow} for flow in ("open", "session")}
    assert flows["open"] == {m for m in HANDLERS if m.facts.session == "open"}
    assert flows["session"] == {m for m in HANDLERS if m.facts.session == "close"}
    for model in _models():
        if model.facts.opens_address:
            assert "url" in model.model_fields, model.__name__
        if model.facts.points:
            assert model.target_rule == "required", model.__name__


def test_an_action_in_a_named_tab_has_its_action_s_facts() -> None:
    nav = Navigate(url="https://example.com/")
    assert facts_of(InTab(tab="t1", inner=nav)) == nav.facts == Facts(loads_page=True, opens_address=True)
    assert facts_of("navigate") == Facts()  # a name is no action


def test_the_protocol_reads_the_session_facts() -> None:
    for name, model in ACTIONS.items():
        want = {"open": Event.LAUNCH, "close": Event.CLOSE}.get(model.facts.session or "", Event.ACTION)
        assert event_for("browser_action", name) is want, name


# -- action names outside the actions ------------------------------------------------------------

MAX_NAMED = 5  # places outside actions/, profiles and browser/perform/ that may still name an action
_OWN = ("actions/", "browser/perform/", "profiles.py")


def _action_names() -> set[str]:
    return {*ACTIONS, *(name for p in PROFILES.values() for name in p.actions)}


def _about_actions(node: ast.expr) -> bool:
    """An expression that reads an action's name: ``action``, ``x.action``, ``rec.action`` …"""
    text = ast.unparse(node)
    return "action" in text.rsplit(".", 1)[-1].lower()


def _constants(node: ast.expr) -> list[ast.Constant]:
    if isinstance(node, ast.Constant):
        return [node]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e for e in node.elts if isinstance(e, ast.Constant)]
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("frozenset", "set", "tuple"):
        return [c for a in node.args for c in _constants(a)]
    return []


def named_actions(source: str, names: set[str]) -> list[int]:
    """The lines where ``source`` compares an action's name with a constant one, or keys a table by names."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_about_actions(s) for s in sides):
                lines += [c.lineno for s in sides for c in _constants(s) if c.value in names]
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if isinstance(k, ast.Constant) and k.value in names]
            if len(keys) >= 2:
                lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            found = [c for c in _constants(node.value) if c.value in names]
            if len(found) >= 2:  # a set of names kept beside the code: _LOADS = frozenset({...})
                lines.append(node.lineno)
    return sorted(lines)


def test_the_count_sees_the_shapes_it_counts() -> None:
    names = {"launch", "close", "click", "back"}
    source = """
if action == "launch": pass
if rec.action in ("click", "back"): pass
table = {"click": 1, "back": 2}
LOADS = frozenset({"launch", "back"})
if kind == "launch": pass
parts = {"type": "text"}
"""
    assert named_actions(source, names) == [2, 3, 3, 4, 5]


def test_code_outside_the_actions_rarely_names_one() -> None:
    names = _action_names()
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(_OWN):
            continue
        found += [f"{rel}:{line}" for line in named_actions(path.read_text(), names)]
    assert len(found) <= MAX_NAMED, "action names outside the actions:\n" + "\n".join(found)
