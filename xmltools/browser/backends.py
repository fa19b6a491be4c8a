"""Where a session's browser comes from: the backends a pool can start or reach, and the flags a
local Chromium is started with.

A :class:`Backend` is ``local`` (a Chromium started over Playwright's pipe), ``cdp`` (a running
Chrome reached over its DevTools endpoint, or ``auto`` on port 9222) or ``server`` (a Playwright
server).  Equal backends share one browser in a pool.  Must not import the pool or the session.
"""

from __future__ import annotations

import contextlib
import json
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError, RemoteBrowserError

__all__ = ["CHROMIUM_FLAGS", "Backend", "discover_remote", "remote_help", "resolve_cdp"]

# Flags for a closed network and a quiet, reproducible browser (Playwright adds its own defaults).
CHROMIUM_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-quic",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--enable-features=CDPScreenshotNewSurface",  # faster screenshots over the DevTools protocol
    "--hide-scrollbars",
    "--mute-audio",
    "--disable-back-forward-cache",
    "--force-color-profile=srgb",
)


@dataclass(frozen=True)
class Backend:
    """Where a browser comes from.  Equal backends share one browser in a pool."""

    kind: Literal["local", "cdp", "server"] = "local"
    executable: str | None = None  # local: a path; None finds one
    endpoint: str | None = None  # cdp or server
    headless: bool = True
    args: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """Where its browsers run, in a word: ``local``, or the endpoint without what may be a
        credential (a user and password, a query's token)."""
        if not self.endpoint:
            return self.kind
        u = urllib.parse.urlsplit(self.endpoint)
        host = u.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        return urllib.parse.urlunsplit((u.scheme, netloc + (f":{u.port}" if u.port else ""), u.path, "", ""))

    @classmethod
    def from_settings(
        cls,
        *,
        executable: str | None = None,
        remote: str | None = None,
        headless: bool = True,
        args: tuple[str, ...] = (),
    ) -> Backend:
        """The one backend named by the usual settings; see :meth:`all_from_settings` for several."""
        return cls.all_from_settings(executable=executable, remote=remote, headless=headless, args=args)[0]

    @classmethod
    def all_from_settings(
        cls,
        *,
        executable: str | None = None,
        remote: str | None = None,
        headless: bool = True,
        args: tuple[str, ...] = (),
    ) -> tuple[Backend, ...]:
        """The backends named by the settings: ``remote`` may list several endpoints, comma-separated.

        ``http://…``, ``ws://…/devtools/…`` and ``auto`` are DevTools endpoints;
        any other ``ws://`` or ``wss://`` URL is a Playwright server, which is
        asked to launch ``executable`` when one is set.  No ``remote``: local.
        """
        if not remote or not remote.strip():
            return (cls("local", executable=executable, headless=headless, args=tuple(args)),)
        out = []
        for r in (x.strip() for x in remote.split(",")):
            if not r:
                continue
            if r == "auto" or r.startswith(("http://", "https://")) or "/devtools/" in r:
                out.append(cls("cdp", endpoint=r, headless=headless))
            elif r.startswith(("ws://", "wss://")):
                out.append(
                    cls("server", executable=executable, endpoint=r, headless=headless, args=tuple(args))
                )
            else:
                raise ConfigError(
                    f"remote endpoint {r!r}: use http://HOST:PORT or ws://…/devtools/browser/… for a DevTools"
                    " endpoint, ws://HOST:PORT/ for a Playwright server, or 'auto'"
                )
        if not out:
            raise ConfigError(f"remote {remote!r} names no endpoint")
        return tuple(out)


def discover_remote(
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), port: int = 9222, timeout: float = 1.0
) -> str:
    """The DevTools WebSocket URL of a Chrome listening on ``port``, or RemoteBrowserError."""
    tried = []
    for host in hosts:
        url = f"http://{host}:{port}/json/version"
        tried.append(url)
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(url, timeout=timeout) as r,  # loopback only
        ):
            ws = json.loads(r.read().decode()).get("webSocketDebuggerUrl")
            if ws:
                return str(ws)
    raise RemoteBrowserError(remote_help(", ".join(tried)))


def remote_help(where: str) -> str:
    return (
        f"no Chrome answered at {where}.\n"
        "Start one with remote debugging, using a profile folder of its own (Chrome refuses"
        " remote debugging on its default profile):\n"
        "  chromium --remote-debugging-port=9222 --user-data-dir=/tmp/xmltools-chrome\n"
        "or use local mode, which starts a browser by itself."
    )


def resolve_cdp(endpoint: str, timeout: float) -> str:
    if endpoint == "auto":
        return discover_remote(timeout=timeout)
    if endpoint.startswith(("ws://", "wss://")):
        return endpoint
    m = re.fullmatch(r"(https?://[^/]+)/?", endpoint)
    if not m:
        raise ConfigError(f"remote endpoint {endpoint!r}: use http://HOST:PORT, ws://..., or 'auto'")
    try:
        with urllib.request.urlopen(m.group(1) + "/json/version", timeout=timeout) as r:
            ws = json.loads(r.read().decode()).get("webSocketDebuggerUrl")
    except (OSError, ValueError) as e:
        raise RemoteBrowserError(remote_help(endpoint) + f"\n({e})") from e
    if not ws:
        raise RemoteBrowserError(f"{endpoint} answered, but gave no webSocketDebuggerUrl")
    return str(ws)
