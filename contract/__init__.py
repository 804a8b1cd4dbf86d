"""contract: what the stages share and agree on; it imports no stage.

The files between the stages as typed models (pydantic), one module per file: ``task``
(the parts of a task folder other stages read: check catalog, world spec), ``grade``
(GradeResult), ``run`` (run.json and the step ``extra`` blocks), ``site`` (the site data
files); the JSON Schemas generated from them are committed in docs/schemas/
(``contract.schemas``). Beside them, the helpers every stage uses at that boundary:
``untrusted`` (the one safe-read path), ``ids`` (ids that become file names), ``files``
(atomic writes, JSON), ``errors`` (bad input), ``paths`` and ``task_roots`` (where tasks
are), ``text`` (cutting text on character boundaries), ``processes`` (worker pools that
die with their parent), ``version``.
"""
