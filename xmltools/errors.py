"""The exceptions xmltools raises, and the line between the two kinds of error.

Mistakes made by the *model* (a malformed call, an illegal action, a bad
coordinate) are never raised: they are rendered back into the conversation
and the session goes on.  Exceptions are for the *host program*, when it
misuses the API, and for failures it must hear about directly.

::

    XmltoolsError
     ├── UsageError              the host program misused the API
     │    ├── StreamClosedError  feed() after close() on a stream
     │    ├── ConfigError        an invalid tool, limit, template folder or setting
     │    │    └── TranscriptError  a transcript or corpus file that cannot be read or is malformed
     │    └── ApprovalError      the host's approval callback raised or answered nonsense
     ├── BrowserError            the browser could not be found, started or reached
     │    ├── BrowserNotFoundError
     │    └── RemoteBrowserError
     ├── McpServerError          an MCP server could not be started or reached, or the mcp extra is missing
     ├── MistakeLimitError       the model reached the mistake limit (when the host asked to raise)
     └── ModelError              the model endpoint failed (HTTP error, dropped connection)

The ``xmltools`` command prints every one of these as a single line on stderr
(``xmltools: <message>``, no traceback) and exits with a code that says whose
problem it is:

===  ===================================================================================
0    success
1    the run failed or drifted: a replay with drift, a demo that did not complete, a
     ``run`` the loop stopped (mistake limit, out of turns, a call held for approval),
     :class:`MistakeLimitError`
2    a usage error: bad arguments, :class:`UsageError` and its subclasses (``ConfigError``,
     ``TranscriptError``), and a file named on the command line that cannot be read
3    the environment: :class:`BrowserError` and its subclasses (no browser, a bad executable,
     an unreachable remote endpoint), :class:`ModelError` (the model endpoint failed),
     :class:`McpServerError` (an MCP server's command not found, a server that does not start)
130  interrupted by Ctrl-C (SIGINT): what was finished is kept (the transcript's end record,
     the report asked for, an experiment's finished trials), and everything is closed
143  stopped by SIGTERM, kept and closed in the same way
===  ===================================================================================

This module imports nothing from the rest of the package.
"""

from __future__ import annotations

__all__ = [
    "EXIT_ENVIRONMENT",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "ApprovalError",
    "BrowserError",
    "BrowserNotFoundError",
    "ConfigError",
    "McpServerError",
    "MistakeLimitError",
    "ModelError",
    "RemoteBrowserError",
    "StreamClosedError",
    "TranscriptError",
    "UsageError",
    "XmltoolsError",
    "exit_code",
]


class XmltoolsError(Exception):
    """Base class of every exception xmltools raises on purpose.

    ``shown`` is how many lines of the message the command line prints (the rest with ``-v``): one,
    or each mistake of a file checked whole.
    """

    shown: int = 1


class UsageError(XmltoolsError, ValueError):
    """The host program called the API in a way it does not allow."""


class StreamClosedError(UsageError):
    """Text was fed to a stream that was already closed."""


class ConfigError(UsageError):
    """A tool definition, a limit, a template folder or a setting is invalid."""


class TranscriptError(ConfigError):
    """A transcript or corpus file cannot be read, or one of its lines is not a valid record.

    The message is one line naming the file, and the line and the field when
    there is one (``run.jsonl:3: unknown field 'colour' in a tool_result
    record``); ``path``, ``line`` and ``field`` hold them too.
    """

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.field = field


class ApprovalError(UsageError):
    """The host's approval callback raised, or returned something other than Allow, Deny or Ask."""


class BrowserError(XmltoolsError):
    """The browser could not be found, launched or reached."""


class BrowserNotFoundError(BrowserError):
    """No Chromium or Chrome executable was found."""


class RemoteBrowserError(BrowserError):
    """A remote browser could not be reached over the DevTools protocol."""


class McpServerError(XmltoolsError):
    """An MCP server could not be started or reached (a command not found, a server that does not
    answer when it starts), or the ``mcp`` extra is not installed."""


class MistakeLimitError(XmltoolsError):
    """The model made too many consecutive mistakes (raised only on request).

    ``turn`` holds the turn that reached the limit, with its rendered messages.
    """

    def __init__(self, message: str, turn: object = None) -> None:
        super().__init__(message)
        self.turn = turn


class ModelError(XmltoolsError):
    """The model endpoint failed: an HTTP error or a dropped connection.

    Raised from the chat loop, ``result`` holds the loop's result so far (the history is kept).
    """

    result: object = None


# -- the exit codes of the command line (the table in the module's docstring) --------------------

EXIT_OK = 0
EXIT_FAILED = 1  # the run failed or drifted
EXIT_USAGE = 2  # bad arguments, a bad setting, a file that cannot be read (argparse exits 2 too)
EXIT_ENVIRONMENT = 3  # no browser, a browser or model endpoint that cannot be reached
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM)


def exit_code(e: BaseException) -> int:
    """The exit code for an error a command raised (see the table above)."""
    if isinstance(e, BrowserError | ModelError | McpServerError):
        return EXIT_ENVIRONMENT
    if isinstance(e, UsageError):
        return EXIT_USAGE
    if isinstance(e, OSError):  # a file named on the command line; otherwise the machine's problem
        return EXIT_USAGE if e.filename is not None else EXIT_ENVIRONMENT
    return EXIT_FAILED  # MistakeLimitError, or any other error: the run did not succeed
