"""contract: the files between the stages as typed models (pydantic), one module per file.

``task`` (the parts of a task folder other stages read: check catalog, world spec),
``grade`` (GradeResult), ``run`` (run.json and the step ``extra`` blocks), ``site`` (the site
data files). Producers write through these models and consumers read through them; the
JSON Schemas generated from them are committed in docs/schemas/ (``contract.schemas``).
Nothing here imports a stage.
"""
