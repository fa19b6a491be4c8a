"""Checks that verify a trial instead of trusting the model: they run on its last page and its answer.

Each check kind is a coroutine registered under its name, as a tool is:
``@register_check("title", fields=["value"], needs=["value"])`` adds one, with
the fields of its entry it reads (:mod:`.kinds`: a file giving another, or
lacking a needed one, is refused when it is read).  A check answers None when it holds,
or one line saying what was found instead.  The page kinds (``url``,
``text``, ``element``, ``aria``, ``js``) run on the page the trial ended on,
kept open for them even when the model closed the browser (see
:class:`KeptSession`); ``answer`` reads the model's final answer: a regular
expression, or, with ``schema``, the part of JSON Schema a result's shape
needs (``type``, ``enum``, ``required``, ``properties``, ``items``), checked
here by hand because no JSON Schema library is a dependency of the package.
``judge`` asks the experiment's judge model (``[judge]`` in the file; off
unless a task asks for it) whether the answer and the last page meet a rubric,
in the template ``note/judge.j2``; the first word of its reply, PASS or FAIL,
is the verdict, and the line after it is the reason kept with a failure.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..actions import facts_of
from ..base.expectations import Expectation
from ..base.results import Failure, Observation
from ..base.schema import schema_problem
from ..base.spelling import did_you_mean
from ..browser.session import BrowserSession
from ..browser.verify import verify
from ..errors import ConfigError
from ..mcp.hub import McpHub
from ..mcp.server import ServerLost
from ..render.prompts import Renderer
from .kinds import KINDS, declare_kind
from .specs import CheckSpec

__all__ = ["CHECKS", "CheckContext", "KeptSession", "judge_verdict", "register_check", "run_checks"]

CHECK_SECONDS = 5.0  # how long a page check waits for what it looks for, unless the limits say
JUDGE_PAGE_CHARS = 6_000  # the most of the last page's text a judge is shown


class KeptSession(BrowserSession):
    """A browser session whose close only parks the page: the trial's checks still see it.

    The model's ``close`` is answered as a close (the session reads as closed,
    so the protocol goes on as it should), and the page stays until the
    runner's checks have run and :meth:`release` ends it.
    """

    parked = False

    @property
    def is_open(self) -> bool:
        return super().is_open and not self.parked

    @property
    def has_page(self) -> bool:
        return super().is_open

    async def run(self, action: object) -> Observation | Failure | None:
        if facts_of(action).session == "close" and super().is_open:
            self.parked = True
            return None
        self.parked = False
        return await super().run(action)

    async def release(self) -> None:
        self.parked = False
        await self.shutdown()


Judge = Callable[[str], Awaitable[str]]  # a prompt in, the judging model's reply out


@dataclass
class CheckContext:
    session: KeptSession | None  # the trial's browser, its last page kept
    answer: str | None  # the final answer, when the model gave one
    claimed: bool  # the model said it was done
    instruction: str = ""  # the task as the model was given it
    judge: Judge | None = None  # asks the experiment's judge model
    renderer: Renderer | None = None  # writes the judge's prompt (the trial's templates)
    wait: float = CHECK_SECONDS  # how long a page check waits for what it looks for ([limits] check_seconds)
    mcp: McpHub | None = None  # the trial's MCP servers, for an mcp check


Check = Callable[[CheckSpec, CheckContext], Awaitable[str | None]]
CHECKS: dict[str, Check] = {}


def register_check(
    kind: str, *, fields: Iterable[str] | None = None, needs: Iterable[str] = ()
) -> Callable[[Check], Check]:
    """Register a check kind (it may replace a built-in one).  ``fields`` are the fields of its entry it
    reads besides ``kind`` (a file that gives another is refused when it is read), and ``needs`` those
    of which it needs one; without ``fields`` it takes any, or, replacing a built-in, the built-in's."""

    def deco(fn: Check) -> Check:
        if fields is not None or kind not in KINDS:
            declare_kind(kind, fields, needs)
        CHECKS[kind] = fn
        return fn

    return deco


NO_PAGE = "the trial left no page to check"


def _page_of(ctx: CheckContext) -> KeptSession | None:
    return ctx.session if ctx.session is not None and ctx.session.has_page else None


async def _on_page(ctx: CheckContext, exp: Expectation) -> str | None:
    session = _page_of(ctx)
    if session is None:
        return NO_PAGE
    return await session.on_page(lambda page: verify(page, exp, ctx.wait))


@register_check("url")
async def _url(spec: CheckSpec, ctx: CheckContext) -> str | None:
    session = _page_of(ctx)
    if session is None:
        return NO_PAGE
    url: str = await session.on_page(lambda page: _now(page))
    if spec.regex:
        return None if re.search(spec.value, url) else f"the address is {url!r}"
    if spec.value.startswith(("http://", "https://", "file:")):
        return None if url == spec.value else f"the address is {url!r}"
    # a path: the address ends with it (the site's own address is the run's to choose)
    path = url.split("?", 1)[0].split("#", 1)[0]
    return None if path.endswith(spec.value) else f"the address is {url!r}"


async def _now(page: Any) -> str:
    return str(page.url)


@register_check("text")
async def _text(spec: CheckSpec, ctx: CheckContext) -> str | None:
    return await _on_page(ctx, Expectation(kind="text", value=spec.value, regex=spec.regex))


@register_check("element")
async def _element(spec: CheckSpec, ctx: CheckContext) -> str | None:
    return await _on_page(ctx, Expectation(kind="element", role=spec.role or spec.value, name=spec.name))


@register_check("aria")
async def _aria(spec: CheckSpec, ctx: CheckContext) -> str | None:
    return await _on_page(ctx, Expectation(kind="aria", value=spec.value))


@register_check("js")
async def _js(spec: CheckSpec, ctx: CheckContext) -> str | None:
    session = _page_of(ctx)
    if session is None:
        return NO_PAGE

    async def run(page: Any) -> Any:
        return await page.evaluate(spec.value)

    try:
        got = await session.on_page(run)
    except Exception as e:  # a predicate that throws does not hold; the message says why
        return f"the predicate threw: {_first_line(e)}"
    return None if got is True else f"the predicate gave {json.dumps(got)[:200]}"


@register_check("answer")
async def _answer(spec: CheckSpec, ctx: CheckContext) -> str | None:
    if ctx.answer is None:
        return "the model gave no final answer"
    if spec.schema_ is not None:
        try:
            value = json.loads(ctx.answer)
        except ValueError as e:
            return f"the answer is not JSON ({e})"
        return schema_problem(value, spec.schema_, "the answer")
    pattern = spec.value if spec.regex else re.escape(spec.value)
    return None if re.search(pattern, ctx.answer) else f"the answer is {ctx.answer[:200]!r}"


@register_check("mcp")
async def _mcp(spec: CheckSpec, ctx: CheckContext) -> str | None:
    """What a server of the trial answers now: a resource, or a tool it marks read-only (a check
    must not change what it checks)."""
    server = spec.server or ""
    hub = ctx.mcp
    if hub is None or server not in hub.servers:
        raise ConfigError(f"the mcp check names the server {server!r}, which the trial does not have")
    try:
        await hub.ensure(server)
        if spec.uri is not None:
            result = await hub.read_resource(server, spec.uri)
        else:
            tool = hub.tool(server, spec.tool or "")
            if tool is None or not tool.read_only:
                why = "has no such tool" if tool is None else "does not mark it read-only"
                raise ConfigError(f"the mcp check calls {server} {spec.tool}, but the server {why}")
            result = await hub.call_tool(server, tool.name, dict(spec.arguments))
    except ServerLost as e:
        return f"the server {server} did not answer: {e.why}"
    said = result.text()
    if result.is_error:
        return f"the server answered with an error: {said[:200]}"
    pattern = spec.value if spec.regex else re.escape(spec.value)
    return None if re.search(pattern, said) else f"the answer is {said[:200]!r}"


@register_check("judge")
async def _judge(spec: CheckSpec, ctx: CheckContext) -> str | None:
    if ctx.judge is None:
        raise ConfigError("a judge check needs a judge model: name one under [judge]")
    url, page = None, ""
    session = _page_of(ctx)
    if session is not None:
        bound = session.config.timeouts.action  # a read: nothing is waited for, so not ctx.wait
        try:
            url, page = await session.on_page(lambda p: _url_and_text(p, bound))
        except TimeoutError:
            url = session.current_url
            page = f"(the page's text could not be read: the page did not answer within {bound:g} s)"
        except Exception as e:  # a tab that crashed, a page that navigated away: the judge is told
            url = session.current_url
            page = f"(the page's text could not be read: {_first_line(e)})"
    if len(page) > JUDGE_PAGE_CHARS:
        page = page[:JUDGE_PAGE_CHARS] + f"\n[... {len(page) - JUDGE_PAGE_CHARS} more characters]"
    prompt = (ctx.renderer or Renderer()).judge_prompt(
        task=ctx.instruction, rubric=spec.value, answer=ctx.answer, url=url, page=page
    )
    return judge_verdict(await ctx.judge(prompt))


# The text as the page has it now: its body's rendered text, or, in a document with no body (SVG, an
# XML feed), the root's text.
_PAGE_TEXT = "() => document.body ? document.body.innerText : (document.documentElement?.textContent ?? '')"


async def _url_and_text(page: Any, bound: float) -> tuple[str, str]:
    """The page's address and text, read at once: under load a read may be slow, but a short
    wait for something to appear (``check_seconds``) would tell the judge a slow machine's story."""
    text = await asyncio.wait_for(page.evaluate(_PAGE_TEXT), bound)
    return str(page.url), str(text or "")


_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_GRADE = re.compile(
    r"(?:(?:verdict|grade|result)\s*[:=-]\s*)?(PASS|FAIL)(?:\s*[:.,;\-\u2013\u2014]\s*(.*))?", re.IGNORECASE
)


def judge_verdict(reply: str) -> str | None:
    """None when the reply's first line is PASS; else what the judge said, in one line.

    The first line, markup and a thinking block aside, must be the grade alone
    (``PASS``, ``Verdict: FAIL``, ``**FAIL** - no greeting``): a reply that
    echoes "PASS or FAIL" is no grade, and is reported as the judge's error.
    """
    lines = [ln for ln in _THINKING.sub("", reply).splitlines() if ln.strip()]
    first = re.sub(r"[*_`#>]", "", lines[0]).strip() if lines else ""
    m = _GRADE.fullmatch(first)
    if m is None:
        return f"judge error: its reply is not a grade: {reply.strip()[:160]!r}"
    if m.group(1).upper() == "PASS":
        return None
    why = (m.group(2) or "").strip() or (lines[1].strip() if len(lines) > 1 else "")
    return "the judge failed it" + (f": {why[:200]}" if why else "")


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:160] if text else type(e).__name__


async def run_checks(checks: tuple[CheckSpec, ...], ctx: CheckContext) -> list[tuple[CheckSpec, str | None]]:
    """Each check with its answer (None: it holds); an unknown kind is the host's error."""
    out = []
    for spec in checks:
        fn = CHECKS.get(spec.kind)
        if fn is None:  # a file is checked when read; an Experiment made in code may still name one
            hint = did_you_mean(spec.kind, CHECKS) or f"; the checks are: {', '.join(sorted(CHECKS))}"
            raise ConfigError(f"no check named {spec.kind!r}{hint}")
        out.append((spec, await fn(spec, ctx)))
    return out
