"""The guard a stdio server runs under, so that no server outlives its host.

``python -m xmltools.mcp.guard PROGRAM ARGS...`` starts the server as its child,
with the same stdin, stdout and stderr, in the process group the guard leads
(the SDK starts the guard in a session of its own).  It exits with the server,
with the server's code.  When its parent goes away (the host ended, even by
SIGKILL) or it is told to stop (SIGTERM, SIGINT, SIGHUP), it ends the whole
group: the server and what the server started (``npx`` runs node under it),
first with SIGTERM, then with SIGKILL.  Standard library only, and nothing else
of xmltools.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

POLL_SECONDS = 0.2  # how often the guard looks whether its parent is still there
GRACE_SECONDS = 1.0  # between SIGTERM and SIGKILL to the group


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group (the guard ignores it), a moment's grace, then SIGKILL to all (the guard too)."""
    group = os.getpgid(0)
    if group != os.getpid():  # not a group of its own: only the child is the guard's to end
        child.kill()
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(group, signal.SIGKILL)  # what the server started, and the guard with them


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m xmltools.mcp.guard PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    if os.getpgid(0) != os.getpid():
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)  # lead a group of our own, which the server and its children join
    try:
        child = subprocess.Popen(argv)
    except OSError as e:
        print(f"{argv[0]}: {e.strerror or e}", file=sys.stderr)
        return 127
    stop = False

    def told(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, told)
    while True:
        try:
            return child.wait(POLL_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        if stop or os.getppid() != parent:
            _end_group(child)
            code = child.poll()
            return code if code is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
