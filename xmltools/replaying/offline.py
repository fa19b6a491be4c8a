"""Offline replay: a stand-in browser that answers each action with what the transcript recorded.

Owns :class:`RecordedBrowser` and the named sessions that share it.  No
browser runs; the protocol's outcomes are what an offline replay compares.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..actions import Resize, facts_of
from ..base.results import Failure, Observation, Viewport
from ..errors import TranscriptError
from ..record.transcript import (
    FAILURE_KINDS,
    ErrorRecord,
    ObservationRecord,
    ToolResultRecord,
    Transcript,
    fill_base_url,
    registry_for,
)

__all__ = ["RecordedBrowser", "RecordedSession"]


class RecordedBrowser:
    """A stand-in browser that answers each action with what was recorded for it (offline replay).

    Before each assistant message, :meth:`begin_step` hands it that step's
    recorded results.  An action with no recording (say, a click that a new
    viewport now allows) is answered with the page as last recorded, and a note.
    """

    def __init__(
        self, transcript: Transcript, base_url: str | None = None, viewport: Viewport | None = None
    ) -> None:
        self.transcript = transcript
        self.base_url = base_url
        self.viewport = viewport or Viewport(width=900, height=600)
        self._step: list[ToolResultRecord] = []
        self._last: Observation | None = None
        self._open = False
        self.unrecorded = 0  # actions answered without a recording

    @property
    def is_open(self) -> bool:
        return self._open

    def begin_step(self, recorded: Sequence[ToolResultRecord]) -> None:
        tools = registry_for(self.transcript).profile.tool_names
        self._step = [r for r in recorded if r.call.name in tools and r.status in ("ok", "failed")]

    async def run(self, action: object) -> Observation | Failure | None:
        name = getattr(action, "action", "")
        # one call runs per message, so the step's one recorded browser result is this action's
        # (recorded under the dialect's name for it, which may differ from the canonical one)
        rec = self._step.pop(0) if self._step else None
        if facts_of(action).session == "close" or (
            rec is not None and rec.status == "ok" and rec.observation is None
        ):
            self._open = False  # a close, or a dialect's close of the last tab
            return None
        if isinstance(action, Resize):
            self.viewport = action.size
        if rec is None:
            self.unrecorded += 1
            self._open = True
            if self._last is None:
                return Failure(kind="internal", message=f"the recording has no page for this {name} action.")
            note = (
                "replayed offline: nothing was recorded for this action, so this is the page as last recorded"
            )
            return self._last.model_copy(update={"notes": (note,)})
        obs = self._observation(rec.observation) if rec.observation is not None else None
        if obs is not None:
            obs = obs.model_copy(update={"url": fill_base_url(obs.url, self.base_url)})
            self._last = obs
        if rec.status == "failed":
            err = rec.error or ErrorRecord(kind="internal", message="failed")
            self._open = not err.browser_closed
            kind = err.kind if err.kind in FAILURE_KINDS else "internal"
            return Failure(kind=kind, message=err.message, observation=obs, browser_closed=err.browser_closed)
        self._open = True
        return obs

    def _observation(self, rec: ObservationRecord) -> Observation:
        """The recorded observation; without its screenshot, and a note, when that file is gone.

        An offline replay compares outcomes, not pictures: a transcript moved
        away from its screenshots still replays.
        """
        try:
            return self.transcript.observation(rec)
        except TranscriptError as e:
            obs = self.transcript.observation(rec.model_copy(update={"screenshot": None}))
            note = f"replayed offline: {str(e).split(': ', 1)[-1]}"
            return obs.model_copy(update={"notes": (*obs.notes, note)})

    async def close(self) -> Failure | None:
        self._open = False
        return None

    async def shutdown(self) -> None:
        self._open = False

    def session(self, name: str) -> RecordedSession:
        """A named session's view of the recording: its own open state, the shared recorded steps."""
        return RecordedSession(self)


class RecordedSession:
    """One named session in an offline replay: answers from the shared recording, opens and closes alone."""

    def __init__(self, recording: RecordedBrowser) -> None:
        self._recording = recording
        self._open = False
        self.viewport = recording.viewport

    @property
    def is_open(self) -> bool:
        return self._open

    async def run(self, action: object) -> Observation | Failure | None:
        result = await self._recording.run(action)
        self._open = self._recording.is_open
        self.viewport = self._recording.viewport
        return result

    async def close(self) -> Failure | None:
        self._open = False
        return None

    async def shutdown(self) -> None:
        self._open = False
