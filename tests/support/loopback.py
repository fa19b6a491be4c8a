"""A small HTTP server on 127.0.0.1 for the scripted stand-ins of model APIs (openai_server, anthropic_server).

The base keeps what both share: the script that decides each reply, the
requests received, failures armed for the next request, streams the client
cut, a latency before each answer and the requests answered at once, serving
on a free port, and writing JSON or a chunked event stream.  Each
stand-in adds its own routes and the shape of its API.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

Script = Callable[[dict[str, Any]], str]


def by_turn(replies: list[str], after: str = "I am done.") -> Script:
    """Reply number n to the request holding n assistant messages; then ``after``."""

    def script(req: dict[str, Any]) -> str:
        n = sum(1 for m in req["messages"] if m.get("role") == "assistant")
        return replies[n] if n < len(replies) else after

    return script


class LoopbackHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, quiet, with JSON answers and chunked event streams."""

    protocol_version = "HTTP/1.1"
    json_headers: ClassVar[dict[str, str]] = {}  # sent with every JSON answer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def _json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in self.json_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def start_stream(self) -> None:
        """The head of a server-sent event stream, sent in chunks; the connection closes after it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()

    def drop(self) -> None:
        """The connection drops mid-stream."""
        self.wfile.flush()
        self.connection.shutdown(2)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class LoopbackServer:
    """A scripted server: subclasses give ``handler()``, and the path the SDK's base URL ends with."""

    base_path = ""

    def __init__(self, script: Script, *, chunk: int = 7, delay: float = 0.0, latency: float = 0.0) -> None:
        self.script = script
        self.chunk = chunk  # characters of the reply per streamed event
        self.delay = delay  # seconds between streamed events
        self.latency = latency  # seconds before each answer, as a model thinks before it replies
        self.in_flight = 0  # requests being answered now
        self.most_in_flight = 0  # the most requests answered at once
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[str] = []  # failures armed, consumed one per request
        self.cut_streams = 0  # streams the client closed before the end
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def received(self, body: dict[str, Any]) -> str | None:
        """Keep a request; the failure armed for it, if any."""
        with self.lock:
            self.requests.append(body)
            return self.fail_next.pop(0) if self.fail_next else None

    @contextmanager
    def answering(self) -> Iterator[None]:
        """One request answered (in flight until its answer or stream ends), after ``latency`` seconds."""
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            yield
        finally:
            with self.lock:
                self.in_flight -= 1

    def pieces(self, reply: str) -> list[str]:
        """The reply cut into the pieces that are streamed."""
        return [reply[i : i + self.chunk] for i in range(0, len(reply), self.chunk)]

    def pause(self) -> None:
        """Wait between two streamed events, when asked to."""
        if self.delay:
            time.sleep(self.delay)

    def was_cut(self) -> None:
        with self.lock:
            self.cut_streams += 1

    def wait_for_cut(self, n: int = 1, timeout: float = 2.0) -> int:
        """Wait until ``n`` streams were cut (the server notices on its next write); return the count."""
        deadline = time.monotonic() + timeout
        while self.cut_streams < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.cut_streams

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free port; yields the base URL to give the SDK (``base_url=``)."""
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        httpd.daemon_threads = True
        t = threading.Thread(target=httpd.serve_forever, daemon=True)
        t.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}{self.base_path}"
        finally:
            httpd.shutdown()
            httpd.server_close()
