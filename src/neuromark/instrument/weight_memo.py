"""Per-weight values remembered for one run while the weight is unchanged.

Column counts and value kinds of a network's weights are read at every batch's collect;
a :class:`WeightMemo` keeps ``compute(weight)`` per weight and hands it back while the
weight's storage address and version counter stay (in-place writes move the version, a
new ``.data`` the address). A write through ``weight.data`` moves neither, so a memo
lives for one run (each instrument makes its own): a run after such a write reads the
weights again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from torch import Tensor

Value = TypeVar("Value")


class WeightMemo(Generic[Value]):
    """``get(weight)``: ``compute(weight)``, computed again only when the weight changed.
    Entries hold their weight, so an id is not reused by another tensor while cached."""

    def __init__(self, compute: Callable[[Tensor], Value]) -> None:
        self._compute = compute
        #: id(weight) -> (weight, storage address, version, value)
        self._entries: dict[int, tuple[Tensor, int, int, Value]] = {}

    def get(self, weight: Tensor) -> Value:
        hit = self._entries.get(id(weight))
        if hit is not None and hit[0] is weight and hit[1] == weight.data_ptr() \
                and hit[2] == weight._version:
            return hit[3]
        value = self._compute(weight)
        self._entries[id(weight)] = (weight, weight.data_ptr(), weight._version, value)
        return value
