"""Page content as text for the model: cleaned HTML (lxml) and normalised visible text, capped.

``clean_html`` parses with ``lxml.html`` (a page's HTML, never the model's
text), drops ``<script>``, ``<style>``, ``<svg>``, ``<noscript>``, comments
and ``on*`` attributes, and cuts the tree below ``depth`` levels, marking each
cut.  No Playwright here: the controller passes the HTML in.
"""

from __future__ import annotations

import re

import lxml.etree as etree
import lxml.html

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


def _elide(el: lxml.html.HtmlElement, depth: int) -> None:
    children = [c for c in el if isinstance(c.tag, str)]
    if depth <= 1 and children:
        for c in children:
            el.remove(c)
        tail_text = el.text or ""
        el.text = tail_text + f"… ({len(children)} child elements not shown)"
        return
    for c in children:
        _elide(c, depth - 1)


def normalise_text(text: str) -> str:
    """Visible text with spaces folded in each line and runs of blank lines reduced to one."""
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def cap(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, with the cut and its size stated."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters were left out of {len(text):,})"
