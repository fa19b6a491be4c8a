"""Which packages the wheel holds, found rather than listed, so that none can be forgotten.

Every package of ``xmltools`` is found on disk (folders without an ``__init__.py``, such as
``xmltools/templates``, count too), and three folders of the repository ship inside it, each with
every folder below it: ``prompts/`` as ``xmltools.prompts``, ``fixtures/`` as ``xmltools.fixtures``,
and ``docs/examples/`` as ``xmltools.examples`` (what ``xmltools examples DIR`` copies).  The
examples' folders that are fixtures' own (``EXAMPLES_FROM_FIXTURES``: symbolic links into
``fixtures/`` in a checkout, copies in an sdist) ship once, in ``xmltools.fixtures``; the command
takes them from there (``xmltools/cli/examples.py``, ``CONTENTS``).  The project's metadata is in
pyproject.toml; setuptools reads both.  This file exists because pyproject.toml's own discovery
cannot map a folder outside the package and find the folders below it at once.
tests/slow/test_packaging.py checks that the wheel holds every file of the source tree that it
should, and nothing more.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

_SKIP = ["*__pycache__*"]
MAPPED = {
    "xmltools.prompts": "prompts",
    "xmltools.fixtures": "fixtures",
    "xmltools.examples": "docs/examples",
}
# the folders of docs/examples that are fixtures' own, shipped in xmltools.fixtures alone
EXAMPLES_FROM_FIXTURES = ["site", "variants", "corpus"]
_LEFT_OUT = {"xmltools.examples": [f"{name}{tail}" for name in EXAMPLES_FROM_FIXTURES for tail in ("", ".*")]}


def _packages() -> list[str]:
    own = find_namespace_packages(include=["xmltools", "xmltools.*"], exclude=_SKIP)
    mapped = [
        f"{name}.{sub}" if sub else name
        for name, folder in MAPPED.items()
        for sub in ["", *find_namespace_packages(where=folder, exclude=_SKIP + _LEFT_OUT.get(name, []))]
    ]
    return sorted(set(own) - set(MAPPED) | set(mapped))


PACKAGES = _packages()

setup(
    packages=PACKAGES,
    package_dir=MAPPED,
    # every file of the mapped folders (pages, images, transcripts, templates); the package's own
    # folders ship their templates and the typing marker beside the modules
    package_data={
        **{name: ["*"] for name in PACKAGES if name.startswith(tuple(MAPPED))},
        **{name: ["*.j2", "py.typed"] for name in PACKAGES if not name.startswith(tuple(MAPPED))},
    },
    include_package_data=False,
)
