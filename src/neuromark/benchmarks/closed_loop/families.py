"""The closed-loop agents as model families (:class:`~neuromark.training.family.ModelFamily` of
``closed_loop``): options, builder, DAgger training on the environment's training
episodes, checkpoints of the shared cache (header ``kind`` = registry name, ``config`` =
``{"inputs", "outputs", "discrete", "options"}``). See :mod:`.agents`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from neuromark.benchmarks.closed_loop.agents import (
    LoopANN,
    LoopANNOptions,
    LoopSNN,
    LoopSNNOptions,
    LoopWienerOptions,
    fit_ann,
    fit_snn,
    fit_wiener,
)
from neuromark.benchmarks.closed_loop.env import TrainingEpisodes
from neuromark.networks.ridge_decoder import RidgeDecoder
from neuromark.training.checkpoints import read_checkpoint, restore_network
from neuromark.training.family import TrainedModule

#: Bumped whenever the agents' code changes what training produces: it enters every
#: checkpoint's recipe, so a cached agent of older code is retrained, never reused.
RECIPE_VERSION = 1


@dataclass(frozen=True)
class ClosedLoopFamily:
    """A registered closed-loop agent (see the module)."""

    name: Literal["loop_ann", "loop_snn", "loop_wiener"]
    options_model: Any
    train_model: Any = None
    tasks: tuple[str, ...] = ("closed_loop",)

    @property
    def spiking(self) -> bool:
        return self.name == "loop_snn"

    @property
    def recipe_version(self) -> int:
        """:data:`RECIPE_VERSION` (in every checkpoint's recipe)."""
        return RECIPE_VERSION

    @property
    def has_neurons(self) -> bool:
        return self.name != "loop_wiener"

    def build(self, options: Any, inputs: int, outputs: int) -> nn.Module:
        """An untrained agent for ``inputs`` observations and ``outputs`` action values."""
        torch.manual_seed(options.seed)
        if self.name == "loop_ann":
            return LoopANN(inputs, outputs, options.hidden, options.dropout).eval()
        if self.name == "loop_snn":
            net = LoopSNN(inputs, outputs, options)
            with torch.no_grad():  # inputs are 0/1 or scaled to [0, 1]: start with more drive
                net.fc1.weight.mul_(4.0)
            return net.eval()
        if outputs != 2:
            raise ValueError(f"loop_wiener decodes 2-D velocities; this action space has {outputs}")
        return RidgeDecoder(inputs, options.lags, options.width).eval()

    def fit(self, options: Any, train: Any, data: TrainingEpisodes, classes: int, *,
            quiet: bool = True, label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]:
        """DAgger on ``data``'s episodes: ``(TrainedModule, info)``."""
        env = data.make()
        inputs, discrete = env.observation_size, env.action_space.kind == "discrete"
        start = time.perf_counter()
        net = self.build(options, inputs, classes)
        if self.name == "loop_ann":
            info = fit_ann(net, options, data, discrete)
        elif self.name == "loop_snn":
            info = fit_snn(net, options, data, discrete)
        else:
            info = fit_wiener(net, options, data)
        config = {"inputs": inputs, "outputs": classes, "discrete": discrete,
                  "options": options.model_dump(mode="json")}
        return TrainedModule(self.name, config, net.eval()), {
            **info, "train_seconds": time.perf_counter() - start}

    def load(self, path: Path) -> tuple[nn.Module, dict[str, Any]]:
        payload = read_checkpoint(Path(path), (self.name,), what=f"{self.name} agent")
        net = restore_network(path, payload, lambda config: self.build(
            self.options_model(**config["options"]), int(config["inputs"]), int(config["outputs"])),
            self.name)
        return net, payload.get("meta", {})


LOOP_ANN = ClosedLoopFamily("loop_ann", LoopANNOptions)
LOOP_SNN = ClosedLoopFamily("loop_snn", LoopSNNOptions)
LOOP_WIENER = ClosedLoopFamily("loop_wiener", LoopWienerOptions)
