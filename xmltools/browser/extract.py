"""Page content as text for the model: cleaned HTML (lxml) and normalised visible text, capped.

``clean_html`` parses with ``lxml.html`` (a page's HTML, never the model's
text), drops ``<script>``, ``<style>``, ``<svg>``, ``<noscript>``, comments
and ``on*`` attributes, and cuts the tree below ``depth`` levels, marking each
cut.  No Playwright here: the controller passes the HTML in.
"""

from __future__ import annotations

import lxml.etree as etree
import lxml.html

from ..base.quoting import cut

__all__ = ["cap", "clean_html", "normalise_text"]

_DROP = ("script", "style", "svg", "noscript", "template")


def clean_html(html: str, depth: int = 4) -> str:
    """The cleaned outer HTML of the first element in ``html``, children below ``depth`` elided."""
    if not html.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent=False)
    except (etree.ParserError, ValueError):
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    for el in list(root.iter()):
        if el is root:
            continue
        if not isinstance(el.tag, str) or el.tag.lower() in _DROP:  # comments and processing instructions
            el.drop_tree()
    if isinstance(root.tag, str) and root.tag.lower() in _DROP:
        return ""
    for el in root.iter():
        if isinstance(el.tag, str):
            for name in [a for a in el.attrib if a.lower().startswith("on")]:
                del el.attrib[name]
    _elide(root, depth)
    return str(lxml.html.tostring(root, encoding="unicode")).strip()


# phrasing elements: below the depth limit their text stays in place, only their tags go
_INLINE = frozenset(
    {
        *("a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "dfn", "em", "i", "kbd"),
        *("mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr"),
    }
)


def _elide(el: lxml.html.HtmlElement, depth: int) -> None:
    children = [c for c in el if isinstance(c.tag, str)]
    if depth <= 1 and children:
        hidden = 0
        for c in children:
            inline = c.tag.lower() in _INLINE
            hidden += not inline
            _replace_with_text(el, c, c.text_content() if inline else "…")
        tags = len(children) - hidden
        said = []
        if hidden:
            said.append(f"{hidden} child element{'s' if hidden != 1 else ''} not shown")
        if tags:
            said.append(f"the tags of {tags} inline element{'s' if tags != 1 else ''} left out")
        el.text = (el.text or "") + f" ({'; '.join(said)})"
        return
    for c in children:
        _elide(c, depth - 1)


def _replace_with_text(parent: lxml.html.HtmlElement, child: lxml.html.HtmlElement, text: str) -> None:
    """Put ``text`` (and the child's tail) where ``child`` was, then remove it.

    lxml's ``remove`` takes the tail text with the element; here it stays.
    """
    prev = child.getprevious()
    before = (prev.tail if prev is not None else parent.text) or ""
    if text == "…" and before.rstrip().endswith("…"):
        text = ""  # one mark for a run of elided blocks
    joined = before + text + (child.tail or "")
    if prev is not None:
        prev.tail = joined
    else:
        parent.text = joined
    parent.remove(child)


def normalise_text(text: str) -> str:
    """Visible text with no trailing spaces and runs of blank lines reduced to one.

    Leading spaces stay: the text comes from ``innerText``, which already folds
    spaces where the page's CSS folds them, so what is left is indentation a
    reader needs (code blocks).
    """
    lines = [line.replace("\u00a0", " ").replace("\t", "    ").rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def cap(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, with the cut and its size stated (on a line of its own)."""
    return cut(text, limit, keep=limit, newline=True)
