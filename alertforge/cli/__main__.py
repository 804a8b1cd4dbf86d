"""``python -m alertforge.cli``: the same command as the ``alertforge`` console script."""

import sys

from alertforge.cli import main

sys.exit(main())
