"""The URL policy as the browser's own request interception: nothing refused leaves the browser, not
even a popup's first request or a redirect's next hop; and what is allowed is untouched, so pages
stream and the HTTP cache answers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import ROUTES

from xmltools.base.results import Failure, Observation, Point
from xmltools.base.serve import serve_directory
from xmltools.base.urlpolicy import UrlPolicy
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig, Timeouts

_BUTTON = "position:absolute;left:0;top:0;width:300px;height:80px"
_PAGES = {
    "cached.html": "<title>Cached</title><script src='/asset/app.js'></script>"
    f"<a href='cached.html?again' style='{_BUTTON}'>again</a>",
    "popup.html": "<title>Opener</title>"
    f"<button style='{_BUTTON}' onclick=\"window.open('http://localhost:' + location.port + '/out/p.html')\">"
    "open</button>"
    f"<a target='_blank' id='a' style='{_BUTTON};top:100px'>open</a>"
    "<script>a.href = 'http://localhost:' + location.port + '/out/b.html'</script>",
    "sw.html": "<title>SW</title><script>"
    "navigator.serviceWorker.register('sw.js').then(() => navigator.serviceWorker.ready).then((r) => {"
    " r.active.postMessage('http://localhost:' + location.port + '/out/sw.txt'); document.title = 'SW ready'; });"
    "</script>",
    "sw.js": "self.addEventListener('install', () => self.skipWaiting());"
    "self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));"
    "self.addEventListener('message', (e) => e.waitUntil(fetch(e.data).catch(() => null)));",
    "hop.html": "<title>Hops</title>"
    f"<a id='a' style='{_BUTTON}'>go</a>"
    "<script>a.href = '/__to__/' + encodeURIComponent('http://localhost:' + location.port + '/out/r.html')</script>",
}


class Site:
    def __init__(self, base: str, hits: Counter[str]) -> None:
        self.base = base
        self.hits = hits

    def outside(self) -> int:
        """Requests that reached the server for the other origin's pages."""
        return sum(n for path, n in self.hits.items() if path.startswith("/out/"))


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[Site]:
    for name, html in _PAGES.items():
        (tmp_path / name).write_text(html)
    (tmp_path / "out").mkdir()
    for name in ("p.html", "b.html", "r.html", "sw.txt"):  # never to be reached
        (tmp_path / "out" / name).write_text("<title>Outside</title>")
    hits: Counter[str] = Counter()
    stop = threading.Event()

    def file(handler: SimpleHTTPRequestHandler) -> None:
        hits[handler.path] += 1
        SimpleHTTPRequestHandler.do_GET(handler)

    def asset(handler: SimpleHTTPRequestHandler) -> None:
        hits[handler.path] += 1
        body = b"document.title += ' (script ran)';"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/javascript")
        handler.send_header("Cache-Control", "max-age=3600")
        handler.send_header("Content-Length", str(len(body)))
        SimpleHTTPRequestHandler.end_headers(handler)  # without the server's own "no-store"
        handler.wfile.write(body)

    def stream(handler: SimpleHTTPRequestHandler) -> None:
        """Its first part at once, the rest after 4 s."""
        hits[handler.path] += 1
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.end_headers()
        handler.wfile.write(b"<title>Streaming</title><h1>The first part</h1>" + b"<!-- -->" * 512)
        handler.wfile.flush()
        stop.wait(4)
        handler.wfile.write(b"<p>The rest</p>")

    def redirect(handler: SimpleHTTPRequestHandler) -> None:
        hits[handler.path] += 1
        ROUTES["/__to__/"](handler)

    routes = {"/asset/": asset, "/__stream__": stream, "/__to__/": redirect, "/": file}
    with serve_directory(tmp_path, routes=routes) as base:
        yield Site(base, hits)
        stop.set()


@pytest.fixture
async def local_only() -> AsyncIterator[BrowserSession]:
    async with BrowserSession(
        BrowserConfig(url_policy=UrlPolicy(allowed_origins=("http://127.0.0.1:*",)))
    ) as b:
        yield b


def ok(res: object) -> Observation:
    assert isinstance(res, Observation), res
    return res


async def test_the_default_policy_leaves_the_http_cache_working(
    browser: BrowserSession, counted: Site
) -> None:
    assert BrowserConfig().url_policy.restricts_requests  # the default policy does check every request
    ok(await browser.launch(counted.base + "/cached.html"))
    for _ in range(10):
        obs = ok(await browser.click(Point(x=100, y=40)))
        assert obs.title == "Cached (script ran)", obs
    assert counted.hits["/cached.html?again"] == 10
    assert counted.hits["/asset/app.js"] == 1, counted.hits


async def test_a_streamed_page_shows_its_first_part_every_time(counted: Site, repeat: int) -> None:
    config = BrowserConfig(timeouts=Timeouts(navigation=1.0))
    assert config.url_policy.restricts_requests
    async with BrowserSession(config) as b:
        for i in range(repeat):
            obs = ok(await b.launch(counted.base + "/__stream__"))
            assert obs.title == "Streaming", (i, obs)
            text = await b.on_page(lambda p: p.evaluate("document.body.innerText"))
            assert "The first part" in text and "The rest" not in text, (i, text)
            assert any("not finished loading" in n for n in obs.notes), (i, obs.notes)


async def test_a_popup_to_a_refused_origin_never_reaches_it(
    local_only: BrowserSession, counted: Site, repeat: int
) -> None:
    """A new tab's first request is made before the tab is reported; it is refused all the same,
    whether ``window.open`` or a ``target=_blank`` link opens the tab."""
    ok(await local_only.launch(counted.base + "/popup.html"))
    for i in range(max(2, repeat)):  # both kinds of tab at least once
        obs = ok(await local_only.click(Point(x=100, y=40 if i % 2 else 140)))
        assert obs.url == counted.base + "/popup.html", (i, obs.url)
        assert any("/out/" in n and "not among the allowed origins" in n for n in obs.notes), (i, obs.notes)
    assert counted.hits["/out/p.html"] + counted.hits["/out/b.html"] == 0, counted.hits


async def test_a_redirect_to_a_refused_origin_is_stopped_before_the_hop(
    local_only: BrowserSession, counted: Site, repeat: int
) -> None:
    ok(await local_only.launch(counted.base + "/hop.html"))
    for i in range(repeat):
        obs = ok(await local_only.click(Point(x=100, y=40)))
        assert obs.url == counted.base + "/hop.html", (i, obs.url)
        assert any("a redirect led there" in n for n in obs.notes), (i, obs.notes)
    assert sum(n for p, n in counted.hits.items() if p.startswith("/__to__/")) == repeat
    assert counted.outside() == 0, counted.hits


async def test_a_launch_redirected_out_fails_without_reaching_the_other_origin(
    local_only: BrowserSession, counted: Site, repeat: int
) -> None:
    """Repeated, since the hop races the tab's own listener and the browser-wide one: it is refused
    whichever of them sees it."""
    other = counted.base.replace("127.0.0.1", "localhost") + "/out/r.html"
    for i in range(repeat):
        started = time.monotonic()
        res = await local_only.launch(counted.base + "/__to__/" + quote(other, safe=""))
        assert isinstance(res, Failure) and "not among the allowed origins" in res.message, (i, res)
        assert time.monotonic() - started < 10
    assert counted.outside() == 0, counted.hits


async def test_a_service_workers_request_to_a_blocked_origin_never_leaves(counted: Site) -> None:
    """A service worker's requests belong to no tab; every guard's blocks apply to them."""
    policy = UrlPolicy(blocked_origins=("http://localhost:*",))
    async with BrowserSession(BrowserConfig(url_policy=policy)) as b:
        ok(await b.launch(counted.base + "/sw.html"))
        for _ in range(100):
            if await b.on_page(lambda p: p.title()) == "SW ready":
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the service worker never started")
        await asyncio.sleep(1.0)  # its fetch had time to go out
        assert counted.hits["/sw.js"] >= 1
        assert counted.hits["/out/sw.txt"] == 0, counted.hits
