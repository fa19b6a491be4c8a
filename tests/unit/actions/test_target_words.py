"""How a target is named in the model's messages: as the model wrote it."""

from __future__ import annotations

from xmltools.actions import Target
from xmltools.base.results import Point
from xmltools.browser.targets import shown


def test_each_kind_of_target_is_named_as_written() -> None:
    assert shown(Target(ref="e12")) == "ref e12"
    assert shown(Target(selector="#send")) == "selector '#send'"
    assert shown(Target(selector="#send", frame="#pay")) == "selector '#send' in the frame '#pay'"
    assert shown(Target.model_construct(coordinate=Point(x=10, y=20))) == "point 10,20"
