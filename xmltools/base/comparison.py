"""What a screenshot comparison takes and gives, as data: the masked Region and the Comparison.

A transcript's replay settings name regions, and the replay's report shows
comparisons, so both live here, below the transcript and the replay.  The
comparison itself is :mod:`xmltools.replaying.compare`.  Pillow is imported only
when a diff image is encoded.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["Comparison", "Region"]


class Region(BaseModel):
    """A rectangle in CSS pixels of the viewport (x, y from the top left)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: float = Field(ge=0)
    y: float = Field(ge=0)
    width: float = Field(gt=0)
    height: float = Field(gt=0)

    @classmethod
    def parse(cls, text: str) -> Region:
        """``X,Y,W,H`` (as on the command line)."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 4:
            raise UsageError(f"a region is X,Y,WIDTH,HEIGHT in CSS pixels (got {text!r})")
        try:
            x, y, w, h = (float(p) for p in parts)
            return cls(x=x, y=y, width=w, height=h)
        except ValueError as e:
            raise UsageError(f"a region is X,Y,WIDTH,HEIGHT in CSS pixels (got {text!r})") from e


@dataclass(frozen=True)
class Comparison:
    """What a comparison of an expected (recorded) and an actual (live) screenshot found."""

    expected_size: tuple[int, int]
    actual_size: tuple[int, int]
    diff_pixels: int  # 0 when the sizes differ: nothing was compared
    allowed: int  # the most differing pixels that are no drift
    # draws the diff image, when pixels or sizes differ
    draw: Callable[[], Image] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def diff_image(self) -> Image | None:
        """The diff image, drawn the first time it is asked for (most comparisons never are)."""
        return self.draw() if self.draw is not None else None

    @functools.cached_property
    def diff_png(self) -> bytes | None:
        """The diff image as PNG, encoded the first time it is asked for (most comparisons never are)."""
        return _png(self.diff_image) if self.diff_image is not None else None

    @property
    def size_differs(self) -> bool:
        return self.expected_size != self.actual_size

    @property
    def total(self) -> int:
        return self.expected_size[0] * self.expected_size[1]

    @property
    def ratio(self) -> float:
        return self.diff_pixels / self.total if self.total else 0.0

    @property
    def ok(self) -> bool:
        return not self.size_differs and self.diff_pixels <= self.allowed

    def describe(self) -> str:
        if self.size_differs:
            (ew, eh), (aw, ah) = self.expected_size, self.actual_size
            return f"the screenshot is {aw}x{ah}, the recording's {ew}x{eh}"
        return f"{self.diff_pixels:,} pixels differ ({self.ratio:.4%} of the image; {self.allowed:,} allowed)"


def _png(im: Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG", optimize=False)
    return buf.getvalue()
