"""The per-pixel comparison of two screenshots, vectorised with numpy: pixelmatch's algorithm, whole arrays.

Replay compares screenshots the way Playwright's ``toHaveScreenshot`` does,
with pixelmatch: a pixel differs when its perceived colour distance (YIQ, as
Kotsarenko and Ramos measure it) passes ``threshold``, unless it looks like
anti-aliasing (Vysniauskas's detector: its brightest or darkest neighbour sits
in a flat area of both images), which is not counted.

Why it is written here: the ``pixelmatch`` package is pure Python, one pixel at
a time, and takes one to six seconds for two 900x600 screenshots that differ
all over.  The one faster port on the package index (``blazediff``, Rust) reads
only image files by path, so every comparison would pay for encoding and
decoding two PNGs.  This module does the same arithmetic on whole numpy arrays,
in the same order (so the floating-point results are the same), and a test
holds it equal to ``pixelmatch`` on random and real images, count and diff
image alike.

Pure: numpy only (the ``replay`` extra); no browser, no Pillow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["diff_pixels"]

Array = np.ndarray[Any, Any]

# the eight neighbours, in the order pixelmatch visits them (x outer, y inner); ties go to the first
_NEIGHBOURS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]
_RED = np.array([255, 0, 0, 255], dtype=np.uint8)
_YELLOW = np.array([255, 255, 0, 255], dtype=np.uint8)


def _blended(img: Array) -> tuple[Array, Array, Array]:
    """R, G, B as float64, blended with white where the pixel is not opaque (as pixelmatch blends)."""
    r, g, b, a = (img[..., k].astype(np.float64) for k in range(4))
    see_through = a < 255
    if see_through.any():
        alpha = a / 255
        r = np.where(see_through, 255 + (r - 255) * alpha, r)
        g = np.where(see_through, 255 + (g - 255) * alpha, g)
        b = np.where(see_through, 255 + (b - 255) * alpha, b)
    return r, g, b


def _y(r: Array, g: Array, b: Array) -> Array:
    return r * 0.29889531 + g * 0.58662247 + b * 0.11448223


def _i(r: Array, g: Array, b: Array) -> Array:
    return r * 0.59597799 - g * 0.27417610 - b * 0.32180189


def _q(r: Array, g: Array, b: Array) -> Array:
    return r * 0.21147017 - g * 0.52261711 + b * 0.31114694


def _colour_delta(a: Array, b: Array) -> Array:
    """pixelmatch's colour_delta for pixel pairs whose RGBA values differ."""
    r1, g1, b1 = _blended(a)
    r2, g2, b2 = _blended(b)
    y = _y(r1, g1, b1) - _y(r2, g2, b2)
    i = _i(r1, g1, b1) - _i(r2, g2, b2)
    q = _q(r1, g1, b1) - _q(r2, g2, b2)
    delta: Array = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    return delta


def _padded(arr: Array) -> Array:
    """``arr`` with a one-pixel border (its values never read: the border is masked out)."""
    padded: Array = np.pad(arr, 1, mode="edge")
    return padded


def _neighbour(padded: Array, ys: Array, xs: Array, dx: int, dy: int) -> Array:
    """The value at (x + dx, y + dy) for each pixel, read from the padded array."""
    found: Array = padded[ys + 1 + dy, xs + 1 + dx]
    return found


def _on_edge(ys: Array, xs: Array, h: int, w: int) -> Array:
    edge: Array = ((xs == 0) | (xs == w - 1) | (ys == 0) | (ys == h - 1)).astype(np.int64)
    return edge


def _inside(ys: Array, xs: Array, dx: int, dy: int, h: int, w: int) -> Array:
    x, y = xs + dx, ys + dy
    inside: Array = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    return inside


class _Image:
    """One image as the detector reads it: packed RGBA and brightness, both with a border."""

    def __init__(self, packed: Array, bright: Array) -> None:
        self.h, self.w = packed.shape
        self.packed = _padded(packed)
        self.bright = _padded(bright)

    def many_siblings(self, ys: Array, xs: Array) -> Array:
        """For each pixel: three or more neighbours of exactly its colour (an edge counts as one)."""
        count = _on_edge(ys, xs, self.h, self.w)
        here = self.packed[ys + 1, xs + 1]
        for dx, dy in _NEIGHBOURS:
            inside = _inside(ys, xs, dx, dy, self.h, self.w)
            count += (inside & (_neighbour(self.packed, ys, xs, dx, dy) == here)).astype(np.int64)
        return count > 2

    def antialiased(self, other: _Image, ys: Array, xs: Array) -> Array:
        """Vysniauskas's test for each candidate pixel of this image (``other`` is the other image)."""
        n = len(ys)
        zeroes = _on_edge(ys, xs, self.h, self.w)
        here = self.bright[ys + 1, xs + 1]
        here_rgba = self.packed[ys + 1, xs + 1]
        min_d, max_d = np.zeros(n), np.zeros(n)
        min_k, max_k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for k, (dx, dy) in enumerate(_NEIGHBOURS):
            inside = _inside(ys, xs, dx, dy, self.h, self.w)
            same = _neighbour(self.packed, ys, xs, dx, dy) == here_rgba
            d = np.where(same, 0.0, here - _neighbour(self.bright, ys, xs, dx, dy))
            zeroes += (inside & (d == 0)).astype(np.int64)
            lower = inside & (d < min_d)
            min_d = np.where(lower, d, min_d)
            min_k = np.where(lower, k, min_k)
            higher = inside & ~lower & (d > max_d)
            max_d = np.where(higher, d, max_d)
            max_k = np.where(higher, k, max_k)
        result = np.zeros(n, dtype=bool)
        idx = np.flatnonzero((zeroes <= 2) & (min_d != 0) & (max_d != 0))
        if len(idx) == 0:
            return result
        offsets = np.array(_NEIGHBOURS)
        for which in (min_k[idx], max_k[idx]):
            oy, ox = ys[idx] + offsets[which, 1], xs[idx] + offsets[which, 0]
            result[idx] |= self.many_siblings(oy, ox) & other.many_siblings(oy, ox)
        return result


def diff_pixels(a: Array, b: Array, threshold: float, *, alpha: float = 0.1) -> tuple[int, Array]:
    """Count the differing pixels of two RGBA arrays (H x W x 4, uint8) and draw pixelmatch's diff image.

    The diff image is ``a`` in pale grey, differing pixels in red and anti-aliased
    ones in yellow, as pixelmatch draws it.
    """
    if a.shape != b.shape or a.ndim != 3 or a.shape[2] != 4:
        raise ValueError(f"two RGBA images of one size are needed, not {a.shape} and {b.shape}")
    a = np.ascontiguousarray(a, dtype=np.uint8)
    b = np.ascontiguousarray(b, dtype=np.uint8)
    pa, pb = a.view(np.uint32)[..., 0], b.view(np.uint32)[..., 0]
    ya = _y(*_blended(a))
    raw_y = ya if (a[..., 3] == 255).all() else _y(*(a[..., k].astype(np.float64) for k in range(3)))
    # the grey is drawn from the raw values, unblended, as pixelmatch draws it
    grey = 255 + (raw_y - 255) * (alpha * a[..., 3].astype(np.float64) / 255)
    out = np.empty_like(a)
    out[..., :3] = grey.astype(np.uint8)[..., None]
    out[..., 3] = 255
    changed = np.flatnonzero(pa != pb)
    if len(changed) == 0:
        return 0, out
    yb = _y(*_blended(b))
    delta = _colour_delta(a.reshape(-1, 4)[changed], b.reshape(-1, 4)[changed])
    hits = changed[delta > 35215 * threshold * threshold]
    if len(hits) == 0:
        return 0, out
    ys, xs = np.divmod(hits, a.shape[1])
    first, second = _Image(pa, ya), _Image(pb, yb)
    aa = first.antialiased(second, ys, xs) | second.antialiased(first, ys, xs)
    out[ys[aa], xs[aa]] = _YELLOW
    out[ys[~aa], xs[~aa]] = _RED
    return int((~aa).sum()), out
