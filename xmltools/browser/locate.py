"""Finding a Chromium executable on this machine.

The order is fixed: a configured path, the ``XMLTOOLS_CHROMIUM`` variable,
Playwright's own managed browsers, then a system Chromium or Chrome.  This
module reads the file system only; it imports neither Playwright nor Jinja2,
so the set-up scripts can run it before anything else is ready.

``python -m xmltools.browser.locate`` prints the browser found (exit 0) or
what to install (exit 1).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import BrowserNotFoundError, UsageError

__all__ = [
    "FoundBrowser",
    "browser_options",
    "browser_version",
    "find_chromium",
    "has_display",
    "install_hint",
    "no_display",
]

SYSTEM_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
)
SYSTEM_PATHS = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/opt/google/chrome/chrome",
    "/snap/bin/chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)


@dataclass(frozen=True)
class FoundBrowser:
    path: str
    source: str  # "configured", "XMLTOOLS_CHROMIUM", "playwright", "system"

    def __str__(self) -> str:
        return f"{self.path} ({self.source})"


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _playwright_browsers() -> list[str]:
    roots = []
    env = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if env and env != "0":
        roots.append(env)
    home = Path.home()
    roots += [
        str(home / ".cache" / "ms-playwright"),
        str(home / "Library" / "Caches" / "ms-playwright"),
    ]
    found: list[str] = []
    patterns = (
        "chromium-*/chrome-linux*/chrome",
        "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
        "chromium_headless_shell-*/chrome-*/headless_shell",
    )
    for root in roots:
        for pat in patterns:
            found += sorted(glob.glob(os.path.join(root, pat)), reverse=True)
    return [p for p in found if _executable(p)]


def find_chromium(configured: str | None = None) -> FoundBrowser:
    """Return the first browser found, in the documented order, or raise BrowserNotFoundError."""
    if configured:
        if _executable(configured):
            return FoundBrowser(configured, "configured")
        raise BrowserNotFoundError(f"the configured browser {configured!r} is not an executable file")
    env = os.environ.get("XMLTOOLS_CHROMIUM")
    if env:
        if _executable(env):
            return FoundBrowser(env, "XMLTOOLS_CHROMIUM")
        raise BrowserNotFoundError(f"XMLTOOLS_CHROMIUM={env!r} is not an executable file")
    for p in _playwright_browsers():
        return FoundBrowser(p, "playwright")
    for name in SYSTEM_NAMES:
        hit = shutil.which(name)
        if hit:
            return FoundBrowser(hit, "system")
    for p in SYSTEM_PATHS:
        if _executable(p):
            return FoundBrowser(p, "system")
    raise BrowserNotFoundError("no Chromium or Chrome was found.\n" + install_hint())


def has_display(environ: dict[str, str] | None = None) -> bool:
    """Whether a headed browser has somewhere to show its window (always, off Linux)."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def no_display(option: str) -> str:
    """The message for a headed browser asked for on a machine without a display."""
    return (
        f"{option} shows the browser window, and this machine has no display (neither DISPLAY nor"
        " WAYLAND_DISPLAY is set): leave it out, or run under xvfb-run"
    )


def browser_options(
    executable: str | None = None,
    headed: bool = False,
    remote: str | None = None,
    *,
    option: str = "--headed",
) -> dict[str, object]:
    """The settings a command line's browser options stand for (only those given).

    ``headed`` where no display exists is a :class:`~xmltools.errors.UsageError`
    naming ``option``, said before any browser starts.
    """
    if headed and not has_display():
        raise UsageError(no_display(option))
    out: dict[str, object] = {}
    if executable:
        out["executable"] = executable
    if headed:
        out["headless"] = False
    if remote:
        out["remote"] = remote
    return out


def install_hint() -> str:
    return (
        "Install one of these, then try again:\n"
        "  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install chromium\n"
        "  Fedora:         sudo dnf install chromium\n"
        "  macOS:          brew install --cask chromium\n"
        "  any system:     python -m playwright install chromium\n"
        "or point XMLTOOLS_CHROMIUM at a Chrome or Chromium executable."
    )


def browser_version(path: str, timeout: float = 10.0) -> str:
    """The browser's own version string (``Chromium 120.0...``), or '' if it cannot tell."""
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip()


def main() -> int:
    try:
        found = find_chromium()
    except BrowserNotFoundError as e:
        print(f"xmltools: {e}", file=sys.stderr)
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
