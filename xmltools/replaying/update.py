"""Update mode: replay a transcript and write what the live app does now back into it.

``xmltools replay --update`` and the pytest plugin's ``rewrite`` record mode
end here.  The replay records itself beside the transcript, with the
transcript's own header; then, when no step failed and every assertion held:

- a step whose element was found again by its identity gets its new identity
  and its target rewritten in the assistant message (and the call), so that
  the next replay reaches the element without re-matching: a point becomes the
  element's new centre (when in view), a ref the element's ref in the newest
  snapshot before it (when exactly one ref is that role and name), a selector
  the locator that found it; where no target of the same kind reaches it, the
  locator that found it takes the target's place when the action takes a
  selector, and otherwise the step is named with why it will still re-match
  (:attr:`Update.kept`);
- every observation is the one just seen (URL, title, console, screenshot,
  snapshot);
- the file and its screenshots folder are replaced together, by renames in
  the same folder.

A run with a failed step or a broken assertion writes nothing.  Sits above
:mod:`xmltools.replaying.run`.
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

from ..actions import TARGET_KINDS
from ..base.results import Identity
from ..browser.snapshot import ref_lines
from ..errors import UsageError
from ..parser import ToolUse, parse
from ..profiles import ActionForm
from ..record.transcript import Transcript, load_transcript, registry_for
from ..tools import ToolRegistry
from .run import ReplayResult, replay

__all__ = ["Update", "update"]


@dataclass
class Update:
    """What an update did: the replay, whether the file was written, and each change, as a line."""

    result: ReplayResult
    path: Path
    written: bool = False
    changes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # each re-matched step whose target stays, and why
    why_not: str | None = None  # why nothing was written

    def summary(self) -> str:
        if self.why_not is not None:
            return f"{self.path} not updated: {self.why_not}"
        if not self.changes:
            lines = [f"{self.path} is up to date: nothing differs from the live app (left as it was)"]
        else:
            n = len(self.changes)
            lines = [f"{self.path} updated: {n} change{'s' if n != 1 else ''}"]
            lines += [f"  {c}" for c in self.changes]
        if self.kept:
            n = len(self.kept)
            lines.append(f"{n} step{'s' if n != 1 else ''} will still re-match on each replay:")
            lines += [f"  {k}" for k in self.kept]
        return "\n".join(lines)


async def update(path: str | Path, transcript: Transcript | None = None, **options: Any) -> Update:
    """Replay the transcript at ``path`` (``options`` as for :func:`~xmltools.replaying.run.replay`) and,
    when every step ran and every assertion held, write the live run back into it.  ``transcript``:
    the file as already read (else it is read here)."""
    path = Path(path)
    if "record" in options or options.get("offline"):
        raise UsageError("an update replays live and records itself: record= and offline= do not apply")
    t = transcript if transcript is not None else load_transcript(path)
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
        done.changes, done.kept = _retarget(fresh, result)
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


def _retarget(fresh: Path, result: ReplayResult) -> tuple[list[str], list[str]]:
    """Rewrite, in the new recording, the target of each step that re-matched: one line per change,
    and one per step whose target could not be rewritten (it re-matches each time), with why."""
    lines = fresh.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    registry = registry_for(load_transcript(fresh))
    rematched = {s.index for s in result.steps if s.rematched}
    changes: list[str] = []
    kept: list[str] = []
    step = 0
    snapshot: str | None = None  # the newest snapshot the model would have seen
    assistant: dict[str, Any] | None = None
    for rec in records[1:]:
        role = rec.get("role", "tool_result" if "call" in rec else "assistant")
        if role == "assistant":
            step += 1
            assistant = rec
            continue
        if role != "tool_result":
            continue
        obs = rec.get("observation") or {}
        rematch = obs.pop("rematch", None)
        if rematch is not None and step in rematched and assistant is not None and obs.get("identity"):
            identity = Identity.model_validate(obs["identity"])
            found = _Found(identity, rematch["found_by"], snapshot, _viewport(obs))
            said, why = _rewrite(assistant, rec, rec["call"]["index"], found, registry)
            if why is None:
                changes.append(f"step {step}: {said}")
            else:
                kept.append(f"step {step}: {said}: {why}")
        if obs.get("snapshot"):
            snapshot = obs["snapshot"]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    fresh.write_text(text, encoding="utf-8")
    return changes, kept


@dataclass(frozen=True)
class _Found:
    """A re-matched element: who it is, the locator that found it, the newest snapshot before its
    step, and the viewport's size."""

    identity: Identity
    found_by: str
    snapshot: str | None
    viewport: tuple[int, int]


def _viewport(obs: dict[str, Any]) -> tuple[int, int]:
    size = obs.get("viewport") or {}
    return int(size.get("width", 0)), int(size.get("height", 0))


def _rewrite(
    assistant: dict[str, Any], result: dict[str, Any], index: int, found: _Found, registry: ToolRegistry
) -> tuple[str, str | None]:
    """Give the call a target that reaches the element directly: what changed and None, or what
    re-matched and why its target is kept.

    A target of the same kind comes first (a point in view, a unique ref, the locator for a
    selector); when there is none and the action takes a selector, the locator that found the
    element takes the target's place."""
    described, found_by = found.identity.described, found.found_by
    what = f"{described} (found by {found_by})"
    calls = [b for b in parse(assistant["content"], tools=registry) if isinstance(b, ToolUse)]
    if index >= len(calls):
        return what, "its call is not in the message"
    call = calls[index]
    action = registry.written_action(call)
    form = registry.profile.actions.get(action or "")
    if form is None:
        return what, "its call is not a browser action"
    targets = [(k, form.renames.get(k, k)) for k in call.params if form.renames.get(k, k) in TARGET_KINDS]
    if not targets:
        return what, "its call names no target"
    name, kind = targets[0]
    value = call.params[name]
    new, why = _same_kind(kind, found)
    param = name
    if new is None:
        selector = _selector_param(form)
        if selector is None:
            return what, f"{why}, and {action} takes no selector in the {registry.profile.name} profile"
        param, new = selector, found_by
    content = _written(assistant["content"], index, name, param, new, registry)
    if content is None:
        return what, f"the {param} {new} cannot be written in the message as it is"
    assistant["content"] = content
    params = result["call"]["params"]
    result["call"]["params"] = {
        (param if k == name else k): (new if k == name else v) for k, v in params.items()
    }
    now = new if param == name else f"{param} {new}"
    how = "the locator that found it" if new == found_by else f"found by {found_by}"
    return f"{described}: {name} {value.strip()} -> {now} ({how})", None


def _same_kind(kind: str, found: _Found) -> tuple[str | None, str]:
    """A target of the same kind (point, ref, selector) that reaches the element now, or None and
    why there is none."""
    identity = found.identity
    if kind == "selector":
        return found.found_by, ""
    if kind == "coordinate":
        if identity.box is None:
            return None, "its box was not recorded"
        x, y, w, h = identity.box
        cx, cy = round(x + w / 2), round(y + h / 2)
        width, height = found.viewport
        # a point reaches only what is in view: an element found below the fold cannot be clicked there
        if 0 <= cx < width and 0 <= cy < height:
            return f"{cx},{cy}", ""
        where = "below the fold of" if cy >= height and 0 <= cx < width else "outside"
        return (
            None,
            f"its centre {cx},{cy} is {where} the {width}x{height} viewport: no point reaches it",
        )
    if found.snapshot is None:
        return None, "no snapshot before the step gives it a ref"
    d = identity.described
    refs = [r for r, line in ref_lines(found.snapshot).items() if line == d or line.startswith(d + ": ")]
    if len(refs) == 1:
        return refs[0], ""
    if not refs:
        return None, f"no ref of the snapshot before the step is {d}"
    return None, f"{len(refs)} refs of the snapshot before the step are {d}, so a ref cannot say which"


def _selector_param(form: ActionForm) -> str | None:
    """The parameter by which the action takes a selector, as the dialect writes it (None: it takes none)."""
    mine = {canonical: written for written, canonical in form.renames.items()}.get("selector", "selector")
    return mine if mine in form.params else None


def _written(content: str, index: int, name: str, param: str, new: str, registry: ToolRegistry) -> str | None:
    """The message with the call's ``name`` parameter replaced by ``param`` holding ``new``; None when
    that cannot be done so that the message reads back as meant."""
    calls = [b for b in parse(content, tools=registry) if isinstance(b, ToolUse)]
    start, end = calls[index].param_spans[name]
    if content[start:end] != calls[index].params[name]:
        return None  # the value is not written as it reads: not rewritten by hand
    head, tail = content[:start], content[end:]
    if param != name:
        opening = re.search(rf"<{re.escape(name)}(?:\s[^<>]*)?>$", head)
        if opening is None or not tail.startswith(f"</{name}>"):
            return None
        head = head[: opening.start()] + f"<{param}>"
        tail = f"</{param}>" + tail[len(f"</{name}>") :]
    out = head + new + tail
    again = [b for b in parse(out, tools=registry) if isinstance(b, ToolUse)]
    ok = len(again) == len(calls) and again[index].params.get(param) == new and again[index].complete
    return out if ok and (param == name or name not in again[index].params) else None


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
