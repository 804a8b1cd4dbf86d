"""Proofs of the task corpus: the acceptance gate, the mutation analysis, the cross-version run.

Not a pipeline stage: these prove that the checks the generator writes and the grader runs
catch what they should (``alertforge gate``, ``alertforge mutate``, ``bench/cross_version.py``).
They may import the public APIs of ``tasks.generator``, ``grader`` and ``recorder``; only the
CLI (``alertforge/``) and the benchmarks (``bench/``) import them.
"""
