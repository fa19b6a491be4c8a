"""Shaping Playwright's AI snapshot (xmltools.browser.snapshot): refs, names, finding, folding, the budget and its count.

The snapshots are Playwright's own ``aria_snapshot(mode="ai", boxes=True)``
output for pages of fixtures/site, taken in Chromium at 900x600, or built in
the same format.
"""

from __future__ import annotations

import re

import pytest

from xmltools.browser.snapshot import RUN_KEEP, Shaped, ref_lines, refs_in, shape

# fixtures/site/forms/order.html
ORDER = """\
- generic [active] [ref=e1] [box=16,20,868,604]:
  - heading "Order" [level=1] [ref=e2] [box=16,20,868,34]
  - generic [ref=e3] [box=16,74,868,266]:
    - generic [ref=e4] [box=16,74,868,17]: Email
    - textbox "Email" [ref=e5] [box=16,97,177,21]
    - textbox "City" [ref=e6] [box=197,97,177,21]
    - generic [ref=e7] [box=16,124,868,17]: Size
    - combobox "Size" [ref=e8] [box=16,147,70,19]:
      - option "Small" [selected] [box=0,0,0,0]
      - option "Medium" [box=0,0,0,0]
      - option "Large" [box=0,0,0,0]
    - generic [ref=e9] [box=16,172,868,17]: Extras
    - listbox "Extras" [ref=e10] [box=16,195,63,70]:
      - option "Gift bag" [ref=e11] [box=17,196,61,17]
      - option "Card" [ref=e12] [box=17,213,61,17]
      - option "Wrapping" [ref=e13] [box=17,230,61,17]
    - generic [ref=e14] [box=16,271,868,19]:
      - checkbox "I accept the terms" [ref=e15] [box=20,274,13,13]
      - text: I accept the terms
    - generic [ref=e16] [box=16,296,868,17]: Receipt
    - button "Receipt" [ref=e17] [box=16,319,253,21]
    - button "Help" [ref=e18] [box=273,319,43,21]
    - button "More help" [ref=e19] [box=321,319,75,21]
    - button "Send order" [ref=e20] [box=400,319,82,21]
  - generic [ref=e21] [box=16,348,260,40]:
    - button "Hidden prize" [ref=e22] [box=16,348,91,21]
    - generic "overlay" [ref=e23] [box=16,348,260,40]
  - paragraph [ref=e24] [box=16,403,868,17]: "Steps (drag to reorder):"
  - list [ref=e25] [box=16,435,868,79]:
    - listitem [ref=e26] [box=58,435,208,25]: Pack
    - listitem [ref=e27] [box=58,462,208,25]: Ship
    - listitem [ref=e28] [box=58,489,208,25]: Bill
  - iframe [ref=e29] [box=16,529,422,92]:
    - generic [ref=f1e2] [box=8,8,404,21]:
      - text: Gift note
      - textbox "Gift note" [ref=f1e3] [box=65,8,177,21]
      - button "OK" [ref=f1e4] [box=246,8,35,21]
"""

# fixtures/site/form.html: a button with a cursor
FORM = """\
- generic [active] [ref=e1] [box=0,0,900,255]:
  - heading "Sign in" [level=1] [ref=e2] [box=24,24,852,30]
  - generic [ref=e3] [box=24,70,852,147]:
    - textbox "Name" [ref=e5] [box=24,70,282,39]
    - textbox "Password" [ref=e7] [box=24,123,282,39]
    - button "Sign in" [ref=e9] [cursor=pointer] [box=24,176,91,41]
"""


def long_page(count: int = 200, top: int = 24) -> str:
    """fixtures/site/long.html: ``count`` paragraphs 40 px tall, the first at ``top``."""
    lines = [f"- generic [active] [ref=e1] [box=0,0,900,{top + 40 * count}]:"]
    lines += [
        f"  - paragraph [ref=e{i + 2}] [box=24,{top + 40 * i},852,40]: Paragraph {i}" for i in range(count)
    ]
    return "\n".join(lines) + "\n"


def without_boxes(text: str) -> str:
    return re.sub(r" \[box=[^\]]*\]", "", text)


# -- refs ----------------------------------------------------------------------------------------------


def test_refs_in_gives_every_ref_of_the_page_and_of_its_frames() -> None:
    refs = refs_in(ORDER)
    assert refs == {f"e{i}" for i in range(1, 30)} | {"f1e2", "f1e3", "f1e4"}
    assert refs_in(FORM) == {"e1", "e2", "e3", "e5", "e7", "e9"}
    assert refs_in('- option "Small" [selected] [box=0,0,0,0]\n- text: no refs here') == set()
    assert refs_in("") == set()


def test_ref_lines_name_each_element_by_role_and_name_without_its_attributes() -> None:
    lines = ref_lines(ORDER)
    assert set(lines) == refs_in(ORDER)  # the options without a ref are left out
    assert lines["e2"] == 'heading "Order"'  # [level=1] and the box are not part of the name
    assert lines["e5"] == 'textbox "Email"'
    assert lines["e8"] == 'combobox "Size"'  # the colon that opens its children is gone
    assert lines["e11"] == 'option "Gift bag"'
    assert lines["e15"] == 'checkbox "I accept the terms"'
    assert lines["f1e3"] == 'textbox "Gift note"'  # an element inside the iframe
    assert lines["e23"] == 'generic "overlay"'
    assert ref_lines(FORM)["e9"] == 'button "Sign in"'  # [cursor=pointer] goes too


def test_ref_lines_keep_a_quoted_text_and_drop_an_unquoted_one() -> None:
    lines = ref_lines(ORDER)
    assert lines["e4"] == "generic"  # "generic: Email": the text after the colon is content, not a name
    assert lines["e26"] == "listitem"
    assert lines["e24"] == 'paragraph: "Steps (drag to reorder):"'  # quoted: kept whole, colon and all


# -- shaping a page that fits ----------------------------------------------------------------------------


def test_a_page_that_fits_is_shown_whole_without_its_boxes() -> None:
    s = shape(ORDER, viewport_height=600)
    assert isinstance(s, Shaped)
    assert s.text == without_boxes(ORDER).rstrip("\n")
    assert "[box=" not in s.text and "[ref=e5]" in s.text and "[level=1]" in s.text
    assert s.total_elements == s.shown_elements == len(ORDER.splitlines()) == 37
    assert (s.above, s.below, s.folded, s.matched) == (0, 0, 0, None)


def test_keep_boxes_gives_the_snapshot_back_as_it_was() -> None:
    assert shape(ORDER, keep_boxes=True).text == ORDER.rstrip("\n")


def test_an_empty_snapshot_is_empty() -> None:
    assert shape("") == Shaped("", 0, 0, 0, 0, 0, None)
    assert shape("\n  \n").text == ""
    assert shape("", find="x").matched == 0


# -- find --------------------------------------------------------------------------------------------


def test_find_keeps_the_matching_elements_with_their_ancestors_in_any_case() -> None:
    s = shape(ORDER, find="GIFT")
    assert s.matched == 3  # the option, and the frame's text and textbox
    assert s.text.splitlines() == [
        "- generic [active] [ref=e1]:",
        "  - generic [ref=e3]:",
        '    - listbox "Extras" [ref=e10]:',
        '      - option "Gift bag" [ref=e11]',
        "  - iframe [ref=e29]:",
        "    - generic [ref=f1e2]:",
        "      - text: Gift note",
        '      - textbox "Gift note" [ref=f1e3]',
    ]
    assert s.shown_elements == 8 and s.total_elements == 37
    assert (s.above, s.below) == (0, 0)  # what does not match is not counted as left out


def test_find_keeps_a_little_of_what_is_inside_a_match() -> None:
    s = shape(ORDER, find="extras")
    assert s.matched == 2  # the label and the listbox
    for option in ('option "Gift bag"', 'option "Card"', 'option "Wrapping"'):
        assert option in s.text
    assert 'textbox "Email"' not in s.text


def test_find_that_matches_nothing_says_so() -> None:
    s = shape(ORDER, find="basket")
    assert s.matched == 0 and s.shown_elements == 0
    assert s.text == "- (nothing on the page holds the text 'basket')"


# -- folding -----------------------------------------------------------------------------------------


def test_alike_siblings_outside_the_viewport_fold_into_one_line() -> None:
    s = shape(long_page(), viewport_height=600)
    # paragraphs 0-14 reach into the 600 px viewport; 15-199 lie below it
    assert s.folded == 185 and s.below == 185 and s.above == 0
    assert s.total_elements == 201 and s.shown_elements == 16
    lines = s.text.splitlines()
    assert lines[15] == "  - paragraph [ref=e16]: Paragraph 14"
    assert lines[16] == "  - … 185 more paragraph like the above"
    assert "Paragraph 15" not in s.text
    assert lines[-1].startswith("- (185 more elements below were left out: scroll,")


def test_alike_siblings_in_the_viewport_never_fold() -> None:
    assert shape(long_page(), viewport_height=10_000).folded == 0
    assert shape(long_page()).folded == 0  # no viewport height: everything counts as in view


def test_a_short_run_does_not_fold() -> None:
    s = shape(long_page(RUN_KEEP + 1), viewport_height=30)
    # six alike paragraphs, five kept: one left below would not be worth a line
    assert s.folded == 0 and s.shown_elements == RUN_KEEP + 2


# -- the budget ---------------------------------------------------------------------------------------


def scrolled_page() -> str:
    """100 rows, each a link and a note, 40 px apart; scrolled down so rows 50 to 64 are in view."""
    lines = ["- generic [active] [ref=e1] [box=0,-2000,900,4000]:"]
    ref = 2
    for i in range(100):
        y = 40 * i - 2000
        lines.append(f'  - link "Item {i}" [ref=e{ref}] [box=24,{y},200,20]')
        lines.append(f"  - paragraph [ref=e{ref + 1}] [box=24,{y + 20},852,20]: Note {i}")
        ref += 2
    return "\n".join(lines) + "\n"


def test_over_the_budget_the_viewport_comes_first_then_the_nearest_links() -> None:
    s = shape(scrolled_page(), viewport_height=600, max_chars=1_600)
    assert len(s.text) <= 1_600
    shown = s.text.splitlines()
    # every row in the viewport is there, link and note
    for i in range(50, 65):
        assert f'link "Item {i}"' in s.text and f"Note {i}\n" in s.text + "\n"
    # then links by distance, before any note outside the viewport
    assert 'link "Item 49"' in s.text and 'link "Item 65"' in s.text
    assert "Note 49\n" not in s.text + "\n" and "Note 65\n" not in s.text + "\n"
    assert 'link "Item 0"' not in s.text and 'link "Item 99"' not in s.text
    # the page's order is kept
    items = [int(m) for m in re.findall(r'link "Item (\d+)"', s.text)]
    assert items == sorted(items)
    # what was left out is counted on each side, with the ways to reach it
    assert s.above > 0 and s.below > 0 and s.above + s.below + s.shown_elements == s.total_elements
    assert shown[-1] == (
        f"- ({s.above:,} more elements above and {s.below:,} more elements below were left out:"
        " scroll, take a snapshot of a part with a target, or look for a text with <find>)"
    )


@pytest.mark.parametrize("max_chars", [800, 2_000, 5_000])
def test_the_budget_holds_and_what_is_shown_plus_what_is_counted_is_everything(max_chars: int) -> None:
    s = shape(scrolled_page(), viewport_height=600, max_chars=max_chars)
    assert len(s.text) <= max_chars
    assert s.above + s.below + s.shown_elements == s.total_elements == 201
