"""Update mode: replay a transcript and write what the live app does now back into it.

``xmltools replay --update`` and the pytest plugin's ``rewrite`` record mode
end here.  The replay records itself beside the transcript, with the
transcript's own header; then, when no step failed and every assertion held:

- a step whose element was found again by its identity gets its new identity
  and its target rewritten in the assistant message (and the call), so that
  the next replay reaches the element without re-matching: a point becomes the
  element's new centre, a ref the element's ref in the newest snapshot before
  it, a selector the locator that found it;
- every observation is the one just seen (URL, title, console, screenshot,
  snapshot);
- the file and its screenshots folder are replaced together, by renames in
  the same folder.

A run with a failed step or a broken assertion writes nothing.  Sits above
:mod:`xmltools.replaying`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .parser import ToolUse, parse
from .replaying import ReplayResult, replay
from .results import Identity
from .snapshot import ref_lines
from .transcript import load_transcript, registry_for

__all__ = ["Update", "update"]

_POINT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")
_REF = re.compile(r"^\s*[a-z]*\d+(?:e\d+)?\s*$")


@dataclass
class Update:
    """What an update did: the replay, whether the file was written, and each change, as a line."""

    result: ReplayResult
    path: Path
    written: bool = False
    changes: list[str] = field(default_factory=list)
    why_not: str | None = None  # why nothing was written

    def summary(self) -> str:
        if self.why_not is not None:
            return f"{self.path} not updated: {self.why_not}"
        if not self.changes:
            return f"{self.path} is up to date: nothing differs from the live app (left as it was)"
        head = f"{self.path} updated: {len(self.changes)} change{'s' if len(self.changes) != 1 else ''}"
        return "\n".join([head, *(f"  {c}" for c in self.changes)])


async def update(path: str | Path, **options: Any) -> Update:
    """Replay the transcript at ``path`` (``options`` as for :func:`~xmltools.replaying.replay`) and,
    when every step ran and every assertion held, write the live run back into it."""
    path = Path(path)
    if "record" in options or options.get("offline"):
        raise UsageError("an update replays live and records itself: record= and offline= do not apply")
    t = load_transcript(path)
    work = Path(tempfile.mkdtemp(prefix=".xmltools-update-", dir=path.parent))
    try:
        fresh = work / path.name
        result = await replay(t, record=fresh, keep_header=True, **options)
        done = Update(result, path)
        if result.failures and not result.allow_failures:
            done.why_not = f"{len(result.failures)} failed steps (a failed step is never written as good)"
            return done
        if result.broken:
            done.why_not = f"{len(result.broken)} assertions did not hold"
            return done
        done.changes = _retarget(fresh, result)
        done.changes += [
            f"step {s.index}: {', '.join(sorted({d.field for d in s.drifts}))} recorded anew"
            for s in result.steps
            if s.drifts
        ]
        done.changes += [
            f"step {s.index}: healed: the model's call takes the recorded one's place"
            for s in result.steps
            if s.healed
        ]
        done.changes.sort(key=lambda c: int(c.split(":", 1)[0].removeprefix("step ")))
        if done.changes:
            _replace(path, fresh)
            done.written = True
        return done
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _retarget(fresh: Path, result: ReplayResult) -> list[str]:
    """Rewrite, in the new recording, the target of each step that re-matched; one line per change."""
    lines = fresh.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    t = load_transcript(fresh)
    registry = registry_for(t)
    rematched = {s.index: s for s in result.steps if s.rematched}
    changes: list[str] = []
    step = 0
    snapshot: str | None = None  # the newest snapshot the model would have seen
    assistant: dict[str, Any] | None = None
    calls: list[ToolUse] = []
    for rec in records[1:]:
        role = rec.get("role", "tool_result" if "call" in rec else "assistant")
        if role == "assistant":
            step += 1
            assistant = rec
            calls = [b for b in parse(rec["content"], tools=registry) if isinstance(b, ToolUse)]
            continue
        if role != "tool_result":
            continue
        obs = rec.get("observation") or {}
        rematch = obs.pop("rematch", None)
        if rematch is not None and step in rematched and assistant is not None:
            identity = Identity.model_validate(obs["identity"]) if obs.get("identity") else None
            index = rec["call"]["index"]
            if identity is not None and index < len(calls):
                said = _rewrite(assistant, rec, calls[index], identity, rematch["found_by"], snapshot)
                changes.append(f"step {step}: {said}")
        if obs.get("snapshot"):
            snapshot = obs["snapshot"]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    fresh.write_text(text, encoding="utf-8")
    return changes


def _rewrite(
    assistant: dict[str, Any],
    result: dict[str, Any],
    call: ToolUse,
    identity: Identity,
    found_by: str,
    snapshot: str | None,
) -> str:
    """Give the call a target that reaches ``identity`` now; say what changed."""
    content: str = assistant["content"]
    viewport = (result.get("observation") or {}).get("viewport") or {}
    size = (int(viewport.get("width", 0)), int(viewport.get("height", 0)))
    for name, value in call.params.items():
        new = _new_target(value, name, identity, found_by, snapshot, size)
        if new is None or name not in call.param_spans:
            continue
        start, end = call.param_spans[name]
        if content[start:end] != value:  # the value is written escaped: not rewritten by hand
            break
        assistant["content"] = content[:start] + new + content[end:]
        result["call"]["params"][name] = new
        return f"{identity.described}: {name} {value.strip()} -> {new} (found by {found_by})"
    kept = "its target could not be rewritten: it re-matches each time"
    return f"{identity.described}: found by {found_by}; {kept}"


def _new_target(
    value: str,
    name: str,
    identity: Identity,
    found_by: str,
    snapshot: str | None,
    viewport: tuple[int, int] = (0, 0),
) -> str | None:
    if _POINT.match(value):
        if identity.box is None:
            return None
        x, y, w, h = identity.box
        cx, cy = round(x + w / 2), round(y + h / 2)
        # a point reaches only what is in view: an element found below the fold keeps re-matching
        inside = 0 <= cx < viewport[0] and 0 <= cy < viewport[1]
        return f"{cx},{cy}" if inside else None
    if "selector" in name:
        return found_by
    if _REF.match(value) and snapshot is not None:
        refs = [ref for ref, line in ref_lines(snapshot).items() if line == identity.described]
        return refs[0] if len(refs) == 1 else None
    return None


def _replace(path: Path, fresh: Path) -> None:
    """Put the new recording and its screenshots in place of the old, by renames in one folder."""
    shots = path.parent / (path.stem + ".shots")
    new_shots = fresh.parent / (fresh.stem + ".shots")
    old = fresh.parent / "old.shots"
    if shots.exists():
        os.replace(shots, old)
    if new_shots.exists():
        os.replace(new_shots, shots)
    os.replace(fresh, path)
