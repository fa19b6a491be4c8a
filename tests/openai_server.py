"""A small OpenAI-compatible chat server on 127.0.0.1 with scripted assistant replies.

It answers ``POST /v1/chat/completions``, streaming (server-sent events) and
not.  A script decides each reply from the request; failure modes (an HTTP
500, a connection dropped mid-stream) can be armed for the next request.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict[str, Any]], str]


def by_turn(replies: list[str], after: str = "I am done.") -> Script:
    """Reply number n to the request holding n assistant messages; then ``after``."""

    def script(req: dict[str, Any]) -> str:
        n = sum(1 for m in req["messages"] if m.get("role") == "assistant")
        return replies[n] if n < len(replies) else after

    return script


class ScriptedServer:
    def __init__(self, script: Script, *, chunk: int = 7, delay: float = 0.0) -> None:
        self.script = script
        self.chunk = chunk
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[str] = []  # "500" or "drop", consumed one per request
        self.cut_streams = 0  # streams the client closed before the end
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.requests.append(body)
                    failure = server.fail_next.pop(0) if server.fail_next else None
                if failure == "500":
                    self._json(500, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                reply = server.script(body)
                usage = {
                    "prompt_tokens": sum(len(json.dumps(m)) // 4 for m in body["messages"]),
                    "completion_tokens": max(1, len(reply) // 4),
                }
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                if not body.get("stream"):
                    message = {"role": "assistant", "content": reply}
                    self._json(
                        200,
                        {
                            "id": "chatcmpl-scripted",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": body.get("model", "scripted"),
                            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                            "usage": usage,
                        },
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = [reply[i : i + server.chunk] for i in range(0, len(reply), server.chunk)]
                try:
                    for k, piece in enumerate(pieces):
                        if failure == "drop" and k == len(pieces) // 2:
                            self.wfile.flush()
                            self.connection.shutdown(2)  # the connection drops mid-stream
                            return
                        self._event(
                            {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]},
                            body,
                        )
                        if server.delay:
                            time.sleep(server.delay)
                    self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, body)
                    if (body.get("stream_options") or {}).get("include_usage"):
                        self._event({"choices": [], "usage": usage}, body)
                    self._chunk(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    with server.lock:
                        server.cut_streams += 1
                self.close_connection = True

            def _json(self, status: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _event(self, data: dict[str, Any], body: dict[str, Any]) -> None:
                data = {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "scripted"),
                    **data,
                }
                self._chunk(b"data: " + json.dumps(data).encode() + b"\n\n")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler

    @contextmanager
    def running(self) -> Iterator[str]:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        httpd.daemon_threads = True
        t = threading.Thread(target=httpd.serve_forever, daemon=True)
        t.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        finally:
            httpd.shutdown()
            httpd.server_close()
