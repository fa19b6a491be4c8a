"""The URL policy: which addresses the browser may open, as pure data and one check.

The same :class:`UrlPolicy` judges the URL a model writes (before anything
runs) and every request the browser makes afterwards (redirects, meta
refresh, ``location``, frames, new tabs): the controller routes each request
through :meth:`UrlPolicy.check`.  Pure: no I/O, and neither Playwright nor
Jinja2 is imported.  Host names are resolved by the browser's guard, which
asks :meth:`UrlPolicy.host_to_resolve` which names need it and
:meth:`UrlPolicy.check_addresses` what their addresses allow.

The rules, in order:

- ``http`` and ``https`` are allowed; ``file`` only under ``allowed_file_roots``
  (a backslash in a file URL is refused, since Chromium reads it as a
  separator); any other scheme only when it is listed in ``allowed_schemes``.
- Link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata
  addresses (fd00:ec2::254, ``metadata.google.internal``) are refused unless
  ``allow_link_local`` is set.  IPv4 written in decimal, hex or octal counts.
- Addresses in ``blocked_addresses`` (single addresses or ranges such as
  ``10.0.0.0/8``) are refused, whether written in the URL or resolved from
  its host name; so are link-local ones resolved from a name.
- ``blocked_origins`` then ``allowed_origins``: glob patterns such as
  ``https://*.example.com``, ``http://localhost:*`` or ``*.internal``.  A
  pattern without a scheme matches http and https; without a port, the
  scheme's default port; ``:*`` any port.  A block wins over an allow; when
  ``allowed_origins`` is not empty, an http(s) origin must match one of them.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["UrlPolicy", "origin_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.goog"})
_METADATA_V6 = ipaddress.ip_address("fd00:ec2::254")
# what a page may always load into a frame or a tab: nothing leaves the browser
_INERT = frozenset({"about", "data", "blob", "javascript"})


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) or ws(s) URL, host in lower case; None otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower().rstrip("."), port or _DEFAULT_PORTS[scheme]


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    h = host.strip("[]")
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if h and all(c in "0123456789abcdefx." for c in h) and any(c.isdigit() for c in h):
        try:  # the legacy forms browsers accept: 2852039166, 0xa9fea9fe, 169.254.43518
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _plain(ip: _Address) -> _Address:
    """An IPv4-mapped IPv6 address as the IPv4 address it is."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _link_local(host: str) -> bool:
    if host in _METADATA_HOSTS:
        return True
    ip = _ip(host)
    if ip is None:
        return False
    ip = _plain(ip)
    return ip.is_link_local or ip == _METADATA_V6


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        msg = f"blocked address {text!r} is not an address or a range such as 10.0.0.0/8"
        raise ValueError(msg) from None


@dataclass(frozen=True)
class _Pattern:
    schemes: tuple[str, ...]
    host: str
    port: int | None  # None: any port
    text: str

    @classmethod
    def parse(cls, text: str) -> _Pattern:
        raw = text.strip()
        if not raw:
            raise ValueError("an origin pattern is empty")
        scheme, sep, rest = raw.partition("://")
        if not sep:
            scheme, rest = "", raw
        scheme = scheme.lower()
        if scheme and scheme not in _DEFAULT_PORTS and scheme != "*":
            raise ValueError(f"origin pattern {text!r}: the scheme must be http, https, ws, wss or *")
        rest = rest.rstrip("/")
        if "/" in rest:
            raise ValueError(f"origin pattern {text!r}: an origin has no path")
        host, port_text = rest, ""
        if rest.startswith("["):
            end = rest.find("]")
            host, port_text = rest[: end + 1], rest[end + 1 :].removeprefix(":")
        elif ":" in rest:
            host, _, port_text = rest.rpartition(":")
        if not host:
            raise ValueError(f"origin pattern {text!r} has no host")
        schemes = ("http", "https") if scheme in ("", "*") else (scheme,)
        port: int | None
        if port_text == "*":
            port = None
        elif port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise ValueError(f"origin pattern {text!r}: the port must be a number or *")
            port = int(port_text)
        else:
            port = -1  # the scheme's default port
        return cls(schemes, host.lower(), port, raw)

    def matches(self, scheme: str, host: str, port: int) -> bool:
        if scheme not in self.schemes and not (scheme in ("ws", "wss") and "http" in self.schemes):
            return False
        if self.port == -1:
            if port != _DEFAULT_PORTS[scheme]:
                return False
        elif self.port is not None and port != self.port:
            return False
        return fnmatch.fnmatchcase(host, self.host)


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs may be opened.  ``check(url)`` returns None, or the reason it is refused."""

    allowed_schemes: frozenset[str] = frozenset()  # besides http and https
    allowed_file_roots: tuple[Path, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()
    allow_link_local: bool = False
    blocked_addresses: tuple[str, ...] = ()
    _allow: tuple[_Pattern, ...] = field(init=False, repr=False, compare=False, default=())
    _block: tuple[_Pattern, ...] = field(init=False, repr=False, compare=False, default=())
    _roots: tuple[Path, ...] = field(init=False, repr=False, compare=False, default=())
    _nets: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False, default=()
    )

    def __post_init__(self) -> None:
        # invalid patterns raise ValueError here, when the host builds the policy
        object.__setattr__(self, "_allow", tuple(_Pattern.parse(p) for p in self.allowed_origins))
        object.__setattr__(self, "_block", tuple(_Pattern.parse(p) for p in self.blocked_origins))
        object.__setattr__(self, "_roots", tuple(r.resolve() for r in self.allowed_file_roots))
        object.__setattr__(self, "_nets", tuple(_network(a) for a in self.blocked_addresses))

    @property
    def restricts_requests(self) -> bool:
        """Whether anything beyond the scheme rules applies (so every request must be checked)."""
        return bool(
            self.allowed_origins or self.blocked_origins or self.allowed_file_roots or self.blocked_addresses
        ) or (not self.allow_link_local)

    def check(self, url: str, *, navigation: bool = True) -> str | None:
        """None if ``url`` may be opened; otherwise the reason, in words for the model.

        ``navigation=False`` is for a page's own sub-resources (images, scripts,
        fetches): only the blocks apply to them, not the allow-list or the
        scheme rules, so that an allowed page still loads what it needs.
        """
        try:
            parts = urlsplit(url)
        except ValueError:
            return "it is not a valid URL"
        scheme = parts.scheme.lower()
        if scheme == "file":
            return self._check_file(url, parts.netloc, parts.path) if navigation else None
        origin = origin_of(url)
        if origin is None:
            if not navigation or scheme in _INERT or scheme in self.allowed_schemes:
                return None
            if not scheme:
                return "it has no scheme"
            return f"{scheme}: URLs are not allowed"
        scheme, host, port = origin
        if not self.allow_link_local and _link_local(host):
            return f"{host} is a link-local or cloud metadata address"
        ip = _ip(host)
        blocked = self._blocked_by(_plain(ip)) if ip is not None else None
        if blocked is not None:
            return f"{host} is a blocked address ({blocked})"
        shown = f"{scheme}://{host}" + ("" if port == _DEFAULT_PORTS[scheme] else f":{port}")
        for p in self._block:
            if p.matches(scheme, host, port):
                return f"{shown} is blocked ({p.text})"
        if navigation and self._allow and not any(p.matches(scheme, host, port) for p in self._allow):
            allowed = ", ".join(p.text for p in self._allow)
            return f"{shown} is not among the allowed origins ({allowed})"
        return None

    def host_to_resolve(self, url: str) -> str | None:
        """The host name of ``url`` whose addresses must be checked before it is opened; None when
        ``url`` names an address itself, is not http(s) or ws(s), or no address rule applies."""
        origin = origin_of(url)
        if origin is None or (self.allow_link_local and not self._nets):
            return None
        host = origin[1]
        if _ip(host) is not None or host in _METADATA_HOSTS:
            return None
        return host

    def check_addresses(self, host: str, addresses: Iterable[str]) -> str | None:
        """None if every address ``host`` resolves to may be opened; otherwise the reason."""
        for text in addresses:
            try:
                ip = _plain(ipaddress.ip_address(text.split("%")[0]))
            except ValueError:
                continue
            if not self.allow_link_local and (ip.is_link_local or ip == _METADATA_V6):
                return f"{host} resolves to {ip}, a link-local or cloud metadata address"
            blocked = self._blocked_by(ip)
            if blocked is not None:
                return f"{host} resolves to {ip}, a blocked address ({blocked})"
        return None

    def _blocked_by(self, ip: _Address) -> str | None:
        for text, net in zip(self.blocked_addresses, self._nets, strict=True):
            if ip.version == net.version and ip in net:
                return text
        return None

    def _check_file(self, url: str, host: str, raw_path: str) -> str | None:
        if "file" in self.allowed_schemes:
            return None
        if not self._roots:
            return "file URLs are not allowed in this session"
        path = unquote(raw_path)
        if "\\" in path or "\x00" in path:
            return "a file URL may not contain a backslash"
        if host not in ("", "localhost"):
            return "a file URL may not name a host"
        resolved = Path(path).resolve()
        if any(resolved == r or r in resolved.parents for r in self._roots):
            return None
        roots = ", ".join(str(r) for r in self.allowed_file_roots)
        return f"it is outside the folders this session may open ({roots})"
