"""``python -m coloretto`` is the ``coloretto`` command."""

import sys

from coloretto.cli import main

sys.exit(main())
