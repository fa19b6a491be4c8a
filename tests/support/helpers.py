"""What many test modules need, written once: where things are, calls as a model writes them, and checks.

Test modules import from here (``from helpers import ba, ok``); the root
conftest puts this folder on ``sys.path``.  Nothing here starts a browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from xmltools.base.results import Failure, Observation, Point

TESTS = Path(__file__).parents[1]
ROOT = TESTS.parent
SITE = ROOT / "fixtures" / "site"
TRANSCRIPTS = ROOT / "fixtures" / "transcripts"

_REF = re.compile(r"\[ref=([^\]]+)\]")
_READ = re.compile(r"What the \w+ action read:\n(.*?)\nEnd of what was read\.", re.S)

# what became of each step of each dialect's transcript in fixtures/transcripts:
# the status of its call, and its refusal if any
DIALECT_STEPS = {
    "aleph": [
        ("refused", "launch_first"),  # open_tab before start
        ("ok", None),
        ("ok", None),
        ("ok", None),
        ("ok", None),  # snapshot of t2
        ("denied", "denied"),  # evaluate, by the transcript's policy
        ("failed", None),  # a tab that is not open: the message lists t1, t2
        ("ok", None),
        ("ok", None),
        ("ok", None),
        ("ok", None),
        ("ok", None),
    ],
    "fractal": [
        ("refused", "launch_first"),  # click before navigate
        ("ok", None),  # navigate opens the session
        *[("ok", None)] * 6,
        ("denied", "denied"),
        ("ok", None),
        ("ok", None),  # click_and_switch_tab
        ("ok", None),
        ("ok", None),  # the last tab: the session ends
    ],
    "forge": [
        ("refused", "launch_first"),  # a session tool before any session
        *[("ok", None)] * 7,
        ("refused", "launch_first"),  # a session that is not open
        *[("ok", None)] * 6,
    ],
}

# -- calls, written as a model writes them ------------------------------------------------------------


def ba(action: str | None = None, session: str | None = None, *, sep: str = "\n", **params: str) -> str:
    """A ``browser_action`` call: the action, the parameters in order, then the session when named.

    Each tag is followed by ``sep`` (a newline, as models write; ``""`` for one line).
    """
    tags = {"action": action} if action is not None else {}
    tags.update(params)
    if session is not None:
        tags["session"] = session
    return (
        f"<browser_action>{sep}"
        + "".join(f"<{k}>{v}</{k}>{sep}" for k, v in tags.items())
        + "</browser_action>"
    )


def ba_inline(action: str | None = None, session: str | None = None, **params: str) -> str:
    """The same call on one line, with nothing between the tags."""
    return ba(action, session, sep="", **params)


def scenario(
    path: Path, *messages: str, header: dict[str, object] | None = None, tools: list[str] | None = None
) -> Path:
    """A hand-written transcript at ``path``: a header, then one assistant record per message."""
    head: dict[str, object] = {"xmltools_transcript": 1}
    if tools is not None:
        head["tools"] = tools
    head.update(header or {})
    lines = [json.dumps(head), *(json.dumps({"role": "assistant", "content": m}) for m in messages)]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- what came back ------------------------------------------------------------------------------------


def ok(result: Observation | Failure | None) -> Observation:
    """The observation a browser action returned; anything else fails the test."""
    assert isinstance(result, Observation), result
    return result


def failed(result: Observation | Failure | None, kind: str) -> Failure:
    """The failure of ``kind`` a browser action returned; anything else fails the test."""
    assert isinstance(result, Failure), result
    assert result.kind == kind, result
    return result


def said(turn: Any) -> str:
    """Everything a turn says to the model, as one text."""
    return "\n\n".join(p.text for p in turn.parts)


def text_of(turn: Any) -> str:
    """The text of a turn's result message (its first part when it has several)."""
    result = turn.result
    assert result is not None
    content = result["content"]
    return content if isinstance(content, str) else str(content[0]["text"])


def read(result: Any) -> str:
    """What an extraction read, as the model finds it in the result (a text, or a turn)."""
    text = result if isinstance(result, str) else said(result)
    m = _READ.search(text)
    assert m, f"nothing was read in:\n{text}"
    return m.group(1)


def ref_named(snapshot: str, line_start: str) -> str:
    """The ref of the first element whose snapshot line starts with ``line_start`` and has a ref."""
    for line in snapshot.splitlines():
        if line.strip().startswith(line_start):
            m = _REF.search(line)
            if m:
                return m.group(1)
    raise AssertionError(f"no {line_start!r} with a ref in:\n{snapshot}")


# -- what a browser session is given -------------------------------------------------------------------


def target(
    *, ref: str | None = None, selector: str | None = None, frame: str | None = None, at: Point | None = None
) -> Any:
    """A resolved target as the controller reads it: a ref, a selector or a point."""
    kind = "ref" if ref else "selector" if selector else "coordinate"
    return SimpleNamespace(kind=kind, ref=ref, selector=selector, frame=frame, coordinate=at)


def action(name: str, tgt: Any = None, **kw: Any) -> Any:
    """An action as the controller reads it: its name, its target and its other fields."""
    return SimpleNamespace(action=name, target=tgt, **kw)


async def evaluate(b: Any, expr: str) -> Any:
    """``expr`` evaluated in a browser session's current page."""
    return await b.on_page(lambda page: page.evaluate(expr))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def record_demo_steps(out: Path) -> Path:
    """A small recording made offline-ready at ``out``: the demo's first steps with their observations.

    Its third click lies outside 900x600 and inside 1280x800, so a variant with
    a larger viewport changes that step's outcome.
    """
    from support.fakes import FakeBrowser
    from xmltools.config.settings import Config
    from xmltools.interpreter import AsyncInterpreter
    from xmltools.record.transcript import Header, TranscriptWriter

    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    with TranscriptWriter(out, Header(templates=it.renderer.template_hashes())) as w:
        for text in (
            ba("launch", url="http://localhost/app"),
            ba("click", coordinate="450,140"),
            ba("click", coordinate="1000,700"),
            ba("close"),
        ):
            w.turn(await it.handle(text))
    await it.aclose()
    return out


def wording_variant(tmp_path: Path) -> Path:
    """A variant folder that words the browser result its own way."""
    d = tmp_path / "wording"
    (d / "result").mkdir(parents=True)
    (d / "result" / "browser.j2").write_text("Done: {{ action }}. {{ obs.title }} at {{ obs.url | page }}.\n")
    (d / "variant.toml").write_text('name = "wording"\n')
    return d


@contextlib.contextmanager
def playwright_servers(n: int) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    """``n`` Playwright servers on loopback (``playwright run-server --unsafe``, so that a client may
    name the Chromium to launch), each as (process, ws:// address); killed, with their browsers, after."""
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    try:
        for _ in range(n):
            port = free_port()
            cmd = [
                sys.executable,
                "-m",
                "playwright",
                "run-server",
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
            ]
            proc = subprocess.Popen(
                [*cmd, "--unsafe"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            started.append((proc, f"ws://127.0.0.1:{port}/"))
            deadline = time.monotonic() + 30
            while not _answers(port):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Playwright server did not start")
                time.sleep(0.1)
        yield started
    finally:
        for proc, _ in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _answers(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
