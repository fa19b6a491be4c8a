"""Screenshot comparison for replay, as visual tests do it: per pixel, then a count.

Two screenshots are compared with pixelmatch's algorithm (the comparison
behind Playwright's ``toHaveScreenshot``), run on whole arrays by
:mod:`xmltools.replaying.pixels`: a pixel differs when its
colour distance passes ``screenshot_threshold`` (0 strict, 1 lenient; 0.2 as in
Playwright), and anti-aliased pixels are recognised and not counted.  A step
drifts when more pixels differ than allowed: ``max_diff_pixels``, or
``max_diff_pixel_ratio`` of the image, whichever is smaller when both are set.
Regions may be masked: they are painted over in both images before comparing.

Two images of different sizes are not compared: the difference is the size.

Only the cropping is done here: the comparison runs on the bounding box of the
changed pixels (plus a margin that anti-aliasing detection needs), which gives
the same count as the whole image and keeps an unchanged screenshot cheap.  The
diff image is drawn only when asked for.
numpy and Pillow are dependencies of xmltools; they are imported only when a comparison runs.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base.comparison import Comparison, Region
from ..errors import UsageError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["Comparison", "Region", "compare_images", "load_image"]

MASK_COLOUR = (255, 0, 255, 255)  # the colour masked regions are painted in, in both images
_MARGIN = 3  # pixels around the changed box: anti-aliasing detection looks two pixels out


def comparison_library() -> None:
    """A host error, said before anything starts, when Pillow or numpy is missing (a broken install:
    both are dependencies)."""
    try:
        import numpy  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        raise UsageError(
            f"comparing screenshots needs Pillow and numpy, which xmltools depends on ({e}): "
            "reinstall it (pip install --force-reinstall xmltools)"
        ) from e


def load_image(data: bytes) -> Image:
    """Decode a PNG, JPEG or WebP screenshot to RGBA."""
    comparison_library()
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(data)) as im:
        return im.convert("RGBA")


def allowed_pixels(total: int, max_diff_pixels: int | None, max_diff_pixel_ratio: float | None) -> int:
    """The most pixels that may differ (Playwright's rule: the smaller limit when both are given)."""
    limits = [
        *([max_diff_pixels] if max_diff_pixels is not None else []),
        *([int(total * max_diff_pixel_ratio)] if max_diff_pixel_ratio is not None else []),
    ]
    return min(limits) if limits else 0


def compare_images(
    expected: bytes,
    actual: bytes,
    *,
    threshold: float = 0.2,
    max_diff_pixels: int | None = None,
    max_diff_pixel_ratio: float | None = None,
    mask: Sequence[Region] = (),
    scale: float = 1.0,
) -> Comparison:
    """Compare two encoded screenshots; ``scale`` turns a mask's CSS pixels into image pixels."""
    if not 0 <= threshold <= 1:
        raise UsageError(f"screenshot_threshold is between 0 and 1 (got {threshold})")
    a, b = load_image(expected), load_image(actual)
    import numpy as np
    from PIL import Image as PILImage
    from PIL import ImageChops, ImageDraw

    from .pixels import count_pixels, draw_diff

    for im in (a, b):
        draw = ImageDraw.Draw(im)
        for r in mask:
            rect = (r.x * scale, r.y * scale, (r.x + r.width) * scale - 1, (r.y + r.height) * scale - 1)
            draw.rectangle(rect, fill=MASK_COLOUR)
    if a.size != b.size:
        return Comparison(a.size, b.size, 0, 0, functools.partial(_side_by_side, a, b))
    allowed = allowed_pixels(a.width * a.height, max_diff_pixels, max_diff_pixel_ratio)
    box = ImageChops.difference(a, b).getbbox(alpha_only=False)
    if box is None:
        return Comparison(a.size, b.size, 0, allowed)
    left, top = max(box[0] - _MARGIN, 0), max(box[1] - _MARGIN, 0)
    right, bottom = min(box[2] + _MARGIN, a.width), min(box[3] + _MARGIN, a.height)
    ca, cb = a.crop((left, top, right, bottom)), b.crop((left, top, right, bottom))
    first = np.asarray(ca)
    ys, xs, aa = count_pixels(first, np.asarray(cb), threshold)
    n = int((~aa).sum())
    if n == 0:
        return Comparison(a.size, b.size, 0, allowed)

    def diff_image() -> Image:
        diff = _faded(a)
        diff.paste(PILImage.fromarray(draw_diff(first, ys, xs, aa), "RGBA"), (left, top))
        return diff

    return Comparison(a.size, b.size, n, allowed, diff_image)


def _faded(im: Image) -> Image:
    """The image in pale grey: the background of a diff image, on which differences show in red."""
    from PIL import Image as PILImage

    grey = im.convert("L").point(lambda v: 255 + (v - 255) * 0.1)
    return PILImage.merge("RGBA", (grey, grey, grey, PILImage.new("L", im.size, 255)))


def _side_by_side(a: Image, b: Image) -> Image:
    """For images of different sizes: both, side by side, on white."""
    from PIL import Image as PILImage

    out = PILImage.new("RGBA", (a.width + b.width + 8, max(a.height, b.height)), (255, 255, 255, 255))
    out.paste(a, (0, 0))
    out.paste(b, (a.width + 8, 0))
    return out
