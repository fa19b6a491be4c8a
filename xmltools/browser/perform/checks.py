"""The testing capability's checks: verify_text, verify_element, verify_value and verify_url.

Each waits, as Playwright's web-first assertions do, within the action bound;
a check that does not hold fails the action with what was found instead (a
failure of the page, not the model's mistake).  Must not import the session.
"""

from __future__ import annotations

from typing import Any

from ...actions import VerifyElement, VerifyText, VerifyUrl, VerifyValue
from ...base.expectations import Expectation
from ..failures import ActionError
from ..targets import TargetError, selector_locator
from ..verify import verify, verify_locator
from .base import Act, Scope, handles

__all__ = ["check"]


@handles(VerifyText, VerifyElement, VerifyValue, VerifyUrl)
async def check(action: Any, scope: Scope, act: Act) -> None:
    page = scope.page
    bound = scope.timeouts.action
    if isinstance(action, VerifyText | VerifyUrl):
        kind = "text" if isinstance(action, VerifyText) else "url"
        exp = Expectation(kind=kind, value=action.text if isinstance(action, VerifyText) else action.url)
        said = exp.describe()
        problem = await verify(page, exp, bound)
    else:
        target = action.target
        if target.coordinate is not None and target.selector is None:
            loc = await scope.targets.locate(target)  # the element under the point
            named = f"the element at {target.coordinate.x},{target.coordinate.y}"
        elif target.ref:
            if target.ref not in scope.targets.refs:
                raise TargetError(f"{target.ref} is not in the latest snapshot. Take a new snapshot.")
            loc = page.locator(f"aria-ref={target.ref}")
            named = f"ref {target.ref}"
        else:
            where = page.frame_locator(target.frame) if target.frame else page
            loc = selector_locator(where, str(target.selector))
            named = str(target.selector)
        value = action.value if isinstance(action, VerifyValue) else None
        said = f"{named} is visible" if value is None else f"{named} has the value {value!r}"
        problem = await verify_locator(loc, value, bound)
    if problem is not None:
        raise ActionError(f"the check does not hold: {said}: {problem}.", kind="no_target")
    act.notes.append(f"verified: {said}")
