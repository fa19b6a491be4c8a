"""The one configuration model, with documented defaults, from code, TOML or the environment.

Every field can be given in a TOML file (``Config.from_toml("xmltools.toml")``,
top level or under ``[xmltools]``) or as an environment variable named
``XMLTOOLS_`` + the field in capitals (``XMLTOOLS_VIEWPORT=1280x800``,
``XMLTOOLS_POLICY=allow``).  Pure: no browser and no templates are touched here.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .approval import CATEGORIES
from .errors import ConfigError
from .parser import Limits
from .protocol import Policy
from .results import Viewport
from .tools import ActionContext, parse_size
from .urlpolicy import UrlPolicy

__all__ = ["Config"]


class Config(BaseModel):
    """Everything an interpreter needs to know; every field has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # the browser
    viewport: Viewport = Field(default=Viewport(width=900, height=600), description="WxH, such as 1280x800")
    screenshot_format: Literal["webp", "png", "jpeg"] = Field(
        "webp", description="PNG for models that need it"
    )
    screenshot_quality: int = Field(75, ge=0, le=100, description="for webp and jpeg")
    device_scale_factor: float = Field(1.0, gt=0, le=4, description="2 for sharper screenshots (PNG)")
    headless: bool = True
    executable: str | None = Field(None, description="a Chromium or Chrome; found on its own when unset")
    remote: str | None = Field(
        None, description="a DevTools endpoint (http://127.0.0.1:9222, ws://...) or 'auto'"
    )
    downloads_dir: Path | None = Field(None, description="the session's folder for downloads")

    # timeouts, in seconds
    launch_timeout: float = Field(30.0, gt=0)
    navigation_timeout: float = Field(15.0, gt=0)
    action_timeout: float = Field(5.0, gt=0)
    settle_timeout: float = Field(3.0, gt=0, description="the longest extra wait for a page to settle")
    idle_timeout: float | None = Field(None, gt=0, description="close the browser after this long unused")

    # what the model sees and may do
    profile: Literal["roo", "full", "aleph", "fractal", "forge"] = Field(
        "roo",
        description="roo: the nine classic actions by coordinates; full: refs, selectors, forms, tabs;"
        " aleph, fractal, forge: those tools' own dialects",
    )
    observe: Literal["screenshot", "snapshot", "both"] = Field(
        "screenshot", description="what each result shows: a screenshot, the ARIA snapshot as text, or both"
    )
    max_snapshot_chars: int = Field(
        20_000, ge=1_000, description="the longest snapshot shown (viewport first)"
    )
    snapshot_boxes: bool = Field(False, description="add [box=x,y,w,h] to every element of the snapshot")
    workspace: Path | None = Field(
        None, description="the folder uploads come from and screenshots with a path are saved in"
    )
    profile_dir: Path | None = Field(
        None, description="a user data folder: the session's cookies and storage persist there"
    )
    max_extract_chars: int = Field(
        10_000, ge=100, description="the most get_text, get_html, get_attribute and evaluate return"
    )
    max_wait_seconds: float = Field(10.0, gt=0, le=600, description="the longest wait the model may ask for")

    # the protocol
    policy: Policy = Field(Policy.REJECT, description="other tools while the browser is open")
    mistake_limit: int = Field(3, ge=1, description="consecutive model mistakes before the host is told")
    on_mistake_limit: Literal["flag", "raise"] = Field(
        "flag", description="set Turn.mistake_limit_reached, or raise"
    )
    approval: dict[str, Literal["allow", "deny", "ask"]] = Field(
        default_factory=dict,
        description="per category (read, navigate, input, mutate, script, session): allow, deny or ask;"
        " unnamed categories allow, except script, which asks",
    )
    disabled_actions: tuple[str, ...] = Field(
        (), description="browser actions left out of the prompt and refused"
    )
    dynamic_tools: bool = Field(
        True, description="forge: offer the session tools only while a session is open (false: always)"
    )
    max_sessions_per_interpreter: int = Field(
        3, ge=1, description="named browser sessions one interpreter may have open at once (full profile)"
    )

    # what the model may ask for
    allowed_file_roots: tuple[Path, ...] = Field((), description="folders file:// URLs may point into")
    allowed_schemes: tuple[str, ...] = Field((), description="URL schemes allowed besides http and https")
    max_text_chars: int = Field(10_000, ge=1, description="the longest text the type action accepts")
    allowed_origins: tuple[str, ...] = Field(
        (), description="origin globs pages may open (https://*.example.com, http://localhost:*); empty: any"
    )
    blocked_origins: tuple[str, ...] = Field((), description="origin globs never opened; a block wins")
    allow_link_local: bool = Field(False, description="allow 169.254.0.0/16 and cloud metadata addresses")

    # the caps on what the model is shown
    max_console_entries: int = Field(50, ge=2, description="console entries per result (first and last half)")
    max_console_entry_chars: int = Field(1_000, ge=80, description="the length of one console entry")
    max_title_chars: int = Field(300, ge=40)
    max_notes: int = Field(20, ge=2, description="notes per result")
    max_console_chars: int = Field(8_000, ge=200, description="all console entries of one result together")
    max_note_chars: int = Field(300, ge=80)
    max_result_chars: int = Field(20_000, ge=1_000, description="the whole text of one result")

    # the conversation
    shape: Literal["openai", "anthropic", "plain"] = "openai"
    image_budget: int = Field(5, ge=0, description="screenshots kept in the history; older ones become text")
    templates: Path | None = Field(None, description="a folder of template overrides")
    compat: Literal["default", "roo"] = "default"
    fenced: Literal["call", "text"] = Field("call", description="how to read calls inside ``` fences")
    max_message_chars: int = Field(8_000_000, ge=1)
    max_param_chars: int = Field(1_000_000, ge=1)

    @field_validator("viewport", mode="before")
    @classmethod
    def _viewport(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v

    @field_validator("allowed_origins", "blocked_origins", mode="before")
    @classmethod
    def _origins(cls, v: object) -> object:
        if isinstance(v, str):
            v = tuple(x for x in v.replace(",", " ").split() if x)
        if isinstance(v, (list, tuple)):
            UrlPolicy(allowed_origins=tuple(str(x) for x in v))  # a bad pattern raises ValueError here
        return v

    @field_validator("approval", mode="before")
    @classmethod
    def _approval(cls, v: object) -> object:
        if isinstance(v, Mapping):
            unknown = sorted(str(k) for k in v if k not in CATEGORIES)
            if unknown:
                raise ValueError(f"unknown categories {unknown}; the categories are: {', '.join(CATEGORIES)}")
        return v

    @field_validator("disabled_actions", mode="before")
    @classmethod
    def _disabled(cls, v: object) -> object:
        if isinstance(v, str):
            return tuple(x for x in v.replace(",", " ").split() if x)
        return v

    @field_validator("allowed_file_roots", "allowed_schemes", mode="before")
    @classmethod
    def _listish(cls, v: object) -> object:
        if isinstance(v, str):
            return tuple(x.strip() for x in v.split(os.pathsep if "/" in v else ",") if x.strip())
        return v

    # -- derived views --------------------------------------------------------------

    def action_context(self, viewport: Viewport | None = None) -> ActionContext:
        return ActionContext(
            viewport=viewport or self.viewport,
            allowed_file_roots=self.allowed_file_roots,
            allowed_schemes=frozenset(s.lower() for s in self.allowed_schemes),
            max_text_chars=self.max_text_chars,
            allowed_origins=self.allowed_origins,
            blocked_origins=self.blocked_origins,
            allow_link_local=self.allow_link_local,
            profile=self.profile,
            workspace=self.workspace,
            max_wait_seconds=self.max_wait_seconds,
        )

    def url_policy(self) -> UrlPolicy:
        return self.action_context().url_policy

    def limits(self) -> Limits:
        return Limits(max_message_chars=self.max_message_chars, max_param_chars=self.max_param_chars)

    # -- loading ---------------------------------------------------------------------

    @classmethod
    def build(cls, **values: Any) -> Config:
        """Like the constructor, but invalid values raise ConfigError (a host error)."""
        try:
            return cls(**values)
        except ValidationError as e:
            raise ConfigError(_explain(e)) from e

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> Config:
        try:
            data = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read {path}: {e}") from e
        section = data.get("xmltools", data)
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [xmltools] must be a table")
        return cls.build(**{**section, **overrides})

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, prefix: str = "XMLTOOLS_", **overrides: Any
    ) -> Config:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            key = prefix + name.upper()
            if key in env:
                values[name] = _env_value(env[key])
        return cls.build(**{**values, **overrides})


def _env_value(raw: str) -> Any:
    s = raw.strip()
    if s.lower() in ("none", "null", ""):
        return None
    if s.lower() in ("true", "false"):
        return s.lower() == "true"
    if s.startswith(("[", "{")):
        try:
            return json.loads(s)
        except ValueError:
            return s
    return s


def _explain(e: ValidationError) -> str:
    parts = []
    for err in e.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ())) or "config"
        parts.append(f"{where}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}")
    return "invalid configuration: " + "; ".join(parts)
