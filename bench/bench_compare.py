"""Screenshot comparison benchmark: what one replay step's comparison costs.

Pairs of 900x600 screenshots, as replay meets them: identical, a blinking caret,
a changed heading, and a page changed all over.  Each is compared with
:func:`xmltools.replaying.compare.compare_images` (decoding, masks, the bounding box of
the changed pixels, then pixelmatch's algorithm on numpy arrays), and, in the
same run, with the ``pixelmatch`` package (pure Python) on that bounding box,
which is what ``compare_images`` did before, and on the whole image.  Both
count the same pixels (the bench checks it); the figures are medians.
Run it with ``make bench`` (or ``python bench/bench_compare.py --json out.json``).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from collections.abc import Callable

from PIL import Image, ImageChops, ImageDraw
from pixelmatch.contrib.PIL import pixelmatch

from xmltools.replaying.compare import compare_images, load_image


def page(heading: str = "Order summary", caret: bool = False, shift: int = 0) -> bytes:
    im = Image.new("RGB", (900, 600), "white")
    d = ImageDraw.Draw(im)
    d.text((24 + shift, 20), heading, fill=(31, 41, 55), font_size=30)
    for k in range(14):
        d.text((24 + shift, 80 + 22 * k), "Three items are waiting in your basket. " * 2, fill=(55, 65, 81))
    d.rounded_rectangle((24 + shift, 420, 126 + shift, 456), radius=6, fill=(37, 99, 235))
    d.rectangle((138, 480, 394, 510), outline=(120, 120, 120))
    if caret:
        d.line((150, 486, 150, 503), fill="black")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def changed_box(a: Image.Image, b: Image.Image) -> tuple[int, int, int, int]:
    """The bounding box of the changed pixels with a 3-pixel margin (the whole image when none changed)."""
    box = ImageChops.difference(a, b).getbbox(alpha_only=False)
    if box is None:
        return (0, 0, a.width, a.height)
    return (max(box[0] - 3, 0), max(box[1] - 3, 0), min(box[2] + 3, a.width), min(box[3] + 3, a.height))


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", default=None, help="write the figures here")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    base = page()
    pairs = {
        "identical": page(),
        "caret": page(caret=True),
        "heading": page(heading="Your basket"),
        "everything": page(shift=40),
    }
    out: dict[str, dict[str, float]] = {}
    for name, other in pairs.items():
        a, b = load_image(base), load_image(other)
        ours = median_ms(lambda o=other: compare_images(base, o, max_diff_pixel_ratio=0.0001), args.rounds)
        box = changed_box(a, b)
        ca, cb = a.crop(box), b.crop(box)
        before = median_ms(
            lambda ca=ca, cb=cb: pixelmatch(ca, cb, Image.new("RGBA", ca.size), threshold=0.2), args.rounds
        )
        whole = median_ms(
            lambda a=a, b=b: pixelmatch(a, b, Image.new("RGBA", a.size), threshold=0.2), args.rounds
        )
        c = compare_images(base, other, max_diff_pixel_ratio=0.0001)
        reference = pixelmatch(a, b, Image.new("RGBA", a.size), threshold=0.2)
        assert reference == c.diff_pixels, (name, reference, c.diff_pixels)
        out[name] = {
            "compare_ms": round(ours, 1),
            "pixelmatch_on_the_box_ms": round(before, 1),
            "whole_pixelmatch_ms": round(whole, 1),
            "diff_pixels": c.diff_pixels,
        }
        print(
            f"{name:>10}: compare_images {ours:7.1f} ms; the pixelmatch package on the changed box"
            f" {before:7.1f} ms ({before / ours:.0f}x slower), on the whole image {whole:7.1f} ms;"
            f" {c.diff_pixels:,} pixels differ (pixelmatch agrees), drift: {not c.ok}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
