"""What an MCP server answered, as plain data for the templates: text, images and resources.

:func:`from_tool_result` and :func:`from_resource` turn the SDK's answers into
:class:`McpResult`; each text is bounded (the cut stated) and each image becomes
a :class:`~xmltools.base.results.Screenshot`, which the image budget counts as
it counts the browser's.  Pure, but for reading an image's size (Pillow).
"""

from __future__ import annotations

import base64
import io
import json
import struct
from dataclasses import dataclass
from typing import Any, Literal

from ..base.quoting import cut
from ..base.results import Screenshot

__all__ = ["McpContent", "McpResult", "from_resource", "from_tool_result"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
Kind = Literal["text", "image", "resource", "link", "other"]


@dataclass(frozen=True)
class McpContent:
    """One part of an answer: a text, an image, a resource's text or a link to one."""

    kind: Kind
    text: str = ""
    uri: str | None = None
    mime_type: str | None = None
    image: Screenshot | None = None


@dataclass(frozen=True)
class McpResult:
    """A server's answer to ``use_mcp_tool`` (``tool`` set) or ``access_mcp_resource`` (``uri`` set)."""

    server: str
    parts: tuple[McpContent, ...]
    tool: str | None = None
    uri: str | None = None
    is_error: bool = False
    structured: str | None = None  # the structured content, as compact JSON, when there was no text
    # the tool as the server listed it: its hints and its input schema (a resource is read-only)
    read_only: bool = False
    destructive: bool | None = None
    schema: dict[str, Any] | None = None
    unavailable: str | None = None  # the server broke during the call: why (no parts then)
    source: Literal["server", "recording"] = "server"  # who answered (a replay may answer from its recording)

    @property
    def images(self) -> tuple[Screenshot, ...]:
        return tuple(p.image for p in self.parts if p.image is not None)

    def text(self) -> str:
        """Every text part, for the transcript's output."""
        said = [p.text for p in self.parts if p.text]
        if self.structured:
            said.append(self.structured)
        return "\n\n".join(said) or "(no output)"


def from_tool_result(server: str, tool: str, result: Any, limit: int) -> McpResult:
    parts = tuple(_content(item, limit) for item in (getattr(result, "content", None) or []))
    structured = getattr(result, "structured_content", None)
    shown = None
    if structured is not None and not any(p.kind == "text" for p in parts):
        shown = cut(json.dumps(structured, ensure_ascii=False, separators=(",", ":")), limit)
    return McpResult(
        server, parts, tool=tool, is_error=bool(getattr(result, "is_error", False)), structured=shown
    )


def from_resource(server: str, uri: str, result: Any, limit: int) -> McpResult:
    parts = tuple(_contents(c, limit) for c in (getattr(result, "contents", None) or []))
    return McpResult(server, parts, uri=uri)


def _content(item: Any, limit: int) -> McpContent:
    kind = getattr(item, "type", "")
    if kind == "text":
        return McpContent("text", cut(str(item.text), limit, newline=True))
    if kind == "image":
        return _image(item.data, item.mime_type)
    if kind == "resource":
        return _contents(item.resource, limit)
    if kind == "resource_link":
        what = " ".join(x for x in (getattr(item, "name", ""), getattr(item, "description", "") or "") if x)
        return McpContent("link", what, uri=str(item.uri), mime_type=getattr(item, "mime_type", None))
    return McpContent("other", f"({kind or 'unknown'} content, not shown)")


def _contents(c: Any, limit: int) -> McpContent:
    uri, mime = str(getattr(c, "uri", "")), getattr(c, "mime_type", None)
    text = getattr(c, "text", None)
    if text is not None:
        return McpContent("resource", cut(str(text), limit, newline=True), uri=uri, mime_type=mime)
    blob = getattr(c, "blob", None)
    if blob and (mime or "").startswith("image/"):
        shown = _image(blob, mime or "")
        return McpContent("resource", shown.text, uri=uri, mime_type=mime, image=shown.image)
    size = len(blob or "") * 3 // 4
    return McpContent("resource", f"(binary, about {size} bytes, not shown)", uri=uri, mime_type=mime)


def _image(data: str, mime_type: str) -> McpContent:
    """An image as the conversation carries one; one that cannot be read is described instead."""
    try:
        raw = base64.b64decode(data)
        if raw[:8] == PNG_SIGNATURE and raw[12:16] == b"IHDR":  # a PNG's size is in its header
            fmt, size = "png", struct.unpack(">II", raw[16:24])
        else:
            fmt, size, raw = _by_pillow(raw)
    except Exception as e:  # a broken image is the server's: it is said, not raised
        return McpContent(
            "image", f"(an image the host could not read: {type(e).__name__})", mime_type=mime_type
        )
    shot = Screenshot(data=raw, format=fmt, width=size[0], height=size[1])
    return McpContent("image", f"(an image, {size[0]}x{size[1]})", mime_type=mime_type, image=shot)


def _by_pillow(raw: bytes) -> tuple[str, tuple[int, int], bytes]:
    """The format, size and bytes of an image; one in a format providers may refuse becomes a PNG."""
    from PIL import Image

    with Image.open(io.BytesIO(raw)) as img:
        fmt = (img.format or "").lower()
        size = img.size
        if fmt not in ("png", "jpeg", "webp"):
            out = io.BytesIO()
            img.convert("RGBA").save(out, "PNG")
            raw, fmt = out.getvalue(), "png"
    return fmt, size, raw
