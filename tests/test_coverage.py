"""Coverage and interception: every parameter is consumed by a counted op or exempt.

Expected figures are hand arithmetic on small nets whose weights are all non-zero (unless
pruned), so effective ops follow from the input's non-zeros alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import prune

from neuromark import Benchmark
from neuromark.errors import MetricError
from neuromark.instrument.probes import Instrument
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel


def run(model, data: torch.Tensor, samples: int | None = None, **options) -> tuple[dict, dict]:
    """(synaptic_operations, its details) of one batch."""
    targets = torch.zeros(samples if samples is not None else len(data))
    results = Benchmark(model, [(data, targets)], metrics=[SynapticOperations(**options)],
                        quiet=True).run()
    return dict(results)["synaptic_operations"], results.details["synaptic_operations"]


def nonzero(shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    """Values in [1, 2) with random signs: never zero."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) + 1) * torch.where(torch.rand(shape, generator=g) < .5,
                                                              -1.0, 1.0)


def spikes(shape: tuple[int, ...], seed: int = 1) -> torch.Tensor:
    return (torch.rand(shape, generator=torch.Generator().manual_seed(seed)) < 0.3).float()


def full_coverage(details: dict) -> bool:
    cov = details["coverage"]
    return cov["counted"] == cov["total"] and cov["uncovered"] == []


class FunctionalThenLinear(nn.Module):
    """F.linear(x, w, b) 40 -> 24 with its own parameters, then nn.Linear(24, 6), per step."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((24, 40)))
        self.b = nn.Parameter(nonzero((24,), 2))
        self.fc = nn.Linear(24, 6)
        with torch.no_grad():
            self.fc.weight.copy_(nonzero((6, 24), 3))
            self.fc.bias.copy_(nonzero((6,), 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, 40)
        return torch.stack([self.fc(F.linear(x_t, self.w, self.b)) for x_t in x.unbind(1)], 1)


def test_functional_linear_is_counted_with_the_wrapped_layer_after_it():
    x = spikes((2, 10, 40))
    ops, details = run(FunctionalThenLinear(), x)
    # Dense per sample: 10 steps x (40 * 24 + 24 * 6) = 11,040 (neuromark used to say 1,440)
    assert ops["Dense"] == 10 * (40 * 24 + 24 * 6) == 11_040
    # spikes meet 24 non-zero weights each; the analog hidden layer (bias: never 0) 6 each
    assert ops["Effective_ACs"] == float(x.count_nonzero()) * 24 / 2
    assert ops["Effective_MACs"] == 10 * 24 * 6
    assert full_coverage(details) and details["coverage"]["total"]["tensors"] == 4


class MatmulParam(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((16, 8)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


def test_matmul_with_a_parameter():
    x = spikes((3, 16))
    ops, details = run(MatmulParam(), x)
    assert ops["Dense"] == 16 * 8 == 128  # neuromark used to say 0
    assert ops["Effective_ACs"] == float(x.count_nonzero()) * 8 / 3
    assert full_coverage(details)


class TransposedView(nn.Module):
    """Weight used through views: ``w.t()`` on the right, a slice on the left."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((8, 16)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, 16)
        h = x @ self.w.t()  # (B, 8)
        return torch.matmul(self.w[:4, :8], h.t()).t()  # (4, 8) @ (8, B)


def test_views_of_a_parameter_are_weights_and_one_parameter_counts_in_both_ops():
    x = spikes((3, 16))
    ops, details = run(TransposedView(), x)
    assert ops["Dense"] == 16 * 8 + 8 * 4
    assert ops["Effective_ACs"] == float(x.count_nonzero()) * 8 / 3
    assert ops["Effective_MACs"] == 8 * 4  # h is analog and non-zero
    assert full_coverage(details)


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attn(x, x, x, need_weights=False)[0]


def test_multihead_attention_counts_all_four_projections_and_its_activation_products():
    tokens, embed = 5, 16
    x = nonzero((3, tokens, embed))
    model = Attention().eval()
    ops, details = run(model, x)
    # q, k, v and the (never called) out_proj: 4 x 16 x 16 per token
    assert ops["Dense"] == 4 * embed * embed * tokens
    assert ops["Effective_MACs"] == ops["Dense"]
    # scores (tokens x tokens x 16) and A @ V (the same), per sample; not in Dense
    assert details["activation_products"] == 2 * tokens * tokens * embed
    assert full_coverage(details)
    with torch.inference_mode():  # interception leaves the output as it was
        plain = model(x)
    with Instrument(TorchModel(model), {"synops"}), torch.inference_mode():
        torch.testing.assert_close(model(x), plain)


@pytest.mark.parametrize("how", ["prune", "weight_norm", "parametrizations.weight_norm",
                                 "parametrize"])
def test_parametrised_weights_count_as_the_modules_weight(how):
    layer = nn.Linear(4, 3)
    with torch.no_grad():
        layer.weight.copy_(nonzero((3, 4)))
    if how == "prune":
        prune.l1_unstructured(layer, "weight", amount=6)  # 6 of 12 zeroed
        expected = int((layer.weight != 0).sum())
        assert expected == 6
    elif how == "weight_norm":
        with pytest.warns(FutureWarning):
            torch.nn.utils.weight_norm(layer)
        expected = 12
    elif how == "parametrizations.weight_norm":
        torch.nn.utils.parametrizations.weight_norm(layer)
        expected = 12
    else:
        class Masked(nn.Module):
            def forward(self, w: torch.Tensor) -> torch.Tensor:
                return w * torch.tensor([[1.0, 0, 1, 1]])  # column 1 zeroed

        torch.nn.utils.parametrize.register_parametrization(layer, "weight", Masked())
        expected = 9
    ops, details = run(layer, torch.ones(2, 4))  # each input meets its column's weights
    assert ops == {"Effective_MACs": 0.0, "Effective_ACs": float(expected), "Dense": 12.0}
    assert full_coverage(details)


class BiasAdded(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((4, 3)))
        self.b = nn.Parameter(nonzero((3,)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w + self.b


def test_a_bias_added_to_a_counted_op_is_covered():
    ops, details = run(BiasAdded(), torch.ones(2, 4))
    assert ops["Dense"] == 12 and full_coverage(details)


class Einsum(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((5, 4)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bi,oi->bo", x, self.w)


def test_einsum_with_a_parameter():
    x = spikes((4, 4), 3)
    ops, details = run(Einsum(), x)
    assert ops["Dense"] == 20 and ops["Effective_ACs"] == float(x.count_nonzero()) * 5 / 4
    assert full_coverage(details)


class SelfAttentionScores(nn.Module):
    """q = x W (a weight op), then q q^T (activation x activation): not synaptic."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((6, 4)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, L, 6)
        q = x @ self.w
        return torch.softmax(q @ q.transpose(1, 2), -1) @ q


def test_activation_products_are_reported_apart_from_dense():
    x = nonzero((2, 5, 6))
    ops, details = run(SelfAttentionScores(), x)
    assert ops["Dense"] == 5 * 6 * 4
    assert details["activation_products"] == 5 * 5 * 4 + 5 * 5 * 4


class Outer(nn.Module):
    """Owns a parameter (interception active in its forward) and wraps a counted Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(nonzero((3, 3)))
        self.inner = nn.Sequential(nn.Linear(3, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x) @ self.scale


def test_a_wrapped_layer_inside_an_intercepted_module_is_counted_once():
    ops, details = run(Outer(), torch.ones(2, 3))
    assert ops["Dense"] == 9 + 9  # the Linear once (its wrapper), the matmul once
    assert full_coverage(details)


def test_a_model_whose_parameters_are_all_wrapped_runs_without_interception():
    net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    with Instrument(TorchModel(net), {"synops"}) as probe:
        assert probe.ops is None and "forward" not in net.__dict__


class NumpyMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.asarray(x.detach().numpy() @ w.detach().numpy()))


class Uncountable(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(nonzero((4, 4)))
        self.fc = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(NumpyMatmul.apply(x, self.w))


def test_an_uncountable_use_fails_naming_the_parameter_shape_and_type():
    with pytest.raises(MetricError, match=r"(?s)coverage.*w \(module '<root>', Uncountable, "
                                          r"shape \[4, 4\]\); used only by .*numpy.*exempt_params"):
        run(Uncountable(), torch.ones(2, 4))


def test_coverage_warn_reports_instead_and_exempt_params_exempt():
    with pytest.warns(UserWarning, match="coverage"):
        ops, details = run(Uncountable(), torch.ones(2, 4), coverage="warn")
    assert details["coverage"]["uncovered"] == ["w"] and ops["Dense"] == 8
    assert details["coverage"]["counted"] == {"tensors": 2, "elements": 10}
    assert details["coverage"]["total"] == {"tensors": 3, "elements": 26}
    ops, details = run(TorchModel(Uncountable(), exempt_params=["w"]), torch.ones(2, 4))
    assert details["coverage"]["exempt"] == {"w": "exempt_params"}
    with pytest.raises(ValueError, match=r"exempt_params \['nope'\]"):
        run(TorchModel(Uncountable(), exempt_params=["nope"]), torch.ones(2, 4))
    with pytest.raises(ValueError, match="coverage must be"):
        SynapticOperations(coverage="ignore")


def test_a_wrapped_layer_that_never_runs_is_uncovered():
    class Unused(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.used, self.head = nn.Linear(2, 2), nn.Linear(2, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.used(x)

    with pytest.raises(MetricError, match=r"head\.weight \(module 'head', Linear, shape \[5, 2\]\)"):
        run(Unused(), torch.ones(1, 2))
    _, details = run(TorchModel(Unused(), exempt_params=["head"]), torch.ones(1, 2))
    assert sorted(details["coverage"]["exempt"]) == ["head.bias", "head.weight"]


def test_neuron_parameters_and_norm_layers_are_exempt():
    snntorch = pytest.importorskip("snntorch")
    net = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4),
                        snntorch.Leaky(beta=0.9, learn_beta=True, learn_threshold=True,
                                       init_hidden=True, output=True))
    _, details = run(SNNTorchModel(net), spikes((2, 3, 3)))
    exempt = details["coverage"]["exempt"]
    assert exempt["1.weight"] == "non-synaptic LayerNorm"
    assert exempt["2.beta"] == exempt["2.threshold"] == "neuron parameter"
    assert full_coverage({"coverage": {**details["coverage"],
                                       "total": details["coverage"]["counted"]}})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a second device")
def test_a_parameter_on_another_device_is_tracked():
    model = MatmulParam()
    model.w.data = model.w.data.cuda()

    class Mixed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.m(x.cuda()).cpu()

    ops, details = run(Mixed(), spikes((3, 16)))
    assert ops["Dense"] == 128 and full_coverage(details)


def test_config_coverage_mode_and_the_cli_flag():
    from neuromark.context import RunContext
    from neuromark.errors import ConfigError

    metric = SynapticOperations()
    RunContext.build(environ={}).apply_coverage([metric])
    assert metric.coverage == "error"
    warn = RunContext.build(coverage="warn", environ={})  # `neuromark run --coverage warn`
    warn.apply_coverage([metric])
    assert metric.coverage == "warn"
    warn.apply_coverage([metric], "error")  # the config's eval.coverage takes precedence
    assert metric.coverage == "error"
    assert RunContext.build(environ={"NEUROMARK_COVERAGE": "warn"}).coverage == "warn"  # default
    with pytest.raises(ConfigError, match="NEUROMARK_COVERAGE"):
        RunContext.build(environ={"NEUROMARK_COVERAGE": "off"})
    with pytest.raises(ConfigError, match="--coverage"):
        RunContext.build(coverage="off", environ={})


class SquareBothWays(nn.Module):
    """One square weight used as ``x @ w`` and ``x @ w.t()``: column counts differ."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x @ self.w, x @ self.w.t()], -1)


def test_a_square_weight_and_its_transpose_are_counted_apart():
    x = torch.tensor([[1.0, 0.0, 0.0]])  # only x_0: meets row 0 of w (3), column 0 (1)
    ops, _ = run(SquareBothWays(), x)
    assert ops == {"Effective_MACs": 0.0, "Effective_ACs": 3.0 + 1.0, "Dense": 18.0}


def test_a_tied_weight_is_covered_by_whichever_layer_uses_it():
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.b(x)  # only the second name runs

    ops, details = run(Tied(), torch.ones(1, 3))
    assert ops["Dense"] == 9 and full_coverage(details)
    assert details["coverage"]["total"]["tensors"] == 1
