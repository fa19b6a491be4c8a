"""An independent, deliberately naive model of the anchors' whole-message parser.

It walks the message one character at a time and asks, at every index, which
tag (if any) *ends* there: the behaviour described in the anchors' notes.  It
is quadratic-free but slow, and shares no code with ``xmltools.parser``; the
property tests check that ``compat="roo"`` agrees with it on arbitrary text.

The ``content`` rule is the anchors': when a call named ``write_to_file``
closes, its ``content`` is re-read from the first ``<content>`` to the last
``</content>`` of the call's body; other tools (``insert_content`` and the
like) keep the value that ended at its first ``</content>``.  The two anchors
trim differently: Roo trims every value but ``content``, which loses one
newline at each end (:func:`roo_reference`); Cline trims every value
(:func:`cline_reference`).
"""

from __future__ import annotations

from typing import Any

JS_WS = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _ends_with(msg: str, end: int, tag: str) -> bool:
    start = end - len(tag)
    return start >= 0 and msg.startswith(tag, start)


def _clean(name: str, value: str, trim_all: bool = False) -> str:
    if name == "content" and not trim_all:
        if value.startswith("\n"):
            value = value[1:]
        if value.endswith("\n"):
            value = value[:-1]
        return value
    return value.strip(JS_WS)


def roo_reference(msg: str, tools: dict[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Roo-Code's blocks for ``msg``."""
    return _reference(msg, tools, trim_all=False)


def cline_reference(msg: str, tools: dict[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Cline's blocks for ``msg``: Roo's, with every value trimmed (``content`` too)."""
    return _reference(msg, tools, trim_all=True)


def _reference(msg: str, tools: dict[str, tuple[str, ...]], *, trim_all: bool) -> list[dict[str, Any]]:
    every_param = sorted({p for ps in tools.values() for p in ps})
    out: list[dict[str, Any]] = []
    text_from = 0
    tool: dict[str, Any] | None = None
    body_from = 0
    param: str | None = None
    value_from = 0
    for end in range(1, len(msg) + 1):
        if tool is not None and param is not None:
            if not _ends_with(msg, end, f"</{param}>"):
                continue
            tool["params"][param] = _clean(param, msg[value_from : end - len(param) - 3], trim_all)
            param = None  # and on: a parameter named as its tool closes the call with the same tag
        if tool is not None:
            opened = next((p for p in every_param if _ends_with(msg, end, f"<{p}>")), None)
            if opened is not None:
                param = opened
                value_from = end
                continue
            closing = f"</{tool['name']}>"
            if _ends_with(msg, end, closing):
                body = msg[body_from : end - len(closing)]
                if tool["name"] == "write_to_file":
                    a = body.find("<content>")
                    b = body.rfind("</content>")
                    if a != -1 and b != -1 and b > a:
                        tool["params"]["content"] = _clean("content", body[a + 9 : b], trim_all)
                tool["partial"] = False
                out.append(tool)
                tool = None
                text_from = end
            continue
        for name in tools:
            if _ends_with(msg, end, f"<{name}>"):
                before = msg[text_from : end - len(name) - 2].strip(JS_WS)
                if before:
                    out.append({"type": "text", "content": before, "partial": False})
                tool = {"type": "tool_use", "name": name, "params": {}, "partial": True}
                body_from = end
                break
    if tool is not None:
        if param is not None:
            tool["params"][param] = _clean(param, msg[value_from:], trim_all)
        out.append(tool)
    else:
        rest = msg[text_from:].strip(JS_WS)
        if rest:
            out.append({"type": "text", "content": rest, "partial": True})
    return out
