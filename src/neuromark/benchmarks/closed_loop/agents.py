"""Closed-loop agents with their training recipes (model families of ``closed_loop``).

Every agent takes one step ``(B, L, obs)`` per call (L = 1 in the loop) and returns
``(B, L, A)``; state carries across calls until ``reset_state()``. Each is trained by
DAgger on the training seeds' episodes (:mod:`.train`).

- ``loop_ann``: NeuroBench's OPS tutorial ANN, ``obs -> 16 -> ReLU -> 32 -> Dropout(0.5)
  -> ReLU -> A`` (96 -> 16 -> 32 -> 2 for OPS), memoryless; Adam on MSE (a Discrete
  action space: cross-entropy).
- ``loop_snn``: ``obs -> hidden`` current-based LIF neurons (fast-sigmoid surrogate
  gradient, :mod:`neuromark.networks.lif`) ``-> A`` leaky integrators; BPTT on
  ``chunk``-step windows of the episodes. ``input_range`` (minima, maxima) scales
  observations to [-1, 1] first (default: none).
- ``loop_wiener``: the Wiener filter of :mod:`neuromark.networks.ridge_decoder` (ridge
  regression on ``lags`` causal windows of ``width`` steps; primate reaching's
  ``ridge_decoder`` too), closed form: the classical reference.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from neuromark.benchmarks.closed_loop.env import TrainingEpisodes
from neuromark.benchmarks.closed_loop.train import Rollouts, dagger
from neuromark.config import Seed, StrictModel
from neuromark.networks.lif import LeakyReadout, LIFNeuron
from neuromark.networks.ridge_decoder import RidgeDecoder, RidgeOptions, TrainData, fit_ridge


class DaggerOptions(StrictModel):
    seed: Seed = 0
    dagger_rounds: int = Field(3, ge=1, le=20)
    noise: float = Field(0.3, ge=0, le=10, description="exploration noise of round 0 (Box)")


class LoopANNOptions(DaggerOptions):
    hidden: tuple[int, int] = (16, 32)
    dropout: float = Field(0.5, ge=0, lt=1)
    epochs: int = Field(10, ge=1)
    batch_size: int = Field(256, ge=1)
    lr: float = Field(3e-3, gt=0)


class LoopSNNOptions(DaggerOptions):
    hidden: int = Field(64, ge=1)
    tau_syn_ms: float = Field(10.0, gt=0)
    tau_mem_ms: float = Field(20.0, gt=0)
    tau_out_ms: float = Field(20.0, gt=0)
    dt_ms: float = Field(10.0, gt=0, description="ms per step (OPS: 10, CartPole-v1: 20)")
    input_range: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    iterations: int = Field(150, ge=1, description="Adam steps per DAgger round")
    batch_size: int = Field(16, ge=1)
    chunk: int = Field(40, ge=2)
    burn_in: int = Field(5, ge=0)
    lr: float = Field(5e-3, gt=0)


class LoopWienerOptions(RidgeOptions, DaggerOptions):
    lags: int = Field(4, ge=1, le=50)
    width: int = Field(2, ge=1, le=250)


class LoopANN(nn.Module):
    """NeuroBench's OPS ANN layout: (B, L, obs) -> (B, L, A)."""

    def __init__(self, inputs: int, outputs: int, hidden: tuple[int, int] = (16, 32),
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (nn.Linear(inputs, hidden[0]), nn.Linear(*hidden),
                                        nn.Linear(hidden[1], outputs))
        self.act1, self.drop, self.act2 = nn.ReLU(), nn.Dropout(dropout), nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.fc3(self.act2(self.drop(self.fc2(self.act1(self.fc1(x))))))


class LoopSNN(nn.Module):
    """obs -> LIF(hidden) -> A leaky integrators, one step per neuron call."""

    def __init__(self, inputs: int, outputs: int, options: LoopSNNOptions) -> None:
        super().__init__()
        o = options
        low, high = (o.input_range if o.input_range is not None
                     else ((-1.0,) * inputs, (1.0,) * inputs))  # identity
        if len(low) != inputs or len(high) != inputs:
            raise ValueError(f"input_range needs {inputs} minima and maxima")
        self.register_buffer("low", torch.tensor(low, dtype=torch.float32))
        self.register_buffer("span", torch.tensor(high, dtype=torch.float32) - self.low)
        self.fc1 = nn.Linear(inputs, o.hidden)
        self.lif1 = LIFNeuron(o.hidden, math.exp(-o.dt_ms / o.tau_syn_ms),
                              math.exp(-o.dt_ms / o.tau_mem_ms))
        self.fc2 = nn.Linear(o.hidden, outputs)
        self.out = LeakyReadout(outputs, 0.0, math.exp(-o.dt_ms / o.tau_out_ms))

    def forward(self, x: Tensor) -> Tensor:
        current = self.fc1(2.0 * (x - self.low) / self.span - 1.0)  # range -> [-1, 1]
        return torch.stack([self.out(self.fc2(self.lif1(current[:, n])))
                            for n in range(x.shape[1])], dim=1)


def _flat(rollouts: Rollouts) -> tuple[Tensor, Tensor]:
    return (torch.from_numpy(np.concatenate(rollouts.observations)),
            torch.from_numpy(np.concatenate(rollouts.labels)))


def _loss(out: Tensor, labels: Tensor, discrete: bool, mask: Tensor | None = None) -> Tensor:
    """MSE (a Box) or cross-entropy against the expert's one-hot (a Discrete action), over
    the steps where ``mask`` (B, L) is 1 (None: all)."""
    out, labels = out.reshape(-1, out.shape[-1]), labels.reshape(-1, labels.shape[-1])
    if discrete:
        each = nn.functional.cross_entropy(out, labels.argmax(-1), reduction="none")
    else:
        each = ((out - labels) ** 2).mean(-1)
    if mask is None:
        return each.mean()
    weights = mask.reshape(-1)
    return (each * weights).sum() / weights.sum().clamp(min=1.0)


def fit_ann(model: LoopANN, options: LoopANNOptions, data: TrainingEpisodes, discrete: bool) -> dict:
    gen = torch.Generator().manual_seed(options.seed)
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)

    def fit(rollouts: Rollouts) -> None:
        x, y = _flat(rollouts)
        model.train()
        for _ in range(options.epochs):
            for batch in torch.randperm(len(x), generator=gen).split(options.batch_size):
                opt.zero_grad()
                _loss(model(x[batch]), y[batch], discrete).backward()
                opt.step()
        model.eval()

    return dagger(data, model, fit, rounds=options.dagger_rounds, noise=options.noise,
                  seed=options.seed)


def _reset(model: nn.Module) -> None:
    for m in model.modules():
        if m is not model and callable(getattr(m, "reset_state", None)):
            m.reset_state()


def fit_snn(model: LoopSNN, options: LoopSNNOptions, data: TrainingEpisodes, discrete: bool) -> dict:
    rng = np.random.default_rng(options.seed)
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)

    def fit(rollouts: Rollouts) -> None:  # windows of up to chunk steps, shorter ones padded
        episodes = [(torch.from_numpy(o), torch.from_numpy(y))
                    for o, y in zip(rollouts.observations, rollouts.labels)]
        n, burn = options.chunk, options.burn_in
        for _ in range(options.iterations):
            xs, ys, masks = [], [], []
            for p in rng.integers(len(episodes), size=options.batch_size):
                o, y = episodes[p]
                start = int(rng.integers(max(len(o) - n, 0) + 1))
                x, t = o[start:start + n], y[start:start + n]
                mask = torch.zeros(n)
                mask[min(burn, len(x) - 1) if start == 0 else burn:len(x)] = 1.0
                xs.append(torch.cat([x, x.new_zeros(n - len(x), x.shape[1])]))
                ys.append(torch.cat([t, t.new_zeros(n - len(t), t.shape[1])]))
                masks.append(mask)
            _reset(model)
            out = model(torch.stack(xs))
            opt.zero_grad()
            _loss(out, torch.stack(ys), discrete, torch.stack(masks)).backward()
            opt.step()
        _reset(model)

    return dagger(data, model, fit, rounds=options.dagger_rounds, noise=options.noise,
                  seed=options.seed, reset=lambda: _reset(model))


def fit_wiener(model: RidgeDecoder, options: LoopWienerOptions, data: TrainingEpisodes) -> dict:
    span = options.lags * options.width

    def fit(rollouts: Rollouts) -> None:  # episodes joined with zero gaps: no window spans two
        xs, ys, segments, at = [], [], [], 0
        for o, y in zip(rollouts.observations, rollouts.labels):
            xs += [np.zeros((span, o.shape[1]), np.float32), o]
            ys += [np.zeros((span, y.shape[1]), np.float32), y]
            segments.append((at + span, at + span + len(o)))
            at += span + len(o)
        fitted = fit_ridge(RidgeOptions(lags=options.lags, width=options.width, alpha=options.alpha),
                           TrainData(np.concatenate(xs), np.concatenate(ys), segments))
        model.load_state_dict(fitted.state_dict())
        model.reset_state()

    return dagger(data, model, fit, rounds=options.dagger_rounds, noise=options.noise,
                  seed=options.seed, reset=model.reset_state)
