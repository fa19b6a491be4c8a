"""The tracing of a replay or a run as the front ends offer it: its modes, and each front end's option.

``xmltools replay --tracing``, ``xmltools run --tracing`` and the pytest
plugin's ``--xmltools-tracing`` choose among the same modes
(pytest-playwright's names): ``off``, ``on`` and ``retain-on-failure``.  Each
front end has its own flag, default and help, stated here next to the
others'; each declares its option from these.  The
tracing itself is :mod:`xmltools.browser.tracing`, and a replay's ``tracing``
keyword (:func:`xmltools.replaying.run.replay`) takes the same modes.  Pure
data: it imports nothing, so the command line reads it without starting slow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CLI_TRACING", "PYTEST_TRACING", "RUN_TRACING", "TRACING_MODES", "TracingMode", "TracingOption"]

TracingMode = Literal["off", "on", "retain-on-failure"]
TRACING_MODES: tuple[TracingMode, ...] = ("off", "on", "retain-on-failure")


@dataclass(frozen=True)
class TracingOption:
    """The tracing option of one front end: its flag, its default and its help."""

    flag: str
    default: TracingMode
    help: str

    def keywords(self) -> dict[str, Any]:
        """What argparse's ``add_argument`` and pytest's ``addoption`` take, beside the flag."""
        return {"choices": TRACING_MODES, "default": self.default, "help": self.help}


# the command line traces only when asked
CLI_TRACING = TracingOption(
    "--tracing",
    "off",
    "a Playwright trace of each browser session (playwright show-trace), and each step's"
    " network requests in the report: off (the default), on, or kept only when the replay fails",
)
# a run traces only when asked, too; what "fails" means is its exit code
RUN_TRACING = TracingOption(
    "--tracing",
    "off",
    "a Playwright trace of each browser session (playwright show-trace): off (the default), on, or"
    " kept only when the run fails (its exit code is not 0)",
)
# a test keeps the traces of a replay that fails (retain-on-failure, in pytest-playwright's words)
PYTEST_TRACING = TracingOption(
    "--xmltools-tracing",
    "retain-on-failure",
    "a Playwright trace of each replay, kept in the output folder: always (on), only when the"
    " replay fails (retain-on-failure, the default), or none (off)",
)
