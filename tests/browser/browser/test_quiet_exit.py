"""A quiet exit: after any flow, the process ends with nothing on stderr.

Each flow runs in a fresh interpreter process, as a host script would, and is
left as a host leaves it: closed by ``with``, or open for the process's exit to
close.  Nothing may be printed at exit: no "Future exception was never
retrieved", no "Task was destroyed but it is pending", no "Exception ignored",
no unclosed-resource warning (the process runs with ``-W default``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.long  # make test-long's: see the Makefile

PRELUDE = """
import asyncio, os, signal, sys, threading, time
sys.path.insert(0, {tests!r})
from support.helpers import ba
from xmltools import AsyncInterpreter, Config, Interpreter
SITE = {site!r}
FULL = Config(profile="full", observe="snapshot")


def parent(pid):
    with open(f"/proc/{{pid}}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def browsers():
    "The main process of each Chromium started under this process."
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{{d}}/cmdline", "rb") as f:
                cmd = f.read()
            if b"--remote-debugging-pipe" not in cmd or b"--type=" in cmd:
                continue
            up = int(d)
            while up > 1 and up != os.getpid():
                up = parent(up)
        except OSError:
            continue
        if up == os.getpid():
            out.append(int(d))
    assert out, "no browser found"
    return out


def said(turn):
    return " ".join(p.text for p in turn.parts)
"""

FLOWS = {
    "tabs": """
        with Interpreter(FULL) as it:
            it.handle(ba("launch", url=SITE + "/pages/one.html"))
            it.handle(ba("open_tab", url=SITE + "/pages/two.html"))
            it.handle(ba("open_tab", url=SITE + "/pages/three.html"))
            it.handle(ba("switch_tab", tab="t1"))
            it.handle(ba("close_tab", tab="t2"))
    """,
    "tabs left open at exit": """
        it = Interpreter(FULL)
        it.handle(ba("launch", url=SITE + "/pages/one.html"))
        it.handle(ba("open_tab", url=SITE + "/pages/two.html"))
    """,
    "approvals": """
        with Interpreter(FULL) as it:
            it.handle(ba("launch", url=SITE + "/pages/extract.html"))
            asked = it.handle(ba("evaluate", script="document.title"))
            it.approve(asked.approval_required)
            asked = it.handle(ba("evaluate", script="document.cookie"))
            it.deny(asked.approval_required, "not now")
            it.handle(ba("evaluate", script="localStorage.length"))  # left waiting for an answer
    """,
    "a document still loading through the URL policy at exit": """
        # the evaluate's wait for the navigation it started ends at the 2 s bound; the document (held
        # for 60 s by the server) is still on its way when the process exits
        it = Interpreter(
            Config(profile="full", observe="snapshot", approval={"script": "allow"}, navigation_timeout=2.0)
        )
        it.handle(ba("launch", url=SITE + "/pages/one.html"))
        it.handle(ba("evaluate", script="setTimeout(() => { location.href = '/__never__/'; }, 0); 1"))
        time.sleep(0.5)  # the policy is still fetching the document, which never comes
    """,
    "several sessions left open": """
        it = Interpreter(FULL)
        for name in ("a", "b", "c"):
            it.handle(ba("launch", name, url=SITE + "/pages/one.html"))
        it.handle(ba("close", "b"))
    """,
    "the browser killed mid-step": """
        it = Interpreter(FULL)
        it.handle(ba("launch", url=SITE + "/pages/one.html"))
        victims = browsers()
        threading.Timer(0.5, lambda: [os.kill(p, signal.SIGKILL) for p in victims]).start()
        turn = it.handle(ba("wait", seconds="3"))
        assert "The browser process has exited" in said(turn), said(turn)
    """,
    "asynchronous, with tabs, approvals and sessions left open": """
        async def main():
            it = AsyncInterpreter(FULL)
            await it.handle(ba("launch", url=SITE + "/pages/extract.html"))
            await it.handle(ba("open_tab", url=SITE + "/pages/two.html"))
            asked = await it.handle(ba("evaluate", script="document.title"))
            await it.approve(asked.approval_required)
            await it.handle(ba("launch", "other", url=SITE + "/pages/one.html"))
            await it.handle(ba("evaluate", "other", script="1"))  # left waiting for an answer

        asyncio.run(main())
    """,
    "asynchronous, the browser killed mid-step with two sessions": """
        async def main():
            async with AsyncInterpreter(FULL) as it:
                await it.handle(ba("launch", url=SITE + "/pages/one.html"))
                await it.handle(ba("open_tab", url=SITE + "/pages/two.html"))
                await it.handle(ba("launch", "other", url=SITE + "/pages/one.html"))
                waiting = asyncio.ensure_future(it.handle(ba("wait", seconds="3")))
                await asyncio.sleep(0.5)
                for p in browsers():
                    os.kill(p, signal.SIGKILL)
                turn = await waiting
                assert "The browser process has exited" in said(turn), said(turn)

        asyncio.run(main())
    """,
}


def flow(name: str, site: str) -> str:
    prelude = PRELUDE.format(tests=str(Path(__file__).parents[2]), site=site)
    return prelude + textwrap.dedent(FLOWS[name])


@pytest.mark.parametrize("name", list(FLOWS))
def test_a_flow_ends_with_nothing_on_stderr(name: str, site: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", flow(name, site)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr


# A host's script as users write one: 36 actions over navigations, two dialogs, three tabs, two
# approvals and a second named session, then both closed; or ended by an exception of the host's
# own, or by a Ctrl-C sent to the whole process group (as a terminal sends it: the Playwright driver
# gets it too) while an action runs.
LONG = """
ENDING = {ending!r}
# A host started from a terminal takes Ctrl-C as KeyboardInterrupt; a test runner started in the
# background of a script has SIGINT ignored, which its children would inherit.
signal.signal(signal.SIGINT, signal.default_int_handler)
def h(text):
    global count
    count += 1
    return it.handle(text)

count = 0
try:
    with Interpreter(FULL) as it:
        h(ba("launch", url=SITE + "/nav/link.html"))
        h(ba("click", coordinate="190,70"))
        for action in ("back", "forward", "reload"):
            h(ba(action))
        h(ba("navigate", url=SITE + "/pages/one.html"))
        h(ba("navigate", url=SITE + "/dialogs.html"))
        h(ba("click", coordinate="150,65"))  # an alert
        h(ba("click", coordinate="150,145"))  # a confirm
        h(ba("get_text"))
        h(ba("open_tab", url=SITE + "/pages/two.html"))
        h(ba("open_tab", url=SITE + "/pages/three.html"))
        h(ba("list_tabs"))
        h(ba("switch_tab", tab="t1"))
        h(ba("close_tab", tab="t2"))
        it.approve(h(ba("evaluate", script="document.title")).approval_required)
        it.deny(h(ba("evaluate", script="document.cookie")).approval_required, "not now")
        h(ba("launch", "second", url=SITE + "/pages/extract.html"))
        h(ba("get_text", "second"))
        h(ba("navigate", "second", url=SITE + "/nav/form-get.html"))
        h(ba("click", "second", coordinate="190,70"))
        h(ba("snapshot", "second"))
        if ENDING == "raised":
            raise RuntimeError("the host broke mid-flow")
        if ENDING == "interrupted":
            print("waiting", flush=True)
            waited = h(ba("wait", seconds="5"))
            print(f"the wait ended at {{time.monotonic():.2f}}: {{waited.ran.status}}: {{said(waited)[:300]}}", flush=True)
        for _ in range(5):
            h(ba("navigate", url=SITE + "/nav/link.html"))
            h(ba("click", coordinate="190,70"))
        h(ba("scroll_down"))
        h(ba("close", "second"))
        h(ba("close"))
finally:
    time.sleep(1.0)  # the host saves its own work before it exits, as hosts do
assert count >= 30, count
"""


def _signals_of(pid: int) -> str:
    """What each thread of ``pid`` blocks, and what waits for it, just after the Ctrl-C: the masks
    of /proc, to tell a signal that never came from one that came and was not acted on."""
    seen = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            fields = dict(
                line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        seen.append(
            f"{fields.get('Name', '?').strip()}: blocked {fields.get('SigBlk', '?').strip()[-4:]}"
            f" pending {fields.get('SigPnd', '?').strip()[-4:]}/{fields.get('ShdPnd', '?').strip()[-4:]}"
            f" caught {fields.get('SigCgt', '?').strip()[-4:]} ignored {fields.get('SigIgn', '?').strip()[-4:]}"
        )
    return "threads then: " + "; ".join(seen)


def _long_flow(site: str, ending: str) -> tuple[int, str]:
    code = PRELUDE.format(tests=str(Path(__file__).parents[2]), site=site) + LONG.format(ending=ending)
    proc = subprocess.Popen(
        [sys.executable, "-W", "default", "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, for the Ctrl-C
    )
    sent = ""
    if ending == "interrupted":
        assert proc.stdout is not None and proc.stdout.readline() == "waiting\n"
        time.sleep(1.0)  # inside the wait
        sent = f"SIGINT sent to the group of {proc.pid} at {time.monotonic():.2f}, "
        os.killpg(proc.pid, signal.SIGINT)
        sent += _signals_of(proc.pid) + ", "
    out, err = proc.communicate(timeout=180)
    if ending == "interrupted" and proc.returncode == 0:  # what to look at when the Ctrl-C was lost
        err += f"\n[{sent}exit 0 at {time.monotonic():.2f}; stdout after 'waiting': {out!r}]"
    return proc.returncode, err


@pytest.mark.parametrize("ending", ["closed", "raised", "interrupted"])
def test_a_long_flow_ends_with_its_own_traceback_and_nothing_else(
    site: str, ending: str, repeat: int
) -> None:
    """Closed in order, stderr is empty; ended by the host's exception or by Ctrl-C, stderr holds that
    traceback and nothing else, whatever the driver and the browser did as they went."""
    tries = 1 if ending == "raised" else max(1, repeat // 3)  # an exception of the host's is no race
    for _ in range(tries):
        code, err = _long_flow(site, ending)
        if ending == "closed":
            assert (code, err) == (0, ""), err
            continue
        last = "RuntimeError: the host broke mid-flow" if ending == "raised" else "KeyboardInterrupt"
        lines = err.rstrip().splitlines()
        assert code != 0 and lines[0] == "Traceback (most recent call last):" and lines[-1] == last, err
        assert all(line.startswith("  ") for line in lines[1:-1]), err  # one traceback, nothing beside it
