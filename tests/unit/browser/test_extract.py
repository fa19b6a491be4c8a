"""Cleaning page HTML for the model (xmltools.browser.extract), without a browser."""

from __future__ import annotations

from xmltools.browser.extract import clean_html


def test_clean_html_without_a_browser() -> None:
    assert clean_html("<p onclick='x()'>a<!-- c --><script>s()</script></p>") == "<p>a</p>"
    assert clean_html("") == ""


def test_depth_keeps_the_text_around_what_it_cuts() -> None:
    html = "<div><p>Run <em>awaitable</em> objects in <a href='#x'>aws</a>.</p><div><p>a</p>\n<p>b</p>tail</div></div>"
    assert clean_html(html, 2) == (
        "<div><p>Run awaitable objects in aws. (the tags of 2 inline elements left out)</p>"
        "<div>…\ntail (2 child elements not shown)</div></div>"
    )
    assert clean_html("<ul><li>one</li></ul>", 1) == "<ul>… (1 child element not shown)</ul>"


def test_text_keeps_the_indentation_of_code() -> None:
    from xmltools.browser.extract import normalise_text

    got = normalise_text("\n\nasync def f():\u00a0\n    f = 1\t \n\tif f:\n\n\n\nend  ")
    assert got == "async def f():\n    f = 1\n    if f:\n\nend"
