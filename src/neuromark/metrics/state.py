"""Merge rules for declared metric state (:meth:`WorkloadMetric.add_state`).

Each executor unit runs its own metric instances; the driver merges their ``state()`` into
one instance by the rule each state declared, then calls ``compute()``. A rule is
``merge(mine, theirs) -> merged`` and never mutates its arguments:

- ``"sum"``: counts and totals (numbers, tensors, arrays; dicts key by key);
- ``"cat"``: per-sample lists (concatenated, mine first), arrays, tensors, or dicts of
  lists (key by key: frames of one stream stay together);
- ``"max"`` / ``"min"``: elementwise extremes (numbers, arrays, tensors; dicts key by key);
- ``"union"``: sets (union) and dicts (keys added where absent);
- ``"first"``: a property of the model that every unit sees alike (a coverage plan): mine,
  else theirs when mine is still empty;
- a callable ``(mine, theirs) -> merged``, e.g. :func:`merge_mean_stats`;
- ``None``: cannot be merged; :meth:`WorkloadMetric.merge_state` raises saying why.

Example:
    >>> merge("sum", {"fc": 2}, {"fc": 3, "out": 1})
    {'fc': 5, 'out': 1}
    >>> merge("cat", [1, 2], [3])
    [1, 2, 3]
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from neuromark.metrics.functional.stats import MeanStats

Merge = str | Callable[[Any, Any], Any] | None

#: The declared rules by name (a callable is also accepted).
RULES = ("sum", "cat", "max", "min", "union", "first")


def _keywise(mine: dict, theirs: dict, pair: Callable[[Any, Any], Any]) -> dict:
    out = copy.copy(mine)  # keeps a defaultdict's factory, so updates can go on
    for key, value in theirs.items():
        out[key] = pair(mine[key], value) if key in mine else copy.deepcopy(value)
    return out


def _sum(a: Any, b: Any) -> Any:
    return _keywise(a, b, _sum) if isinstance(a, dict) else a + b


def _cat(a: Any, b: Any) -> Any:
    if isinstance(a, dict):
        return _keywise(a, b, _cat)
    if isinstance(a, list):
        return a + list(b)
    if type(a).__module__.startswith("torch"):
        import torch

        return torch.cat([a, b])
    import numpy as np

    return np.concatenate([a, b])


def _extreme(pick: str) -> Callable[[Any, Any], Any]:
    def rule(a: Any, b: Any) -> Any:
        if isinstance(a, dict):
            return _keywise(a, b, rule)
        module = type(a).__module__
        if module.startswith("torch"):
            import torch

            return torch.maximum(a, b) if pick == "max" else torch.minimum(a, b)
        if module.startswith("numpy"):
            import numpy as np

            return np.maximum(a, b) if pick == "max" else np.minimum(a, b)
        return max(a, b) if pick == "max" else min(a, b)
    return rule


def _union(a: Any, b: Any) -> Any:
    if isinstance(a, dict):
        return {**b, **a}
    return a | b


def _first(a: Any, b: Any) -> Any:
    return b if a is None or (hasattr(a, "__len__") and len(a) == 0) else a


_BY_NAME: dict[str, Callable[[Any, Any], Any]] = {
    "sum": _sum, "cat": _cat, "max": _extreme("max"), "min": _extreme("min"),
    "union": _union, "first": _first,
}


def check_rule(rule: Merge, name: str) -> None:
    """Raise ValueError unless ``rule`` is a declared rule name, a callable or None."""
    if rule is None or callable(rule) or rule in _BY_NAME:
        return
    raise ValueError(f"state {name!r}: merge must be one of {list(RULES)}, a callable "
                     f"(mine, theirs) -> merged, or None (cannot be merged); got {rule!r}")


def merge(rule: Merge, mine: Any, theirs: Any) -> Any:
    """``mine`` merged with ``theirs`` by ``rule`` (see the module doc)."""
    fn = rule if callable(rule) else _BY_NAME[rule]  # type: ignore[index]
    return fn(mine, theirs)


def merge_mean_stats(mine: MeanStats, theirs: MeanStats) -> MeanStats:
    """Pooled count, sum and sum of squares of two :class:`MeanStats`."""
    return MeanStats(mine.n + theirs.n, mine.total + theirs.total,
                     mine.total_sq + theirs.total_sq)
