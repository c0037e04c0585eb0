"""ESN and LSTM baselines: structure, teacher forcing vs forecast, counted operations."""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from neuromark.benchmarks.mackey_glass.forecasters import (
    EchoStateNetwork,
    ESNParams,
    LSTMForecaster,
    LSTMParams,
    sparse_reservoir,
)


def _series(n: int = 300) -> torch.Tensor:
    t = torch.arange(n + 1, dtype=torch.float64)
    return (0.9 + 0.3 * torch.sin(0.07 * t) + 0.1 * torch.sin(0.19 * t)).reshape(-1, 1)


def test_sparse_reservoir_has_the_spectral_radius_and_exact_zeros():
    gen = torch.Generator().manual_seed(3)
    w = sparse_reservoir(186, 0.11, 1.3, gen)
    assert torch.linalg.eigvals(w).abs().max().item() == pytest.approx(1.3, rel=1e-9)
    density = (w != 0).double().mean().item()
    assert 0.10 < density < 0.12  # Binomial(34596, 0.11): sd 0.0017


def test_esn_layers_and_zeros_survive_the_readout_fit():
    esn = EchoStateNetwork(ESNParams(spectral_radius=0.9, leak=0.6), seed=1)
    assert esn.w_in.weight.shape == (186, 2) and esn.w_rec.weight.shape == (186, 186)
    assert esn.w_out.weight.shape == (1, 188)
    assert float(esn.w_in.weight.abs().max()) <= 1.0  # uniform [-1, 1] times input_scale 1
    zeros = esn.w_rec.weight == 0
    x = _series()
    esn.fit(x[:-1], x[1:])
    assert torch.equal(esn.w_rec.weight == 0, zeros)
    assert int((esn.w_out.weight != 0).sum()) == 188


def test_esn_fits_a_linear_map_of_its_input_exactly():
    # y = 2 f + 1 lies in the span of the readout features [1; f; r]: ridge 0 recovers it.
    esn = EchoStateNetwork(ESNParams(ridge=0.0, warmup=10), seed=0)
    x = _series()[:-1]
    pred = esn.fit(x, 2 * x + 1)
    assert torch.allclose(pred[10:], 2 * x[10:] + 1, atol=1e-6)


def test_esn_state_update_matches_the_equation():
    p = ESNParams(reservoir_size=5, connection_probability=1.0, leak=0.25, input_scale=0.5)
    esn = EchoStateNetwork(p, seed=2)
    r0 = torch.linspace(-0.5, 0.5, 5, dtype=torch.float64)
    esn.reservoir = r0.clone()
    f = torch.tensor([0.8], dtype=torch.float64)
    features = esn._update(f)
    w_in, w = esn.w_in.weight, esn.w_rec.weight  # scales folded in
    expected = 0.75 * r0 + 0.25 * torch.tanh(w @ r0 + w_in @ torch.tensor([1.0, 0.8], dtype=torch.float64))
    assert torch.allclose(features, torch.cat([torch.tensor([1.0, 0.8], dtype=torch.float64), expected]))


def test_esn_forecast_feeds_back_its_own_prediction():
    esn = EchoStateNetwork(seed=0)
    x = _series()
    esn.fit(x[:-1], x[1:])
    with torch.no_grad():
        esn.w_out.weight.zero_()
        esn.w_out.weight[0, 1] = 1.0  # y = f: the forecast repeats its first input forever
    esn.prior.fill_(0.7)
    esn.forecast = True
    with torch.no_grad():
        out = esn(torch.full((6, 1), 123.0, dtype=torch.float64))  # input values are ignored
    assert out.shape == (6, 1)
    assert torch.allclose(out, torch.full((6, 1), 0.7, dtype=torch.float64))


def test_lstm_buffer_and_state_carry_across_calls():
    params = LSTMParams(window=4, hidden_size=8, epochs=1)
    x = _series(20)[:-1].float()
    whole = LSTMForecaster(params, seed=0)
    stepwise = LSTMForecaster(params, seed=0)
    with torch.no_grad():
        y_whole = whole(x)
        y_steps = torch.cat([stepwise(x[i:i + 1]) for i in range(len(x))])
    assert torch.allclose(y_whole, y_steps, atol=1e-6)
    assert torch.equal(whole.memory, x[-4:, 0])
    # the first buffers are zero-padded: buffer of step 0 is [0, 0, 0, x0]
    ref = LSTMForecaster(params, seed=0)
    with torch.no_grad():
        out, _ = ref.lstm(torch.tensor([[[0.0, 0.0, 0.0, float(x[0])]]]))
        y0 = ref.readout(torch.relu(out[0]))
    assert torch.allclose(y_whole[0], y0[0], atol=1e-6)


def test_lstm_forecast_shifts_its_prediction_into_the_buffer():
    lstm = LSTMForecaster(LSTMParams(window=3, hidden_size=4), seed=0)
    with torch.no_grad():
        lstm(torch.tensor([[0.1], [0.2], [0.3]]))
        prior = lstm.prior.clone()
        lstm.forecast = True
        y = lstm(torch.zeros(1, 1))
    assert torch.allclose(lstm.memory, torch.tensor([0.2, 0.3, float(prior)]))
    assert torch.allclose(lstm.prior, y[0])


def test_lstm_training_reduces_the_loss():
    lstm = LSTMForecaster(LSTMParams(window=10, hidden_size=16, epochs=30, learning_rate=0.02), seed=0)
    x = _series(200)
    losses = lstm.fit(x[:-1], x[1:])
    assert len(losses) == 30 and losses[-1] < 0.2 * losses[0]
    assert all(math.isfinite(v) for v in losses)


def _forecast_results(module, n=20):
    from neuromark.metrics.complexity import SynapticOperations
    from neuromark.metrics.static import ConnectionSparsity
    from neuromark.runner import Benchmark

    x = _series(n)
    module.forecast = True
    loader = DataLoader(TensorDataset(x[:-1], x[1:]), batch_size=n)
    return Benchmark(module, loader, metrics=[ConnectionSparsity(), SynapticOperations()],
                     quiet=True).run()


def test_esn_operations_per_execution_are_its_nonzero_weights():
    esn = EchoStateNetwork(seed=4)
    x = _series()
    esn.fit(x[:-1], x[1:])
    nnz = sum(int((m.weight != 0).sum()) for m in (esn.w_in, esn.w_rec, esn.w_out))
    total = 186 * 2 + 186 * 186 + 188
    res = _forecast_results(esn)
    ops = res["synaptic_operations"]
    # every input is non-zero (1, f, tanh states), so effective MACs = non-zero weights
    assert ops["Effective_MACs"] == pytest.approx(nnz)
    assert ops["Dense"] == pytest.approx(total)
    assert ops["Effective_ACs"] == 0
    assert res["connection_sparsity"] == pytest.approx(1 - nnz / total)


def test_lstm_dense_operations_per_execution():
    lstm = LSTMForecaster(seed=0)
    x = _series()
    with torch.no_grad():
        lstm(x[:-1])
    res = _forecast_results(lstm)
    # 4 gates x 100 x (50 inputs + 100 recurrent) + readout 100 (biases not counted)
    assert res["synaptic_operations"]["Dense"] == pytest.approx(4 * 100 * 150 + 100)


def test_lstm_construction_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    LSTMForecaster(seed=5)
    assert torch.equal(torch.rand(3), expected)
