"""The base model every file contract uses, and how a file's content is checked against one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from contract.errors import BadInput

Model = TypeVar("Model", bound=BaseModel)


class Strict(BaseModel):
    """A contract: unknown fields refused (so code and schema cannot drift silently). Its
    validator is built at its first use, not at import (``defer_build``: a command that
    validates few of the contract's models starts faster)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Open(BaseModel):
    """A contract part another program writes (Harbor, ARIA, a model's reply): unknown fields
    kept as they are."""

    model_config = ConfigDict(extra="allow", defer_build=True)


def problem(err: ValidationError) -> str:
    """The first validation error as ``where: what`` (a person's reading of pydantic's)."""
    first = err.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "(root)"
    return f"{where}: {first.get('msg')}"


def parse(model: type[Model], value: Any, source: Path | str, what: str) -> Model:
    """``value`` as ``model``.

    Raises:
        BadInput: naming ``source`` and saying which field of ``what`` is wrong.
    """
    try:
        return model.model_validate(value)
    except ValidationError as err:
        raise BadInput(source, f"not a valid {what}: {problem(err)}") from None


def dump(instance: BaseModel) -> dict[str, Any]:
    """The JSON form of a contract: the fields the producer set (JSON-ready values)."""
    return instance.model_dump(mode="json", exclude_unset=True)
