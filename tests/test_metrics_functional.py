"""The public functional metric API (``neuromark.metrics.functional``) on hand-computed cases."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

from neuromark.metrics.functional import correctness, sparsity, stats, synops


def test_import_of_the_package_is_light():
    """``neuromark.metrics.functional`` names no function itself (each is imported from its
    module): importing the package imports neither torch nor a submodule."""
    code = ("import sys, neuromark.metrics.functional as f; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "print(sorted(m for m in sys.modules if m.startswith('neuromark.metrics.functional.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    for module, name in ((correctness, "accuracy"), (correctness, "smape"), (sparsity, "zero_fraction"),
                         (synops, "masked_counts"), (stats, "standard_error")):
        assert callable(getattr(module, name))


@pytest.mark.parametrize("make", [torch.tensor, np.array, list])
def test_accuracy_by_hand(make):
    assert correctness.accuracy(make([1, 2, 3, 4]), make([1, 2, 0, 4])) == 0.75
    # a sample counts only when every element matches: rows 0 and 2 of 3
    assert correctness.accuracy(make([[1, 1], [0, 1], [2, 2]]), make([[1, 1], [1, 1], [2, 2]])) == 2 / 3
    assert isinstance(correctness.accuracy(make([0]), make([0])), float)


def test_mse_by_hand():
    # squared errors 1, 4, 0, 4: mean 9 / 4
    assert correctness.mse([[1.0, 2.0], [3.0, 3.0]], [[0.0, 0.0], [3.0, 1.0]]) == 2.25
    assert correctness.mse(np.array([2.0]), np.array([2.0])) == 0.0
    assert correctness.mse(torch.tensor([1.0, -1.0]), torch.tensor([0.0, 0.0])) == 1.0


def test_smape_by_hand():
    # 200*|1-3|/(1+3) = 100 and 0/0 = 0: mean 50
    assert correctness.smape([3.0, 0.0], [1.0, 0.0]) == 50.0
    # opposite signs give the bound; NaN and inf predictions count the bound
    assert correctness.smape([-2.0], [2.0]) == 200.0
    assert correctness.smape(torch.tensor([[float("nan")], [1.0]]), torch.tensor([[5.0], [1.0]])) == 100.0
    assert correctness.smape(np.array([float("inf"), 2.0]), np.array([1.0, 1.0])) == pytest.approx(
        (200 + 200 / 3) / 2)
    # huge finite values do not overflow
    assert correctness.smape(torch.tensor([1e308], dtype=torch.float64),
                   torch.tensor([-1e308], dtype=torch.float64)) == 200.0


def test_r2_by_hand():
    # y = 1, 2, 3 (mean 2, SS_tot 2); residuals 0, 0, 1 (SS_res 1): R² = 1 - 1/2
    assert correctness.r2([1.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == 0.5
    # two dimensions: 0.5 and 1 (perfect), averaged
    assert correctness.r2([[1.0, 10.0], [2.0, 20.0], [2.0, 30.0]],
                [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]) == 0.75
    # predicting the mean gives 0; worse than the mean is negative
    assert correctness.r2([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == 0.0
    assert correctness.r2([3.0, 2.0, 1.0], [1.0, 2.0, 3.0]) == -3.0


def test_r2_matches_the_metric_class_over_batches():
    from neuromark.metrics.base import Step
    from neuromark.metrics.correctness import R2

    rng = np.random.default_rng(0)
    y, p = rng.normal(size=(10, 3)), rng.normal(size=(10, 3))
    metric = R2()
    metric.update(Step(0, torch.as_tensor(p[:4]), torch.as_tensor(y[:4]), 4))
    metric.update(Step(1, torch.as_tensor(p[4:]), torch.as_tensor(y[4:]), 6))
    assert metric.compute().value == pytest.approx(correctness.r2(p, y), rel=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: correctness.accuracy([1, 2], [1]), r"predictions of shape \(2,\) do not fit targets"),
    (lambda: correctness.mse([[1.0]], [1.0]), r"MSE: predictions of shape \(1, 1\)"),
    (lambda: correctness.smape([1.0, 2.0], [[1.0, 2.0]]), r"sMAPE: predictions of shape \(2,\)"),
    (lambda: correctness.r2([1.0], [1.0]), r"r2 needs at least 2 samples"),
    (lambda: correctness.r2([1.0, 2.0], [1.0, 1.0]), r"zero variance"),
    (lambda: correctness.accuracy([], []), r"accuracy: no samples"),
    (lambda: correctness.smape([], []), r"sMAPE: no samples"),
])
def test_bad_inputs_are_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sparsity_arithmetic_by_hand():
    assert sparsity.zero_fraction(3, 4) == 0.75
    with pytest.raises(ValueError, match="no elements"):
        sparsity.zero_fraction(0, 0)
    a, b = nn.Linear(3, 2), nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        a.weight.copy_(torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
        a.bias.zero_()  # biases are not counted
        b.weight.copy_(torch.tensor([[0.0, 1.0]]))
    assert sparsity.weight_zero_counts([("a", a), ("b", b)]) == (4, 8)


def test_synops_arithmetic_by_hand():
    weight = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0]])  # (out 2, in 3)
    counts = synops.weight_column_nnz(weight)
    assert counts.tolist() == [1.0, 1.0, 2.0]
    # rows: x0 meets 1 weight, x2 meets 2 -> 3; the second row: x1, x2 -> 1 + 2 = 3
    rows = torch.tensor([[1.0, 0.0, 1.0], [0.0, -1.0, 1.0]])
    effective, residual = synops.masked_counts(rows, counts)
    assert float(effective) == 6.0 and float(residual) == 0.0  # spikes only: ACs
    _, residual = synops.masked_counts(torch.tensor([[0.5, 0.0, 2.0]]), counts)
    assert float(residual) == pytest.approx(0.25 + 1.0)  # (0.5-1)² + (2-1)²: MACs
    # a 1-D convolution of 3 taps over 4 inputs, no padding: 2 outputs; inputs 0 and 3 meet
    # one tap, inputs 1 and 2 meet two
    mask = torch.ones(1, 1, 3)
    per_input = synops.conv_input_counts(mask, (1, 4), stride=1, padding=0, dilation=1, groups=1)
    assert per_input.tolist() == [[1.0, 2.0, 2.0, 1.0]]


def test_standard_error_by_hand():
    assert stats.standard_error([1.0]) is None  # no error, never 0
    # 1, 2, 3: sample sd 1, se 1 / sqrt(3)
    assert stats.standard_error([1.0, 2.0, 3.0]) == pytest.approx(3 ** -0.5)
