"""The files of the README's and the guides' examples, laid out as ``xmltools examples DIR`` writes them.

The wheel ships this folder as ``xmltools.examples``; ``site``, ``variants`` and ``corpus`` are the
fixtures' own folders, linked here and shipped in ``xmltools.fixtures`` (see
``xmltools/cli/examples.py``).  This file makes the folder a package wherever xmltools is installed
from; the command does not copy it.
"""
