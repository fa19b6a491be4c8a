"""The loop: a chat-completion loop around the interpreter, for hosts that wrap a raw model.

- :mod:`.run`: call the model, interpret its reply, append the results, repeat
  (:func:`run_loop`, :func:`arun_loop`, and the system prompt that goes with them);
- :mod:`.lines`: what the loop says of its turns (a line a turn, what it waits for, the model's
  final answer);
- :mod:`.history`: what a long run sends, a history that stays nearly flat;
- :mod:`.guards`: the run's budgets, and a model going round in circles noticed.

Nothing here imports the replay or the experiments; the experiments use the loop.
"""

from __future__ import annotations

from .run import *  # noqa: F403
from .run import __all__ as __all__
