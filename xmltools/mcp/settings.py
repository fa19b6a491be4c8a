"""The servers of the configuration, in the ``mcpServers`` shape the ecosystem reads.

An entry runs a command over stdio (``command``, ``args``, ``env``, ``cwd``)
or reaches a streamable HTTP endpoint (``url``); ``disabled`` leaves it out,
``timeout`` bounds each call (seconds), and ``autoApprove`` names the tools
that run without the host's approval.  The whole may be given as a mapping
(``{"mcpServers": {...}}`` or the servers themselves) or as the path of an
``mcp.json``.  A bad entry is one :class:`~xmltools.errors.ConfigError` line
naming the file and the field.  Pure: no SDK, no I/O but reading that file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "ServerSettings", "read_servers"]

DEFAULT_TIMEOUT = 60.0  # seconds one call may take, when the entry sets none
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@/-]{0,63}")
_KNOWN = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "transport",
    "headers",
    "disabled",
    "timeout",
    "autoApprove",
    "alwaysAllow",
}


@dataclass(frozen=True)
class ServerSettings:
    """One server, as its entry gave it."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    timeout: float = DEFAULT_TIMEOUT
    auto_approve: frozenset[str] = frozenset()

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def describe(self) -> str:
        """The command line or the address, for the host's messages."""
        return self.url or " ".join([self.command or "", *self.args])


def read_servers(
    value: Mapping[str, Any] | str | Path | None, source: str = ""
) -> tuple[ServerSettings, ...]:
    """The enabled servers of ``value``: a mapping in the ``mcpServers`` shape, or an ``mcp.json`` path."""
    if value is None:
        return ()
    where = source or "mcp_servers"
    if isinstance(value, str | Path):
        path = Path(value).expanduser()
        where = str(path)
        try:
            value = json.loads(path.read_text())
        except OSError as e:
            raise ConfigError(f"{where}: cannot be read ({e.strerror or e})") from None
        except ValueError as e:
            raise ConfigError(f"{where}: is not JSON ({e})") from None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: the servers are an object of name -> entry")
    servers = value.get("mcpServers", value)
    if not isinstance(servers, Mapping):
        raise ConfigError(f"{where}: mcpServers is an object of name -> entry")
    read = [_entry(where, str(name), entry) for name, entry in servers.items()]
    return tuple(s for s in read if not s.disabled)


def _entry(where: str, name: str, entry: object) -> ServerSettings:
    at = f"{where}: mcpServers.{name}"
    if not NAME_RE.fullmatch(name):
        raise ConfigError(f"{at}: a server's name is letters, digits, '_', '.', '@', '/' or '-'")
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{at}: an entry is an object with command or url")
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise ConfigError(f"{at}.{unknown[0]}: not a field; the fields are: {', '.join(sorted(_KNOWN))}")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ConfigError(f"{at}: give command (a program over stdio) or url (streamable HTTP), not both")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ConfigError(f"{at}.command: a program's name or path, as a string")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ConfigError(f"{at}.url: an http:// or https:// address")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f"{at}.timeout: a number of seconds above 0")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(f"{at}.disabled: true or false")
    approve = entry.get("autoApprove", entry.get("alwaysAllow", []))
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{at}.cwd: a folder, as a string")
    return ServerSettings(
        name,
        command,
        _strings(at, "args", entry.get("args", [])),
        _pairs(at, "env", entry.get("env", {})),
        cwd,
        url,
        _pairs(at, "headers", entry.get("headers", {})),
        disabled,
        float(timeout),
        frozenset(_strings(at, "autoApprove", approve)),
    )


def _strings(at: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{at}.{key}: a list of strings")
    return tuple(value)


def _pairs(at: str, key: str, value: object) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{at}.{key}: an object of strings")
    return {str(k): v for k, v in value.items()}
