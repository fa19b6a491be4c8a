"""The relative links of README.md and of the docs pages reach a file, and the anchors a heading.

``mkdocs build --strict`` checks the links between docs pages too; this test
also covers the README (outside the site) and runs with the unit tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify
from support.docblocks import PAGES, ROOT, project

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ *```.*?^ *```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    """The ids the site gives the page's headings (Python-Markdown's toc, duplicates numbered)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} +(.+?) *$", text, re.M):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "")
        slug = slugify(plain, "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}_{n}")
    return out


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto: and the like are not ours to check
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with the anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_links_into_the_docs() -> None:
    readme = ROOT / "README.md"
    targets = {t.partition("#")[0] for t in links(readme)}
    assert "docs/index.md" in targets and "docs/reference/settings.md" in targets
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 150


def test_a_broken_anchor_is_seen(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Every `setting`\n\n## Every setting\n")
    assert anchors(page) == {"title", "every-setting", "every-setting_1"}


TOML_BLOCK = re.compile(r"^ *```toml\n(.*?)^ *```", re.M | re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_toml_block_parses_and_a_whole_experiment_loads(page: Path, tmp_path: Path) -> None:
    """A TOML example is valid TOML; one that is a whole experiment file (it has variants, models and
    tasks) is also a valid experiment, read as ``xmltools experiment run`` reads it."""
    import tomllib

    from xmltools.lab.plan import load_experiment

    for block in TOML_BLOCK.findall(page.read_text(encoding="utf-8")):
        included = re.fullmatch(r'\s*--8<-- "([^"]+)"\s*', block)  # a file of the project, shown whole
        path = ROOT / included.group(1) if included else tmp_path / "experiment.toml"
        if included and included.group(1).startswith("docs/examples/"):  # read where the docs run it
            (tmp_path / "checkout").mkdir(exist_ok=True)
            path = project(tmp_path / "checkout") / included.group(1).removeprefix("docs/examples/")
        if not included:
            path.write_text(block)
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if {"variants", "models", "tasks"} <= set(data):
            for section, key in (("variants", "templates"), ("tasks", "serve")):
                for item in data[section] if not included else ():
                    if isinstance(item.get(key), str):
                        (tmp_path / item[key]).mkdir(parents=True, exist_ok=True)  # the folders it names
                        if key == "serve" and item.get("start"):  # and the page it starts at, in its site
                            (tmp_path / item[key] / item["start"]).touch()
            load_experiment(path)
