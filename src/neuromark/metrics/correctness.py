"""Correctness metrics from sufficient statistics: accuracy, MSE, sMAPE, R².

Each class accumulates over batches what the matching function of
:mod:`neuromark.metrics.functional` computes at once (``accuracy``, ``mse``, ``smape``,
``r2``), with the same per-sample helpers, and adds the standard error over samples.
"""

from __future__ import annotations

import torch

from neuromark.metrics.base import Step, WorkloadMetric, as_float_tensor
from neuromark.metrics.functional.correctness import (
    per_sample_correct,
    per_sample_smape,
    per_sample_squared_error,
    r2_from_sums,
    r2_sums,
)
from neuromark.metrics.functional.stats import MeanStats
from neuromark.metrics.state import merge_mean_stats
from neuromark.results import Score


class _PerSampleMean(WorkloadMetric):
    """Mean of a per-sample value with its standard error over samples."""

    uses_predictions = True
    stats: MeanStats

    def __init__(self) -> None:
        super().__init__()
        self.add_state("stats", MeanStats(), merge=merge_mean_stats)

    def per_sample(self, step: Step) -> torch.Tensor:
        raise NotImplementedError

    def update(self, step: Step) -> None:
        self.stats.add(self.per_sample(step))

    def compute(self) -> Score:
        return Score(self.stats.mean, self.stats.standard_error, unit=self.unit,
                     higher_is_better=self.higher_is_better)


class ClassificationAccuracy(_PerSampleMean):
    """Fraction of samples whose predicted class equals the target; SE over samples."""

    name = "classification_accuracy"
    higher_is_better = True

    def per_sample(self, step: Step) -> torch.Tensor:
        return per_sample_correct(torch.as_tensor(step.predictions), torch.as_tensor(step.targets))


class MSE(_PerSampleMean):
    """Mean squared error over all elements (samples have equal size)."""

    name = "MSE"
    higher_is_better = False

    def per_sample(self, step: Step) -> torch.Tensor:
        return per_sample_squared_error(as_float_tensor(step.predictions),
                                        as_float_tensor(step.targets))


class SMAPE(_PerSampleMean):
    """Symmetric mean absolute percentage error in [0, 200]; NaN predictions count 200."""

    name = "sMAPE"
    higher_is_better = False
    unit = "%"
    handles_nan = True

    def per_sample(self, step: Step) -> torch.Tensor:
        return per_sample_smape(as_float_tensor(step.predictions), as_float_tensor(step.targets))


class R2(WorkloadMetric):
    """Coefficient of determination per output dimension, averaged over dimensions."""

    name = "r2"
    higher_is_better = True
    uses_predictions = True

    n: int
    sum_y: torch.Tensor | float
    sum_y2: torch.Tensor | float
    ss_res: torch.Tensor | float

    def __init__(self) -> None:
        super().__init__()
        for name, default in (("n", 0), ("sum_y", 0.0), ("sum_y2", 0.0), ("ss_res", 0.0)):
            self.add_state(name, default, merge="sum")

    def update(self, step: Step) -> None:
        n, sum_y, sum_y2, ss_res = r2_sums(as_float_tensor(step.predictions),
                                           as_float_tensor(step.targets))
        self.n += n
        self.sum_y = self.sum_y + sum_y
        self.sum_y2 = self.sum_y2 + sum_y2
        self.ss_res = self.ss_res + ss_res

    def compute(self) -> Score:
        if self.n < 2:
            raise ValueError("r2 needs at least 2 samples")
        value = r2_from_sums(self.n, torch.as_tensor(self.sum_y), torch.as_tensor(self.sum_y2),
                             torch.as_tensor(self.ss_res))
        return Score(value, higher_is_better=True)
