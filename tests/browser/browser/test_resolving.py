"""Host names are resolved before the browser opens them: a name of a forbidden address is refused.

No traffic leaves loopback: the forbidden address is 127.0.0.2 (blocked by
the session's policy, and served by nobody), and test names are mapped to it
by the session's ``host_map``, which maps them for Chromium too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import quote

import pytest
from support.helpers import ok

from xmltools.base.results import Failure
from xmltools.base.urlpolicy import UrlPolicy
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig

HOSTS = (("allowed.test", "127.0.0.1"), ("forbidden.test", "127.0.0.2"))
REFUSED = "forbidden.test resolves to 127.0.0.2, a blocked address (127.0.0.2)"


@pytest.fixture
async def mapped() -> AsyncIterator[BrowserSession]:
    cfg = BrowserConfig(url_policy=UrlPolicy(blocked_addresses=("127.0.0.2",)), host_map=HOSTS)
    async with BrowserSession(cfg) as b:
        yield b


def port_of(site: str) -> str:
    return site.rsplit(":", 1)[1]


@pytest.mark.long
async def test_a_name_of_an_allowed_address_opens(mapped: BrowserSession, site: str) -> None:
    obs = ok(await mapped.launch(f"http://allowed.test:{port_of(site)}/pages/one.html"))
    assert obs.url.startswith("http://allowed.test:") and obs.title, obs


async def test_a_name_of_a_blocked_address_is_refused_and_the_model_told_why(
    mapped: BrowserSession, site: str
) -> None:
    res = await mapped.launch(f"http://forbidden.test:{port_of(site)}/pages/one.html")
    assert isinstance(res, Failure) and res.kind == "navigation", res
    assert REFUSED in res.message, res.message


async def test_a_redirect_to_a_name_of_a_blocked_address_is_refused(
    mapped: BrowserSession, site: str
) -> None:
    target = f"http://forbidden.test:{port_of(site)}/pages/one.html"
    res = await mapped.launch(site + "/__to__/" + quote(target, safe=""))
    assert isinstance(res, Failure) and res.kind == "navigation", res
    assert REFUSED in res.message, res.message


async def test_a_name_the_system_resolves_is_checked_too(site: str) -> None:
    """localhost comes from the system's resolver (its hosts file), not from a map."""
    cfg = BrowserConfig(url_policy=UrlPolicy(blocked_addresses=("127.0.0.0/8", "::1")))
    async with BrowserSession(cfg) as b:
        res = await b.launch(f"http://localhost:{port_of(site)}/pages/one.html")
        assert isinstance(res, Failure) and "localhost resolves to" in res.message, res
