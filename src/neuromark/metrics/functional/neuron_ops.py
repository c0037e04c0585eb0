"""Neuron operations: the cost of one neuron update, per neuron type and reset mode.

NeuroBench 2.3.0 (``NeuronOperations``, added in 2.2.0) counts the arithmetic of a spiking
neuron's state update as a fixed number of operations per updated neuron, by snnTorch
neuron type and reset mechanism (``subtract`` or ``zero``); :data:`SNNTORCH_COSTS` holds
that table (Leaky, Synaptic, Lapicque, Alpha). Every neuron class of ``snntorch._neurons``
takes its cost from :mod:`~neuromark.metrics.functional.snntorch_costs`, derived from its
update equation, which reproduces that table for its four neurons. Neurons of other
frameworks, and custom ones, declare their cost:

- as an attribute of the module, ``neuromark_neuron_cost``: a number (ops per update) or a
  mapping from reset mode to a number (read with the module's ``reset_mechanism``);
- or through their adapter, which sets :attr:`neuromark.models.base.NeuronLayer.cost`.

A spiking neuron with neither raises :class:`NeuronCostError` naming the layer and type
(NeuroBench raises a bare ``KeyError`` there).

Example:
    >>> neuron_operations(updates=10, outputs=12, cost=4)
    (40.0, 48.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from neuromark.errors import NeuromarkError
from neuromark.metrics.functional.snntorch_costs import (
    SNNTORCH_OPS,
    CostUndefined,
    is_snntorch_neuron,
    snntorch_ops,
)

#: Ops per neuron update of snnTorch's neurons by reset mechanism (neurobench 2.3.0,
#: ``neurobench/metrics/workload/neuron_operations.py``, and its docs page): the reference
#: that :func:`~neuromark.metrics.functional.snntorch_costs.snntorch_ops` reproduces.
SNNTORCH_COSTS: dict[str, dict[str, int]] = {
    "Leaky": {"subtract": 4, "zero": 4},
    "Synaptic": {"subtract": 6, "zero": 8},
    "Lapicque": {"subtract": 11, "zero": 11},
    "Alpha": {"subtract": 18, "zero": 24},
}

#: Module attribute through which a neuron declares its cost per update.
COST_ATTRIBUTE = "neuromark_neuron_cost"


class NeuronCostError(NeuromarkError, KeyError):
    """A spiking neuron whose cost per update is unknown; names the layer and its type."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def reset_mode(module: Any) -> str | None:
    """The module's reset mechanism (snnTorch: ``reset_mechanism``), or None."""
    for attr in ("reset_mechanism", "_reset_mechanism"):
        mode = getattr(module, attr, None)
        if isinstance(mode, str):
            return mode
    return None


def _check(cost: Any, where: str) -> float:
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) \
            or cost < 0:
        raise NeuronCostError(f"{where}: a neuron cost must be a finite number >= 0 of ops per "
                              f"update, got {cost!r}")
    return float(cost)


def _from_mapping(table: Mapping[str, Any], module: Any, where: str) -> float:
    mode = reset_mode(module)
    if mode not in table:
        raise NeuronCostError(f"{where}: no cost for reset mechanism {mode!r} (costs given for "
                              f"{sorted(table)})")
    return _check(table[mode], where)


def neuron_cost(module: Any, name: str = "", declared: float | None = None) -> float:
    """Ops per update of the neuron ``module`` (layer ``name``, for messages).

    Order: the module's ``neuromark_neuron_cost`` attribute, then ``declared`` (from the
    adapter), then :data:`SNNTORCH_COSTS` for snnTorch neurons (matched by class name and
    reset mechanism, see :mod:`~neuromark.metrics.functional.snntorch_costs`). Raises
    :class:`NeuronCostError` when none applies.
    """
    kind = type(module).__name__
    where = f"neuron layer {name or kind!r} ({type(module).__module__}.{kind})"
    own = getattr(module, COST_ATTRIBUTE, None)
    if own is not None:
        return _from_mapping(own, module, where) if isinstance(own, Mapping) else _check(own, where)
    if declared is not None:
        return _check(declared, where)
    if is_snntorch_neuron(module):
        try:
            return _check(snntorch_ops(module).total, where)
        except CostUndefined as err:
            raise NeuronCostError(f"{where}: no cost per update: {err}; set "
                                  f"`{COST_ATTRIBUTE}` on the module to count it anyway") from None
    raise NeuronCostError(
        f"{where} has no declared cost per update: known are snnTorch's "
        f"{', '.join(SNNTORCH_OPS)}; set `{COST_ATTRIBUTE}` on the module (ops per update, "
        "or a mapping from reset mechanism to ops) or declare it in the model adapter "
        "(NeuronLayer.cost)")


def neuron_operations(updates: float, outputs: float, cost: float) -> tuple[float, float]:
    """(effective, dense) neuron ops of one layer: ``updates`` (neurons whose membrane
    changed, summed over steps) and ``outputs`` (all neurons x steps) times ``cost``."""
    if updates < 0 or outputs < 0:
        raise ValueError(f"counts must be >= 0, got updates={updates}, outputs={outputs}")
    return float(updates * cost), float(outputs * cost)
