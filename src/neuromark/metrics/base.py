"""Metric contracts: static metrics read the model; workload metrics accumulate over steps.

Workload metrics keep sufficient statistics (never averages of averages), like
torchmetrics: ``reset()``, ``update(step)``, ``compute() -> Score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor, nn

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

    ``adapter`` is a model adapter (:class:`neuromark.models.ModelAdapter` or anything with
    ``.module``, ``.state()``, ``.connection_layers()`` and ``.last_batch_size``); the runner
    passes its own. Wrap a bare ``nn.Module`` with :func:`neuromark.models.as_adapter` to
    call a static metric directly; implementations check with :func:`check_adapter`.
    """

    def compute(self, adapter: Any) -> Score | dict[str, Score]:
        raise NotImplementedError


class WorkloadMetric(Metric):
    """A metric accumulated over a workload: ``reset()``, ``update(step)``, ``compute()``.

    ``uses_predictions`` says whether the metric reads predictions; ``handles_nan`` says
    whether it defines what NaN predictions mean (else the runner rejects NaN output).
    """

    uses_predictions: ClassVar[bool] = False
    handles_nan: ClassVar[bool] = False

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        raise NotImplementedError

    def update(self, step: Step) -> None:
        raise NotImplementedError

    def compute(self) -> Score | dict[str, Score]:
        raise NotImplementedError


def as_float_tensor(x: Any) -> Tensor:
    """A float64 tensor view of predictions or targets."""
    import torch

    return torch.as_tensor(x).detach().to(torch.float64)
