"""Every public name of ``xmltools`` has a docstring of its own, which the API pages show.

A name's docstring is read from the source, as the documentation site reads
it (griffe, under mkdocstrings): a class that only inherits one, a dataclass
whose ``__doc__`` is the signature Python made up for it, or a constant with
no string after its assignment has none.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import griffe
import pytest

import xmltools

ROOT = Path(xmltools.__file__).parents[1]


@pytest.fixture(scope="module")
def package() -> Any:
    return griffe.load("xmltools", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False)


def source_docstring(package: Any, name: str) -> str:
    obj = package[name]
    target = obj.final_target if getattr(obj, "is_alias", False) else obj
    return (target.docstring.value if target.docstring else "").strip()


@pytest.mark.parametrize("name", xmltools.__all__)
def test_public_name_has_a_docstring(package: Any, name: str) -> None:
    doc = source_docstring(package, name)
    assert len(doc.split()) >= 3, f"xmltools.{name} has no docstring of its own in the source"
    value = getattr(xmltools, name)
    if inspect.isclass(value):
        own = value.__dict__.get("__doc__") or ""
        made_up = dataclasses.is_dataclass(value) and own.startswith(f"{value.__name__}(")
        assert own.strip() and not made_up, f"xmltools.{name}'s __doc__ is inherited or made up"


def test_a_missing_docstring_is_seen(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "__init__.py").write_text('VERSION = "1"\n\n\nclass Plain:\n    x = 1\n')
    bare = griffe.load("bare", search_paths=[str(tmp_path)])
    assert source_docstring(bare, "VERSION") == "" and source_docstring(bare, "Plain") == ""
