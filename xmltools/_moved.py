"""Old module paths, kept for this release: each imports as its new module, with a warning.

One table and one import hook stand in for a shim file per old path.  Importing
``xmltools.results`` gives the module :mod:`xmltools.base.results` itself (the
same object, so every name is the same), and warns with a
``DeprecationWarning`` that names the new path.  Installed by
``xmltools/__init__.py``; imports nothing of xmltools.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence

# each old path, and its module now
MOVED: dict[str, str] = {
    f"xmltools.{old}": f"xmltools.{new}"
    for old, new in {
        "_loop": "base.threadloop",
        "_sdkcall": "models.sdkcall",
        "approval": "protocol.approval",
        "compare": "replaying.compare",
        "config_explain": "config.explain",
        "demo": "cli.demo",
        "expectations": "base.expectations",
        "experiment": "lab.variants",
        "export": "replaying.export",
        "guards": "loop.guards",
        "healing": "replaying.heal",
        "history": "loop.history",
        "offline": "replaying.offline",
        "pixels": "replaying.pixels",
        "pycode": "replaying.pycode",
        "pytest_plugin": "replaying.plugin",
        "quoting": "base.quoting",
        "replay_checks": "replaying.checks",
        "report": "record.report",
        "results": "base.results",
        "schema": "base.schema",
        "secrets": "base.secrets",
        "serve": "base.serve",
        "snapshot": "browser.snapshot",
        "stats": "lab.stats",
        "transcript": "record.transcript",
        "transcript_format": "record.format",
        "turn": "record.turn",
        "updating": "replaying.update",
        "urlpolicy": "base.urlpolicy",
    }.items()
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED`, and loads it as the module that took its place."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module is the new one, already loaded."""


def install() -> None:
    """Put the hook on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Moved) for f in sys.meta_path):
        sys.meta_path.append(_Moved())
