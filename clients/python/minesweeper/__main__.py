"""``python -m minesweeper``: the same as the ``minesweeper`` command."""

import sys

from .cli import main

sys.exit(main())
