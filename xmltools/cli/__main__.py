"""``python -m xmltools.cli``: the same as the ``xmltools`` command."""

import sys

from . import main

sys.exit(main())
