"""``python -m agent``: the ``pokerbot`` command line without the console script."""

import sys

from agent.cli import main

sys.exit(main())
