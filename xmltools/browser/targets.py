"""From the model's target (a point, a ref, a selector in a frame) to a point or one locator, or its mistake.

Refs come from Playwright's AI snapshot and resolve with its ``aria-ref=``
selector; selectors are Playwright's syntax, with ``label=``, ``placeholder=``,
``alt=``, ``title=`` and ``testid=`` mapped onto ``get_by_label`` and the
others (see :mod:`.lookup`).  Every way the target can be wrong is the model's
mistake and raises :class:`TargetError` with a message that says the way out:

- a ref that is not in the latest snapshot fails at once;
- a selector that matches nothing, within the action's bound;
- a selector that matches several elements names how many and the first three;
- an element that is hidden, disabled or covered says so, and which element
  covers it;
- a point where only the page's background is (kind ``no_target``).

:class:`Targets` is one session's side of it: the refs of the latest snapshot
of the current document (forgotten when the document changes), and every
action's way from a target to the element it acts on; on replay, the recorded
element checked and found again through :mod:`.identity`.  Must not import the
observer, the handlers or the session.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FrameLocator, Locator, Page

from ..base.results import Identity, Point, Rematch
from . import scripts
from .bounds import Bounds
from .collect import clip as clip_line
from .failures import TargetError
from .identity import RematchMode, check, identify, identity_of
from .lookup import describe, selector_locator

if TYPE_CHECKING:
    from .tabs import Tabs
    from .watch import Watch

# TargetError (from .failures), describe and selector_locator (from .lookup) are named here too, as before
__all__ = [
    "TargetError",
    "Targets",
    "describe",
    "disabled",
    "explain_action_error",
    "hidden",
    "locate",
    "selector_locator",
    "shown",
    "shown_any",
]


def shown(target: Any) -> str:
    """The target as the model wrote it, for messages."""
    if getattr(target, "ref", None):
        return f"ref {target.ref}"
    point = getattr(target, "coordinate", None)
    if point is not None and getattr(target, "selector", None) is None:
        return f"point {point.x},{point.y}"
    text = f"selector {clip_line(str(target.selector), 120)!r}"
    if getattr(target, "frame", None):
        text += f" in the frame {clip_line(str(target.frame), 80)!r}"
    return text


# how many elements a locator matches, and the state of the first: one round trip that does not wait
_COUNT_AND_STATE = f"(els) => [els.length, els.length ? ({scripts.STATE.strip()})(els[0]) : null]"


async def find(
    page: Page, target: Any, *, refs: set[str], timeout: float, ref_line: str | None = None
) -> tuple[Locator, dict[str, Any]]:
    """The one element the target names, attached to the page, and its state; or TargetError.

    The state says whether the element is ``visible`` and ``enabled``.  An element
    already on the page costs one round trip; a selector that matches nothing yet
    is waited for, within ``timeout``.  A ref's snapshot line (``ref_line``) that
    does not say ``[disabled]`` is taken as enabled: an element disabled since
    then is caught by Playwright's own check when it acts.
    """
    if getattr(target, "ref", None):
        ref = str(target.ref)
        if ref not in refs:
            raise TargetError(
                f"{ref} is not in the latest snapshot"
                + (" (there is no snapshot of this page yet)" if not refs else "")
                + ". Take a new snapshot and use a ref from it."
            )
        loc = page.locator(f"aria-ref={ref}")
        # refs live in the snapshot's own script world, which the page's world cannot read:
        # Playwright's checks answer there.  A visible element is there; only a ref that is not
        # visible costs a second question (gone, or hidden?)
        visible = await loc.is_visible()
        if not visible and await loc.count() == 0:  # refs resolve at once or never: no waiting
            raise TargetError(f"the element of {ref} is no longer on the page. Take a new snapshot.")
        if ref_line is not None and "[disabled]" not in ref_line:
            return loc, {"visible": visible, "enabled": True}
        return loc, {"visible": visible, "enabled": await loc.is_enabled(timeout=timeout * 1000)}
    scope: Page | FrameLocator = page
    if getattr(target, "frame", None):
        scope = page.frame_locator(str(target.frame))
    loc = selector_locator(scope, str(target.selector))
    try:
        count, state = await loc.evaluate_all(_COUNT_AND_STATE)
        if count == 0:
            await loc.first.wait_for(state="attached", timeout=timeout * 1000)
            count, state = await loc.evaluate_all(_COUNT_AND_STATE)
    except PlaywrightError as e:
        msg = str(e)
        if "Timeout" in msg:
            raise TargetError(
                f"nothing on the page matches the {shown(target)} (waited {timeout:g} s)."
                " Check it against a new snapshot, or use another selector."
            ) from e
        if any(w in msg for w in ("selector", "Unexpected token", "parsing", "is not a valid")):
            raise TargetError(f"the {shown(target)} is not a valid selector: {_first(msg)}") from e
        raise
    if count == 0:
        raise TargetError(f"the element the {shown(target)} matched left the page at once. Try again.")
    if count > 1:
        firsts = [await describe(loc.nth(i), timeout) for i in range(min(3, count))]
        listed = "; ".join(f"{i + 1}. {d}" for i, d in enumerate(firsts))
        raise TargetError(
            f"the {shown(target)} matches {count} elements ({listed}{'; …' if count > 3 else ''})."
            " Write a more specific selector, or use a ref from a snapshot."
        )
    return loc, state


async def locate(page: Page, target: Any, *, refs: set[str], timeout: float) -> Locator:
    """The one element the target names, attached to the page, or TargetError."""
    loc, _ = await find(page, target, refs=refs, timeout=timeout)
    return loc


# Playwright's words for an element that cannot be acted on -> what the model reads ({t}: the target)
_ACTION_ERRORS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("not visible", "element is hidden"),
        "the element of the {t} is hidden. Make it visible first, or pick another.",
    ),
    (
        ("not enabled", "disabled"),
        "the element of the {t} is disabled. Something on the page must enable it first.",
    ),
    (
        ("not editable", "readonly"),
        "the element of the {t} cannot be edited (it is read-only or not a field).",
    ),
    (("not a <select>", "not a select"), "the element of the {t} is not a select list."),
    (("did not find some options", "options to be"), "the select list of the {t} has no such option."),
    (("not an htmlinputelement", "non-input"), "the element of the {t} is not a file input."),
)


def hidden(target_shown: str) -> str:
    return _ACTION_ERRORS[0][1].format(t=target_shown)


def disabled(target_shown: str) -> str:
    return _ACTION_ERRORS[1][1].format(t=target_shown)


def explain_action_error(err: PlaywrightError, target: Any) -> str | None:
    """The model-facing reason an action on a located element failed, when it is the target's fault."""
    msg = str(err)
    low = msg.lower()
    if "intercepts pointer events" in low:
        m = re.search(r"(<[^\n]*?>)[^\n]*?intercepts pointer events", msg)
        cover = clip_line(m.group(1), 120) if m else "another element"
        return (
            f"the element of the {shown(target)} is covered by {cover}, which would get the click."
            " Close or move what covers it first."
        )
    for fragments, message in _ACTION_ERRORS:
        if any(f in low for f in fragments):
            return message.format(t=shown(target))
    return None


def _first(msg: str) -> str:
    line = msg.strip().splitlines()[0] if msg.strip() else msg
    return clip_line(line.split(": ", 1)[-1], 200)


def shown_any(target: Any) -> str:
    """The target as the model wrote it, a point included."""
    point = getattr(target, "coordinate", None)
    if point is not None:
        return f"point {point.x},{point.y}"
    return shown(target)


class Targets:
    """One session's targets: the refs of the latest snapshot, and the way from a target to its element."""

    def __init__(self, tabs: Tabs, watch: Watch, bounds: Bounds) -> None:
        self.tabs = tabs
        self.watch = watch
        self.bounds = bounds
        self._refs: set[str] = set()
        self._lines: dict[str, str] = {}  # ref -> its element's role and name in that snapshot
        self._seen_at = -1  # the document (its commit count) the refs belong to
        self.record_identity = False  # record who each element acted on is (a transcript is being written)
        self.rematch_mode: RematchMode = "on"
        self.expected: Identity | None = None  # the recorded element the next element action must act on
        self.identity: Identity | None = None  # who the latest action's element was
        self.rematched: Rematch | None = None  # the latest action's element, found again by its identity
        self._elements = 0  # elements the current action acted on

    def begin(self) -> None:
        """An action starts: what the last one found out is forgotten."""
        self.identity = self.rematched = None
        self._elements = 0

    @property
    def refs(self) -> set[str]:
        """The refs of the latest snapshot of the current document (none once it changed)."""
        if self._seen_at != self.watch.commits:
            self._refs, self._lines, self._seen_at = set(), {}, self.watch.commits
        return self._refs

    def learn(self, refs: set[str], lines: dict[str, str], *, whole: bool) -> None:
        """The refs of a new snapshot: of the whole page (``whole``, replacing), or of a part (added)."""
        if whole:
            self._refs, self._lines, self._seen_at = refs, lines, self.watch.commits
            return
        self.refs.update(refs)
        self._lines.update(lines)

    def forget(self) -> None:
        self._refs, self._lines = set(), {}

    async def describe_point(self, p: Point) -> str:
        """Who is at ``p``: role and accessible name (``link "Docs"``), and the element marked.

        TargetError (``no_target``) on the page's background.
        """
        named, _ = await self._hit(p, identifying=False)
        return named

    async def _hit(self, p: Point, *, identifying: bool) -> tuple[str, dict[str, Any] | None]:
        """:meth:`describe_point`, and with ``identifying`` the page's answer to ``scripts.IDENTIFY``
        about the same element, in the same round trip."""
        page = self.tabs.require_page()
        hit = await self.bounds.bounded(
            page.evaluate(scripts.HIT, [p.x, p.y, scripts.MARK, identifying]), self.bounds.timeouts.action
        )
        info = None
        if isinstance(hit, list):
            hit, info = hit
        if hit is None or hit == "":
            raise TargetError(
                f"nothing is at {p.x},{p.y}: only the page background is there."
                " Look at the screenshot and aim at an element.",
                kind="no_target",
            )
        return clip_line(str(hit), 200), info

    async def locate(self, target: Any) -> Locator:
        """The one element a ref or selector names (TargetError otherwise); a point is marked first."""
        page = self.tabs.require_page()
        point = getattr(target, "coordinate", None)
        if point is not None:
            await self.describe_point(point)  # marks the element under the point
            return page.locator(f"[{scripts.MARK}]").first
        return await locate(page, target, refs=self.refs, timeout=self.bounds.timeouts.action)

    async def name(self, target: Any, loc: Locator) -> str:
        """The element's role and name: as the latest snapshot showed its ref, or asked of the page."""
        return self._lines.get(getattr(target, "ref", None) or "") or await describe(
            loc, self.bounds.timeouts.probe
        )

    async def on_element(
        self,
        target: Any,
        act: Callable[[Locator], Awaitable[Any]],
        *,
        enabled: bool = True,
        visible: bool = True,
    ) -> str:
        """Locate, check, name and act on an element; the target's faults become TargetError.

        On replay (:attr:`expected` set) the element is first checked to be the recorded one, and
        found again by its identity when it is not: never acted on before that."""
        t = self.bounds.timeouts
        bound = t.action + 1
        expected, self.expected = self.expected, None
        page = self.tabs.require_page()
        loc: Locator | None = None
        state: dict[str, Any] = {}
        try:
            if getattr(target, "coordinate", None) is not None:
                loc = await self.locate(target)
                state = await self.bounds.bounded(loc.evaluate(scripts.STATE, timeout=t.action * 1000), bound)
            else:
                line = self._lines.get(getattr(target, "ref", None) or "")
                found = find(page, target, refs=self.refs, timeout=t.action, ref_line=line)
                loc, state = await self.bounds.bounded(found, bound)
        except TargetError:
            if expected is None or self.rematch_mode == "off":
                raise
        if expected is not None:
            reached = await describe(loc, t.probe) if loc is not None else ""
            again = await self._found_again(page, expected, reached)
            if again is not None:
                loc = again
                state = await self.bounds.bounded(loc.evaluate(scripts.STATE, timeout=t.action * 1000), bound)
        assert loc is not None  # a target that reached nothing raised above
        if visible and not state.get("visible"):
            raise TargetError(hidden(shown_any(target)))
        if enabled and not state.get("enabled"):
            raise TargetError(disabled(shown_any(target)))
        named = self.rematched.expected if self.rematched is not None else await self.name(target, loc)
        self._elements += 1
        if self._elements > 1:  # an action on several elements (a form filled, a drag) has no one identity
            self.identity = None
        elif self.record_identity:
            frame = getattr(target, "frame", None)
            scope = page.frame_locator(str(frame)) if frame else page
            self.identity = await self.bounds.bounded(identify(scope, loc, frame, t.probe), bound)
        try:
            await self.bounds.input(act(loc), t.action + 1)
        except PlaywrightError as e:
            why = explain_action_error(e, target)
            if why is not None:
                raise TargetError(why) from e
            raise
        return named

    async def _found_again(self, page: Page, expected: Identity, reached: str) -> Locator | None:
        """On replay: None when ``reached`` (role and name, '' for nothing) is the recorded element;
        else that element, found again by its identity (TargetError when it cannot be)."""
        t = self.bounds.timeouts
        scope = page.frame_locator(expected.frame) if expected.frame else page
        checked = check(scope, expected, reached, self.rematch_mode, t.probe)
        again = await self.bounds.bounded(checked, t.action + 1)
        if again is None:
            return None
        loc, self.rematched = again
        return loc

    async def at_point(self, p: Point) -> tuple[str, Locator | None]:
        """Who is at ``p``, before a click there; on replay, the recorded element found again when
        the point now reaches another (its locator, to act on instead of the point)."""
        t = self.bounds.timeouts
        expected, self.expected = self.expected, None
        page = self.tabs.require_page()
        info: dict[str, Any] | None = None
        try:
            named, info = await self._hit(p, identifying=self.record_identity)
        except TargetError:
            if expected is None or self.rematch_mode == "off":
                raise
            named = ""
        loc = await self._found_again(page, expected, named) if expected is not None else None
        if loc is not None and self.rematched is not None:
            named = self.rematched.expected
        if self.record_identity:
            if loc is None and info is not None:  # the element under the point, read with the hit test
                asked = identity_of(page, info, None)
            else:  # an element found again instead, read now
                asked = identify(page, loc or page.locator(f"[{scripts.MARK}]").first, None, t.probe)
            self.identity = await self.bounds.bounded(asked, t.action + 1)
        return named, loc

    async def centre(self, target: Any) -> Point:
        """The point a target stands for: its own, or the middle of its element."""
        point = getattr(target, "coordinate", None)
        if point is not None:
            return point  # type: ignore[no-any-return]
        t = self.bounds.timeouts
        loc = await self.locate(target)
        box = await self.bounds.bounded(loc.bounding_box(timeout=t.action * 1000), t.action + 1)
        if box is None:
            raise TargetError(f"the element of the {shown_any(target)} is not on the screen.")
        return Point(x=int(box["x"] + box["width"] / 2), y=int(box["y"] + box["height"] / 2))
