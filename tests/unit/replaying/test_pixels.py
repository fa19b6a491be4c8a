"""The vectorised comparison equals the pixelmatch package: the same count and the same diff image."""

from __future__ import annotations

import io
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from pixelmatch.contrib.PIL import pixelmatch
from pixelmatch.utils import color_delta

from xmltools.replaying import pixels
from xmltools.replaying.compare import compare_images
from xmltools.replaying.pixels import diff_pixels


def reference(a: np.ndarray, b: np.ndarray, threshold: float) -> tuple[int, np.ndarray]:
    out = Image.new("RGBA", (a.shape[1], a.shape[0]))
    n = pixelmatch(Image.fromarray(a, "RGBA"), Image.fromarray(b, "RGBA"), out, threshold=threshold)
    return n, np.asarray(out)


@st.composite
def image_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float]:
    """Two small images from a few colours (so that flat areas and anti-aliasing both occur)."""
    h, w = draw(st.integers(1, 10)), draw(st.integers(1, 10))
    opaque = draw(st.booleans())
    colours = draw(st.lists(st.tuples(*[st.integers(0, 255)] * 4), min_size=1, max_size=4))
    palette = np.array([(r, g, b, 255 if opaque else a) for r, g, b, a in colours], dtype=np.uint8)
    pick = st.integers(0, len(palette) - 1)
    first = palette[np.array(draw(st.lists(pick, min_size=h * w, max_size=h * w))).reshape(h, w)]
    second = first.copy()
    for _ in range(draw(st.integers(0, h * w))):
        y, x = draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))
        second[y, x] = palette[draw(pick)]
    threshold = draw(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.5, 1.0]))
    return first, second, threshold


@settings(max_examples=300, deadline=None)
@given(image_pairs())
def test_the_count_and_the_diff_image_equal_pixelmatch(pair: tuple[np.ndarray, np.ndarray, float]) -> None:
    a, b, threshold = pair
    n, out = diff_pixels(a, b, threshold)
    want_n, want_out = reference(a, b, threshold)
    assert n == want_n
    if not np.array_equal(a, b):  # identical images: pixelmatch's PIL helper draws its own grey, unused here
        assert np.array_equal(out, want_out)


@settings(max_examples=100, deadline=None)
@given(image_pairs(), st.sampled_from([2, 3, 8]))
def test_chunks_of_any_size_give_pixelmatchs_answer(
    pair: tuple[np.ndarray, np.ndarray, float], chunk: int
) -> None:
    a, b, threshold = pair
    with patch.object(pixels, "_CHUNK", chunk):  # pixels and marked pixels go through in several chunks
        n, out = diff_pixels(a, b, threshold)
    want_n, want_out = reference(a, b, threshold)
    assert n == want_n
    if not np.array_equal(a, b):
        assert np.array_equal(out, want_out)


def page(shift: int = 0, tint: int = 0) -> np.ndarray:
    """A small page as a browser draws one: a gradient behind it and behind its header, a card of text with
    a border, a button; ``shift`` moves the content, ``tint`` recolours the gradients and the button."""
    h, w = 120, 200
    ys, xs = np.mgrid[0:h, 0:w]
    back = np.stack(
        [240 - ys * 40 // h + tint // 4, 244 - xs * 30 // w, 250 - (xs + ys) * 20 // (w + h) - tint // 3], -1
    )
    im = Image.fromarray(back.astype(np.uint8), "RGB")
    across = np.linspace(0, 1, w)[None, :, None]
    header = np.array([30, 64 + tint, 175]) * (1 - across) + np.array([124, 58, 237 - tint]) * across
    im.paste(Image.fromarray(header.astype(np.uint8).repeat(24, axis=0), "RGB"), (0, 0))
    d = ImageDraw.Draw(im)
    d.text((8 + shift, 4), "Order summary", fill=(255, 255, 255), font_size=14)
    d.rounded_rectangle(
        (8 + shift, 32, 150 + shift, 92), radius=6, fill=(255, 255, 255), outline=(209, 213, 219)
    )
    for k in range(3):
        d.text((14 + shift, 38 + 16 * k), "Three items wait.", fill=(75 + tint // 2, 85, 99), font_size=12)
    d.rounded_rectangle((8 + shift, 98, 80 + shift, 116), radius=4, fill=(37, 99 + tint, 235))
    d.text((16 + shift, 100), "Check out", fill="white", font_size=11)
    return np.asarray(im.convert("RGBA")).copy()


def test_pages_that_differ_all_over_agree_with_pixelmatch() -> None:
    a, b = page(), page(shift=2, tint=24)
    assert np.any(a != b, axis=-1).mean() > 0.5  # most pixels changed: moved, and the gradients tinted
    for threshold in (0.0, 0.05, 0.1, 0.2):
        n, out = diff_pixels(a, b, threshold)
        want_n, want_out = reference(a, b, threshold)
        assert (n, out.tobytes()) == (want_n, want_out.tobytes())
    png = []
    for arr in (a, b):
        buf = io.BytesIO()
        Image.fromarray(arr, "RGBA").save(buf, "PNG")
        png.append(buf.getvalue())
    assert compare_images(*png).diff_pixels == reference(a, b, 0.2)[0] > 100


# pixelmatch's colour distance, as a quadratic form of the differences of R, G and B
_YIQ = (
    (0.5053, (0.29889531, 0.58662247, 0.11448223)),
    (0.299, (0.59597799, -0.27417610, -0.32180189)),
    (0.1957, (0.21147017, -0.52261711, 0.31114694)),
)
FORM = sum(weight * np.outer(row, row) for weight, row in _YIQ)


def test_the_bound_on_the_colour_distance_holds() -> None:
    top = np.linalg.eigvalsh(FORM).max()
    assert top < pixels._MOST < top + 1e-4


def near_the_limit(limit: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of opaque pixels (1 x N x 4 each) whose distance is within 3% of ``limit``, either side: in
    any direction; along the form's top axis, where the bound is tightest; and nearly in grey, where the
    first term is nearly all of the distance."""
    top = np.linalg.eigh(FORM)[1][:, -1]
    groups = [
        (rng.normal(size=(20000, 3)), 0.03),
        (np.repeat([top, -top], 2000, axis=0), 0.01),
        (np.sign(rng.normal(size=(4000, 1))) + rng.normal(scale=0.02, size=(4000, 3)), 0.01),
    ]
    ways = np.concatenate([way for way, _ in groups])
    spread = np.concatenate([rng.uniform(1 - j, 1 + j, len(way)) for way, j in groups])
    scale = np.sqrt(limit / np.einsum("ni,ij,nj->n", ways, FORM, ways)) * spread
    steps = np.rint(ways * scale[:, None]).astype(int)
    first = rng.integers(0, 256, size=(len(ways), 3))
    first = np.clip(first, np.maximum(0, -steps), np.minimum(255, 255 - steps))  # both ends in range
    opaque = np.full((len(ways), 1), 255)
    return (
        np.concatenate([first, opaque], 1)[None].astype(np.uint8),
        np.concatenate([first + steps, opaque], 1)[None].astype(np.uint8),
    )


@pytest.mark.parametrize("threshold", [0.05, 0.1, 0.2, 0.3])
def test_pixels_near_the_threshold_are_decided_as_pixelmatch_decides(threshold: float) -> None:
    limit = 35215 * threshold * threshold
    first, second = near_the_limit(limit, np.random.default_rng(int(threshold * 100)))
    one, two = list(first.tobytes()), list(second.tobytes())
    deltas = [color_delta(one, two, 4 * k, 4 * k) for k in range(first.shape[1])]
    want = [k for k, delta in enumerate(deltas) if delta > limit]
    packed = [np.ascontiguousarray(x).view(np.uint32).reshape(-1) for x in (first, second)]
    assert pixels._over(*packed, limit)[0].tolist() == want
    close = np.abs(np.array(deltas) / limit - 1)
    assert (close < 0.01).sum() > 500 and 0.3 < len(want) / len(deltas) < 0.7  # close calls, both ways


def text_image(words: str, dx: int = 0) -> np.ndarray:
    im = Image.new("RGBA", (160, 48), "white")
    d = ImageDraw.Draw(im)
    d.text((6 + dx, 6), words, fill=(31, 41, 55), font_size=18)
    d.rounded_rectangle((6 + dx, 30, 60 + dx, 44), radius=5, fill=(37, 99, 235))
    return np.asarray(im).copy()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("Order summary", 0), ("Order summary", 1)),  # moved a pixel: mostly anti-aliasing
        (("Order summary", 0), ("Your basket", 0)),  # other words
        (("Order summary", 0), ("Order summary", 30)),  # moved far
    ],
)
def test_rendered_text_agrees_with_pixelmatch(first: tuple[str, int], second: tuple[str, int]) -> None:
    a, b = text_image(*first), text_image(*second)
    for threshold in (0.0, 0.1, 0.2):
        n, out = diff_pixels(a, b, threshold)
        want_n, want_out = reference(a, b, threshold)
        assert (n, out.tobytes()) == (want_n, want_out.tobytes())
    assert diff_pixels(a, b, 0.2)[0] > 0


def test_anti_aliased_pixels_are_drawn_yellow_and_not_counted() -> None:
    a, b = text_image("Order summary"), text_image("Order summary", 1)
    n, out = diff_pixels(a, b, 0.1)
    yellow = np.all(out == [255, 255, 0, 255], axis=-1).sum()
    red = np.all(out == [255, 0, 0, 255], axis=-1).sum()
    assert yellow > 0 and red == n


def test_shapes_must_agree() -> None:
    with pytest.raises(ValueError, match="one size"):
        diff_pixels(np.zeros((2, 2, 4), np.uint8), np.zeros((2, 3, 4), np.uint8), 0.1)


def test_compare_images_draws_and_encodes_the_diff_only_when_asked() -> None:
    def png(arr: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(arr, "RGBA").save(buf, "PNG")
        return buf.getvalue()

    c = compare_images(png(text_image("Order summary")), png(text_image("Your basket")))
    assert c.diff_pixels > 0 and "diff_png" not in vars(c) and "diff_image" not in vars(c)  # not drawn yet
    assert c.diff_png is not None and c.diff_png.startswith(b"\x89PNG") and c.diff_png is c.diff_png
