"""Shaping Playwright's AI snapshot for a model: small, viewport first, nothing left out silently.

Playwright's ``aria_snapshot(mode="ai")`` is the source: lines such as
``- button "Submit" [ref=e6] [box=10,20,80,30]`` in a YAML-like tree.  On a
large page it runs to hundreds of thousands of characters, so this module
decides what the model is shown, within ``max_chars``:

1. with ``find``, only the elements whose line holds that text (any case), with
   their ancestors and a little of what is inside them;
2. long runs of alike siblings (the same role, outside the viewport) fold into
   one line: ``- … 240 more listitem like the above``;
3. when that is still too long, what is in the viewport comes first, then the
   interactive elements nearest to it, then the rest by distance; whatever is
   left out is counted, above and below, with the way to reach it.

Playwright gives no shaping of its own, so this is written here; it is pure
text processing (no Playwright, no Jinja2), tested on its own.  The boxes
(``[box=x,y,w,h]``, viewport coordinates) are used for the ordering and
removed from the output unless ``keep_boxes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Shaped", "ref_lines", "refs_in", "shape"]

_BOX = re.compile(r" \[box=(-?[\d.]+),(-?[\d.]+),(-?[\d.]+),(-?[\d.]+)\]")
_REF = re.compile(r"\[ref=([^\]\s]+)\]")
_INTERACTIVE = frozenset(
    {
        "link",
        "button",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "option",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "treeitem",
    }
)
RUN_KEEP = 5  # alike siblings shown before the rest of the run folds into one line


@dataclass
class _Node:
    line: str  # without the box
    depth: int
    box: tuple[float, float, float, float] | None
    index: int
    parent: _Node | None = None
    children: list[_Node] = field(default_factory=list)
    raw: str = ""

    @property
    def role(self) -> str:
        word = self.line.strip().removeprefix("- ").split(" ", 1)[0]
        return word.split(":", 1)[0].split("[", 1)[0]

    def cost(self) -> int:
        return 2 * self.depth + len(self.line) + 1


@dataclass(frozen=True)
class Shaped:
    """The text to show and what was left out of it."""

    text: str
    total_elements: int
    shown_elements: int
    above: int  # left out, above the viewport
    below: int  # left out, below it (or after it, when there are no boxes)
    folded: int  # alike siblings folded into "more like the above" lines
    matched: int | None  # with find: how many elements matched


def refs_in(text: str) -> set[str]:
    """The refs (``e12``, ``f1e3``) a snapshot text offers."""
    return set(_REF.findall(text))


def ref_lines(text: str) -> dict[str, str]:
    """Each ref's element as the snapshot names it: ``{"e6": 'button "Submit"'}``."""
    out = {}
    for raw in text.splitlines():
        m = _REF.search(raw)
        if m:
            line = re.sub(r" \[[a-z]+=[^\]]*\]", "", raw.strip().removeprefix("- ")).rstrip(":").strip()
            out[m.group(1)] = line.split(": ", 1)[0] if line.count('"') < 2 else line
    return out


def _parse(text: str) -> list[_Node]:
    nodes: list[_Node] = []
    stack: list[_Node] = []
    for i, raw in enumerate(text.splitlines()):
        if not raw.strip():
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        m = _BOX.search(raw)
        box = tuple(float(g) for g in m.groups()) if m else None
        node = _Node(_BOX.sub("", raw).strip(), depth, box, i, raw=raw.strip())  # type: ignore[arg-type]
        while stack and stack[-1].depth >= depth:
            stack.pop()
        if stack:
            node.parent = stack[-1]
            stack[-1].children.append(node)
        stack.append(node)
        nodes.append(node)
    return nodes


def _ancestors(n: _Node) -> list[_Node]:
    out = []
    p = n.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


def _subtree(n: _Node) -> list[_Node]:
    out = [n]
    for c in n.children:
        out.extend(_subtree(c))
    return out


def _signature(n: _Node) -> str:
    return n.role + "(" + ",".join(c.role for c in n.children[:4]) + ")"


def _where(n: _Node, height: float) -> int:
    """-1 above the viewport, 0 in it, 1 below it; 0 when unknown."""
    if n.box is None:
        return 0
    _, y, _, h = n.box
    if y + h <= 0:
        return -1
    if y >= height:
        return 1
    return 0


def _distance(n: _Node, height: float) -> float:
    if n.box is None:
        return 0.0
    _, y, _, h = n.box
    if y + h <= 0:
        return -(y + h)
    if y >= height:
        return y - height
    return 0.0


def shape(
    text: str,
    *,
    max_chars: int = 20_000,
    viewport_height: float | None = None,
    find: str | None = None,
    keep_boxes: bool = False,
) -> Shaped:
    """What to show of a snapshot ``text``; see the module docstring for the rules."""
    nodes = _parse(text)
    if not nodes:
        return Shaped(text.strip(), 0, 0, 0, 0, 0, 0 if find else None)
    height = viewport_height if viewport_height is not None else float("inf")
    keep: set[int] = {n.index for n in nodes}
    matched: int | None = None

    if find:
        needle = find.casefold()
        hits = [n for n in nodes if needle in n.line.casefold()]
        matched = len(hits)
        keep = set()
        for n in hits:
            keep.add(n.index)
            keep.update(a.index for a in _ancestors(n))
            keep.update(d.index for d in _subtree(n)[:12])

    # fold long runs of alike siblings that lie outside the viewport
    folded_into: dict[int, int] = {}  # index of the last shown sibling -> how many were folded after it
    folded = 0
    if not find:
        for parent_children in _sibling_groups(nodes):
            run: list[_Node] = []
            for child in [*parent_children, None]:
                if child is not None and run and _signature(child) == _signature(run[0]):
                    run.append(child)
                    continue
                if len(run) > RUN_KEEP:
                    hidden = [r for r in run[RUN_KEEP:] if _where(r, height) != 0]
                    if len(hidden) > 1:
                        for r in hidden:
                            keep.difference_update(d.index for d in _subtree(r))
                        last_shown = max(r.index for r in run if r not in hidden)
                        folded_into[last_shown] = len(hidden)
                        folded += len(hidden)
                run = [child] if child is not None else []

    shown = [n for n in nodes if n.index in keep]
    out_lines = _render(shown, folded_into, keep_boxes)
    if sum(len(x) + 1 for x in out_lines) > max_chars:
        shown = _budget(shown, max_chars - 400, height)
        out_lines = _render(
            shown, {k: v for k, v in folded_into.items() if k in {n.index for n in shown}}, keep_boxes
        )
    kept = {n.index for n in shown}
    left = [n for n in nodes if n.index not in kept and (find is None or n.index in keep)]
    above = sum(1 for n in left if _where(n, height) < 0)
    below = len(left) - above
    tail = []
    if find is not None and matched == 0:
        tail.append(f"- (nothing on the page holds the text {find!r})")
    if above or below:
        parts = []
        if above:
            parts.append(f"{above:,} more elements above")
        if below:
            parts.append(f"{below:,} more elements below")
        tail.append(
            f"- ({' and '.join(parts)} were left out: scroll, take a snapshot of a part with a target,"
            " or look for a text with <find>)"
        )
    return Shaped(
        "\n".join([*out_lines, *tail]),
        total_elements=len(nodes),
        shown_elements=len(shown),
        above=above,
        below=below,
        folded=folded,
        matched=matched,
    )


def _sibling_groups(nodes: list[_Node]) -> list[list[_Node]]:
    roots = [n for n in nodes if n.parent is None]
    return [roots, *[n.children for n in nodes if len(n.children) > RUN_KEEP]]


def _render(shown: list[_Node], folded_into: dict[int, int], keep_boxes: bool) -> list[str]:
    lines = []
    for n in shown:
        lines.append("  " * n.depth + (n.raw if keep_boxes else n.line))
        more = folded_into.get(n.index)
        if more:
            lines.append("  " * n.depth + f"- … {more:,} more {n.role} like the above")
    return lines


def _budget(shown: list[_Node], budget: int, height: float) -> list[_Node]:
    """The nodes to keep within ``budget`` characters: the viewport first, then near interactive ones."""

    def priority(n: _Node) -> tuple[int, float, int]:
        where = _where(n, height)
        return (0 if where == 0 else (1 if n.role in _INTERACTIVE else 2), _distance(n, height), n.index)

    chosen: set[int] = set()
    used = 0
    for n in sorted(shown, key=priority):
        if n.index in chosen:
            continue
        need = [a for a in _ancestors(n) if a.index not in chosen]
        cost = n.cost() + sum(a.cost() for a in need)
        if used + cost > budget:
            if priority(n)[0] == 0:
                continue  # a long element in view: others may still fit
            break
        chosen.add(n.index)
        chosen.update(a.index for a in need)
        used += cost
    return [n for n in shown if n.index in chosen]
