"""Which packages the wheel holds, found rather than listed, so that none can be forgotten.

Every package of ``xmltools`` is found on disk (folders without an ``__init__.py``, such as
``xmltools/templates``, count too), and two folders at the top of the repository ship inside it:
``prompts/`` as ``xmltools.prompts`` and ``fixtures/`` as ``xmltools.fixtures``, each with every
folder below it.  The project's metadata is in pyproject.toml; setuptools reads both.  This file
exists because pyproject.toml's own discovery cannot map a folder outside the package and find
the folders below it at once.  tests/slow/test_packaging.py checks that the wheel holds every file
of the source tree that it should.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

_SKIP = ["*__pycache__*"]
MAPPED = {"xmltools.prompts": "prompts", "xmltools.fixtures": "fixtures"}


def _packages() -> list[str]:
    own = find_namespace_packages(include=["xmltools", "xmltools.*"], exclude=_SKIP)
    mapped = [
        f"{name}.{sub}" if sub else name
        for name, folder in MAPPED.items()
        for sub in ["", *find_namespace_packages(where=folder, exclude=_SKIP)]
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
