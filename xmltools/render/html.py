"""HTML pages (the reports) from the package's own templates, with escaping on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

__all__ = ["render_html"]

TEMPLATES = Path(__file__).parent.parent / "templates"


def render_html(template: str, **context: Any) -> str:
    """Render one of the package's HTML templates (reports), with HTML escaping on."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(template).render(**context)
