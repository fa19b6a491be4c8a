"""The URL policy as pure data: schemes, file roots, origins, link-local addresses."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmltools.base.urlpolicy import UrlPolicy, origin_of
from xmltools.config.settings import Config
from xmltools.errors import ConfigError
from xmltools.tools import ActionContext, check_url


def test_origins_with_default_ports() -> None:
    assert origin_of("http://Example.COM/x") == ("http", "example.com", 80)
    assert origin_of("https://a.b:8443/") == ("https", "a.b", 8443)
    assert origin_of("file:///etc/passwd") is None
    assert origin_of("http://[::1]:99/") == ("http", "::1", 99)


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://localhost:3000/app", True),
        ("http://localhost/", True),
        ("https://docs.example.com/", True),
        ("https://example.com/", False),  # *.example.com needs a subdomain
        ("http://docs.example.com/", True),  # no scheme in the pattern: http and https
        ("http://docs.example.com:8080/", False),  # no port in the pattern: the default port only
        ("http://127.0.0.1:3000/", False),
        ("https://ads.example.com/", False),  # blocked, though the allow list matches too
    ],
)
def test_allow_and_block_lists(url: str, allowed: bool) -> None:
    p = UrlPolicy(
        allowed_origins=("http://localhost:*", "*.example.com"), blocked_origins=("ads.example.com",)
    )
    assert (p.check(url) is None) is allowed, p.check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.1.1:8080/",
        "http://2852039166/",  # 169.254.169.254 written as one number
        "http://0xa9fea9fe/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
    ],
)
def test_link_local_and_metadata_addresses_are_refused_by_default(url: str) -> None:
    reason = UrlPolicy().check(url)
    assert reason is not None and "link-local" in reason
    assert UrlPolicy(allow_link_local=True).check(url) is None


def test_subresources_only_meet_the_blocks() -> None:
    p = UrlPolicy(allowed_origins=("http://localhost:*",), blocked_origins=("tracker.test",))
    assert p.check("https://cdn.test/lib.js", navigation=False) is None
    assert p.check("https://cdn.test/", navigation=True) is not None
    assert p.check("http://tracker.test/pixel.gif", navigation=False) is not None
    assert p.check("http://169.254.169.254/", navigation=False) is not None


def test_file_urls_stay_in_their_roots(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    p = UrlPolicy(allowed_file_roots=(root,))
    assert p.check((root / "a.html").as_uri()) is None
    assert p.check(root.as_uri() + "/../secret") is not None
    assert "backslash" in str(p.check(root.as_uri() + "/..\\..\\etc\\passwd"))
    assert "backslash" in str(p.check(root.as_uri() + "/%5C..%5Cetc"))
    assert p.check("file://otherhost/share/x") is not None
    assert p.check("file:///etc/passwd") is not None
    assert UrlPolicy().check("file:///tmp/x") == "file URLs are not allowed in this session"


def test_inert_schemes_may_load_inside_pages_but_others_may_not() -> None:
    p = UrlPolicy()
    for url in ("about:blank", "data:text/html,x", "blob:http://a/b", "javascript:void(0)"):
        assert p.check(url) is None
    assert "ftp" in str(p.check("ftp://example.com/"))
    assert UrlPolicy(allowed_schemes=frozenset({"ftp"})).check("ftp://example.com/") is None


@pytest.mark.parametrize("bad", ["", "http://a/b", "gopher://x", "http://host:port", "http://:80"])
def test_bad_patterns_are_the_host_s_error(bad: str) -> None:
    with pytest.raises(ValueError):
        UrlPolicy(allowed_origins=(bad,))
    with pytest.raises(ConfigError):
        Config.build(allowed_origins=[bad])


def test_the_model_s_url_meets_the_same_policy(tmp_path: Path) -> None:
    ctx = ActionContext(allowed_origins=("http://localhost:*",))
    assert check_url("http://localhost:5173/", ctx) == "http://localhost:5173/"
    with pytest.raises(ValueError, match="not among the allowed origins"):
        check_url("http://127.0.0.1:5173/", ctx)
    with pytest.raises(ValueError, match="link-local"):
        check_url("http://169.254.169.254/", ActionContext())
    with pytest.raises(ValueError, match="backslash"):
        check_url(tmp_path.as_uri() + "/..\\..\\etc\\passwd", ActionContext(allowed_file_roots=(tmp_path,)))


def test_config_reads_origin_lists_from_text() -> None:
    c = Config.from_env({"XMLTOOLS_ALLOWED_ORIGINS": "http://localhost:*, https://*.example.com"})
    assert c.allowed_origins == ("http://localhost:*", "https://*.example.com")
    assert c.url_policy().check("https://a.example.com/") is None


@given(st.text(max_size=200))
def test_check_never_raises(url: str) -> None:
    p = UrlPolicy(allowed_origins=("*.example.com",), blocked_origins=("bad.example.com",))
    p.check(url)
    p.check(url, navigation=False)
    p.check("http://" + url)
    p.check("file:///" + url)


def test_blocked_addresses_hold_for_written_addresses_and_ranges() -> None:
    p = UrlPolicy(blocked_addresses=("127.0.0.2", "10.0.0.0/8", "fd12::/16"))
    assert p.check("http://127.0.0.2:8000/") == "127.0.0.2 is a blocked address (127.0.0.2)"
    assert p.check("http://10.1.2.3/") == "10.1.2.3 is a blocked address (10.0.0.0/8)"
    assert p.check("http://[::ffff:10.0.0.1]/") is not None  # an IPv4-mapped address is that address
    assert p.check("http://[fd12::1]/x") == "fd12::1 is a blocked address (fd12::/16)"
    assert p.check("http://127.0.0.1:8000/") is None
    assert p.check("http://10.0.0.9/logo.png", navigation=False) is not None  # sub-resources too
    assert p.restricts_requests


@pytest.mark.parametrize("bad", ["nope", "10.0.0.0/33", "", "1.2.3"])
def test_a_bad_blocked_address_is_the_hosts_error(bad: str) -> None:
    with pytest.raises(ValueError, match="is not an address or a range"):
        UrlPolicy(blocked_addresses=(bad,))


def test_which_host_names_are_resolved() -> None:
    p = UrlPolicy(blocked_addresses=("127.0.0.2",))
    assert p.host_to_resolve("http://Shop.Example:8080/a") == "shop.example"
    assert p.host_to_resolve("http://127.0.0.1/") is None  # an address needs no lookup
    assert p.host_to_resolve("file:///tmp/x") is None
    assert UrlPolicy().host_to_resolve("https://example.com/") == "example.com"  # link-local is checked
    assert UrlPolicy(allow_link_local=True).host_to_resolve("https://example.com/") is None


def test_the_addresses_of_a_name_decide() -> None:
    p = UrlPolicy(blocked_addresses=("127.0.0.2",))
    assert p.check_addresses("shop.test", ["127.0.0.1"]) is None
    assert p.check_addresses("shop.test", ["127.0.0.1", "127.0.0.2"]) == (
        "shop.test resolves to 127.0.0.2, a blocked address (127.0.0.2)"
    )
    said = p.check_addresses("meta.test", ["169.254.169.254"])
    assert said == "meta.test resolves to 169.254.169.254, a link-local or cloud metadata address"
    assert p.check_addresses("v6.test", ["fe80::1%eth0"]) is not None  # a scoped link-local address
    assert UrlPolicy(allow_link_local=True).check_addresses("meta.test", ["169.254.169.254"]) is None
    assert p.check_addresses("odd.test", ["not an address"]) is None
