"""The transcript format's reference page names every field a record can hold: a field added to a
record without a word in the reference fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from xmltools.record import format as fmt

REFERENCE = Path(__file__).parents[3] / "docs" / "reference" / "transcripts.md"
MODELS = [getattr(fmt, name) for name in fmt.__all__ if isinstance(getattr(fmt, name), type)]


@pytest.mark.parametrize("model", [m for m in MODELS if issubclass(m, BaseModel)], ids=lambda m: m.__name__)
def test_the_reference_names_every_field_of_every_record(model: type[BaseModel]) -> None:
    page = REFERENCE.read_text()
    missing = [name for name in model.model_fields if f"`{name}`" not in page and f'"{name}"' not in page]
    assert not missing, f"docs/reference/transcripts.md does not name {model.__name__}'s {missing}"
