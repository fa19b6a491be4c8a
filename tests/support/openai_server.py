"""A small OpenAI-compatible chat server on 127.0.0.1 with scripted assistant replies.

It answers ``POST /v1/chat/completions``, streaming (server-sent events) and
not.  A script decides each reply from the request; failure modes (an HTTP
500, a connection dropped mid-stream) can be armed for the next request.
``latency=`` makes each answer wait, and ``most_in_flight`` counts the
requests answered at once.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.loopback import LoopbackHandler, LoopbackServer, Script, by_turn

__all__ = ["Script", "ScriptedServer", "by_turn"]


class ScriptedServer(LoopbackServer):
    base_path = "/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(LoopbackHandler):
            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = self.read_json()
                with server.answering():
                    self._answer(body)

            def _answer(self, body: dict[str, Any]) -> None:
                failure = server.received(body)  # "500" or "drop"
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
                self.start_stream()
                pieces = server.pieces(reply)
                try:
                    for k, piece in enumerate(pieces):
                        if failure == "drop" and k == len(pieces) // 2:
                            self.drop()
                            return
                        self._event(
                            {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]},
                            body,
                        )
                        server.pause()
                    self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, body)
                    if (body.get("stream_options") or {}).get("include_usage"):
                        self._event({"choices": [], "usage": usage}, body)
                    self._chunk(b"data: [DONE]\n\n")
                    self._end()
                except (BrokenPipeError, ConnectionResetError):
                    server.was_cut()
                self.close_connection = True

            def _event(self, data: dict[str, Any], body: dict[str, Any]) -> None:
                data = {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "scripted"),
                    **data,
                }
                self._chunk(b"data: " + json.dumps(data).encode() + b"\n\n")

        return Handler
