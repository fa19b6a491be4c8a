"""The part of JSON Schema a result's shape needs: ``type``, ``enum``, ``required``, ``properties``
and ``items``, checked by hand.

Written here because no JSON Schema library is a dependency of the package,
and a final answer's shape (a price, a list of names) needs no more.  A
schema that uses other keywords is not refused: those keywords are not
checked.  Pure: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["schema_problem"]


_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "null": type(None),
}


def schema_problem(value: Any, schema: dict[str, Any], where: str) -> str | None:
    """None when ``value`` (parsed JSON) has the shape ``schema`` asks for; else the first thing
    wrong, naming its place (``where``, such as ``the result.items[2]``)."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        ok = isinstance(value, _TYPES[kind]) and not (
            kind in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            return f"{where} is not of type {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is not one of {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where} lacks {key!r}"
        for key, sub in (schema.get("properties") or {}).items():
            if key in value and isinstance(sub, dict):
                problem = schema_problem(value[key], sub, f"{where}.{key}")
                if problem:
                    return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{where}[{i}]")
            if problem:
                return problem
    return None
