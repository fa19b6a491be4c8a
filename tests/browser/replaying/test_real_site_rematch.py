"""A recording made on a real site nobody here wrote (Python's documentation, from Debian's
python3.11-doc), replayed against changed copies: elements inserted before the targets, the targets
wrapped and the classes renamed (it passes and names the re-matched steps), and a copy where a target is
gone (it fails and names the step).  Skipped when the package is not installed; ``.ci/run`` installs it."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest
from support.helpers import ba
from test_export_chromium import run_exported

from xmltools.base.serve import serve_directory
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import Interpreter
from xmltools.replaying.run import ReplayResult, replay

DOCS = Path("/usr/share/doc/python3.11/html")
PAGES = ("index.html", "intro.html", "functions.html")

pytestmark = [
    pytest.mark.realsite,
    pytest.mark.skipif(not (DOCS / "index.html").exists(), reason="Debian's python3.11-doc is not installed"),
]


def copy_docs(folder: Path) -> Path:
    (folder / "library").mkdir(parents=True)
    shutil.copytree(DOCS / "_static", folder / "_static")
    for page in PAGES:
        shutil.copy(DOCS / "library" / page, folder / "library" / page)
    return folder


def centre(it: Interpreter, selector: str) -> str:
    """Where a model would click the element: its centre, once scrolled into view."""

    async def find(page: object) -> object:
        el = page.locator(selector).first  # type: ignore[attr-defined]
        await el.scroll_into_view_if_needed()
        return await el.bounding_box()

    browser = it.core.browser_of()
    assert browser is not None
    box = it._call(browser.on_page(find))  # type: ignore[attr-defined]
    assert box is not None, selector
    return f"{int(box['x'] + box['width'] / 2)},{int(box['y'] + box['height'] / 2)}"


def record(site: Path, path: Path) -> None:
    with serve_directory(site) as base, Interpreter(Config()) as it:
        rec = it.record(path, base_url=base)
        rec.message("user", "Open the introduction of the library reference, then its built-in functions")
        it.handle(ba("launch", url=f"{base}/library/index.html"))
        it.handle(ba("click", coordinate=centre(it, 'div.body a[href="intro.html"]:text-is("Introduction")')))
        rec.expect_url(f"{base}/library/intro.html")
        rec.expect_element("heading", "Introduction")
        it.handle(ba("click", coordinate=centre(it, 'div.body a[href="functions.html#built-in-funcs"]')))
        rec.expect_url(r"/library/functions\.html#built-in-funcs$", regex=True)
        rec.expect_text("Built-in Functions")
        it.handle(ba("close"))
        rec.end("completed", "completed")


NOTICE = (
    '<div class="notice"><p><a href="#news">What is new in this release</a></p>'
    '<button type="button">Dismiss</button><p>Read the notes before you upgrade.</p></div>'
)


def changed(html: str) -> str:
    """The same page after a redesign: a notice before everything, the links wrapped, classes renamed."""
    html = html.replace(
        '<div class="body" role="main">', '<div class="content-body" role="main">' + NOTICE, 1
    )
    html = re.sub(r'(<a class="reference internal"[^>]*>.*?</a>)', r'<span class="link-wrap">\1</span>', html)
    return html.replace('class="reference internal"', 'class="ref ref--internal"').replace(
        "toctree-l1", "toc-entry"
    )


def replayed(site: Path, path: Path) -> ReplayResult:
    with serve_directory(site) as base:
        return asyncio.run(replay(path, base_url=base, overrides={"drift": "warn"}))


def test_a_real_site_redesigned_replays_by_identity_and_a_removed_target_fails(tmp_path: Path) -> None:
    site = copy_docs(tmp_path / "site")
    path = tmp_path / "docs.jsonl"
    record(site, path)
    assert replayed(site, path).ok

    for page in PAGES:
        file = site / "library" / page
        file.write_text(changed(file.read_text()))
    again = replayed(site, path)
    assert again.ok and again.checked == 4, again.summary()
    assert [len(s.rematched) for s in again.steps] == [0, 1, 1, 0], again.summary()
    assert (
        again.steps[1].rematched[0].found_by
        == '#the-python-standard-library >> role=link[name="Introduction"s]'
    )

    index = site / "library" / "index.html"
    index.write_text(
        re.sub(
            r'<span class="link-wrap"><a [^>]*href="intro.html">Introduction</a></span>',
            "Introduction",
            index.read_text(),
        )
    )
    gone = replayed(site, path)
    assert gone.outcome == "failed", gone.summary()
    assert gone.failures[0].startswith(
        'step 2: browser_action click: failed (the recorded element link "Introduction" was not found'
    ), gone.failures


def test_the_exported_test_of_the_real_site_passes_on_it(tmp_path: Path) -> None:
    site = copy_docs(tmp_path / "site")
    path = tmp_path / "docs.jsonl"
    record(site, path)
    test = tmp_path / "exported" / "test_docs.py"
    test.parent.mkdir()
    assert main(["export", str(path), "--pytest", "-o", str(test)]) == 0
    code = test.read_text()
    assert """selector = '#the-python-standard-library >> role=link[name="Introduction"s]'""" in code, code
    done = run_exported(test, site, "-p", "playwright")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
