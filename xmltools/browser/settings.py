"""The browser's frozen settings: how to reach a browser, what a session looks like, every bound and cap.

Owns :class:`BrowserConfig` and the value objects it is composed of
(:class:`Timeouts`, :class:`Caps`).  They are built by the host, or from the
one configuration by :meth:`xmltools.config.settings.Config.browser_settings`; the
browser package never sees that configuration.  Must not import Playwright
(the pure configuration imports this module), nor ``config``, ``tools``,
``profiles``, ``render`` or ``interpreter``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..actions import DEFAULT_VIEWPORT
from ..base.results import Viewport
from ..base.urlpolicy import UrlPolicy
from ..errors import ConfigError

if TYPE_CHECKING:
    from .backends import Backend

__all__ = ["BrowserConfig", "Caps", "Timeouts"]


@dataclass(frozen=True)
class Timeouts:
    """Every bound, in seconds."""

    launch: float = 30.0  # all of start-up: the browser, its context and the first page
    navigation: float = 15.0  # a page load, and following the navigations an action starts
    action: float = 5.0  # one input action or protocol call
    settle: float = 3.0  # the longest extra wait for a page to settle after it loaded
    dom_quiet: float = 0.03  # the DOM (and the page's short timers) must be still this long
    network_quiet: float = 0.05  # no request in flight for this long after requests during the action
    screenshot: float = 10.0
    close: float = 5.0
    probe: float = 1.0  # a trivial evaluation that tells a busy page from a stuck one
    discovery: float = 1.0  # asking a remote Chrome for its endpoint


@dataclass(frozen=True)
class Caps:
    """The caps on one observation, with their documented defaults."""

    console_entries: int = 50  # console entries per observation (the first half and the last half kept)
    console_entry_chars: int = 1_000  # the length of one console entry
    console_chars: int = 8_000  # all console entries of one observation together
    title_chars: int = 300
    url_chars: int = 2_000
    notes: int = 20  # notes per observation
    note_chars: int = 300  # the length of one note


@dataclass(frozen=True)
class BrowserConfig:
    """How to reach the browser, what each session looks like, and what to observe."""

    executable: str | None = None  # local: a path; None finds one
    remote: str | None = None  # a DevTools endpoint, a Playwright server (ws://), or "auto"
    headless: bool = True
    viewport: Viewport = DEFAULT_VIEWPORT
    screenshot_format: Literal["webp", "png", "jpeg"] = "webp"
    screenshot_quality: int = 75
    device_scale_factor: float = 1.0
    downloads_dir: Path | None = None  # the session's folder; a temporary one (removed at close) by default
    extra_args: tuple[str, ...] = ()
    timeouts: Timeouts = field(default_factory=Timeouts)
    caps: Caps = field(default_factory=Caps)
    url_policy: UrlPolicy = field(default_factory=UrlPolicy)
    # host name -> address, for this session's browser and its URL policy alike (as a hosts file);
    # a local Chromium is started with the same map (--host-resolver-rules)
    host_map: tuple[tuple[str, str], ...] = ()
    observe: Literal["screenshot", "snapshot", "both"] = "screenshot"
    max_snapshot_chars: int = 20_000
    snapshot_boxes: bool = False
    max_extract_chars: int = 10_000  # what get_text, get_html and get_attribute return at most
    max_wait_seconds: float = 10.0  # the longest wait the model may ask for
    workspace: Path | None = None  # where screenshots with a path are saved
    profile_dir: Path | None = None  # a user data folder (local only): cookies and storage persist there
    trace_dir: Path | None = None  # a Playwright trace of each context goes here (trace-N.zip)
    idle_timeout: float | None = None  # close the session after this many seconds unused; None: never
    rematch: Literal["on", "off", "strict"] = "on"  # replay: find a recorded element again by its identity

    def __post_init__(self) -> None:
        if not 0 <= self.screenshot_quality <= 100:
            raise ConfigError("screenshot_quality must be 0 to 100")
        if self.device_scale_factor <= 0:
            raise ConfigError("device_scale_factor must be positive")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise ConfigError("idle_timeout must be positive (or None for no timeout)")
        if self.profile_dir is not None and self.remote:
            raise ConfigError(
                "profile_dir needs a local browser: a remote browser keeps its own profile, so leave"
                " remote unset or drop profile_dir"
            )

    @property
    def backends(self) -> tuple[Backend, ...]:
        """Where sessions may open: one local browser, or the remote endpoints listed."""
        from .backends import Backend  # Playwright's side: loaded only when a session opens

        args = self.extra_args
        if self.host_map:
            rules = ",".join(f"MAP {name} {address}" for name, address in self.host_map)
            args = (*args, f"--host-resolver-rules={rules}")
        return Backend.all_from_settings(
            executable=self.executable, remote=self.remote, headless=self.headless, args=args
        )
