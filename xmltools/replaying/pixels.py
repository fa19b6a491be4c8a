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
decoding two PNGs.  This module does the same arithmetic on numpy arrays, in
float64 and in the same order (so every float is pixelmatch's), and a test
holds it equal to ``pixelmatch`` on random and real images, count and diff
image alike.

How it is fast: the pixels go through in chunks of ``_CHUNK``, small enough
that a chunk's arrays stay in the processor's cache (whole-image temporaries
cost twice as much).  One pass finds the pixels whose colour distance passes
the threshold and keeps both images' brightness on the way; between opaque
pixels most are decided before the whole distance is measured, by two bounds
that cannot disagree with it (see ``_MOST``).  The detector runs on the pixels
over the threshold only: it reads each one's eight neighbours as a row of a
matrix (a row's eight flags are counted as one 64-bit number), takes the
darkest and the brightest with ``argmin``/``argmax`` (the first wins a tie, as
in pixelmatch's order) where both exist, and looks them up in a map of the
pixels with many siblings, drawn once per image from shifted views.  A
neighbour outside the image is read as the pixel itself (no brightness
difference) and taken off the row's count again, so the edges need no masks.

Pure: numpy only (the ``replay`` extra); no browser, no Pillow.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["count_pixels", "diff_pixels", "draw_diff"]

Array = np.ndarray[Any, Any]

# the eight neighbours, in the order pixelmatch visits them (x outer, y inner); ties go to the first
_NEIGHBOURS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]
_DX = np.array([dx for dx, _ in _NEIGHBOURS])
_DY = np.array([dy for _, dy in _NEIGHBOURS])
_CHUNK = 1 << 15  # pixels at a time: eight float64 arrays of a chunk fit in a core's 2 MB cache
# The two bounds that decide most opaque pixels without the whole distance.  It passes the limit when
# its first term, 0.5053 * y * y, does: the other two terms are never negative, and rounding never
# makes a sum of them smaller.  It stays under when _MOST * (dr² + dg² + db²) does: between pixels
# whose channels differ by (dr, dg, db) the distance is a quadratic form of those differences whose
# largest eigenvalue is 0.25607814, so _MOST leaves 2e-5 per unit of the sum, while float64 rounding
# keeps the distance as pixelmatch computes it within 1e-9 of the exact one.
_MOST = 0.2561
_RED = np.array([255, 0, 0, 255], dtype=np.uint8)
_YELLOW = np.array([255, 255, 0, 255], dtype=np.uint8)


def _chunks(n: int, size: int) -> Iterator[slice]:
    return (slice(start, start + size) for start in range(0, n, size))


def _rgb(packed: Array) -> tuple[Array, Array, Array, bool]:
    """R, G, B of packed RGBA pixels (uint32, flat) as float64, blended with white where the pixel is not
    opaque (as pixelmatch blends), and whether all were opaque."""
    c = packed.view(np.uint8).reshape(-1, 4)
    r, g, b = (c[:, k].astype(np.float64) for k in range(3))
    see_through = c[:, 3] < 255
    if not see_through.any():
        return r, g, b, True
    alpha = c[:, 3].astype(np.float64) / 255
    r = np.where(see_through, 255 + (r - 255) * alpha, r)
    g = np.where(see_through, 255 + (g - 255) * alpha, g)
    b = np.where(see_through, 255 + (b - 255) * alpha, b)
    return r, g, b, False


def _y(r: Array, g: Array, b: Array, out: Array | None = None) -> Array:
    y: Array = np.add(r * 0.29889531 + g * 0.58662247, b * 0.11448223, out=out)
    return y


def _i(r: Array, g: Array, b: Array) -> Array:
    return r * 0.59597799 - g * 0.27417610 - b * 0.32180189


def _q(r: Array, g: Array, b: Array) -> Array:
    return r * 0.21147017 - g * 0.52261711 + b * 0.31114694


def _delta(y: Array, one: tuple[Array, Array, Array], two: tuple[Array, Array, Array]) -> Array:
    """pixelmatch's colour_delta, given the difference in brightness ``y`` and both pixels' R, G, B."""
    i = _i(*one) - _i(*two)
    q = _q(*one) - _q(*two)
    # equal pixels come out 0.0, as pixelmatch returns for them
    delta: Array = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    return delta


def _over(pa: Array, pb: Array, limit: float) -> tuple[Array, Array, Array]:
    """The pixels whose colour distance (pixelmatch's colour_delta) passes ``limit``, as flat indexes,
    and both images' brightness (the Y of the blended values), which the detector reads.

    Where both are opaque, most pixels are decided without the whole distance
    (see ``_MOST``), and it is measured only for the rest.
    """
    bright_a, bright_b = np.empty(len(pa)), np.empty(len(pa))
    hits = []
    for part in _chunks(len(pa), _CHUNK):
        r1, g1, b1, opaque1 = _rgb(pa[part])
        r2, g2, b2, opaque2 = _rgb(pb[part])
        y = _y(r1, g1, b1, out=bright_a[part]) - _y(r2, g2, b2, out=bright_b[part])
        if not (opaque1 and opaque2):
            over = _delta(y, (r1, g1, b1), (r2, g2, b2)) > limit
        else:
            dr, dg, db = r1 - r2, g1 - g2, b1 - b2
            over = 0.5053 * y * y > limit  # the first term alone passes: the other two only add
            open_ = np.flatnonzero(~over & ((dr * dr + dg * dg + db * db) * _MOST >= limit))
            if len(open_):
                one, two = (r1[open_], g1[open_], b1[open_]), (r2[open_], g2[open_], b2[open_])
                over[open_] = _delta(y[open_], one, two) > limit
        hits.append(np.flatnonzero(over) + part.start)
    return np.concatenate(hits), bright_a, bright_b


def _many_siblings(packed: Array) -> Array:
    """For every pixel of an image (uint32, H x W): three or more of its neighbours have exactly its
    colour (an edge counts as one), as pixelmatch's has_many_siblings says.

    Each pair of neighbours is compared once, on shifted views of the whole
    image, and counts for both of its pixels.
    """
    count = np.zeros(packed.shape, dtype=np.uint8)
    count[0, :] = count[-1, :] = count[:, 0] = count[:, -1] = 1
    p = packed
    for one, two in (
        ((slice(None), slice(None, -1)), (slice(None), slice(1, None))),  # right
        ((slice(None, -1), slice(None)), (slice(1, None), slice(None))),  # below
        ((slice(None, -1), slice(None, -1)), (slice(1, None), slice(1, None))),  # below right
        ((slice(None, -1), slice(1, None)), (slice(1, None), slice(None, -1))),  # below left
    ):
        same = p[one] == p[two]
        count[one] += same
        count[two] += same
    many: Array = (count > 2).reshape(-1)
    return many


def _neighbours(at: Array, h: int, w: int) -> tuple[Array, Array]:
    """The eight neighbours of some pixels as flat indexes (a row per pixel, a column per neighbour), and
    what each row's count of zero differences is off by.

    A neighbour outside the image is read as the pixel itself, so it differs by
    zero; the offset takes those off the count again and adds pixelmatch's one
    for a pixel on the edge.
    """
    index = at[:, None] + (_DY * w + _DX)
    ys, xs = np.divmod(at, w)
    cols, rows = 1 + (xs > 0) + (xs < w - 1), 1 + (ys > 0) + (ys < h - 1)
    edge = (cols < 3) | (rows < 3)
    e = np.flatnonzero(edge)
    if len(e):
        x, y = xs[e, None] + _DX, ys[e, None] + _DY
        outside = (x < 0) | (x >= w) | (y < 0) | (y >= h)
        index[e] = np.where(outside, at[e, None], index[e])
    offset: Array = edge - (9 - cols * rows)
    return index, offset


class _Image:
    """One image as the detector reads it, flattened: brightness, and which pixels have many siblings."""

    def __init__(self, packed: Array, bright: Array) -> None:
        self.packed, self.bright, self.w = packed, bright, packed.shape[1]

    @functools.cached_property
    def many(self) -> Array:
        return _many_siblings(self.packed)

    def antialiased(self, other: _Image, at: Array, index: Array, offset: Array) -> Array:
        """Vysniauskas's test for the pixels ``at`` of this image (``index`` and ``offset`` are their
        :func:`_neighbours`)."""
        d = self.bright.take(at)[:, None] - self.bright.take(index)
        zeroes = _count_in_rows(d == 0) + offset
        maybe = np.flatnonzero((zeroes <= 2) & _any_in_rows(d < 0) & _any_in_rows(d > 0))
        result = np.zeros(len(d), dtype=bool)
        if len(maybe) == 0:
            return result
        near, steps = d[maybe], _DY * self.w + _DX
        # the darkest and the brightest neighbour; of equals the first, as pixelmatch visits them
        for which in (near.argmin(axis=1), near.argmax(axis=1)):
            there = at[maybe] + steps[which]
            result[maybe] |= self.many.take(there) & other.many.take(there)
        return result


def _words(rows: Array) -> Array:
    """Each row of an (n, 8) bool array read as one 64-bit number (a row is eight bytes)."""
    words: Array = np.ascontiguousarray(rows).view(np.uint64).reshape(-1)
    return words


def _any_in_rows(rows: Array) -> Array:
    """Whether any is true in each row of an (n, 8) bool array (faster than ``any(axis=1)``)."""
    some: Array = _words(rows) != 0
    return some


def _count_in_rows(rows: Array) -> Array:
    """How many are true in each row of an (n, 8) bool array: the row's bytes, summed by one
    multiplication (several times faster than ``sum(axis=1)``)."""
    counts: Array = ((_words(rows) * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)
    return counts


def count_pixels(a: Array, b: Array, threshold: float) -> tuple[Array, Array, Array]:
    """The pixels of two RGBA arrays that pixelmatch marks: rows, columns, and which are anti-aliased.

    The count of differing pixels is the number of marked pixels that are not
    anti-aliased.
    """
    if a.shape != b.shape or a.ndim != 3 or a.shape[2] != 4:
        raise ValueError(f"two RGBA images of one size are needed, not {a.shape} and {b.shape}")
    h, w = a.shape[:2]
    pa = np.ascontiguousarray(a, dtype=np.uint8).view(np.uint32)[..., 0]
    pb = np.ascontiguousarray(b, dtype=np.uint8).view(np.uint32)[..., 0]
    none = np.zeros(0, dtype=np.int64)
    if np.array_equal(pa, pb):
        return none, none, none.astype(bool)
    hits, bright_a, bright_b = _over(pa.reshape(-1), pb.reshape(-1), 35215 * threshold * threshold)
    aa = np.zeros(len(hits), dtype=bool)
    if len(hits):
        first, second = _Image(pa, bright_a), _Image(pb, bright_b)
        for part in _chunks(len(hits), _CHUNK // 2):
            at = hits[part]
            index, offset = _neighbours(at, h, w)
            aa[part] = first.antialiased(second, at, index, offset)
            aa[part] |= second.antialiased(first, at, index, offset)
    ys, xs = np.divmod(hits, w)
    return ys, xs, aa


def draw_diff(a: Array, ys: Array, xs: Array, aa: Array, *, alpha: float = 0.1) -> Array:
    """pixelmatch's diff image: ``a`` in pale grey, marked pixels in red, anti-aliased ones in yellow."""
    a = np.ascontiguousarray(a, dtype=np.uint8)
    flat = a.reshape(-1, 4)
    out = np.empty_like(flat)
    for part in _chunks(len(flat), _CHUNK):
        c = flat[part]
        raw_y = _y(*(c[:, k].astype(np.float64) for k in range(3)))
        # the grey is drawn from the raw values, unblended, as pixelmatch draws it
        grey = 255 + (raw_y - 255) * (alpha * c[:, 3].astype(np.float64) / 255)
        out[part, :3] = grey.astype(np.uint8)[:, None]
    out[:, 3] = 255
    image = out.reshape(a.shape)
    image[ys[aa], xs[aa]] = _YELLOW
    image[ys[~aa], xs[~aa]] = _RED
    return image


def diff_pixels(a: Array, b: Array, threshold: float, *, alpha: float = 0.1) -> tuple[int, Array]:
    """Count the differing pixels of two RGBA arrays (H x W x 4, uint8) and draw pixelmatch's diff image."""
    ys, xs, aa = count_pixels(a, b, threshold)
    return int((~aa).sum()), draw_diff(a, ys, xs, aa, alpha=alpha)
