"""Prompt experiments: variants, re-rendering and scoring model outputs, offline.

* A **variant** is a folder of template overrides plus ``variant.toml`` (a name
  and a ``[config]`` table): a shorter system prompt, another viewport, another
  result wording.
* **Re-rendering** replays a recorded transcript offline under a variant and
  diffs, turn by turn, what the model would have seen.
* **Scoring** runs a corpus of assistant messages through the parser and the
  protocol (no browser) and counts what went right and wrong, by kind.

Live trials against a model (variants × models × tasks) are :mod:`xmltools.lab`'s.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import math
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..base.results import Viewport
from ..base.spelling import did_you_mean
from ..browser.base import StubBrowser
from ..config.settings import Config
from ..errors import ConfigError
from ..interpreter import AsyncInterpreter
from ..loop import loop_registry
from ..parser import TextBlock, ToolUse, parse
from ..record.transcript import (
    OFFLINE_BASE_URL,
    MessageRecord,
    Transcript,
    load_transcript,
    registry_for,
)
from ..record.turn import Turn
from ..render.prompts import Renderer
from ..replaying.run import replay
from ..tools import COMPLETION_TOOL, STANDARD_TOOLS, ToolRegistry
from .problems import Problem, from_pydantic

__all__ = [
    "DEFAULT_VARIANT",
    "Run",
    "Scores",
    "TurnDiff",
    "Variant",
    "estimate_tokens",
    "load_corpus",
    "rerender",
    "score_corpus",
]


DEFAULT_VARIANT = "default"  # the name every command takes for the bundled prompts


def estimate_tokens(text: str) -> int:
    """A rough token count: about four characters a token."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Variant:
    """A named prompt variant: template overrides and configuration."""

    name: str
    templates: Path | None = None
    config: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: str | Path) -> Variant:
        """The variant of a folder: its templates, and its ``variant.toml``'s name and ``[config]``."""
        d = Path(folder)
        if not d.is_dir():
            raise ConfigError(
                f"variant {str(d)!r}: no such folder (a variant is a folder of template overrides and"
                f" variant.toml; {DEFAULT_VARIANT!r} is the bundled prompts)"
            )
        meta: dict[str, Any] = {}
        toml = d / "variant.toml"
        if toml.exists():
            try:
                meta = tomllib.loads(toml.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ConfigError(f"{toml}: cannot be read ({e})") from e
            except tomllib.TOMLDecodeError as e:
                raise ConfigError(f"{toml}: not valid TOML ({e})") from e
        config = meta.get("config", {})
        if not isinstance(config, dict):
            raise ConfigError(f"{toml}: [config] must be a table")
        return cls(str(meta.get("name", d.name)), d, dict(config))

    @classmethod
    def default(cls) -> Variant:
        """The bundled prompts and the default settings."""
        return cls(DEFAULT_VARIANT)

    @classmethod
    def named(cls, name_or_folder: str | Path) -> Variant:
        """What every command means by a variant: ``default`` (the bundled prompts), else a folder
        (write ``./default`` for a folder of that name)."""
        if isinstance(name_or_folder, str) and name_or_folder == DEFAULT_VARIANT:
            return cls.default()
        return cls.load(name_or_folder)

    @classmethod
    def of(cls, name: str, templates: Path | None, config: dict[str, Any]) -> Variant:
        """A variant as an experiment file gives it: its ``templates`` folder's ``variant.toml``
        settings (when it has one), with the file's ``config`` over them."""
        if templates is None or not (templates / "variant.toml").is_file():
            return cls(name, templates, dict(config))
        return cls(name, templates, {**cls.load(templates).config, **config})

    def config_values(self, base: Config | None = None) -> dict[str, Any]:
        """The settings of ``base`` (else the defaults) with the variant's over them."""
        values = (base or Config()).model_dump()
        values.update(self.config)
        if self.templates is not None:
            values["templates"] = self.templates
        return values

    def make_config(self, base: Config | None = None) -> Config:
        return Config.build(**self.config_values(base))

    def renderer(self, config: Config | None = None) -> Renderer:
        cfg = config or self.make_config()
        return Renderer(cfg.templates, policy=cfg.policy)

    def system_prompt(self, registry: ToolRegistry | None = None) -> str:
        cfg = self.make_config()
        return self.renderer(cfg).system_prompt(
            registry or ToolRegistry(profile=cfg.profile, capabilities=cfg.capabilities),
            cfg.viewport,
            file_urls=bool(cfg.allowed_file_roots) or "file" in cfg.allowed_schemes,
            observe=cfg.observe,
            upload_folders=cfg.action_context().upload_roots,
        )


def variant_problems(variant: Variant) -> list[Problem]:
    """What keeps ``variant`` from being used, found before any trial: a templates folder that is
    not there or whose ``variant.toml`` cannot be read, a setting that is not one or has a bad value,
    a template that matches no bundled one or does not render.  Each names its field (``templates``,
    ``config.observe``)."""
    d = variant.templates
    if d is not None and not d.is_dir():
        return [Problem("templates", f"{d} is not a folder")]
    if d is not None and (d / "variant.toml").is_file():
        try:
            Variant.load(d)
        except ConfigError as e:
            return [Problem("templates", str(e))]
    fields = Config.model_fields
    unknown = [Problem(f"config.{k}", "not a setting" + did_you_mean(k, fields)) for k in variant.config]
    unknown = [p for p in unknown if p.where.removeprefix("config.") not in fields]
    if unknown:
        return unknown
    try:
        cfg = Config(**variant.config_values())
    except ValidationError as e:
        return from_pydantic(e, {(): Config}, "config")
    try:
        variant.system_prompt(loop_registry(cfg, COMPLETION_TOOL))
    except ConfigError as e:
        return [Problem("templates" if d is not None else "config", str(e))]
    return []


# -- re-rendering ---------------------------------------------------------------------------


@dataclass
class TurnDiff:
    index: int  # 0 is the system prompt
    before: str
    after: str
    images_before: int = 0
    images_after: int = 0

    @property
    def chars(self) -> tuple[int, int]:
        return len(self.before), len(self.after)

    @property
    def tokens(self) -> tuple[int, int]:
        return estimate_tokens(self.before), estimate_tokens(self.after)

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.images_before != self.images_after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                "before",
                "after",
                n=1,
            )
        )


def _recorded_system(t: Transcript) -> str | None:
    return next((r.content for r in t.records if isinstance(r, MessageRecord) and r.role == "system"), None)


async def rerender(
    transcript: str | Path | Transcript, variant: Variant, *, before: Variant | None = None
) -> list[TurnDiff]:
    """What the model would have seen under ``variant``, turn by turn, against the recording or ``before``."""
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    registry = registry_for(t)
    old_system = _recorded_system(t)
    if before is not None or old_system is None:
        old_system = (before or Variant.default()).system_prompt(registry)
    diffs = [TurnDiff(0, old_system, variant.system_prompt(registry))]
    old_steps: list[tuple[str, int]] = []
    for _, results in t.steps():
        old_steps.append(
            (
                "\n\n".join(r.text for r in results),
                sum(1 for r in results if r.observation and r.observation.screenshot),
            )
        )
    if before is not None:
        old = await replay(t, offline=True, config=before.make_config())
        old_steps = [(_turn_text(s.turn), _turn_images(s.turn)) for s in old.steps]
    new = await replay(t, offline=True, config=variant.make_config())
    for k, step in enumerate(new.steps):
        text_before, images_before = old_steps[k] if k < len(old_steps) else ("", 0)
        diffs.append(
            TurnDiff(
                k + 1,
                text_before,
                _placeholder(_turn_text(step.turn), text_before),
                images_before,
                _turn_images(step.turn),
            )
        )
    return diffs


def _turn_text(turn: Turn) -> str:
    return "\n\n".join(p.text for p in turn.parts)


def _placeholder(after: str, before: str) -> str:
    """Write the offline replay's address back as ``{base_url}`` when the recording used the placeholder."""
    return after.replace(OFFLINE_BASE_URL, "{base_url}") if "{base_url}" in before else after


def _turn_images(turn: Turn) -> int:
    return sum(1 for p in turn.parts if p.image is not None)


def format_rerender(diffs: Sequence[TurnDiff], *, show_diff: bool = True) -> str:
    """A table of characters, estimated tokens and images per turn, then the text diffs."""
    head = ["turn", "chars", "", "tokens", "", "images", "changed"]
    rows = [head, ["", "before", "after", "before", "after", "before>after", ""]]
    for d in diffs:
        rows.append(
            [
                "system" if d.index == 0 else str(d.index),
                str(d.chars[0]),
                str(d.chars[1]),
                str(d.tokens[0]),
                str(d.tokens[1]),
                f"{d.images_before}>{d.images_after}",
                "yes" if d.changed else "no",
            ]
        )
    rows.append(
        [
            "total",
            str(sum(d.chars[0] for d in diffs)),
            str(sum(d.chars[1] for d in diffs)),
            str(sum(d.tokens[0] for d in diffs)),
            str(sum(d.tokens[1] for d in diffs)),
            f"{sum(d.images_before for d in diffs)}>{sum(d.images_after for d in diffs)}",
            "",
        ]
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if show_diff:
        for d in diffs:
            if d.before != d.after:
                lines.append(f"\n--- turn {'system' if d.index == 0 else d.index} ---")
                lines.append(d.diff().rstrip())
    return "\n".join(lines)


# -- scoring ---------------------------------------------------------------------------------


@dataclass
class Scores:
    name: str
    runs: int = 0
    messages: int = 0
    with_complete_call: int = 0
    calls: int = 0
    truncated: int = 0
    fenced: int = 0
    prose_mentions: int = 0
    multi_call_messages: int = 0
    invalid: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    mistakes: int = 0

    @property
    def complete_rate(self) -> float:
        return self.with_complete_call / self.messages if self.messages else 0.0

    @property
    def mistakes_per_run(self) -> float:
        return self.mistakes / self.runs if self.runs else 0.0

    @property
    def calls_per_message(self) -> float:
        return self.calls / self.messages if self.messages else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "runs": self.runs,
            "messages": self.messages,
            "complete_call_rate": round(self.complete_rate, 4),
            "truncated_calls": self.truncated,
            "fenced_calls": self.fenced,
            "prose_mentions": self.prose_mentions,
            "messages_with_several_calls": self.multi_call_messages,
            "invalid_parameters": dict(sorted(self.invalid.items())),
            "protocol_violations": dict(sorted(self.violations.items())),
            "mistakes_per_run": round(self.mistakes_per_run, 4),
            "calls_per_message": round(self.calls_per_message, 4),
        }


class Run(list[str]):
    """One run's assistant messages; ``profile`` is the dialect it was written in (None: the variant's)."""

    profile: str | None = None


def load_corpus(paths: Iterable[str | Path]) -> list[list[str]]:
    """Runs of assistant messages, from transcripts or JSONL files of raw outputs.

    A raw-output line is ``{"content": "..."}`` (or any record with ``role``
    ``assistant``); an optional ``"run"`` key groups lines into runs, and lines
    without it form one run per file.  A transcript's run keeps the profile
    (dialect) its header names, and is scored in it.
    """
    runs: list[list[str]] = []
    for p in paths:
        path = Path(p)
        # "\n" ends a line; splitlines() would also cut at U+2028 or U+0085 inside a JSON string
        lines = [ln for ln in path.read_text(encoding="utf-8").split("\n") if ln.strip()]
        if not lines:
            continue
        first = json.loads(lines[0])
        if isinstance(first, dict) and "xmltools_transcript" in first:
            t = load_transcript(path)
            # a transcript's {base_url} placeholder stands for the site it was recorded on
            run = Run(a.content.replace("{base_url}", OFFLINE_BASE_URL) for a in t.assistant_messages)
            profile = t.header.config.get("profile")
            run.profile = profile if isinstance(profile, str) else None
            runs.append(run)
            continue
        grouped: dict[str, list[str]] = {}
        for n, line in enumerate(lines, 1):
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{path}:{n}: not JSON") from e
            if not isinstance(rec, dict) or not isinstance(rec.get("content"), str):
                raise ConfigError(f"{path}:{n}: a raw output is {{'content': '...'}}")
            if rec.get("role", "assistant") != "assistant":
                continue
            grouped.setdefault(str(rec.get("run", path.name)), []).append(rec["content"])
        runs.extend(grouped.values())
    return runs


def _stand_ins(viewport: Viewport) -> Callable[[str], StubBrowser]:
    """A factory of stand-in browsers for named sessions."""
    return lambda _name: StubBrowser(viewport)


async def score_corpus(runs: Sequence[Sequence[str]], variant: Variant | None = None) -> Scores:
    """Count what the model's messages do under a variant's configuration (or the defaults).

    A run from a transcript is read in its own dialect unless the variant sets
    a profile; a call the approval policy would hold is taken as approved.
    """
    v = variant or Variant.default()
    scores = Scores(v.name)
    for run in runs:
        dialect = getattr(run, "profile", None)
        cfg = v.make_config()
        if dialect and "profile" not in v.config:  # a run is scored in the dialect it was written in
            cfg = cfg.model_copy(update={"profile": dialect})
        registry = ToolRegistry(
            list(STANDARD_TOOLS.values()), profile=cfg.profile, capabilities=cfg.capabilities
        )
        openers = [f"<{t.name}>" for t in registry.vocabulary]
        scores.runs += 1
        interp = AsyncInterpreter(  # every session, named ones too, is a stand-in: no page is needed
            cfg,
            registry=registry,
            browser=StubBrowser(cfg.viewport),
            browser_factory=_stand_ins(cfg.viewport),
        )
        for text in run:
            turn = await interp.handle(text)
            if turn.approval_required is not None:  # scores count the model's calls: the host says yes
                turn = await interp.approve(turn.approval_required)
            scores.messages += 1
            calls = turn.calls
            scores.calls += len(calls)
            scores.with_complete_call += any(c.complete for c in calls)
            scores.multi_call_messages += len(calls) > 1
            plain = parse(text, tools=registry, compat=cfg.compat, fenced="text", limits=cfg.limits())
            scores.fenced += len(calls) - sum(1 for b in plain if isinstance(b, ToolUse))
            scores.prose_mentions += sum(
                b.content.count(o) for b in turn.blocks if isinstance(b, TextBlock) for o in openers
            )
            for o in turn.outcomes:
                if o.error is not None:
                    if o.error.code == "truncated_call":
                        scores.truncated += 1
                    else:
                        kind = o.error.code + (f"({o.error.param})" if o.error.param else "")
                        scores.invalid[kind] += 1
                if o.violation is not None:
                    scores.violations[o.violation] += 1
                if o.status == "not_run":
                    scores.violations["not_run"] += 1
            if any(o.status in ("invalid", "refused") for o in turn.outcomes):
                scores.mistakes += 1
        await interp.aclose()
    return scores


def format_scores(all_scores: Sequence[Scores]) -> str:
    rows: list[tuple[str, list[str]]] = [
        ("runs", [str(s.runs) for s in all_scores]),
        ("messages", [str(s.messages) for s in all_scores]),
        ("complete call rate", [f"{s.complete_rate:.1%}" for s in all_scores]),
        ("truncated calls", [str(s.truncated) for s in all_scores]),
        ("fenced calls", [str(s.fenced) for s in all_scores]),
        ("prose mentions of a tag", [str(s.prose_mentions) for s in all_scores]),
        ("messages with several calls", [str(s.multi_call_messages) for s in all_scores]),
    ]
    kinds = sorted({k for s in all_scores for k in s.invalid})
    rows += [(f"invalid: {k}", [str(s.invalid.get(k, 0)) for s in all_scores]) for k in kinds]
    vkinds = sorted({k for s in all_scores for k in s.violations})
    rows += [(f"violation: {k}", [str(s.violations.get(k, 0)) for s in all_scores]) for k in vkinds]
    rows += [
        ("mistakes per run", [f"{s.mistakes_per_run:.2f}" for s in all_scores]),
        ("calls per message", [f"{s.calls_per_message:.2f}" for s in all_scores]),
    ]
    w0 = max(len(r[0]) for r in rows)
    widths = [max(len(s.name), *(len(r[1][i]) for r in rows)) for i, s in enumerate(all_scores)]
    out = [" " * w0 + "  " + "  ".join(s.name.rjust(w) for s, w in zip(all_scores, widths, strict=True))]
    for label, vals in rows:
        out.append(label.ljust(w0) + "  " + "  ".join(v.rjust(w) for v, w in zip(vals, widths, strict=True)))
    return "\n".join(out)


def scores_for(paths: Sequence[str | Path], variants: Sequence[Variant]) -> list[Scores]:
    runs = load_corpus(paths)
    return [asyncio.run(score_corpus(runs, v)) for v in variants]
