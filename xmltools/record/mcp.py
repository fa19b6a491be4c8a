"""An MCP server's answer in a transcript, and back: :class:`~xmltools.mcp.results.McpResult` to
:class:`~xmltools.record.format.McpRecord` and the reverse.

Images go in files beside the transcript, as screenshots do: the writer hands a
function that saves one and names its file, the loader one that reads it back.
Pure data otherwise: no SDK, no browser.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..base.results import Screenshot
from ..mcp.results import McpContent, McpResult
from .format import McpPartRecord, McpRecord

__all__ = ["from_record", "to_record"]


def to_record(result: McpResult, save: Callable[[Screenshot], str]) -> McpRecord:
    """The record of an answer; ``save`` writes an image and gives its path relative to the transcript."""
    return McpRecord(
        server=result.server,
        tool=result.tool,
        uri=result.uri,
        read_only=result.read_only,
        destructive=result.destructive,
        input_schema=result.schema,
        parts=[_part(p, save) for p in result.parts],
        is_error=result.is_error,
        structured=result.structured,
        unavailable=result.unavailable,
        source=result.source,
    )


def _part(p: McpContent, save: Callable[[Screenshot], str]) -> McpPartRecord:
    shot = p.image
    return McpPartRecord(
        kind=p.kind,
        text=p.text,
        uri=p.uri,
        mime_type=p.mime_type,
        image=save(shot) if shot is not None else None,
        image_size=(shot.width, shot.height) if shot is not None else None,
    )


def from_record(rec: McpRecord, read: Callable[[str], bytes]) -> McpResult:
    """The answer a record holds, as the interpreter renders it; ``read`` gives an image's bytes
    (an image that cannot be read is described instead, with the reason)."""
    return McpResult(
        rec.server,
        tuple(_content(p, read) for p in rec.parts),
        tool=rec.tool,
        uri=rec.uri,
        is_error=rec.is_error,
        structured=rec.structured,
        read_only=rec.read_only,
        destructive=rec.destructive,
        schema=rec.input_schema,
        unavailable=rec.unavailable,
        source="recording",
    )


def _content(p: McpPartRecord, read: Callable[[str], bytes]) -> McpContent:
    if p.image is None:
        return McpContent(p.kind, p.text, uri=p.uri, mime_type=p.mime_type)
    try:
        data = read(p.image)
    except OSError as e:
        why = f"(a recorded image, {Path(p.image).name}, could not be read: {e.strerror or e})"
        return McpContent(p.kind, why, uri=p.uri, mime_type=p.mime_type)
    fmt = Path(p.image).suffix.lstrip(".").lower()
    w, h = p.image_size or (0, 0)
    shot = Screenshot(data=data, format=fmt if fmt in ("webp", "png", "jpeg") else "png", width=w, height=h)
    return McpContent(p.kind, p.text, uri=p.uri, mime_type=p.mime_type, image=shot)
