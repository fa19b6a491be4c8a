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

__all__ = ["count_pixels", "diff_pixels", "draw_diff"]

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


_LEVELS = np.arange(256, dtype=np.float64)
_Y_PARTS = (_LEVELS * 0.29889531, _LEVELS * 0.58662247, _LEVELS * 0.11448223)


def _brightness(img: Array) -> Array:
    """Each pixel's Y (the same floats as :func:`_y` of the blended values); opaque images by table lookup."""
    if (img[..., 3] == 255).all():
        r, g, b = (part.take(img[..., k]) for k, part in enumerate(_Y_PARTS))
        y: Array = r + g + b
        return y
    return _y(*_blended(img))


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
    """``arr`` with a one-pixel border, flattened (the border's values are never read: it is masked out)."""
    padded: Array = np.pad(arr, 1, mode="edge").ravel()
    return padded


class _Where:
    """A set of pixels, as the detector reads around them.

    ``at`` indexes the flattened padded arrays; ``steps`` are the eight
    neighbours' offsets from it and ``inside`` says, per neighbour, which pixels
    have that neighbour within the image.  Reading with flat indexes is several
    times faster than numpy's two-dimensional indexing.
    """

    def __init__(self, ys: Array, xs: Array, h: int, w: int) -> None:
        self.ys, self.xs = ys, xs
        self.at = (ys + 1) * (w + 2) + xs + 1
        self.steps = [dy * (w + 2) + dx for dx, dy in _NEIGHBOURS]
        left, right, up, down = xs > 0, xs < w - 1, ys > 0, ys < h - 1
        always = np.ones(len(xs), dtype=bool)
        horizontal, vertical = {-1: left, 0: always, 1: right}, {-1: up, 0: always, 1: down}
        self.inside = [horizontal[dx] & vertical[dy] for dx, dy in _NEIGHBOURS]
        self.edge = (~(left & right & up & down)).astype(np.int64)

    def __len__(self) -> int:
        return len(self.at)


class _Image:
    """One image as the detector reads it: packed RGBA and brightness, both flattened with a border."""

    def __init__(self, packed: Array, bright: Array) -> None:
        self.h, self.w = packed.shape
        self.packed = _padded(packed)
        self.bright = _padded(bright)

    def many_siblings(self, where: _Where) -> Array:
        """For each pixel: three or more neighbours of exactly its colour (an edge counts as one)."""
        count = where.edge.copy()
        here = self.packed.take(where.at)
        for step, inside in zip(where.steps, where.inside, strict=True):
            count += inside & (self.packed.take(where.at + step) == here)
        return count > 2

    def antialiased(self, other: _Image, where: _Where) -> Array:
        """Vysniauskas's test for each candidate pixel of this image (``other`` is the other image)."""
        n = len(where)
        zeroes = where.edge.copy()
        here = self.bright.take(where.at)
        here_rgba = self.packed.take(where.at)
        min_d, max_d = np.zeros(n), np.zeros(n)
        min_k, max_k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for k, (step, inside) in enumerate(zip(where.steps, where.inside, strict=True)):
            there = where.at + step
            same = self.packed.take(there) == here_rgba
            d = np.where(same, 0.0, here - self.bright.take(there))
            zeroes += inside & (d == 0)
            lower = inside & (d < min_d)
            min_d = np.where(lower, d, min_d)
            min_k[lower] = k
            higher = inside & ~lower & (d > max_d)
            max_d = np.where(higher, d, max_d)
            max_k[higher] = k
        result = np.zeros(n, dtype=bool)
        idx = np.flatnonzero((zeroes <= 2) & (min_d != 0) & (max_d != 0))
        if len(idx) == 0:
            return result
        offsets = np.array(_NEIGHBOURS)
        ys, xs = where.ys[idx], where.xs[idx]
        for which in (min_k[idx], max_k[idx]):
            around = _Where(ys + offsets[which, 1], xs + offsets[which, 0], self.h, self.w)
            result[idx] |= self.many_siblings(around) & other.many_siblings(around)
        return result


def count_pixels(a: Array, b: Array, threshold: float) -> tuple[Array, Array, Array]:
    """The pixels of two RGBA arrays that pixelmatch marks: rows, columns, and which are anti-aliased.

    The count of differing pixels is the number of marked pixels that are not
    anti-aliased.
    """
    if a.shape != b.shape or a.ndim != 3 or a.shape[2] != 4:
        raise ValueError(f"two RGBA images of one size are needed, not {a.shape} and {b.shape}")
    a = np.ascontiguousarray(a, dtype=np.uint8)
    b = np.ascontiguousarray(b, dtype=np.uint8)
    pa, pb = a.view(np.uint32)[..., 0], b.view(np.uint32)[..., 0]
    changed = np.flatnonzero(pa != pb)
    none = np.zeros(0, dtype=np.int64)
    if len(changed) == 0:
        return none, none, none.astype(bool)
    delta = _colour_delta(a.reshape(-1, 4)[changed], b.reshape(-1, 4)[changed])
    hits = changed[delta > 35215 * threshold * threshold]
    if len(hits) == 0:
        return none, none, none.astype(bool)
    ys, xs = np.divmod(hits, a.shape[1])
    first, second = _Image(pa, _brightness(a)), _Image(pb, _brightness(b))
    where = _Where(ys, xs, *pa.shape)
    aa = first.antialiased(second, where) | second.antialiased(first, where)
    return ys, xs, aa


def draw_diff(a: Array, ys: Array, xs: Array, aa: Array, *, alpha: float = 0.1) -> Array:
    """pixelmatch's diff image: ``a`` in pale grey, marked pixels in red, anti-aliased ones in yellow."""
    a = np.ascontiguousarray(a, dtype=np.uint8)
    raw_y = _y(*(a[..., k].astype(np.float64) for k in range(3)))
    # the grey is drawn from the raw values, unblended, as pixelmatch draws it
    grey = 255 + (raw_y - 255) * (alpha * a[..., 3].astype(np.float64) / 255)
    out = np.empty_like(a)
    out[..., :3] = grey.astype(np.uint8)[..., None]
    out[..., 3] = 255
    out[ys[aa], xs[aa]] = _YELLOW
    out[ys[~aa], xs[~aa]] = _RED
    return out


def diff_pixels(a: Array, b: Array, threshold: float, *, alpha: float = 0.1) -> tuple[int, Array]:
    """Count the differing pixels of two RGBA arrays (H x W x 4, uint8) and draw pixelmatch's diff image."""
    ys, xs, aa = count_pixels(a, b, threshold)
    return int((~aa).sum()), draw_diff(a, ys, xs, aa, alpha=alpha)
