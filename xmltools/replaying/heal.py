"""Healing a replayed step whose recorded element is gone, by asking a model once (off by default).

A replay with a model given (``heal=``, ``xmltools replay --heal``) turns to it
only for a step that failed because its element could not be found again by
its identity (see :mod:`xmltools.browser.identity`): a failure that says so in
``Failure.element_gone``.  The model is shown the recorded message, the
element's identity and the current page as an ARIA snapshot with boxes (the
template ``note/heal.j2``), and asked for one call.

The answer is checked before anything acts: it must hold exactly one complete
call, of the same tool and action as the recorded one.  Then it runs; a call
that fails too leaves the step failed.  A healed step is reported as such,
and an update writes the answer in place of the recorded message.  A model
that cannot be reached is the host's problem
(:class:`~xmltools.errors.ModelError`), not a failed step.  Imports no browser
module: it reads the failure, and asks the interpreter's browser for a snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..interpreter import AsyncInterpreter
from ..models.adapters import AnyModel, model_chunks
from ..parser import ToolUse, parse
from ..profiles import DEFAULT_SESSION
from ..record.transcript import ToolResultRecord, fill_base_url
from ..record.turn import NOT_DONE, Turn

__all__ = ["Healed", "heal_step"]


@dataclass(frozen=True)
class Healed:
    """A step mended by the model: what was recorded, what the model wrote instead, and its turn."""

    recorded: str
    answer: str
    turn: Turn


async def heal_step(
    interp: AsyncInterpreter,
    model: AnyModel,
    turn: Turn,
    recorded: Sequence[ToolResultRecord],
    message: str,
    base_url: str | None,
) -> Healed | str | None:
    """None when the step is not one healing is for; :class:`Healed` when the model's call ran;
    else one line on why the step stays failed."""
    lost = [
        (k, o)
        for k, o in enumerate(turn.outcomes)
        if o.failure is not None and o.failure.element_gone and k < len(recorded)
    ]
    if not lost:
        return None
    k, outcome = lost[0]
    was = recorded[k]
    identity = was.observation.identity if was.observation is not None else None
    browser = interp.browser_of(outcome.session or DEFAULT_SESSION)
    page_snapshot = getattr(browser, "page_snapshot", None)
    if identity is None or page_snapshot is None or outcome.failure is None:
        return None
    snapshot: str = await page_snapshot()
    obs = outcome.failure.observation
    profile = interp.registry.profile
    action = profile.action_of(was.call.name, was.call.params) or was.call.name
    prompt = interp.renderer.heal_prompt(
        action=fill_base_url(message, base_url),
        identity=identity,
        failure=outcome.failure.message,
        snapshot=snapshot,
        url=obs.url if obs is not None else "",
        action_name=action,
    )
    messages = [
        {"role": "system", "content": interp.system_prompt()},
        {"role": "user", "content": prompt},
    ]
    answer = "".join([c async for c in model_chunks(model, messages)])
    calls = [b for b in parse(answer, tools=interp.registry) if isinstance(b, ToolUse)]
    if len(calls) != 1 or not calls[0].complete:
        return (
            f"the model did not answer with one complete call ({len(calls)} calls): {answer.strip()[:200]!r}"
        )
    call = calls[0]
    if call.name != was.call.name or profile.action_of(call.name, call.params) != action:
        said = profile.action_of(call.name, call.params) or call.name
        return f"the model answered with {said}, not the recorded {action}: nothing was run"
    healed = await interp.handle(answer)
    bad = [o for o in healed.outcomes if o.status in NOT_DONE]
    if bad:
        why = bad[0].failure.message if bad[0].failure is not None else bad[0].text
        first = why.strip().splitlines()[0][:200] if why.strip() else bad[0].status
        return f"the model's call did not run either: {first}"
    return Healed(message, answer, healed)
