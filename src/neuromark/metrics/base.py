"""Metric contracts: static metrics read the model; workload metrics accumulate over steps.

Workload metrics keep sufficient statistics (never averages of averages), like
torchmetrics: ``reset()``, ``update(step)``, ``compute() -> Score``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor, nn

from neuromark.errors import MetricError
from neuromark.metrics.state import check_rule, merge
from neuromark.results import Score


@dataclass
class Step:
    """One model execution over a batch, as seen by workload metrics.

    Attributes:
        batch_index: position of the batch in the run (0-based).
        predictions: postprocessed model output.
        targets: targets AFTER preprocessing.
        num_samples: samples in this batch (``targets.shape[0]``).
        activity: :class:`neuromark.instrument.probes.Activity`, or None if no probe ran.
    """

    batch_index: int
    predictions: Any
    targets: Any
    num_samples: int
    activity: Any = None


class Metric:
    """Common attributes: ``name`` (results key), ``higher_is_better``, ``unit``,
    ``requires`` (probes: "synops", "activations", "membrane")."""

    name: ClassVar[str]
    higher_is_better: ClassVar[bool | None] = None
    unit: ClassVar[str] = ""
    requires: ClassVar[frozenset[str]] = frozenset()


#: What a static metric may use of the model adapter it is handed (duck-typed, so that the
#: metrics layer needs no import of :mod:`neuromark.models`).
ADAPTER_API = ("module", "state", "connection_layers", "last_batch_size")


def check_adapter(adapter: Any, metric: str) -> Any:
    """Return ``adapter`` if it offers :data:`ADAPTER_API`, else raise a TypeError that says
    how to wrap a bare network (``neuromark.models.as_adapter``)."""
    missing = [name for name in ADAPTER_API if not hasattr(adapter, name)]
    if missing:
        what = type(adapter).__name__ + (" (a bare nn.Module)" if isinstance(adapter, nn.Module)
                                         else "")
        raise TypeError(f"{metric}.compute needs a model adapter (with .module, .state(), "
                        f".connection_layers() and .last_batch_size), got {what}; wrap the "
                        "network with neuromark.models.as_adapter(model) first (the runner "
                        "does this for you)")
    return adapter


class StaticMetric(Metric):
    """A metric of the model alone: ``compute(adapter) -> Score``.

    ``adapter`` is a model adapter (:class:`neuromark.models.adapter.ModelAdapter` or anything with
    ``.module``, ``.state()``, ``.connection_layers()`` and ``.last_batch_size``); the runner
    passes its own. Wrap a bare ``nn.Module`` with :func:`neuromark.models.as_adapter` to
    call a static metric directly; implementations check with :func:`check_adapter`.
    """

    def compute(self, adapter: Any) -> Score | dict[str, Score]:
        raise NotImplementedError


class WorkloadMetric(Metric):
    """A metric accumulated over a workload: ``reset()``, ``update(step)``, ``compute()``.

    State is declared once, as torchmetrics' ``add_state``: ``self.add_state(name, default,
    merge)`` in ``__init__`` makes ``self.<name>`` a fresh copy of ``default``;
    :meth:`reset` restores every default, :meth:`state` returns a picklable copy and
    :meth:`merge_state` merges another instance's (another executor unit's) state by each
    declared rule (:mod:`neuromark.metrics.state`). A state whose default is itself a
    workload metric (``merge="nested"``) is reset, copied and merged as that metric.

    ``uses_predictions`` says whether the metric reads predictions; ``handles_nan`` says
    whether it defines what NaN predictions mean (else the runner rejects NaN output).

    Example:
        >>> class Count(WorkloadMetric):  # doctest: +SKIP
        ...     name = "count"
        ...     def __init__(self) -> None:
        ...         super().__init__()
        ...         self.add_state("samples", 0, merge="sum")
    """

    uses_predictions: ClassVar[bool] = False
    handles_nan: ClassVar[bool] = False

    def __init__(self) -> None:
        self._states: dict[str, tuple[Any, Any]] = {}
        self.reset()

    def add_state(self, name: str, default: Any, merge: Any) -> None:
        """Declare state ``name`` (see the class doc); ``merge``: a rule of
        :mod:`neuromark.metrics.state`, or None when it cannot be merged."""

        nested = isinstance(default, WorkloadMetric)
        if nested != (merge == "nested"):
            raise ValueError(f"state {name!r}: merge='nested' is for (only) a state that is "
                             f"itself a workload metric; got {merge!r} for "
                             f"{type(default).__name__}")
        if not nested:
            check_rule(merge, name)
        self.__dict__.setdefault("_states", {})[name] = (default, merge)
        setattr(self, name, default if isinstance(default, WorkloadMetric)
                else copy.deepcopy(default))

    def reset(self) -> None:
        """Restore every declared state to its default."""
        for name, (default, _) in self.__dict__.get("_states", {}).items():
            if isinstance(default, WorkloadMetric):
                default.reset()
            else:
                setattr(self, name, copy.deepcopy(default))

    def state(self) -> dict[str, Any]:
        """A picklable copy of the declared state (nested metrics as their own state)."""
        return {name: default.state() if isinstance(default, WorkloadMetric)
                else copy.deepcopy(getattr(self, name))
                for name, (default, _) in self.__dict__.get("_states", {}).items()}

    def merge_state(self, other: dict[str, Any]) -> None:
        """Merge ``other`` (another instance's :meth:`state`) into this one by the
        declared rules; a metric without declared state, or one that keeps something
        unmergeable, raises :class:`~neuromark.errors.MetricError` saying so."""

        states = self.__dict__.get("_states", {})
        if not states:
            raise MetricError(f"metric {self.name!r} declares no state (add_state), so units' "
                              "states cannot be merged; run it in one unit")
        if set(other) != set(states):
            raise MetricError(f"metric {self.name!r}: the state to merge has keys "
                              f"{sorted(other)}, expected {sorted(states)}")
        for name, (default, rule) in states.items():
            if isinstance(default, WorkloadMetric):
                default.merge_state(other[name])
            elif rule is None:
                raise MetricError(f"metric {self.name!r} keeps {name!r}, which cannot be "
                                  "merged across executor units; run it in one unit")
            else:
                setattr(self, name, merge(rule, getattr(self, name), other[name]))

    def update(self, step: Step) -> None:
        raise NotImplementedError

    def compute(self) -> Score | dict[str, Score]:
        raise NotImplementedError


def as_float_tensor(x: Any) -> Tensor:
    """A float64 tensor view of predictions or targets."""
    import torch

    return torch.as_tensor(x).detach().to(torch.float64)
