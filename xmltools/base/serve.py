"""A small static file server on 127.0.0.1, for the demo, replays and tests.

``with serve_directory("fixtures/site") as base_url: ...`` serves a folder on
a free port in a background thread and stops it on exit.  Extra routes (a
path prefix and a handler) let tests add misbehaving endpoints.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..errors import ConfigError

__all__ = ["Route", "serve_directory"]

Route = Callable[[SimpleHTTPRequestHandler], None]


class _Handler(SimpleHTTPRequestHandler):
    routes: Mapping[str, Route] = {}

    def _routed(self) -> bool:
        for prefix, route in self.routes.items():
            if self.path.startswith(prefix):
                route(self)
                return True
        return False

    def do_GET(self) -> None:
        if not self._routed():
            super().do_GET()

    def do_POST(self) -> None:
        if not self._routed():
            self.send_error(405, "this server only serves files; POST goes to a route")

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: tests and the demo print their own progress


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


@contextmanager
def serve_directory(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    routes: Mapping[str, Route] | None = None,
) -> Iterator[str]:
    """Serve ``directory``; yields the base URL (``http://127.0.0.1:PORT``)."""
    d = Path(directory)
    if not d.is_dir():
        raise ConfigError(f"cannot serve {str(d)!r}: not a folder")
    handler = type("Handler", (_Handler,), {"routes": dict(routes or {})})
    server = _Server((host, port), functools.partial(handler, directory=str(d)))
    thread = threading.Thread(target=server.serve_forever, name="xmltools-serve", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
