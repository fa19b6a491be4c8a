"""A recorded transcript as a plain pytest-playwright test: ``xmltools export run.jsonl --pytest``.

So that a recording can leave the xmltools format.  Each step the recording ran becomes
Playwright's own API: the element it acted on is found by the first (the best) of the locators
its identity recorded (test id, role and name, label, placeholder, text, then CSS), in its frame;
a step on a point with no identity is a mouse action at that point.  Each assertion recorded
after a step becomes an ``expect``, as :mod:`xmltools.browser.verify` checks it.  Where the
recording's page went elsewhere after an action, the test waits for that address.  A step that
Playwright's API cannot say, a step that failed or was refused, and a step that only read the
page are written as comments that say so, never dropped.

``{base_url}`` becomes pytest-playwright's ``base_url`` fixture (``pytest --base-url URL``),
``{secret:NAME}`` the variable ``XMLTOOLS_SECRET_NAME``, as a replay reads it.  The test takes
its Chromium from ``XMLTOOLS_EXECUTABLE`` (or ``XMLTOOLS_CHROMIUM``) when one is set.

Hand-written: no library we keep turns such a transcript into Python code (Playwright's codegen
records a live browser, it reads no file), so this module writes the text itself, in the shape
``ruff format`` gives it: a statement too long for 88 columns first names its longest values.

Pure: a :class:`~xmltools.record.transcript.Transcript` in, text out.  Imports the action models, the
registry that reads a call in its dialect, and the transcript; never Playwright, the browser,
the interpreter or the replay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeAlias, cast

from .. import actions as act
from ..actions import ActionContext, ActionModel, ProfileName, Target
from ..base.expectations import Expectation
from ..base.results import Identity, Point, Viewport
from ..base.secrets import ENV_PREFIX
from ..errors import UsageError
from ..parser import ToolUse
from ..profiles import DEFAULT_SESSION
from ..record.transcript import (
    AssistantRecord,
    EndRecord,
    ExpectRecord,
    MessageRecord,
    ToolResultRecord,
    Transcript,
    registry_for,
)
from ..tools import CallError, ToolRegistry
from .pycode import (
    PAGE,
    TRUE,
    Attr,
    Call,
    Code,
    Expr,
    comment,
    fstring,
    literal,
    locator,
    method,
    number,
    raw,
    statement,
)

__all__ = ["export_pytest"]

SYNC_API = "playwright.sync_api"  # what the test imports (this module imports no Playwright)
EXECUTABLE_VARIABLES = ("XMLTOOLS_EXECUTABLE", "XMLTOOLS_CHROMIUM")  # as xmltools reads them (config.py)
# the caret to the end of a field before typing into it (browser/scripts.py: CARET_TO_END)
CARET_TO_END = "el => { try { el.setSelectionRange(9e9, 9e9) } catch {} }"  # a larger end is the length
TYPE_KEYS_MAX = 200  # longer text xmltools inserts at once (browser/perform/keyboard.py); so does the test
# the notes xmltools adds when the page opens or closes a tab by itself (browser/tabs.py)
NEW_TAB_NOTE = "a new tab opened, and you now see it"
TAB_CLOSED_NOTE = "the tab closed itself"
# {base_url} stands in for this while a call is read: a URL must have a scheme and a host to be valid
_BASE_STAND_IN = "http://xmltools-base-url.invalid"
_PLACEHOLDER = re.compile(r"\{base_url\}|\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
# schemes a recorded call may have opened (the recording's policy allowed it; here it is only read)
_SCHEMES = frozenset({"about", "data", "file", "blob", "chrome", "view-source", "javascript"})


# the actions that load a page themselves: where they go is no navigation to wait for


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the writer ---------------------------------------------------------------------------------


@dataclass
class _Step:
    """One recorded call being written: its number, its record, its typed action."""

    n: str
    rec: ToolResultRecord
    action: ActionModel

    @property
    def identity(self) -> Identity | None:
        obs = self.rec.observation
        return obs.identity if obs is not None and obs.identity and obs.identity.locators else None


@dataclass
class _Writer:
    transcript: Transcript
    body: list[str] = field(default_factory=list)
    indent: int = 4
    secrets: dict[str, None] = field(default_factory=dict)
    viewport: Viewport = field(default_factory=lambda: Viewport(width=900, height=600))
    url: str | None = None
    mouse: Point | None = None
    tabs: list[str] = field(default_factory=list)  # the open tabs' ids, in the order they opened
    tab: str | None = None  # the current one
    opened: int = 0  # tabs opened so far (ids are never reused)
    session: str | None = None  # the session this test is: the first one launched
    launched: bool = False
    blank: bool = False  # the browser started with no page: the first open_tab uses its blank tab
    needs: set[str] = field(default_factory=set)  # what the code written uses: base_url, expect, re

    # -- output

    def line(self, text: str) -> None:
        self.body.append(" " * self.indent + text)

    def note(self, text: str) -> None:
        self.line(comment(text))

    def emit(self, e: Expr, assign: str | None = None) -> None:
        self.body += statement(e, self.indent, assign)

    def value(self, text: str, hint: str) -> Code:
        """A string of the transcript as code: ``{base_url}`` and ``{secret:NAME}`` become variables."""
        text = text.replace(_BASE_STAND_IN, "{base_url}")
        parts: list[str | tuple[str]] = []
        at = 0
        for m in _PLACEHOLDER.finditer(text):
            parts.append(text[at : m.start()])
            if m.group(1):
                self.secrets[m.group(1)] = None
                parts.append((f"secret_{m.group(1)}",))
            else:
                self.needs.add("base_url")
                parts.append(("base_url",))
            at = m.end()
        parts = [p for p in [*parts, text[at:]] if p != ""]
        if len(parts) == 1 and isinstance(parts[0], tuple):
            return Code(parts[0][0])
        return Code(fstring(parts or [""]), hint)

    def element(self, step: _Step, target: Target | None, *, identity: bool = True) -> Expr | None:
        """The element a step acted on: its recorded identity's best locator, or the selector written
        (``identity=False``: the selector only, for a target the identity is not of)."""
        recorded = step.identity if identity else None
        if recorded is not None:
            return locator(recorded.locators[0], recorded.frame, self.value)
        if target is not None and target.selector is not None:
            return locator(target.selector, target.frame, self.value)
        return None

    def expect(self, subject: Expr) -> Call:
        """``expect(subject)``."""
        self.needs.add("expect")
        return Call(Code("expect"), (subject,))

    def cannot(self, step: _Step, why: str) -> None:
        self.note(f"step {step.n} cannot be written with Playwright's API: {why}")

    # -- the walk

    def write(self) -> list[str]:
        registry = registry_for(self.transcript)
        step = 0
        task = self.transcript.message("user")
        if task:
            self.note(f"task: {_clip(task, 200)}")
        for rec in self.transcript.records:
            if isinstance(rec, AssistantRecord):
                step += 1
            elif isinstance(rec, ToolResultRecord):
                self.result(registry, step, rec)
            elif isinstance(rec, ExpectRecord):
                self.expectation(rec.expectation)
            elif isinstance(rec, EndRecord):
                self.note(f"the recording ended: {rec.outcome}" + (f" ({rec.reason})" if rec.reason else ""))
            elif isinstance(rec, MessageRecord) and rec.role == "user" and rec.content != task:
                self.note(f"the user: {_clip(rec.content, 200)}")
        return self.body

    def result(self, registry: ToolRegistry, step: int, rec: ToolResultRecord) -> None:
        n = f"{step}" if rec.call.index == 0 else f"{step}.{rec.call.index + 1}"
        action = rec.action or rec.call.name
        if rec.action is None:
            self.note(f"step {n}: {rec.call.name} is not a browser action; the test has nothing to do")
            return
        if rec.status != "ok":
            why = f": {_clip(rec.error.message, 80)}" if rec.error is not None else ""
            self.note(f"step {n}: {action} skipped, the recording's call was {rec.status}{why}")
            return
        checked = self._read(registry, rec)
        if isinstance(checked, str):
            self.note(f"step {n}: {action} skipped, its call cannot be read: {_clip(checked, 120)}")
            return
        args, session, tab = checked
        if self.session is not None and (session or DEFAULT_SESSION) != self.session:
            self.cannot(_Step(n, rec, args), f"{action} in the session {session}, which this test is not")
            return
        s = _Step(n, rec, args)
        obs = rec.observation
        point = getattr(getattr(args, "target", None), "coordinate", None)
        where = (f" on {obs.target}" if obs is not None and obs.target else "") + (
            f" at {point}" if point else ""
        )
        self.note(f"step {n}: {action}{where}")
        if tab is not None and tab != self.tab and tab in self.tabs:
            self.switch(tab)
        popup = obs is not None and any(NEW_TAB_NOTE in note for note in obs.notes)
        if popup:  # the action opened a tab, which the recording followed
            self.line("with page.context.expect_page() as new_tab:")
            self.indent += 4
        before = len(self.body)
        handler = _HANDLERS.get(type(args))
        if handler is not None:
            if isinstance(args, act.Launch | act.Navigate) and self.session is None:
                self.session = session or DEFAULT_SESSION
            handler(self, s, args)
        elif args.category == "read":
            self.note(f"{action} only reads the page: there is nothing to repeat")
        else:
            self.cannot(s, f"{action} has no counterpart here")
        if popup:
            if all(line.lstrip().startswith("#") for line in self.body[before:]):
                self.line("pass")
            self.indent -= 4
            self.emit(Attr(Code("new_tab"), "value"), "page")
            self.opened_tab()
        if obs is not None and any(TAB_CLOSED_NOTE in note for note in obs.notes):
            self.emit(Code("page.context.pages[-1]"), "page")
        self._arrived(s)

    def _read(
        self, registry: ToolRegistry, rec: ToolResultRecord
    ) -> tuple[ActionModel, str | None, str | None] | str:
        """The call's typed action, its session and its tab; or what is wrong with it."""
        config = self.transcript.header.config
        profile = cast(ProfileName, config.get("profile", "roo"))
        roots = tuple(Path(p) for p in config.get("allowed_file_roots") or ())
        workspace = config.get("workspace")
        ctx = ActionContext(
            viewport=self.viewport,
            profile=profile,
            allowed_schemes=_SCHEMES,
            allowed_file_roots=roots,
            workspace=Path(workspace) if isinstance(workspace, str) else None,
            allow_link_local=True,
            max_text_chars=10**9,
            max_wait_seconds=10.0**9,
        )
        params = {k: v.replace("{base_url}", _BASE_STAND_IN) for k, v in rec.call.params.items()}
        checked = registry.validate(ToolUse(rec.call.name, params), ctx)
        if isinstance(checked, CallError):
            return checked.message
        if not isinstance(checked.args, ActionModel):
            return "it is not a browser action"
        return checked.args, checked.session, checked.tab

    def _arrived(self, step: _Step) -> None:
        """Keep up with the recording: its viewport, its mouse, and its address (waited for when an
        action that is not a page load took the page elsewhere)."""
        obs = step.rec.observation
        if obs is None:
            return
        self.viewport, self.mouse = obs.viewport, obs.mouse
        if self.url is not None and obs.url != self.url and not step.action.facts.loads_page:
            self.wait_for_url(obs.url)
        self.url = obs.url

    def wait_for_url(self, url: str) -> None:
        if re.search(r"[*{}\\]", _PLACEHOLDER.sub("", url)):  # a glob would read these: compare whole
            self.emit(method(self.expect(PAGE), "to_have_url", self.value(url, "url")))
        else:
            self.emit(method(PAGE, "wait_for_url", self.value(url, "url")))

    # -- tabs

    def opened_tab(self) -> None:
        self.opened += 1
        self.tab = f"t{self.opened}"
        self.tabs.append(self.tab)

    def switch(self, tab: str) -> None:
        self.emit(Code(f"page.context.pages[{self.tabs.index(tab)}]"), "page")
        self.emit(method(PAGE, "bring_to_front"))
        self.tab = tab

    # -- assertions

    def expectation(self, exp: Expectation) -> None:
        self.note(f"expect: {exp.describe()}")
        if (exp.session or DEFAULT_SESSION) != (self.session or DEFAULT_SESSION):
            self.note(f"the session {exp.session} is not this test's: the assertion cannot be checked here")
        else:
            self.assertion(exp)

    def assertion(self, exp: Expectation) -> None:
        """The ``expect`` that checks ``exp`` as :func:`xmltools.browser.verify.verify` does."""
        if exp.kind == "text":
            self.visible(method(PAGE, "get_by_text", self._pattern(exp)))
        elif exp.kind == "element":
            role = Code(literal(exp.role or ""))
            named = {} if exp.name is None else {"name": self.value(exp.name, "name"), "exact": TRUE}
            self.visible(method(PAGE, "get_by_role", role, **named))
        elif exp.kind == "value":
            field_ = locator(exp.target or "", None, self.value)
            self.emit(method(self.expect(field_), "to_have_value", self.value(exp.value, "value")))
        elif exp.kind == "url":
            self.emit(method(self.expect(PAGE), "to_have_url", self._pattern(exp)))
        else:
            body = method(PAGE, "locator", Code('"body"'))
            snapshot = self.value(exp.value, "snapshot")
            self.emit(method(self.expect(body), "to_match_aria_snapshot", snapshot))

    def _pattern(self, exp: Expectation) -> Expr:
        hint = "url" if exp.kind == "url" else "text"
        if not exp.regex:
            return self.value(exp.value, hint)
        self.needs.add("re")
        pattern = self.value(exp.value, "pattern")
        if pattern.text == literal(exp.value):  # no placeholder in it
            pattern = Code(raw(exp.value), "pattern")
        return Call(Code("re.compile"), (pattern,), hint=hint)

    def visible(self, found: Call) -> None:
        """``expect(found.filter(visible=True).first).to_be_visible()``, as xmltools checks it."""
        first = Attr(method(replace(found, hint="target"), "filter", visible=TRUE), "first")
        self.emit(method(self.expect(first), "to_be_visible"))


# -- one writer per action ----------------------------------------------------------------------

Handler: TypeAlias = Callable[[_Writer, _Step, ActionModel], None]
_HANDLERS: dict[type[ActionModel], Handler] = {}  # the actions that only read the page have none


def handles(*models: type[ActionModel]) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for m in models:
            _HANDLERS[m] = fn
        return fn

    return deco


def _goto(w: _Writer, url: str, wait_until: str | None = None) -> None:
    if wait_until:
        w.emit(method(PAGE, "goto", w.value(url, "url"), wait_until=Code(literal(wait_until))))
    else:
        w.emit(method(PAGE, "goto", w.value(url, "url")))


def _size(size: Viewport) -> Code:
    return Code(f'{{"width": {size.width}, "height": {size.height}}}')


@handles(act.Launch)
def _launch(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Launch)
    if w.launched:
        w.note("the recording started the browser afresh here; this test goes on in the same page")
    else:
        w.opened_tab()
    w.launched = True
    w.blank = a.url is None
    if a.url is not None:
        _goto(w, a.url)
    if a.size is not None:
        w.emit(method(PAGE, "set_viewport_size", _size(a.size)))


@handles(act.Navigate)
def _navigate(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Navigate)
    if not w.launched:  # a dialect whose navigate opens the session
        w.launched = True
        w.opened_tab()
    _goto(w, a.url, a.wait_until)


_HISTORY: dict[type[ActionModel], str] = {
    act.Back: "go_back",
    act.Forward: "go_forward",
    act.Reload: "reload",
}


@handles(*_HISTORY)
def _history(w: _Writer, step: _Step, a: ActionModel) -> None:
    w.emit(method(PAGE, _HISTORY[type(a)]))


@handles(act.Click, act.Hover)
def _pointer(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Click | act.Hover)
    found = w.element(step, a.target)
    if found is not None:
        w.emit(method(found, a.action))
    elif a.target.coordinate is not None:
        p = a.target.coordinate
        w.emit(
            method(
                Attr(PAGE, "mouse"),
                "click" if a.facts.points == "click" else "move",
                number(p.x),
                number(p.y),
            )
        )
    else:
        w.cannot(step, f"the {a.target} was not recorded with its element's identity")


@handles(act.Type, act.Press)
def _keys(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Type | act.Press)
    if a.target is not None:
        found = w.element(step, a.target)
        if found is None:
            w.cannot(step, f"the {a.target} was not recorded with its element's identity")
            return
        w.emit(found, "field")
        w.emit(method(Code("field"), "focus"))
        if isinstance(a, act.Type):  # typing goes after what the field holds, as xmltools types
            w.emit(method(Code("field"), "evaluate", Code(literal(CARET_TO_END), "script")))
    keyboard = Attr(PAGE, "keyboard")
    if isinstance(a, act.Press):
        w.emit(method(keyboard, "press", w.value(a.text, "keys")))
    else:
        typed = "type" if len(a.text) <= TYPE_KEYS_MAX else "insert_text"
        w.emit(method(keyboard, typed, w.value(a.text, "text")))


@handles(act.Fill, act.Select, act.Upload)
def _form(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Fill | act.Select | act.Upload)
    found = w.element(step, a.target)
    if found is None:
        w.cannot(step, f"the {a.target} was not recorded with its element's identity")
    elif isinstance(a, act.Fill):
        w.emit(method(found, "fill", w.value(a.text, "text")))
    elif isinstance(a, act.Select):
        values = [w.value(v, "option") for v in a.values]
        chosen = (
            values[0] if len(values) == 1 else Code("[" + ", ".join(v.text for v in values) + "]", "options")
        )
        w.emit(method(found, "select_option", chosen))
    else:
        w.note("the files are those of the machine that recorded the run")
        paths = [w.value(str(p), "path") for p in a.paths]
        files = paths[0] if len(paths) == 1 else Code("[" + ", ".join(p.text for p in paths) + "]", "files")
        w.emit(method(found, "set_input_files", files))


@handles(act.FillForm)
def _fill_form(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.FillForm)
    for selector, text in a.fields:
        w.emit(method(locator(selector, None, w.value), "fill", w.value(text, "text")))


@handles(act.Drag)
def _drag(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Drag)
    start, end = w.element(step, a.target), w.element(step, a.to, identity=False)
    if start is not None and end is not None:
        w.emit(method(start, "drag_to", end))
    elif a.target.coordinate is not None and a.to.coordinate is not None:
        mouse = Attr(PAGE, "mouse")
        p, q = a.target.coordinate, a.to.coordinate
        w.emit(method(mouse, "move", number(p.x), number(p.y)))
        w.emit(method(mouse, "down"))
        w.emit(method(mouse, "move", number(q.x), number(q.y), steps=Code("8")))
        w.emit(method(mouse, "up"))
    else:
        w.cannot(step, f"a drag from the {a.target} to the {a.to}")


@handles(act.Scroll, act.ScrollDown, act.ScrollUp)
def _scroll(w: _Writer, step: _Step, a: ActionModel) -> None:
    direction = (
        a.direction if isinstance(a, act.Scroll) else "down" if isinstance(a, act.ScrollDown) else "up"
    )
    target = a.target if isinstance(a, act.Scroll) else None
    vp = w.viewport
    mouse = Attr(PAGE, "mouse")
    if target is not None:
        found = w.element(step, target)
        if found is None:
            w.cannot(step, f"the {target} was not recorded with its element's identity")
            return
        w.note("xmltools scrolls the element's own container; the wheel over the element comes close")
        w.emit(method(found, "hover"))
    else:
        at = w.mouse or Point(x=vp.width // 2, y=vp.height // 2)
        w.emit(method(mouse, "move", number(at.x), number(at.y)))
    dx = {"left": -vp.width, "right": vp.width}.get(direction, 0)
    dy = {"up": -vp.height, "down": vp.height}.get(direction, 0)
    w.emit(method(mouse, "wheel", number(dx), number(dy)))


@handles(act.Resize)
def _resize(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Resize)
    w.emit(method(PAGE, "set_viewport_size", _size(a.size)))


@handles(act.Close)
def _close(w: _Writer, step: _Step, a: ActionModel) -> None:
    w.note("the recording closed the browser here; pytest-playwright closes the page after the test")
    w.tabs, w.tab = [], None


@handles(act.OpenTab)
def _open_tab(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.OpenTab)
    if not (w.blank and len(w.tabs) == 1):
        w.emit(Code("page.context.new_page()"), "page")
        w.opened_tab()
    w.blank = False
    _goto(w, a.url)


@handles(act.SwitchTab)
def _switch_tab(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.SwitchTab)
    if a.tab not in w.tabs:
        w.cannot(step, f"the tab {a.tab} was not opened by a step this test repeats")
        return
    w.switch(a.tab)


@handles(act.CloseTab)
def _close_tab(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.CloseTab)
    tab = a.tab or w.tab
    if tab not in w.tabs or tab is None:
        w.cannot(step, f"the tab {tab} was not opened by a step this test repeats")
        return
    if len(w.tabs) == 1:
        w.note("that was the last tab: the recording's session ended here")
        w.tabs, w.tab = [], None
        return
    index = w.tabs.index(tab)
    if tab == w.tab:
        w.emit(method(PAGE, "close"))
        w.tabs.remove(tab)
        w.tab = w.tabs[-1]
        w.emit(Code("page.context.pages[-1]"), "page")
    else:
        w.emit(method(Code(f"page.context.pages[{index}]"), "close"))
        w.tabs.remove(tab)


@handles(act.Wait)
def _wait(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Wait)
    if a.seconds is not None:
        w.emit(method(PAGE, "wait_for_timeout", number(a.seconds * 1000)))
    elif a.url is not None:
        w.emit(method(PAGE, "wait_for_url", w.value(a.url, "url")))
    elif a.text is not None and a.target is None:
        w.emit(method(Attr(method(PAGE, "get_by_text", w.value(a.text, "text")), "first"), "wait_for"))
    else:
        found = w.element(step, a.target, identity=False)
        if found is None:
            w.cannot(step, f"a wait for the {a.target}, which was not recorded with its element's identity")
        elif a.state == "hidden":
            w.emit(method(Attr(found, "first"), "wait_for", state=Code('"hidden"')))
        else:
            w.emit(method(Attr(found, "first"), "wait_for"))


@handles(act.VerifyText, act.VerifyUrl, act.VerifyElement, act.VerifyValue)
def _verify(w: _Writer, step: _Step, a: ActionModel) -> None:
    """The model's own checks (the testing capability), as ``browser/perform/checks.py`` makes them."""
    if isinstance(a, act.VerifyText | act.VerifyUrl):
        text = a.text if isinstance(a, act.VerifyText) else a.url
        w.assertion(Expectation(kind="text" if isinstance(a, act.VerifyText) else "url", value=text))
        return
    assert isinstance(a, act.VerifyElement | act.VerifyValue)
    found = w.element(step, a.target, identity=False)
    if found is None:
        w.cannot(step, f"a check of the {a.target}, which was not recorded with its element's identity")
    elif isinstance(a, act.VerifyValue):
        w.emit(method(w.expect(found), "to_have_value", w.value(a.value, "value")))
    else:
        w.emit(method(w.expect(Attr(found, "first")), "to_be_visible"))


@handles(act.Evaluate)
def _evaluate(w: _Writer, step: _Step, a: ActionModel) -> None:
    assert isinstance(a, act.Evaluate)
    script = a.script
    if re.search(r"\breturn\b", script):  # a function body, as xmltools runs one that is no expression
        script = "async () => {\n" + script + "\n}"
    w.emit(method(PAGE, "evaluate", w.value(script, "script")))


# -- the module ---------------------------------------------------------------------------------

_HEAD = '''"""A pytest-playwright test, exported by xmltools from a recorded transcript.

Run it with pytest-playwright: pytest --base-url URL this_file.py, URL being the
address of the site under test.  XMLTOOLS_EXECUTABLE names a Chromium to run.
"""
'''

_FIXTURES = '''

@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any],
) -> dict[str, Any]:
    """Playwright's Chromium, or the one XMLTOOLS_EXECUTABLE names."""
    for name in {names}:
        if os.environ.get(name):
            return {{**browser_type_launch_args, "executable_path": os.environ[name]}}
    return browser_type_launch_args


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """The viewport the transcript was recorded at."""
    return {{**browser_context_args, "viewport": {viewport}}}
'''


_TIMEOUTS = {"action_timeout": "set_default_timeout", "navigation_timeout": "set_default_navigation_timeout"}


def _test_name(transcript: Transcript) -> str:
    stem = transcript.path.stem if transcript.path is not None else "recording"
    words = re.sub(r"[^0-9a-z]+", "_", stem.lower()).strip("_") or "recording"
    return words if words.startswith("test_") else f"test_{words}"


def export_pytest(transcript: Transcript, *, name: str | None = None) -> str:
    """The transcript as the text of a pytest-playwright test module (see the module's docstring).

    ``name`` is the test function's name (by default ``test_`` and the file's name).  A transcript
    with nothing recorded of what its calls did (a hand-written scenario) is a
    :class:`~xmltools.errors.UsageError`: record it first (``xmltools replay FILE --record OUT``);
    so is one of a profile or tool this version does not have (a ConfigError).
    """
    where = str(transcript.path) if transcript.path is not None else "the transcript"
    if not transcript.has_observations:
        raise UsageError(
            f"{where}: nothing was recorded of what its calls did (a hand-written scenario):"
            " record it first, with xmltools replay FILE --record OUT.jsonl"
        )
    config = transcript.header.config
    size = config.get("viewport")
    viewport = Viewport.model_validate(size) if isinstance(size, dict) else Viewport(width=900, height=600)
    writer = _Writer(transcript, viewport=viewport)
    body = writer.write()
    code = [line for line in body if not line.lstrip().startswith("#")]

    def used(word: str) -> bool:  # what the writer asked for, and what still stands in the code
        return any(re.search(rf"\b{word}\b", line) for line in code)

    base = "base_url" in writer.needs and used("base_url")
    start = ['    assert base_url, "give --base-url: the address of the site under test"'] if base else []
    for secret in writer.secrets:
        if used(f"secret_{secret}"):
            start += statement(Code(f"os.environ[{literal(ENV_PREFIX + secret)}]"), 4, f"secret_{secret}")
    for setting, call in _TIMEOUTS.items():
        seconds = config.get(setting)
        if isinstance(seconds, int | float) and seconds > 0:
            start.append(f"    page.context.{call}({number(seconds * 1000).text})")
    if not start and not code:
        start.append("    pass")
    imports = ["import os", *(["import re"] if "re" in writer.needs and used("re") else [])]
    imports += ["from typing import Any", "", "import pytest"]
    expects = "expect" in writer.needs and used("expect")
    imports.append(f"from {SYNC_API} import Page" + (", expect" if expects else ""))
    source = transcript.path.name if transcript.path is not None else "a transcript"
    about = [comment(f"exported from {source}, recorded with the {config.get('profile', 'roo')} profile")]
    if transcript.header.base_url:
        about.append(comment(f"{{base_url}} stood for {transcript.header.base_url} when it was recorded"))
    names = "(" + ", ".join(literal(v) for v in EXECUTABLE_VARIABLES) + ")"
    fixtures = _FIXTURES.format(names=names, viewport=_size(viewport).text)
    params = "page: Page, base_url: str" if base else "page: Page"
    test = [f"def {name or _test_name(transcript)}({params}) -> None:", *start, *body]
    return "\n".join([_HEAD, *imports, "", *about, fixtures, "", *test]) + "\n"
