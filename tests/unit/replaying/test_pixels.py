"""The vectorised comparison equals the pixelmatch package: the same count and the same diff image."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from pixelmatch.contrib.PIL import pixelmatch

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
