"""Streaming velocity decoders for primate reaching, with their training recipes.

Every decoder is a torch module fed one stream in chunks: input (S, L, C) binned threshold
crossings (one row per 4-ms step), output (S, L, 2) cursor velocity in mm/step. State (an
input history or membranes) carries from chunk to chunk and is cleared by
``reset_state()``; a fresh stream starts from empty history (zeros before its first step).
With S parallel streams (rows of the batch) the state is per row, and
``keep_streams(rows)`` keeps only the given rows' state when streams end (the batch then
shrinks to those rows, in that order).

- ``ridge``: Wiener filter, i.e. ridge regression on ``lags`` causal windows of ``width``
  steps each (default 5 x 8 steps = 160 ms), solved in closed form
  (:mod:`neuromark.networks.ridge_decoder`, shared with closed-loop's ``loop_wiener``).
- ``ann2d``: NeuroBench's ANN2D layout: the input summed over the last ``window`` steps
  (50 = 200 ms) -> 32 -> 48 -> 2 with ReLU, trained with Adam on MSE. Warm-up rule: the
  peer outputs zeros until its window has filled (the first 50 test steps, scored); ours
  sums the steps the stream has so far and predicts from step 0 (every step scored).
- ``snn2``: two-layer LIF network (C -> ``hidden`` current-based LIF -> 2 leaky
  integrators, :mod:`neuromark.networks.lif`'s neurons) trained by BPTT with the
  fast-sigmoid surrogate on ``chunk``-step windows, loss after a ``burn_in``.

Each is a :class:`DecoderFamily` (a :class:`~neuromark.training.family.ModelFamily` of
``primate_reaching``): its checkpoints are the shared cache's (header ``kind`` = registry
name, ``config`` = ``{"channels", "options"}``), trained and reused by
:mod:`neuromark.benchmarks.primate_reaching.decoders`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from neuromark.errors import DataError
from neuromark.networks.lif import LeakyReadout, LIFNeuron
from neuromark.networks.ridge_decoder import (
    DecoderOptions,
    RidgeDecoder,
    RidgeOptions,
    StreamHistory,
    TrainData,
    fit_ridge,
    window_features,
    window_sums,
)
from neuromark.training.checkpoints import read_checkpoint
from neuromark.training.family import TrainedModule

STEP_MS = 4.0


class ANN2DOptions(DecoderOptions):
    window: int = Field(50, ge=1, le=1000, description="summed steps (50 = 200 ms)")
    hidden: tuple[int, int] = (32, 48)
    epochs: int = Field(20, ge=1)
    batch_size: int = Field(256, ge=1)
    lr: float = Field(1e-3, gt=0)


class SNN2Options(DecoderOptions):
    hidden: int = Field(128, ge=1)
    tau_syn_ms: float = Field(10.0, gt=0)
    tau_mem_ms: float = Field(50.0, gt=0)
    tau_out_ms: float = Field(80.0, gt=0)
    iterations: int = Field(300, ge=1)
    batch_size: int = Field(16, ge=1)
    chunk: int = Field(100, ge=2, description="BPTT window in steps")
    burn_in: int = Field(20, ge=0)
    lr: float = Field(5e-3, gt=0)


class ANN2D(nn.Module):
    """Summed window -> two ReLU layers -> velocity: (S, L, C) -> (S, L, 2)."""

    def __init__(self, channels: int, window: int = 50, hidden: tuple[int, int] = (32, 48)) -> None:
        super().__init__()
        self.window = window
        self.state = StreamHistory(window - 1)
        self.net = nn.Sequential(nn.Linear(channels, hidden[0]), nn.ReLU(),
                                 nn.Linear(hidden[0], hidden[1]), nn.ReLU(), nn.Linear(hidden[1], 2))

    def reset_state(self) -> None:
        self.state.reset_state()

    def keep_streams(self, rows: Tensor) -> None:
        """Keep only the state of the parallel streams in ``rows`` (see the module)."""
        self.state.keep_streams(rows)

    def forward(self, x: Tensor) -> Tensor:
        feats, self.state.history = window_sums(x, self.state.get(x), self.window, 1)
        return self.net(feats)


class SNN2(nn.Module):
    """C -> LIF(hidden) -> 2 leaky integrators, one 4-ms step per neuron call: (S, L, C) -> (S, L, 2)."""

    def __init__(self, channels: int, hidden: int = 128, tau_syn_ms: float = 10.0,
                 tau_mem_ms: float = 50.0, tau_out_ms: float = 80.0) -> None:
        super().__init__()
        self.fc1 = nn.Linear(channels, hidden)
        self.lif1 = LIFNeuron(hidden, math.exp(-STEP_MS / tau_syn_ms), math.exp(-STEP_MS / tau_mem_ms))
        self.fc2 = nn.Linear(hidden, 2)
        self.out = LeakyReadout(2, 0.0, math.exp(-STEP_MS / tau_out_ms))

    def keep_streams(self, rows: Tensor) -> None:
        """Keep only the neuron state of the parallel streams in ``rows`` (see the module)."""
        for layer in (self.lif1, self.out):
            if layer.mem is not None and layer.syn is not None:
                layer.mem, layer.syn = layer.mem[rows], layer.syn[rows]

    def forward(self, x: Tensor) -> Tensor:
        current = self.fc1(x)
        outputs = []
        for n in range(x.shape[1]):
            outputs.append(self.out(self.fc2(self.lif1(current[:, n]))))
        return torch.stack(outputs, dim=1)


def fit_ann2d(options: ANN2DOptions, data: TrainData, device: Any = "cpu") -> ANN2D:
    """Adam on MSE over shuffled training samples (features: summed windows / window), on
    ``device`` (the model is built on the CPU after seeding, then moved)."""
    torch.manual_seed(options.seed)
    model = ANN2D(data.x.shape[1], options.window, options.hidden).to(device)
    f = window_features(data, model.window, 1).to(device)
    y = torch.from_numpy(data.y[data.indices]).to(device)
    gen = torch.Generator().manual_seed(options.seed)
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)
    for _ in range(options.epochs):
        for batch in torch.randperm(len(f), generator=gen).split(options.batch_size):
            opt.zero_grad()
            nn.functional.mse_loss(model.net(f[batch]), y[batch]).backward()
            opt.step()
    return model


def fit_snn2(options: SNN2Options, data: TrainData, device: Any = "cpu") -> SNN2:
    """BPTT on random ``chunk``-step windows of the training reaches (state zeroed per
    window, loss after ``burn_in`` steps), Adam, on ``device`` (built on the CPU after
    seeding, then moved)."""
    torch.manual_seed(options.seed)
    rng = np.random.default_rng(options.seed)
    model = SNN2(data.x.shape[1], options.hidden, options.tau_syn_ms, options.tau_mem_ms,
                 options.tau_out_ms)
    with torch.no_grad():  # inputs are 0/1 at ~20 % occupancy: scale the first layer up
        model.fc1.weight.mul_(4.0)
    model.to(device)
    idx = data.indices
    starts = idx[idx + options.chunk <= len(data.x)]
    x = torch.from_numpy(data.x.astype(np.float32)).to(device)
    y = torch.from_numpy(data.y.copy()).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)
    for _ in range(options.iterations):
        begin = rng.choice(starts, options.batch_size)
        rows = torch.from_numpy(begin[:, None] + np.arange(options.chunk)[None]).to(device)
        for module in (model.lif1, model.out):
            module.reset_state()
        out = model(x[rows])
        opt.zero_grad()
        nn.functional.mse_loss(out[:, options.burn_in:], y[rows][:, options.burn_in:]).backward()
        opt.step()
    for module in (model.lif1, model.out):
        module.reset_state()
    return model


@dataclass(frozen=True)
class DecoderFamily:
    """A registered decoder: a :class:`~neuromark.training.family.ModelFamily` of
    ``primate_reaching`` (options schema, builder, training recipe, checkpoints). Its
    training settings are ``model.options`` (``train_model`` None: no ``train:`` section)."""

    kind: Literal["ridge", "ann2d", "snn2"]
    options_model: type[DecoderOptions]
    train_model: Any = None
    tasks: tuple[str, ...] = ("primate_reaching",)

    @property
    def name(self) -> str:
        """The registry name, and the ``kind`` its checkpoints record."""
        return "ridge_decoder" if self.kind == "ridge" else self.kind

    @property
    def spiking(self) -> bool:
        return self.kind == "snn2"

    @property
    def has_neurons(self) -> bool:
        """False for the linear ridge filter (no activation to count sparsity on)."""
        return self.kind != "ridge"

    def build(self, options: Any, channels: int) -> nn.Module:
        """An untrained decoder (to load a checkpoint into)."""
        if self.kind == "ridge":
            return RidgeDecoder(channels, options.lags, options.width)
        if self.kind == "ann2d":
            return ANN2D(channels, options.window, options.hidden)
        return SNN2(channels, options.hidden, options.tau_syn_ms, options.tau_mem_ms,
                    options.tau_out_ms)

    def trains_on(self, device: Any) -> Any:
        """The device this decoder trains on: the CPU for the closed-form ridge, else
        ``device``."""
        return "cpu" if self.kind == "ridge" else device

    def fit_stream(self, options: Any, data: TrainData, device: Any = "cpu") -> nn.Module:
        """Train on one session's training split (on ``device``, see :meth:`trains_on`);
        returns the model in eval mode, on the CPU."""
        if self.kind == "ridge":
            return fit_ridge(options, data).eval()
        fit = fit_ann2d if self.kind == "ann2d" else fit_snn2
        return fit(options, data, device).cpu().eval()

    def fit(self, options: Any, train: Any, data: TrainData, classes: int = 2, *,
            quiet: bool = True, label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]:
        """:meth:`fit_stream` as the protocol's fit (``train`` unused: the recipe is in
        ``options``): ``(model with checkpoint(), {"train_seconds", "train_samples"})``."""

        start = time.perf_counter()
        net = self.fit_stream(options, data, device)
        config = {"channels": int(data.x.shape[1]), "options": options.model_dump(mode="json")}
        return TrainedModule(self.name, config, net), {
            "train_seconds": time.perf_counter() - start, "train_samples": int(len(data.indices))}

    def load(self, path: Path) -> tuple[nn.Module, dict[str, Any]]:
        """(decoder in eval mode, meta) from a checkpoint of this family, the old
        ``neuromark-primate-decoder-1`` files included (their options from the recipe);
        :class:`DataError` otherwise."""

        payload = read_checkpoint(Path(path), (self.name,), what=f"{self.name} decoder")
        meta, config = payload.get("meta", {}), payload["config"]
        try:
            if payload["kind"] is None:  # legacy header: kind and options in the recipe
                recipe = meta.get("recipe") or {}
                if recipe.get("family") != self.kind:
                    raise ValueError(f"a decoder of family {recipe.get('family')!r}")
                config = {"options": recipe["options"],
                          "channels": _channels(payload["state_dict"], recipe["options"])}
            model = self.build(self.options_model(**config["options"]), int(config["channels"]))
            model.load_state_dict(payload["state_dict"])
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise DataError(f"{path}: malformed {self.name} checkpoint: {exc}") from None
        return model.eval(), meta


def _channels(state: dict[str, Tensor], options: dict[str, Any]) -> int:
    """The input channels of a decoder's state dict (legacy checkpoints record no config)."""
    if "readout.weight" in state:  # ridge: lags * channels inputs
        return int(state["readout.weight"].shape[1]) // int(options["lags"])
    return int(state["net.0.weight" if "net.0.weight" in state else "fc1.weight"].shape[1])


RIDGE = DecoderFamily("ridge", RidgeOptions)
ANN2D_FAMILY = DecoderFamily("ann2d", ANN2DOptions)
SNN2_FAMILY = DecoderFamily("snn2", SNN2Options)
