"""On-line learning in the loop: the hook and what it costs.

**The hook.** A learning rule is an object with ``update(module, observation, output,
feedback)`` called after every environment step (the rule then changes ``module``'s
parameters in place; it runs with autograd available, outside inference mode). Arguments:
``module`` the agent's network, ``observation`` the step's input tensor (1, 1, obs),
``output`` the network's output for it (no autograd history), ``feedback`` a
:class:`Feedback`. An optional ``bind(module)`` is called once before the first step.
Rules are registry entries (``neuromark.registry.learning_rules``) built with
``learning.options``; the built-in ``delta`` rule is :class:`DeltaRule`. A rule that runs
the network itself does so while the runner's probes listen: those forward passes count
with the next step's synaptic operations (docs/closed_loop.md).

**The counts** (:class:`PlasticityCounter`), taken by the harness from the parameters
before and after each update, never from the rule's own report:

- ``weights_changed_fraction``: parameter elements whose value changed, summed over all
  steps, over parameter elements summed over all steps (NeuroBench ``2025_GC``
  ``BenchmarkClosedLoop``: ``num_updated / total`` with ``weight_update``);
- ``plasticity_operations`` per step: the number of parameter elements written with a new
  value. Each is one synapse update ``w += dw``, an accumulate like one synaptic
  operation, so the figure sits beside ``synaptic_operations`` in the same unit; as with
  effective synaptic operations, an update of exactly zero (a silent input) costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from pydantic import Field
from torch import nn

from neuromark.config import StrictModel


@dataclass(frozen=True)
class Feedback:
    """What the environment returned for a step: ``reward``, ``terminated``, ``truncated``,
    and ``ideal_action`` (the ideal controller's action before the step, as a float tensor;
    None where the environment has none)."""

    reward: float
    terminated: bool
    truncated: bool
    ideal_action: torch.Tensor | None


class LearningRule(Protocol):
    """See the module docstring."""

    def update(self, module: nn.Module, observation: torch.Tensor, output: torch.Tensor,
               feedback: Feedback) -> None: ...


class PlasticityCounter:
    """Counts parameter changes of ``module`` around each update (see the module)."""

    def __init__(self, module: nn.Module) -> None:
        self.params = [p for p in module.parameters()]
        self.changed = 0
        self.total = 0
        self.steps = 0

    def around(self, update: Any) -> None:
        """Call ``update()`` and count the parameter elements it changed."""
        before = [p.detach().clone() for p in self.params]
        update()
        for old, new in zip(before, self.params):
            self.changed += int((old != new.detach()).sum())
            self.total += old.numel()
        self.steps += 1

    def state(self) -> dict[str, int]:
        return {"changed": self.changed, "total": self.total, "steps": self.steps}


def plasticity_figures(states: list[dict[str, int]]) -> dict[str, float] | None:
    """``weights_changed_fraction`` and ``plasticity_operations`` (per step) of the merged
    counter states; None when no update was counted."""
    changed = sum(s["changed"] for s in states)
    total = sum(s["total"] for s in states)
    steps = sum(s["steps"] for s in states)
    if steps == 0:
        return None
    return {"weights_changed_fraction": changed / total if total else 0.0,
            "plasticity_operations": changed / steps, "updates": steps}


class DeltaOptions(StrictModel):
    """``learning.options`` of ``delta``."""

    lr: float = Field(1e-3, gt=0, le=10)
    layer: str | None = Field(None, description="dotted name of the nn.Linear that produces "
                              "the output (default: the last nn.Linear)")


class DeltaRule:
    """The delta (Widrow-Hoff) rule on the output layer: ``W += lr * e x^T``,
    ``b += lr * e``, with ``e = ideal_action - output`` and ``x`` the layer's last input
    (recorded by a forward hook). Needs an environment with an ideal action (OPS)."""

    def __init__(self, lr: float = 1e-3, layer: str | None = None) -> None:
        self.lr = lr
        self.layer_name = layer
        self._layer: nn.Linear | None = None
        self._input: torch.Tensor | None = None

    def bind(self, module: nn.Module) -> None:
        """Find the output layer of ``module`` and record its inputs from now on."""
        self._layer = self._attach(module)

    def _attach(self, module: nn.Module) -> nn.Linear:
        linears = [(n, m) for n, m in module.named_modules() if isinstance(m, nn.Linear)]
        if self.layer_name is not None:
            linears = [(n, m) for n, m in linears if n == self.layer_name]
        if not linears:
            raise ValueError(f"delta rule: the agent has no nn.Linear layer "
                             f"{self.layer_name or ''}".rstrip())
        layer = linears[-1][1]

        def keep(_: nn.Module, args: tuple[Any, ...]) -> None:
            self._input = args[0].detach()

        layer.register_forward_pre_hook(keep)
        return layer

    def update(self, module: nn.Module, observation: torch.Tensor, output: torch.Tensor,
               feedback: Feedback) -> None:
        if self._layer is None:
            raise RuntimeError("delta rule: bind(module) before the first update")
        if feedback.ideal_action is None:
            raise ValueError("delta rule: the environment gives no ideal action to learn from")
        if self._input is None:
            return
        x = self._input.reshape(-1, self._layer.in_features)[-1].to(self._layer.weight.dtype)
        y = output.reshape(-1, self._layer.out_features)[-1].to(x.dtype)
        err = feedback.ideal_action.to(x.device, x.dtype).reshape(-1) - y
        with torch.no_grad():
            self._layer.weight.add_(self.lr * torch.outer(err, x))
            if self._layer.bias is not None:
                self._layer.bias.add_(self.lr * err)


def delta(**options: Any) -> DeltaRule:
    """The registry entry ``delta``."""
    return DeltaRule(**DeltaOptions(**options).model_dump())


delta.options_model = DeltaOptions  # type: ignore[attr-defined]
