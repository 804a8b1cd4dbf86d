"""alertforge: shared helpers of the 3amBench Replay pipeline (paths, errors, atomic files)."""

__version__ = "0.1.0"
