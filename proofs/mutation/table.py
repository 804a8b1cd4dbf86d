"""The mutation operator table: every operator of every family, by name."""

from __future__ import annotations

from proofs.mutation import (
    delivery_operators,
    inhibition_operators,
    routing_operators,
    rule_conditions,
    rule_metadata,
)
from proofs.mutation.operators import Operator


def operator_table() -> dict[str, Operator]:
    """Every operator by name, families in order: rule conditions, rule metadata, routing,
    delivery (where pages go and when), inhibition."""
    table: dict[str, Operator] = {}
    for module in (rule_conditions, rule_metadata, routing_operators, delivery_operators,
                   inhibition_operators):
        for op in module.OPERATORS:
            if op.name in table:
                raise ValueError(f"operator {op.name} defined twice")
            table[op.name] = op
    return table
