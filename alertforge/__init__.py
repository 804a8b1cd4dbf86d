"""alertforge: the command line, the top floor of 3amBench Replay (no stage imports it)."""

from contract.version import __version__

__all__ = ["__version__"]
