"""``python -m alertforge.cli``: the same command as the ``alertforge`` console script."""

from alertforge.cli import run

run()
