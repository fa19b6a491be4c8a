"""The one configuration model, with documented defaults, and how it is loaded.

``Config(...)`` in code takes the values given and the defaults for the rest; it
reads nothing.  ``Config.load()`` layers every source with pydantic-settings,
highest first: the arguments, the environment (``XMLTOOLS_`` + the field in
capitals: ``XMLTOOLS_VIEWPORT=1280x800``, ``XMLTOOLS_POLICY=allow``; the old
``XMLTOOLS_CHROMIUM`` stands for ``XMLTOOLS_EXECUTABLE``), a TOML file
(``xmltools.toml``, top level or under ``[xmltools]``), ``[tool.xmltools]`` of
``pyproject.toml``, then the defaults.  A name that is no setting, in any of
them, is an error naming the closest one.  :func:`xmltools.config.explain.explain` says where each value
came from (``xmltools config``).  Pure: no browser and no templates are touched here; the
browser's view (:meth:`Config.browser_settings`) is plain data from ``browser/settings.py``.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    PyprojectTomlConfigSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from ..base.results import Viewport
from ..base.secrets import ENV_PREFIX as SECRET_PREFIX  # XMLTOOLS_SECRET_<NAME>: read by a replay
from ..base.spelling import closest
from ..base.urlpolicy import UrlPolicy
from ..errors import ConfigError
from ..mcp.settings import ServerSettings, read_servers
from ..parser import Limits
from ..protocol.approval import CATEGORIES, is_named_rule
from ..protocol.machine import Policy
from ..tools import ActionContext, parse_size

if TYPE_CHECKING:
    from xmltools.browser.settings import BrowserConfig

__all__ = ["Config"]

ENV_PREFIX = "XMLTOOLS_"


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
    headless: bool = Field(True, description="false shows the browser window")
    executable: str | None = Field(None, description="a Chromium or Chrome; found on its own when unset")
    remote: str | None = Field(
        None, description="a DevTools endpoint (http://127.0.0.1:9222, ws://...) or 'auto'"
    )
    downloads_dir: Path | None = Field(None, description="the session's folder for downloads")

    # timeouts, in seconds
    launch_timeout: float = Field(30.0, gt=0, description="the longest wait for the browser to start")
    navigation_timeout: float = Field(15.0, gt=0, description="the longest wait for a page to load")
    action_timeout: float = Field(5.0, gt=0, description="the longest wait for one action")
    settle_timeout: float = Field(3.0, gt=0, description="the longest extra wait for a page to settle")
    idle_timeout: float | None = Field(None, gt=0, description="close the browser after this long unused")

    # what the model sees and may do
    profile: Literal["roo", "cline", "full", "aleph", "fractal", "forge"] = Field(
        "roo",
        description="roo: the nine classic actions by coordinates; cline: Cline's six, with task_progress"
        " on every tool; full: refs, selectors, forms, tabs; aleph, fractal, forge: those tools' dialects",
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
    trace_dir: Path | None = Field(
        None,
        description="record a Playwright trace of each browser session into this folder"
        " (trace-N.zip, for playwright show-trace), with the session's network requests; unset: none",
    )
    max_extract_chars: int = Field(
        10_000, ge=100, description="the most get_text, get_html, get_attribute and evaluate return"
    )
    max_wait_seconds: float = Field(10.0, gt=0, le=600, description="the longest wait the model may ask for")

    # the protocol
    policy: Policy = Field(Policy.REJECT, description="other tools while the browser is open")
    mistake_limit: int = Field(3, ge=1, description="consecutive model mistakes before the host is told")
    stuck_repeat: int = Field(3, ge=2, description="nudge a model that repeats one call on an unchanged page")
    stuck_turns: int = Field(5, ge=2, description="nudge a model after this many turns that change nothing")
    stuck_nudges: int = Field(3, ge=1, description="nudges after which the loop stops the run as stuck")
    on_mistake_limit: Literal["flag", "raise"] = Field(
        "flag", description="set Turn.mistake_limit_reached, or raise"
    )
    approval: dict[str, Literal["allow", "deny", "ask"]] = Field(
        default_factory=dict,
        description="per category (read, navigate, input, mutate, script, session): allow, deny or ask;"
        " unnamed categories allow, except script, which asks; mcp:SERVER and mcp:SERVER/TOOL rule"
        " on MCP calls before their category",
    )
    disabled_actions: tuple[str, ...] = Field(
        (), description="browser actions left out of the prompt and refused"
    )
    capabilities: tuple[Literal["testing"], ...] = Field(
        (),
        description="groups of actions offered besides the profile's own: testing (full profile:"
        " verify_text, verify_element, verify_value, verify_url)",
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
    blocked_addresses: tuple[str, ...] = Field(
        (), description="addresses or ranges (10.0.0.0/8) never opened, written or resolved from a name"
    )
    host_map: dict[str, str] = Field(
        {}, description="host name to address, for the browser and the URL policy alike (a hosts file)"
    )

    # the caps on what the model is shown
    max_console_entries: int = Field(50, ge=2, description="console entries per result (first and last half)")
    max_console_entry_chars: int = Field(1_000, ge=80, description="the length of one console entry")
    max_title_chars: int = Field(300, ge=40, description="the longest page title shown")
    max_notes: int = Field(20, ge=2, description="notes per result")
    max_console_chars: int = Field(8_000, ge=200, description="all console entries of one result together")
    max_note_chars: int = Field(300, ge=80, description="the length of one note")
    max_result_chars: int = Field(20_000, ge=1_000, description="the whole text of one result")

    # the conversation
    shape: Literal["openai", "anthropic", "plain"] = Field(
        "openai", description="the shape of result messages: OpenAI chat, Anthropic messages or plain text"
    )
    image_budget: int = Field(5, ge=0, description="screenshots kept in the history; older ones become text")
    keep_observations: int = Field(
        1, ge=1, description="loop: the newest results sent whole; each older one is sent as one line"
    )
    history_window: int = Field(
        20, ge=2, description="loop: the newest turns sent; older ones fold into one summary of fixed size"
    )
    templates: Path | None = Field(None, description="a folder of template overrides")
    compat: Literal["default", "roo", "cline"] = Field(
        "default",
        description="default: our dialect; roo, cline: the block output of Roo Code's or Cline's own parser",
    )
    fenced: Literal["call", "text"] = Field(
        "call", description="calls inside fenced code blocks: call reads them, text leaves them as text"
    )
    max_message_chars: int = Field(
        8_000_000,
        ge=1,
        description="the longest model message read; a longer one is cut and counts as a mistake",
    )
    max_param_chars: int = Field(1_000_000, ge=1, description="the longest value of one call parameter")

    # MCP servers (the xmltools[mcp] extra)
    mcp_servers: dict[str, Any] | Path | None = Field(
        None, description="MCP servers in the mcpServers shape, or the path of an mcp.json"
    )
    mcp_start: Literal["lazy", "eager"] = Field(
        "lazy", description="start MCP servers on first use (lazy) or when the run starts (eager)"
    )
    mcp_prompt_chars: int = Field(
        8_000, ge=500, description="past this size of tool entries, the prompt lists MCP tools by name only"
    )

    rematch: Literal["on", "off", "strict"] = Field(
        "on",
        description="replay: when a step's ref, selector or point reaches another element than the"
        " recorded one, find the recorded one by its identity (on), fail the step (strict), or act"
        " as written (off)",
    )
    drift: Literal["fail", "warn"] = Field(
        "fail",
        description="replay: a step that differs from its recording (URL, title, console, screenshot,"
        " snapshot) fails the replay (fail), or is reported and the replay passes on its assertions"
        " and failed calls alone (warn)",
    )
    # replay: how a live screenshot is compared with the recorded one (as Playwright's toHaveScreenshot)
    screenshot_threshold: float = Field(
        0.2, ge=0, le=1, description="replay: colour distance at which a pixel differs (0 strict, 1 lenient)"
    )
    # of the two limits, the smaller wins when both are set; when neither is, DEFAULT_DIFF_PIXEL_RATIO
    max_diff_pixel_ratio: float | None = Field(
        None,
        ge=0,
        le=1,
        description="replay: the share of differing pixels that is still no drift"
        " (when neither limit is set: 0.0001, 54 pixels at 900×600)",
    )
    max_diff_pixels: int | None = Field(
        None, ge=0, description="replay: the number of differing pixels that is still no drift"
    )

    @field_validator("viewport", mode="before")
    @classmethod
    def _viewport(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v

    @field_validator("allowed_origins", "blocked_origins", "blocked_addresses", mode="before")
    @classmethod
    def _policy_lists(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, str):
            v = tuple(x for x in v.replace(",", " ").split() if x)
        if isinstance(v, (list, tuple)):
            # a bad origin pattern or address raises ValueError here, as the policy is built
            items = tuple(str(x) for x in v)
            if info.field_name == "blocked_addresses":
                UrlPolicy(blocked_addresses=items)
            else:
                UrlPolicy(allowed_origins=items)
        return v

    @field_validator("approval", mode="before")
    @classmethod
    def _approval(cls, v: object) -> object:
        if isinstance(v, Mapping):
            unknown = sorted(str(k) for k in v if k not in CATEGORIES and not is_named_rule(str(k)))
            if unknown:
                raise ValueError(
                    f"unknown categories {unknown}; the categories are: {', '.join(CATEGORIES)}"
                    " (and mcp:SERVER or mcp:SERVER/TOOL for MCP calls)"
                )
        return v

    @field_validator("disabled_actions", "capabilities", mode="before")
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
            blocked_addresses=self.blocked_addresses,
            profile=self.profile,
            workspace=self.workspace,
            max_wait_seconds=self.max_wait_seconds,
        )

    def url_policy(self) -> UrlPolicy:
        return self.action_context().url_policy

    def limits(self) -> Limits:
        return Limits(max_message_chars=self.max_message_chars, max_param_chars=self.max_param_chars)

    def mcp_settings(self) -> tuple[ServerSettings, ...]:
        """The enabled MCP servers (the mcp package's view; a bad entry is one line naming its field)."""
        return read_servers(self.mcp_servers)

    def browser_settings(self) -> BrowserConfig:
        """The browser's frozen view of this configuration (the browser package never sees Config)."""
        # imported here: the browser package's settings, which load no Playwright
        from xmltools.browser.settings import BrowserConfig, Caps, Timeouts

        return BrowserConfig(
            executable=self.executable,
            remote=self.remote,
            headless=self.headless,
            viewport=self.viewport,
            screenshot_format=self.screenshot_format,
            screenshot_quality=self.screenshot_quality,
            device_scale_factor=self.device_scale_factor,
            downloads_dir=self.downloads_dir,
            timeouts=Timeouts(
                launch=self.launch_timeout,
                navigation=self.navigation_timeout,
                action=self.action_timeout,
                settle=self.settle_timeout,
            ),
            caps=Caps(
                console_entries=self.max_console_entries,
                console_entry_chars=self.max_console_entry_chars,
                console_chars=self.max_console_chars,
                title_chars=self.max_title_chars,
                notes=self.max_notes,
                note_chars=self.max_note_chars,
            ),
            url_policy=self.url_policy(),
            host_map=tuple(sorted((k.lower(), v) for k, v in self.host_map.items())),
            observe=self.observe,
            max_snapshot_chars=self.max_snapshot_chars,
            snapshot_boxes=self.snapshot_boxes,
            max_extract_chars=self.max_extract_chars,
            max_wait_seconds=self.max_wait_seconds,
            workspace=self.workspace,
            profile_dir=self.profile_dir,
            trace_dir=self.trace_dir,
            idle_timeout=self.idle_timeout,
            rematch=self.rematch,
        )

    # -- loading ---------------------------------------------------------------------

    @classmethod
    def build(cls, **values: Any) -> Config:
        """Like the constructor, but invalid values raise ConfigError (a host error)."""
        try:
            return cls(**values)
        except ValidationError as e:
            raise ConfigError(_explain(e)) from e

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **overrides: Any,
    ) -> Config:
        """The configuration from every source, highest first: ``overrides``, the environment
        (``XMLTOOLS_<FIELD>``; ``environ`` stands in for ``os.environ``), the TOML file ``path``
        (else ``xmltools.toml`` in ``cwd``, when there is one), ``[tool.xmltools]`` of
        ``pyproject.toml`` in ``cwd``, then the defaults.  Each setting comes whole from the
        highest source that sets it.  An unknown name in any source raises ConfigError.
        """
        return _load(cls, path, environ=environ, cwd=cwd, overrides=overrides)[0]

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> Config:
        """One TOML file (top level or under ``[xmltools]``) over the defaults; no environment."""
        return _load(cls, path, environ=None, cwd=None, overrides=overrides, env=False, pyproject=False)[0]

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, prefix: str = ENV_PREFIX, **overrides: Any
    ) -> Config:
        """The environment over the defaults; no files."""
        return _load(cls, None, environ=environ, cwd=None, overrides=overrides, files=False, prefix=prefix)[0]


# -- layering, with pydantic-settings ------------------------------------------------------

DEFAULT = "default"
ARGUMENT = "argument"
PYPROJECT = "pyproject.toml"
TOML_FILE = "xmltools.toml"
CHROMIUM_VARIABLE = "XMLTOOLS_CHROMIUM"  # an alias of XMLTOOLS_EXECUTABLE, which wins over it
# XMLTOOLS_ variables that are not settings: read elsewhere, on their own
OTHER_VARIABLES = frozenset({CHROMIUM_VARIABLE, "XMLTOOLS_UPDATE_GOLDEN"})


@dataclass
class _Plan:
    """What one load reads; the sources find it in ``_PLAN`` while the settings are built."""

    environ: Mapping[str, str] | None  # None: no environment layer
    prefix: str
    toml: Path | None  # None: no TOML file layer
    toml_label: str
    pyproject: Path | None  # None: no pyproject layer
    origins: dict[str, str] = field(default_factory=dict)  # setting -> the source it came from


_PLAN: ContextVar[_Plan | None] = ContextVar("xmltools_config_plan", default=None)


def _closest(name: str, choices: Iterable[str]) -> str:
    options = list(choices)
    return closest(name, options, cutoff=0.0) or options[0]  # a setting's name is always offered


def _unknown(name: str, choices: Iterable[str], where: str = "") -> str:
    return f"{name}{where} is not a setting; did you mean {_closest(name, choices)}?"


def _check_keys(keys: Iterable[str], where: str) -> None:
    bad = [k for k in keys if k not in Config.model_fields]
    if bad:
        raise ConfigError("; ".join(_unknown(k, Config.model_fields, f" (in {where})") for k in bad))


def _check_environ(environ: Mapping[str, str], prefix: str) -> None:
    """Every variable named ``prefix``... must be a setting (or one read elsewhere)."""
    up = prefix.upper()
    names = [up + f.upper() for f in Config.model_fields]
    allowed = OTHER_VARIABLES if up == ENV_PREFIX else frozenset()
    bad = [
        k
        for k in sorted(environ)
        if k.upper().startswith(up)
        and k.upper() not in allowed
        and not (up == ENV_PREFIX and k.upper().startswith(SECRET_PREFIX))  # a replay's secrets
        and k[len(prefix) :].lower() not in Config.model_fields
    ]
    if bad:
        raise ConfigError("; ".join(_unknown(k, names) for k in bad))


class _EnvSource(EnvSettingsSource):
    """``XMLTOOLS_<FIELD>`` variables of a given mapping, read as ``from_env`` always has
    (none, true/false, JSON lists and objects, the fields' own string forms)."""

    def __init__(self, settings_cls: type[BaseSettings], plan: _Plan) -> None:
        assert plan.environ is not None
        self._plan = plan
        self._environ = plan.environ
        _check_environ(self._environ, plan.prefix)
        super().__init__(settings_cls, case_sensitive=False, env_prefix=plan.prefix)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items()}

    def __call__(self) -> dict[str, Any]:
        taken = self.current_state
        out: dict[str, Any] = {}
        for name, info in self.settings_cls.model_fields.items():
            if name in taken:
                continue
            raw, _, _ = self.get_field_value(info, name)
            if raw is not None:
                out[name] = _env_value(raw)
                self._plan.origins[name] = f"environment ({self._plan.prefix.upper()}{name.upper()})"
        alias = self.env_vars.get(CHROMIUM_VARIABLE.lower())
        if (
            self._plan.prefix.upper() == ENV_PREFIX
            and "executable" not in out
            and "executable" not in taken
            and alias is not None
            and _env_value(alias) is not None
        ):
            out["executable"] = _env_value(alias)
            self._plan.origins["executable"] = f"environment ({CHROMIUM_VARIABLE})"
        return out


class _TomlFile(TomlConfigSettingsSource):
    """A TOML file of settings: at its top level, or under ``[xmltools]``."""

    def __init__(self, settings_cls: type[BaseSettings], plan: _Plan) -> None:
        self._plan = plan
        super().__init__(settings_cls, toml_file=plan.toml)
        _check_keys(self.toml_data, plan.toml_label)

    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        try:
            data = super()._read_file(file_path)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read {self._plan.toml_label}: {e}") from e
        if "xmltools" not in data:
            return data
        section = data["xmltools"]
        if not isinstance(section, dict):
            raise ConfigError(f"{self._plan.toml_label}: [xmltools] must be a table")
        outside = [k for k in data if k != "xmltools"]
        if outside:
            raise ConfigError(
                f"{self._plan.toml_label}: {', '.join(outside)} outside [xmltools];"
                " put every setting in the table, or none"
            )
        return dict(section)

    def __call__(self) -> dict[str, Any]:
        return _take(super().__call__(), self.current_state, self._plan, self._plan.toml_label)


class _PyprojectTable(PyprojectTomlConfigSettingsSource):
    """``[tool.xmltools]`` of a ``pyproject.toml``; a file without the table gives nothing."""

    HEADER = ("tool", "xmltools")

    def __init__(self, settings_cls: type[BaseSettings], plan: _Plan) -> None:
        # the parent would take the table's name from model_config; it is fixed here
        self._plan = plan
        self.toml_file_path = plan.pyproject
        self.toml_table_header = self.HEADER
        data: Any = self._read_files(plan.pyproject)
        for key in self.HEADER:
            data = data.get(key, {})
            if not isinstance(data, dict):
                raise ConfigError(f"{PYPROJECT}: [tool.xmltools] must be a table")
        self.toml_data = data
        _check_keys(data, f"{PYPROJECT} [tool.xmltools]")
        super(TomlConfigSettingsSource, self).__init__(settings_cls, data)

    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        try:
            return super()._read_file(file_path)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read {PYPROJECT}: {e}") from e

    def __call__(self) -> dict[str, Any]:
        return _take(super().__call__(), self.current_state, self._plan, PYPROJECT)


def _take(found: dict[str, Any], taken: Mapping[str, Any], plan: _Plan, label: str) -> dict[str, Any]:
    """The values of a lower source that no higher one set (a table is not merged key by key)."""
    out = {k: v for k, v in found.items() if k not in taken}
    for k in out:
        plan.origins[k] = label
    return out


class _Layered(BaseSettings, Config):
    """Config as pydantic-settings builds it; only ``_load`` makes one, with a plan in ``_PLAN``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, case_sensitive=False, extra="forbid", frozen=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        plan = _PLAN.get()
        if plan is None:
            raise RuntimeError("build a layered configuration with Config.load()")
        sources: list[PydanticBaseSettingsSource] = [init_settings]
        if plan.environ is not None:
            sources.append(_EnvSource(settings_cls, plan))
        if plan.toml is not None:
            sources.append(_TomlFile(settings_cls, plan))
        if plan.pyproject is not None:
            sources.append(_PyprojectTable(settings_cls, plan))
        return tuple(sources)


_C = TypeVar("_C", bound=Config)


def _load(
    cls: type[_C],
    path: str | Path | None,
    *,
    environ: Mapping[str, str] | None,
    cwd: str | Path | None,
    overrides: Mapping[str, Any],
    env: bool = True,
    files: bool = True,
    pyproject: bool = True,
    prefix: str = ENV_PREFIX,
) -> tuple[_C, dict[str, str]]:
    """Build a ``cls`` from the sources asked for; also say where each setting came from."""
    _check_keys(overrides, "the arguments")
    here = Path.cwd() if cwd is None else Path(cwd)
    toml: Path | None = None
    label = TOML_FILE
    if files:
        if path is not None:
            toml = Path(path) if Path(path).is_absolute() else here / path
            label = str(path)
            if not toml.is_file():
                raise ConfigError(f"cannot read {path}: no such file")
        else:
            toml = here / TOML_FILE
    plan = _Plan(
        environ=(os.environ if environ is None else environ) if env else None,
        prefix=prefix,
        toml=toml,
        toml_label=label,
        pyproject=here / PYPROJECT if files and pyproject else None,
    )
    token = _PLAN.set(plan)
    try:
        layered = _Layered(**overrides)
    except ValidationError as e:
        origins = {**plan.origins, **dict.fromkeys(overrides, ARGUMENT)}
        raise ConfigError(_explain(e, origins)) from e
    except SettingsError as e:  # pragma: no cover - the sources above raise ConfigError themselves
        raise ConfigError(f"invalid configuration: {e}") from e
    finally:
        _PLAN.reset(token)
    origins = {name: DEFAULT for name in Config.model_fields}
    origins.update(plan.origins)
    origins.update(dict.fromkeys(overrides, ARGUMENT))
    # the values are valid already (the settings class validated them); this only makes a plain Config
    return cls(**{name: getattr(layered, name) for name in Config.model_fields}), origins


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


def _said(origin: str) -> str:
    """A source as an error names it: ``XMLTOOLS_VIEWPORT``, ``xmltools.toml``, ``the arguments``."""
    if origin == ARGUMENT:
        return "the arguments"
    return (
        origin.removeprefix("environment (").removesuffix(")")
        if origin.startswith("environment (")
        else origin
    )


def _explain(e: ValidationError, origins: Mapping[str, str] | None = None) -> str:
    parts = []
    for err in e.errors(include_url=False):
        loc = err.get("loc", ())
        where = ".".join(str(x) for x in loc) or "config"
        origin = (origins or {}).get(str(loc[0]), DEFAULT) if loc else DEFAULT
        source = "" if origin == DEFAULT else f" (from {_said(origin)})"
        parts.append(f"{where}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}{source}")
    return "invalid configuration: " + "; ".join(parts)
