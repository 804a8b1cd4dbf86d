"""recorder.importers.harbor: Harbor job folders and ATIF trajectory files imported as runs.

``job_files`` reads a job as an untrusted tree (caps, a read budget, no links);
``trials`` finds trial folders and reads each into a ``Trial``; ``normalize`` turns its
ATIF steps into valid steps of one tool call each; ``replay`` rebuilds and grades the
file edits (:mod:`recorder.importers.shell`, the shared graded workspace); ``importer``
writes the runs and ``harbor-import.json`` (``import_harbor``, the CLI's entry point).
"""
