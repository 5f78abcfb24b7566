"""``python -m skcrf``: the command line (see :mod:`skcrf.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
