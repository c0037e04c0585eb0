"""Torch modules for NIR's neuron and state nodes, stepped once per time step.

NIR (Pedersen et al., "Neuromorphic intermediate representation", Nat. Commun. 15, 8122,
2024) gives continuous-time dynamics; these modules discretise them with forward Euler at
step ``dt`` (default 1e-4 s, snnTorch's NIR convention) the way snnTorch's ``Leaky`` and
``Synaptic`` do, so that a zero-reset snnTorch net exported to NIR and imported here
computes the same spikes (snnTorch's ``Synaptic`` with zero reset also zeroes its
synaptic current and drops the input in the step after a spike; NIR's CubaLIF resets only
``v``, and so do we: that round trip is not exact, see docs/frameworks.md):

- LIF: ``v' = v + dt/tau (v_leak - v) + dt/tau r I``; spike ``z = v' > v_threshold``;
  after a spike the neuron continues from ``v_reset``. The state keeps the value before
  the reset, which is applied at the start of the next step (as snnTorch's ``Leaky``
  stores it, so membrane updates count alike): ``v' = retain ((1 - z_prev) v + z_prev
  v_reset) + ...``.
- CubaLIF: ``i' = i - dt/tau_syn i + dt/tau_syn w_in I``, then the LIF update with ``i'``
  as input current.
- LI (no spike): ``v' = v + dt/tau (v_leak - v) + dt/tau r I``, output ``v'``.
- CubaLI: the CubaLIF current, then LI.
- IF: ``v' = v + r I``, spike and reset as LIF.  I (integrator): ``v' = v + r I``, output v.

Costs per update (``neuromark_neuron_cost``, for NeuronOperations): LIF and CubaLIF take
snnTorch's Leaky (4) and Synaptic zero-reset (8) figures, the types they round-trip with;
LI 2 (one multiply, one add), CubaLI 4, IF 3 (add, compare, reset), I 1 (add): our own
counts of the update's arithmetic.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn


def _f64(value: object) -> Tensor:
    return torch.as_tensor(np.asarray(value, dtype=np.float64))


def _euler(module: nn.Module, prefix: str, tau: object, gain: object, dt: float,
           leak: bool, v_leak: object = 0.0) -> None:
    """Buffers ``{prefix}retain`` (1 - dt/tau), ``{prefix}leak_in`` (dt/tau v_leak) and
    ``{prefix}gain`` (dt/tau gain; ``gain`` alone without leak), computed in float64."""
    g64 = _f64(gain)
    step = dt / _f64(tau) if leak else torch.zeros_like(g64)
    module.register_buffer(f"{prefix}retain", (1 - step).float())
    module.register_buffer(f"{prefix}leak_in", (step * _f64(v_leak)).float())
    module.register_buffer(f"{prefix}gain", (g64 * step if leak else g64).float())


class _Stateful(nn.Module):
    """Neuron state ``mem`` (and ``syn``, last spikes ``spk``), reset to None per sample."""

    neuromark_neuron = True

    def __init__(self) -> None:
        super().__init__()
        self.mem: Tensor | None = None
        self.syn: Tensor | None = None
        self.spk: Tensor | None = None

    def reset_state(self) -> None:
        self.mem = self.syn = self.spk = None

    def _synapse(self, tau_syn: object, w_in: object, dt: float) -> None:
        """With ``tau_syn``, the synaptic current stage of CubaLIF and CubaLI (``syn_*``)."""
        if tau_syn is not None:
            _euler(self, "syn_", tau_syn, w_in, dt, True)

    def _step_in(self, current: Tensor) -> tuple[Tensor, Tensor]:
        """(the input current after the synaptic stage, if any; the membrane before this
        step, zeros at the first)."""
        if hasattr(self, "syn_retain"):
            syn = self.syn if self.syn is not None else torch.zeros_like(current)
            self.syn = self.syn_retain * syn + self.syn_leak_in + self.syn_gain * current
            current = self.syn
        return current, self.mem if self.mem is not None else torch.zeros_like(current)


class NIRLIF(_Stateful):
    """NIR ``LIF`` (``IF`` with ``leak=False``; ``CubaLIF`` with ``tau_syn``/``w_in``);
    returns spikes of the input's shape."""

    def __init__(self, tau: object, r: object, v_leak: object, v_threshold: object,
                 v_reset: object, dt: float = 1e-4, leak: bool = True,
                 tau_syn: object = None, w_in: object = None) -> None:
        super().__init__()
        _euler(self, "", tau, r, dt, leak, v_leak)
        self.register_buffer("v_threshold", _f64(v_threshold).float())
        self.register_buffer("v_reset", _f64(v_reset).float())
        self._synapse(tau_syn, w_in, dt)
        self.neuromark_neuron_cost = 8 if tau_syn is not None else 4 if leak else 3

    def forward(self, current: Tensor) -> Tensor:
        current, mem = self._step_in(current)
        if self.spk is not None:  # a neuron that spiked integrates from v_reset
            mem = torch.where(self.spk > 0, self.v_reset.expand_as(mem), mem)
        v = self.retain * mem + self.leak_in + self.gain * current
        self.mem = v
        self.spk = (v > self.v_threshold).to(current.dtype)
        return self.spk


class NIRLI(_Stateful):
    """NIR ``LI`` (``I`` with ``leak=False``; ``CubaLI`` with ``tau_syn``/``w_in``);
    outputs the membrane."""

    def __init__(self, tau: object, r: object, v_leak: object, dt: float = 1e-4,
                 leak: bool = True, tau_syn: object = None, w_in: object = None) -> None:
        super().__init__()
        _euler(self, "", tau if leak else 1.0, r, dt, leak, v_leak if leak else 0.0)
        self._synapse(tau_syn, w_in, dt)
        self.neuromark_neuron_cost = 4 if tau_syn is not None else 2 if leak else 1

    def forward(self, current: Tensor) -> Tensor:
        current, mem = self._step_in(current)
        self.mem = self.retain * mem + self.leak_in + self.gain * current
        return self.mem


class Scale(nn.Module):
    """NIR ``Scale``: elementwise multiplication by a fixed vector (not synaptic)."""

    neuromark_no_synapses = True

    def __init__(self, scale: object) -> None:
        super().__init__()
        self.register_buffer("scale", _f64(scale).float())

    def forward(self, x: Tensor) -> Tensor:
        return x * self.scale


class Threshold(nn.Module):
    """NIR ``Threshold``: ``x > threshold`` as 0/1."""

    def __init__(self, threshold: object) -> None:
        super().__init__()
        self.register_buffer("threshold", _f64(threshold).float())

    def forward(self, x: Tensor) -> Tensor:
        return (x > self.threshold).to(x.dtype)


class SumPool2d(nn.Module):
    """NIR ``SumPool2d``: the sum over each window."""

    def __init__(self, kernel_size: object, stride: object, padding: object) -> None:
        super().__init__()
        self.kernel_size = tuple(int(k) for k in np.atleast_1d(kernel_size))
        self.stride = tuple(int(k) for k in np.atleast_1d(stride))
        self.padding = tuple(int(k) for k in np.atleast_1d(padding))

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                                        divisor_override=1)
