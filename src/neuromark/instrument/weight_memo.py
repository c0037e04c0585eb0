"""Per-weight values remembered for a whole process while the weight is unchanged.

Column counts and value kinds of a network's weights are the same run after run as long
as nobody writes to the weights, yet reading them costs ~0.3-0.6 ms per 100k weights: a
visible share of a short run (``bench/overhead.py``'s reference case runs in ~0.2 s). A
:class:`WeightMemo` keeps ``compute(weight)`` per weight and hands it back while the
weight's storage address and version counter stay (in-place writes move the version, a
new ``.data`` the address); entries refer to their weight weakly and leave with it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from torch import Tensor

Value = TypeVar("Value")


class WeightMemo(Generic[Value]):
    """``get(weight)``: ``compute(weight)``, computed again only when the weight changed."""

    def __init__(self, compute: Callable[[Tensor], Value]) -> None:
        self._compute = compute
        #: id(weight) -> (weak reference, storage address, version, value)
        self._entries: dict[int, tuple[weakref.ref, int, int, Value]] = {}

    def get(self, weight: Tensor) -> Value:
        key = id(weight)
        hit = self._entries.get(key)
        if hit is not None and hit[0]() is weight and hit[1] == weight.data_ptr() \
                and hit[2] == weight._version:
            return hit[3]
        value = self._compute(weight)
        self._entries[key] = (weakref.ref(weight, self._forget(key)), weight.data_ptr(),
                              weight._version, value)
        return value

    def __contains__(self, weight: Tensor) -> bool:
        hit = self._entries.get(id(weight))
        return hit is not None and hit[0]() is weight

    def __len__(self) -> int:
        return len(self._entries)

    def _forget(self, key: int) -> Callable[[weakref.ref], None]:
        """A callback that drops ``key``'s entry when its own weight dies (not the entry of
        a later weight that was given the same id)."""
        entries = self._entries

        def forget(ref: weakref.ref) -> None:
            entry = entries.get(key)
            if entry is not None and entry[0] is ref:
                del entries[key]
        return forget
