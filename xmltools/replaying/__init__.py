"""The second use: replaying recorded transcripts in tests.

- :mod:`.run`: a replay, live in a real browser or offline from the recording;
- :mod:`.runner`: the flat options of a front end (the command line, the pytest
  plugin) as one replay, its settings, report and update;
- :mod:`.checks`: each replayed step set against its recording;
- :mod:`.offline`: the recorded browser that answers an offline replay;
- :mod:`.compare` and :mod:`.pixels`: screenshots compared with pixelmatch;
- :mod:`.update` and :mod:`.heal`: a drifted recording updated, or mended by a model;
- :mod:`.export` and :mod:`.pycode`: a transcript as a pytest-playwright test;
- :mod:`.plugin`: the pytest plugin (its entry point is ``xmltools``).

Nothing here imports the loop or the experiments; the experiments use replays.
The package's names are the replay's.
"""

from __future__ import annotations

from .run import *  # noqa: F403
from .run import __all__ as __all__
