"""Guards on the action declarations: every action is declared once, completely, and offered as declared.

Each model in ``xmltools.actions`` declares its category, summary, target rule,
parameters and example; profiles state only their differences; approval reads
the category from the model; disabling is one filter.  These tests keep it so.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from xmltools import ConfigError, parse
from xmltools.actions import (
    ACTIONS,
    CATEGORIES,
    DESTINATION_PARAMS,
    TARGET_KINDS,
    TARGET_PARAMS,
    ActionContext,
    ActionModel,
    Click,
    FillForm,
    Type,
)
from xmltools.parser import ToolSyntax, ToolUse
from xmltools.profiles import FULL, PROFILES, ActionForm, Profile
from xmltools.protocol.approval import ACTION_CATEGORIES, ApprovalPolicy
from xmltools.render.prompts import Renderer
from xmltools.tools import CallError, ToolRegistry, ValidCall

ROOT = Path(__file__).parents[3]
# every model a profile writes, the canonical ones and those that stand for them (Forge's extract)
MODELS = sorted(
    {*ACTIONS.values(), *(f.model for p in PROFILES.values() for f in p.actions.values())},
    key=lambda m: m.__name__,
)


def canonical_names(model: type[ActionModel]) -> set[str]:
    """The parameter names a model reads: its fields (by alias too) and, with a target, the flat target ones."""
    names = {n for n, f in model.model_fields.items() if n not in ("action", "target", "to")}
    names |= {f.alias for f in model.model_fields.values() if f.alias}
    if "target" in model.model_fields:
        names |= set(TARGET_PARAMS)
    if "to" in model.model_fields:
        names |= set(DESTINATION_PARAMS)
    return names


@pytest.fixture
def ctx(tmp_path: Path) -> ActionContext:
    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    return ActionContext(workspace=tmp_path)


def validate(reg: ToolRegistry, text: str, ctx: ActionContext) -> ValidCall | CallError:
    blocks = [b for b in parse(text, tools=reg) if isinstance(b, ToolUse)]
    assert len(blocks) == 1, text
    return reg.validate(blocks[0], ctx)


# -- each model declares itself completely ---------------------------------------------------------


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_declares_a_category_a_summary_and_a_consistent_target_rule(
    model: type[ActionModel],
) -> None:
    assert model.category in CATEGORIES
    assert model.summary and "\n" not in model.summary and len(model.summary) <= 100
    assert model.summary == model.summary.strip() and not model.summary.endswith(".")
    field = model.model_fields.get("target")
    if model.target_rule == "none":
        assert field is None, "a model with a target field says whether it is required or optional"
    else:
        assert field is not None
        if field.is_required():
            assert model.target_rule == "required"
    assert model.destination == ("to" in model.model_fields)
    assert set(model.params) <= canonical_names(model), "a declared parameter the model does not read"
    assert set(model.required) <= set(model.params)
    assert set(model.example) <= set(model.params)
    assert isinstance(model.example, MappingProxyType), "the example is shared: it must not be mutable"


def test_every_canonical_action_has_its_category_in_approval() -> None:
    assert dict(ACTION_CATEGORIES) == {name: m.category for name, m in ACTIONS.items()}
    assert set(ACTION_CATEGORIES.values()) == set(CATEGORIES)
    assert ACTION_CATEGORIES["fill_form"] == "input"  # the one action approval's old list forgot


def test_approval_names_no_action() -> None:
    """Categories are read from the models: approval.py keeps no list of action names."""
    source = (ROOT / "xmltools" / "protocol" / "approval.py").read_text()
    code = source[source.index('"""', 3) + 3 :]  # past the docstring, which may give examples
    assert not [a for a in ACTIONS if f'"{a}"' in code or f"'{a}'" in code]


# -- the example each model declares goes through the real validation path ------------------------


def _as_declared() -> Profile:
    """Every canonical model offered exactly as it declares itself, in the full dialect's tool."""
    params = sorted({p for m in ACTIONS.values() for p in m.params})
    return Profile(
        "full",
        MappingProxyType({name: ActionForm(m) for name, m in ACTIONS.items()}),
        (ToolSyntax("browser_action", ("action", *params), frozenset({"text"})),),
        FULL.template,
    )


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_declared_example_is_a_correct_call(action: str, ctx: ActionContext) -> None:
    reg = ToolRegistry(profile=_as_declared())
    model = ACTIONS[action]
    kinds: tuple[str | None, ...] = (None, *TARGET_KINDS) if model.target_rule != "none" else (None,)
    for kind in kinds:
        got = validate(reg, reg.example(action, kind), ctx)
        assert isinstance(got, ValidCall), (action, kind, got)
        assert type(got.args) is model and got.action == action


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_action_a_profile_offers_validates_and_has_a_category(name: str, ctx: ActionContext) -> None:
    profile = PROFILES[name]
    reg = ToolRegistry(profile=name, capabilities=set(profile.optional.values()))  # type: ignore[arg-type]
    policy = ApprovalPolicy()
    for written, form in profile.actions.items():
        assert form.model.category in CATEGORIES and form.model.summary, (name, written)
        got = validate(reg, reg.example(written), ctx)
        assert isinstance(got, ValidCall), (name, written, got)
        assert isinstance(got.args, form.model) or hasattr(form.model, "canonical"), (name, written)
        category = policy.category_of(got.tool, got.action)
        assert category in CATEGORIES, (name, written, got.action)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_a_form_writes_only_parameters_its_tool_has_and_its_model_reads(name: str) -> None:
    profile = PROFILES[name]
    for written, form in profile.actions.items():
        tool = (
            profile.tools[0] if profile.action_param else next(t for t in profile.tools if t.name == written)
        )
        own = {
            p for p in (profile.session_param_of(written), profile.tab_param if form.in_tab else None) if p
        }
        assert set(form.params) | set(form.example) <= set(tool.params) | own, (name, written)
        assert set(form.required) <= set(form.params), (name, written)
        canonical = {form.renames.get(p, p) for p in form.params} | set(form.fixed) | set(form.defaults)
        assert canonical <= canonical_names(form.model), (
            name,
            written,
            canonical - canonical_names(form.model),
        )


# -- a form states only its dialect's differences --------------------------------------------------


def test_a_form_left_alone_is_the_model_as_declared() -> None:
    form = ActionForm(Click)
    assert form.params == Click.params and form.required == Click.required
    assert form.target == "required" and not form.destination
    assert dict(form.example) == dict(Click.example) and form.selector_example == Click.selector_example
    assert form.action == "click"
    for action, form in FULL.actions.items():  # the full dialect is the models as they declare themselves
        model = ACTIONS[action]
        assert (form.model, form.params, form.required) == (model, model.params, model.required)
        assert form.target == (None if model.target_rule == "none" else model.target_rule)
        assert dict(form.example) == dict(model.example) and not form.renames


def test_a_form_with_its_own_parameters_checks_them_as_written() -> None:
    """Its target parameters are plain ones, and it needs what the model needs among them."""
    form = ActionForm(Type, ("ref_id", "text"), renames={"ref_id": "ref"})
    assert form.target is None and form.required == ("text",)
    assert ActionForm(FillForm, ("fields",)).required == ("fields",)
    assert ActionForm(Click, ("selector",), ("selector",), target="required").target == "required"


# -- every offered action is described in the prompt its profile renders ---------------------------


def _prompt(reg: ToolRegistry) -> str:
    return Renderer().system_prompt(reg, open_sessions=("shop",))


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_offered_action_has_one_line_in_the_system_prompt(name: str) -> None:
    profile = PROFILES[name]
    prompt = _prompt(ToolRegistry(profile=name))  # type: ignore[arg-type]
    for written in profile.names:
        assert prompt.count(f"\n- `{written}`: ") == 1, (name, written)
    for written in profile.names:  # and a disabled one has none
        if written in (profile.opener, profile.closer):
            continue
        without = _prompt(ToolRegistry(profile=name, disabled=[written]))  # type: ignore[arg-type]
        assert f"\n- `{written}`: " not in without, (name, written)


# -- disabling is one filter -----------------------------------------------------------------------


def test_disabling_is_a_filter_on_what_the_registry_offers(ctx: ActionContext) -> None:
    reg = ToolRegistry(profile="full", disabled=["evaluate", "upload"])
    assert "evaluate" not in reg.actions and "upload" not in reg.actions and "click" in reg.actions
    assert reg.actions == tuple(a for a in FULL.names if a not in ("evaluate", "upload"))
    got = validate(reg, "<browser_action><action>evaluate</action><script>1</script></browser_action>", ctx)
    assert isinstance(got, CallError) and got.code == "disabled_action"
    assert ToolRegistry(profile="full", actions=["launch", "click", "close"], disabled=["click"]).actions == (
        "launch",
        "close",
    )


def test_disabling_what_is_not_there_or_cannot_be_turned_off_is_the_host_error() -> None:
    with pytest.raises(ConfigError, match=r"disabled_actions names \['nope'\], which the roo profile"):
        ToolRegistry(disabled=["nope"])
    with pytest.raises(ConfigError, match="cannot be turned off"):
        ToolRegistry(profile="full", disabled=["launch"])
    with pytest.raises(ConfigError, match="cannot be turned off"):
        ToolRegistry(profile="aleph", disabled=["stop"])


# -- the package stays small, one concern a module ------------------------------------------------


def test_every_module_of_the_actions_package_is_small() -> None:
    for path in sorted((ROOT / "xmltools" / "actions").glob("*.py")):
        lines = len(path.read_text().splitlines())
        assert lines < 400, (path.name, lines)
        assert path.read_text().startswith('"""'), f"{path.name} opens with no docstring"


def test_the_testing_checks_are_offered_only_with_their_capability(ctx: ActionContext) -> None:
    plain = ToolRegistry(profile="full")
    testing = ToolRegistry(profile="full", capabilities=["testing"])
    checks = ("verify_text", "verify_element", "verify_value", "verify_url")
    assert not set(checks) & set(plain.actions)
    assert testing.actions[-5:] == (*checks, "close")  # in the profile's order, before close
    refused = validate(plain, plain.example("verify_text"), ctx)
    assert not isinstance(refused, ValidCall) and refused.code == "disabled_action"
    assert "belongs to the testing checks, which are not offered here" in refused.message
    assert isinstance(validate(testing, testing.example("verify_text"), ctx), ValidCall)
    from xmltools.render.prompts import Renderer

    shown = Renderer().system_prompt(testing)
    assert all(f"- `{c}`" in shown for c in checks), shown
    assert "verify_" not in Renderer().system_prompt(plain)
