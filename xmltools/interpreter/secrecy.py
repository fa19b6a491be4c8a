"""Secrets at the interpreter's edge: filled into a browser call, hidden in all the model reads back.

The host gives ``secrets={"NAME": value}`` (a string, or a
:class:`~xmltools.base.secrets.Secret` bound to its sites, or a one-time code).
A browser call's ``{secret:NAME}`` is filled in just before validation, so
the browser types the value; every result, error and note that goes back to
the model has the value (and its encoded forms, see
:class:`xmltools.base.secrets.Hider`) replaced by the placeholder again.  A bound
secret is refused (:meth:`SecretGuard.refusal`) for a page of another origin
before the call runs.  Screenshots are masked by the browser: the field a call
types a secret into (a placeholder, or a value this guard or an open recording
keeps secret, written out: :meth:`SecretGuard.types_secret`) is painted over.

Pure: no browser, no templates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace

from ..base.results import Failure, Identity, Observation
from ..base.secrets import Hider, Secret, as_secrets, names_in, origin_of, recorded_secrets
from ..base.secrets import fill as fill_secrets
from ..parser import ToolUse
from ..render.messages import Rendered
from ..tools import CallError, ToolRegistry

__all__ = ["SecretGuard"]


class SecretGuard:
    """Fills ``{secret:NAME}`` for the browser and hides the values from the model."""

    def __init__(self, secrets: Mapping[str, str | Secret] | None) -> None:
        self.secrets = as_secrets(secrets) if secrets else {}
        # what is hidden: each fixed value, and each one-time code once it was typed
        self.values: dict[str, str] = {n: s.current() for n, s in self.secrets.items() if s.seed is None}
        self.hide = Hider(self.values)

    def refusal(self, names: list[str], url: str | None) -> str | None:
        """Why the secrets ``names`` may not go to ``url`` (None: they may)."""
        for name in names:
            secret = self.secrets.get(name)
            if secret is None or secret.origins is None:
                continue
            allowed = " or ".join(secret.origins)
            if url is None:
                return f"the secret {name} is only for {allowed}, and this page's address is not known"
            if not secret.allows(url):
                here = origin_of(url)
                return f"the secret {name} is only for {allowed}, and this page is {here}"
        return None

    def types_secret(self, call: ToolUse) -> bool:
        """Whether a call carries a secret into the page: a ``{secret:NAME}``, or a value written out
        that this guard or an open recording keeps secret (its field is painted over in screenshots,
        so that a recording shows it as its replay, which types the placeholder, will)."""
        values = [v for v in (*self.values.values(), *recorded_secrets()) if v]
        return any("{secret:" in p or any(v in p for v in values) for p in call.params.values())

    def server_refusal(self, names: list[str], server: str) -> str:
        """Why the secrets ``names`` may not go to the MCP server ``server``."""
        name = names[0]
        if name not in self.secrets:
            known = ", ".join(sorted(self.secrets)) or "none"
            return f"there is no secret named {name} (the secrets you may use: {known})"
        return f"the secret {name} is not for the MCP server {server}"

    def fill(self, call: ToolUse, registry: ToolRegistry) -> ToolUse | CallError:
        """The browser call with its placeholders filled in, or an error naming an unknown secret.

        An MCP call (one naming a ``server_name``) gets only the secrets bound to its server
        (``mcp:NAME`` among their origins); any other placeholder stays, and the call is refused.
        """
        if not any("{secret:" in v for v in call.params.values()):
            return call
        server = call.params.get("server_name", "").strip()
        if server and not registry.is_browser(call.name):
            bound = {n: s.current() for n, s in self.secrets.items() if s.for_server(server)}
            # the arguments are JSON: a value goes in as the inside of a JSON string, escaped
            escaped = {n: json.dumps(v)[1:-1] for n, v in bound.items()}
            params = {
                k: fill_secrets(v, escaped if k == "arguments" else bound) for k, v in call.params.items()
            }
            return replace(call, params=params)
        if not registry.is_browser(call.name):
            return call
        for param, value in call.params.items():
            unknown = [n for n in names_in(value) if n not in self.secrets]
            if unknown:
                known = ", ".join(sorted(self.secrets)) or "none"
                return CallError(
                    "invalid_param",
                    f"there is no secret named {unknown[0]} (the secrets you may use: {known})",
                    call.name,
                    param,
                )
        used = {n for v in call.params.values() for n in names_in(v)}
        now = {n: self.secrets[n].current() for n in used}
        codes = {n: v for n, v in now.items() if self.secrets[n].seed is not None}
        if codes:  # a one-time code typed now is hidden from now on
            self.values.update(codes)
            self.hide = Hider(self.values)
        params = {k: fill_secrets(v, now) for k, v in call.params.items()}
        return replace(call, params=params)

    def result(self, result: Observation | Failure | None) -> Observation | Failure | None:
        """The result with every secret's value replaced by its placeholder (all but the screenshot)."""
        if not self.hide or result is None:
            return result
        h = self.hide
        if isinstance(result, Failure):
            return result.model_copy(
                update={
                    "message": h(result.message),
                    "observation": self.result(result.observation),
                    "last_url": h(result.last_url) if result.last_url else result.last_url,
                }
            )
        return result.model_copy(
            update={
                "url": h(result.url),
                "title": h(result.title),
                "console": tuple(c.model_copy(update={"text": h(c.text)}) for c in result.console),
                "notes": tuple(h(n) for n in result.notes),
                "target": h(result.target) if result.target else result.target,
                "snapshot": h(result.snapshot) if result.snapshot else result.snapshot,
                "extract": h(result.extract) if result.extract else result.extract,
                "tabs": tuple(h(t) for t in result.tabs),
                "identity": _hidden_identity(result.identity, h),
            }
        )

    def rendered(self, r: Rendered) -> Rendered:
        return replace(r, text=self.hide(r.text)) if self.hide else r

    def error(self, e: CallError) -> CallError:
        """A validation error about a filled-in call, with the secret values it quotes hidden."""
        return replace(e, message=self.hide(e.message), example=self.hide(e.example)) if self.hide else e


def _hidden_identity(identity: Identity | None, h: Callable[[str], str]) -> Identity | None:
    """An element's identity with any secret value in its texts hidden."""
    if identity is None:
        return None
    return identity.model_copy(
        update={
            "described": h(identity.described),
            "name": h(identity.name),
            "text": h(identity.text),
            "attributes": {k: h(v) for k, v in identity.attributes.items()},
            "locators": tuple(h(loc) for loc in identity.locators),
        }
    )
