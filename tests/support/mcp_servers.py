"""The real MCP servers the tests run: from npm (installed by the Makefile into tests/support/npm) and PyPI."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

NPM = Path(__file__).parent / "npm"
BIN = NPM / "node_modules" / ".bin"
EVERYTHING = BIN / "mcp-server-everything"
FILESYSTEM = BIN / "mcp-server-filesystem"
TIME = Path(sys.executable).parent / "mcp-server-time"


def need(path: Path) -> str:
    if not path.exists():  # make test installs them: this is a run outside it
        pytest.skip(f"{path.name} is not installed (make test installs it: npm ci in {NPM})")
    return str(path)


def everything(**more: Any) -> dict[str, Any]:
    return {"command": need(EVERYTHING), **more}


def time_server(**more: Any) -> dict[str, Any]:
    return {"command": need(TIME), "args": ["--local-timezone", "UTC"], **more}


def filesystem(root: Path, **more: Any) -> dict[str, Any]:
    return {"command": need(FILESYSTEM), "args": [str(root)], **more}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def everything_over_http() -> Iterator[str]:
    """server-everything's streamable HTTP transport on a free port; its /mcp address."""
    port = free_port()
    proc = subprocess.Popen(
        [need(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("server-everything did not listen")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def guarded_servers(parent: int) -> list[int]:
    """The pids of the MCP guards whose parent is ``parent``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"xmltools.mcp.guard" in cmd:
            found.append(int(d.name))
    return found


def marked(mark: str) -> list[int]:
    """The pids of live processes whose environment holds ``mark``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if (
                mark.encode() in (d / "environ").read_bytes()
                and "Z" not in (d / "stat").read_text().split(")")[1][:3]
            ):
                found.append(int(d.name))
        except OSError:
            continue
    return found
