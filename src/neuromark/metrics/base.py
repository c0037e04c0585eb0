"""Metric contracts: static metrics read the model; workload metrics accumulate over steps.

Workload metrics keep sufficient statistics (never averages of averages), like
torchmetrics: ``reset()``, ``update(step)``, ``compute() -> Score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor

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


class StaticMetric(Metric):
    """A metric of the model alone: ``compute(model) -> Score``."""

    def compute(self, model: Any) -> Score | dict[str, Score]:
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
