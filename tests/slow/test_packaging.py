"""The wheel ships prompts/: build it, install it in a fresh virtual environment, render from there."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

CHECK = r"""
import json, sys
from pathlib import Path
import xmltools
from xmltools.render import PROMPTS_DIR, Renderer
from tests_golden_cases import render_all
templates = sorted(str(p.relative_to(PROMPTS_DIR)) for p in PROMPTS_DIR.rglob("*.j2"))
print(json.dumps({"module": xmltools.__file__, "prompts": str(PROMPTS_DIR), "templates": templates,
                  "rendered": render_all()}))
"""

RENDER_ALL = r"""
from xmltools.render import Renderer
from xmltools.results import Observation, Viewport, Failure
from xmltools.tools import CallError, ToolRegistry
from xmltools.protocol import Violation


def render_all():
    r = Renderer()
    obs = Observation(url="http://a/", title="t", viewport=Viewport(width=900, height=600))
    out = [
        r.system_prompt(ToolRegistry()),
        r.browser_result("click", obs).text,
        r.close_result().text,
        r.tool_result("t", "ok").text,
        r.call_error(CallError("invalid_param", "bad", "browser_action")).text,
        r.violation(Violation("launch_first"), "browser_action", "click").text,
        r.browser_failure("click", Failure(kind="timeout", message="slow")).text,
        r.tool_failure("t", "boom").text,
        r.not_run([("browser_action", "close")], "browser_action").text,
        r.mistake_limit(3, 3).text,
        r.no_tool().text,
        r.auto_closed("t").text,
        r.image_dropped(),
    ]
    return len([s for s in out if s.strip()])
"""


@pytest.mark.slow
def test_wheel_ships_the_templates(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
    )
    [wheel] = list(dist.glob("xmltools-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # unpack the wheel into the fresh environment (a wheel is a zip of the installed tree)
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        z.extractall(site)
    for shipped in (
        "xmltools/py.typed",
        "xmltools/templates/report.html.j2",
        "xmltools/fixtures/site/app/index.html",
        "xmltools/fixtures/transcripts/demo.jsonl",
    ):
        assert shipped in names, shipped
    # the dependencies come from this environment, without its editable xmltools
    deps = sysconfig.get_paths()["purelib"]
    Path(site, "deps.pth").write_text(deps + "\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests_golden_cases.py").write_text(RENDER_ALL)
    r = subprocess.run(
        [str(py), "-c", CHECK],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(work)},
    )
    assert r.returncode == 0, r.stderr
    import json

    info = json.loads(r.stdout)
    assert info["module"].startswith(site), info
    assert info["prompts"].startswith(site), info
    bundled = sorted(str(p.relative_to(ROOT / "prompts")) for p in (ROOT / "prompts").rglob("*.j2"))
    assert info["templates"] == bundled
    assert info["rendered"] == 13
