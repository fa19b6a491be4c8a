"""A small Anthropic-compatible Messages server on 127.0.0.1 with scripted assistant replies.

It answers ``POST /v1/messages``, streamed (server-sent events named and shaped
as the real API sends them) and not.  A script decides each reply from the
request.  Failure modes can be armed, one per request: ``"529"`` (overloaded),
``"500"``, ``"drop"`` (the connection closes mid-stream) and ``"error_event"``
(an ``error`` event mid-stream, as the API sends when it overloads during a
reply).

Like the real API, it refuses (HTTP 400, ``invalid_request_error``) a request
whose messages do not alternate user/assistant starting with the user, that
has a ``system`` role among its messages, an empty or blank text block, or an
image block that is not a base64 or URL source; tests read the reason in
``rejected``.  Every request body is kept in ``requests`` (its headers in
``headers``, the API key it sent in ``api_keys``), and the usage each reply
reported in ``usages``.  ``latency=`` makes each answer wait, and
``most_in_flight`` counts the requests answered at once.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from support.loopback import LoopbackHandler, LoopbackServer, Script, by_turn

__all__ = ["AnthropicServer", "Script", "by_turn", "problem"]

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def problem(body: dict[str, Any]) -> str | None:
    """What the real Messages API would refuse in this request body, or None."""
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    system = body.get("system")
    if system is not None and not (
        isinstance(system, str) or (isinstance(system, list) and all(b.get("type") == "text" for b in system))
    ):
        return "system: must be a string or a list of text blocks"
    expected = "user"
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if role != expected:
            return f"messages.{i}: roles must alternate between user and assistant, starting with user"
        expected = "assistant" if role == "user" else "user"
        content = m.get("content")
        if isinstance(content, str):
            if not content.strip() and i != len(messages) - 1:
                return f"messages.{i}: all messages must have non-empty content"
            continue
        if not isinstance(content, list) or not content:
            return f"messages.{i}: all messages must have non-empty content"
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "text":
                if not str(block.get("text", "")).strip():
                    return f"messages.{i}.content.{j}: text content blocks must contain non-whitespace text"
            elif kind == "image":
                if role != "user":
                    return f"messages.{i}.content.{j}: images are only allowed in user messages"
                src = block.get("source") or {}
                if src.get("type") == "base64":
                    if src.get("media_type") not in IMAGE_TYPES or not src.get("data"):
                        return f"messages.{i}.content.{j}.source: a base64 image needs a media_type and data"
                elif src.get("type") != "url" or not src.get("url"):
                    return f"messages.{i}.content.{j}.source: unknown image source"
            else:
                return f"messages.{i}.content.{j}.type: {kind!r} is not a content block this server knows"
    return None


class AnthropicServer(LoopbackServer):
    def __init__(
        self, script: Script, *, chunk: int = 7, delay: float = 0.0, latency: float = 0.0, strict: bool = True
    ) -> None:
        super().__init__(script, chunk=chunk, delay=delay, latency=latency)
        self.strict = strict
        self.headers: list[dict[str, str]] = []
        self.api_keys: list[str | None] = []  # the key of each request: x-api-key, or a Bearer token
        self.usages: list[tuple[int, int]] = []  # (input_tokens, output_tokens) of each reply, in order
        self.rejected: list[str] = []  # why requests were refused with HTTP 400
        self.finished_streams = 0  # streams written to the end

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(LoopbackHandler):
            json_headers: ClassVar[dict[str, str]] = {"request-id": "req_scripted"}

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/v1/messages"):
                    self._error(404, "not_found_error", f"no route {self.path}")
                    return
                body = self.read_json()
                with server.answering():
                    self._answer(body)

            def _answer(self, body: dict[str, Any]) -> None:
                failure = server.received(body)  # "529", "500", "drop" or "error_event"
                with server.lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    bearer = self.headers.get("authorization", "")
                    server.api_keys.append(
                        self.headers.get("x-api-key")
                        or (bearer[7:] if bearer.startswith("Bearer ") else None)
                    )
                if failure == "529":
                    self._error(529, "overloaded_error", "Overloaded")
                    return
                if failure == "500":
                    self._error(500, "api_error", "Internal server error")
                    return
                if not self.headers.get("anthropic-version"):
                    self._error(400, "invalid_request_error", "anthropic-version: header is required")
                    return
                why = problem(body) if server.strict else None
                if why is not None:
                    with server.lock:
                        server.rejected.append(why)
                    self._error(400, "invalid_request_error", why)
                    return
                reply = server.script(body)
                prompt = len(json.dumps(body["messages"])) + len(json.dumps(body.get("system", "")))
                usage = {"input_tokens": max(1, prompt // 4), "output_tokens": max(1, len(reply) // 4)}
                with server.lock:
                    server.usages.append((usage["input_tokens"], usage["output_tokens"]))
                message = {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
                }
                if not body.get("stream"):
                    whole = {
                        **message,
                        "content": [{"type": "text", "text": reply}],
                        "stop_reason": "end_turn",
                        "usage": usage,
                    }
                    self._json(200, whole)
                    return
                self.start_stream()
                pieces = server.pieces(reply)
                try:
                    self._event("message_start", {"type": "message_start", "message": message})
                    self._event(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                    self._event("ping", {"type": "ping"})
                    for k, piece in enumerate(pieces):
                        if k == len(pieces) // 2 and failure == "drop":
                            self.drop()
                            return
                        if k == len(pieces) // 2 and failure == "error_event":
                            error = {
                                "type": "error",
                                "error": {"type": "overloaded_error", "message": "Overloaded"},
                            }
                            self._event("error", error)
                            self._end()
                            return
                        delta = {"type": "text_delta", "text": piece}
                        self._event(
                            "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
                        )
                        server.pause()
                    self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
                    self._event(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]},
                        },
                    )
                    self._event("message_stop", {"type": "message_stop"})
                    self._end()
                    with server.lock:
                        server.finished_streams += 1
                except (BrokenPipeError, ConnectionResetError):
                    server.was_cut()
                self.close_connection = True

            def _error(self, status: int, kind: str, message: str) -> None:
                self._json(status, {"type": "error", "error": {"type": kind, "message": message}})

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        return Handler
