"""Rockpool's Xylo Audio 2 (SYNS61201) support, imported the way this install allows, and the
small LIF network the ``xylo`` SUT trains with Rockpool's own torch modules.

rockpool 3.1.0's ``rockpool/devices/xylo/__init__.py`` imports the Xylo Audio 3 package,
whose ``__init__`` imports ``samna`` (the board driver) unconditionally, so
``import rockpool.devices.xylo.syns61201`` fails without a board driver even though the
Audio 2 mapper and XyloSim need none. :func:`xylo_audio2` then registers a bare package
object for ``rockpool.devices.xylo`` (its files, without that ``__init__``) and imports
``syns61201`` under it; with ``samna`` installed the normal import is used.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

from neuromark.system.chips import require

#: Xylo Audio 2 limits as rockpool 3.1.0's mapper checks them (``xylo_drc``, ``mapper``).
MAX_INPUTS, MAX_HIDDEN, MAX_OUTPUTS = 16, 1000, 8
#: Spikes a neuron may emit per time step in the float network: XyloSim emits several per
#: step when the membrane crosses several thresholds (measured: 4.5 per neuron and step on
#: a spoken digit), so the float model must too; 31 is our cap for both.
MAX_SPIKES_PER_STEP = 31


def xylo_audio2() -> Any:
    """The ``rockpool.devices.xylo.syns61201`` module (``mapper``, ``XyloSim``, ``XyloSamna``)."""
    require("xylo")
    require("xylosim")
    try:
        return importlib.import_module("rockpool.devices.xylo.syns61201")
    except ModuleNotFoundError as exc:
        if exc.name != "samna":
            raise
    import rockpool.devices

    name = "rockpool.devices.xylo"
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(os.path.dirname(rockpool.devices.__file__), "xylo")]
    package.__package__ = name
    sys.modules[name] = package
    return importlib.import_module(f"{name}.syns61201")


def lif_network(inputs: int, hidden: int, outputs: int, *, dash_mem: int, dash_syn: int,
                dt_s: float, seed: int) -> Any:
    """Rockpool ``Sequential(LinearTorch, LIFTorch, LinearTorch, LIFTorch)`` without biases (a
    graph Rockpool's Xylo mapper accepts). The decays are Xylo's bitshifts
    (``leak_mode="bitshifts"``: ``alpha = 1 - 2**-dash_mem``), so the float network and the
    chip decay alike and only the weights and thresholds are quantised by the mapping; a
    neuron fires up to :data:`MAX_SPIKES_PER_STEP` spikes per time step."""
    import torch
    from rockpool.nn.combinators import Sequential
    from rockpool.nn.modules import LIFTorch, LinearTorch

    torch.manual_seed(seed)  # LinearTorch draws its initial weights from torch's global generator
    return Sequential(
        LinearTorch((inputs, hidden), has_bias=False),
        LIFTorch(hidden, leak_mode="bitshifts", dash_mem=dash_mem, dash_syn=dash_syn, dt=dt_s,
                 max_spikes_per_dt=MAX_SPIKES_PER_STEP),
        LinearTorch((hidden, outputs), has_bias=False),
        LIFTorch(outputs, leak_mode="bitshifts", dash_mem=dash_mem, dash_syn=dash_syn, dt=dt_s,
                 max_spikes_per_dt=MAX_SPIKES_PER_STEP),
    )


def output_isyn(net: Any, x: Any) -> Any:
    """(N, T, outputs) synaptic currents of the output LIF layer of a Rockpool network for
    input ``x`` (N, T, C), from a fresh state: the readout (XyloSim's ``output_mode="Isyn"``;
    a current has no spike reset, so it compares across the float model and the chip)."""
    net.reset_state()
    _, _, record = net(x, record=True)
    last = [k for k in record if k.endswith("LIFTorch") and isinstance(record[k], dict)][-1]
    return record[last]["isyn"].sum(-1)


class _SpikeCount:
    """``min(floor(v / threshold), MAX_SPIKES_PER_STEP)`` where ``v >= threshold`` (Rockpool's
    LIFTorch forward), with a sigmoid surrogate gradient for training."""

    @staticmethod
    def apply(v: Any, threshold: float) -> Any:
        import torch

        hard = torch.clamp(torch.floor(v / threshold), 0, MAX_SPIKES_PER_STEP)
        soft = torch.sigmoid(4.0 * (v / threshold - 1.0))
        return soft + (hard - soft).detach()


def lif_forward(weights: list[Any], x: Any, *, alpha: float, beta: float, threshold: float = 1.0) -> Any:
    """Rockpool LIFTorch's update (``isyn += input; vmem *= alpha; isyn *= beta;
    vmem += isyn``; floor(vmem / threshold) spikes; subtractive reset) through the layers
    ``x @ weights[0] -> LIF -> @ weights[1] -> LIF``, up to :data:`MAX_SPIKES_PER_STEP` spikes
    per step; returns the output layer's synaptic current (N, T, outputs), the readout.
    Differentiable (surrogate spikes)."""
    import torch

    n, steps, _ = x.shape
    currents = x @ weights[0]
    out = []
    state = [torch.zeros(n, w.shape[1]) for w in weights for _ in range(2)]  # isyn, vmem per layer
    for t in range(steps):
        drive = currents[:, t]
        for layer in range(len(weights)):
            isyn, vmem = state[2 * layer], state[2 * layer + 1]
            isyn = (isyn + drive) * beta
            vmem = vmem * alpha + isyn
            spikes = _SpikeCount.apply(vmem, threshold)
            vmem = vmem - spikes * threshold
            state[2 * layer], state[2 * layer + 1] = isyn, vmem
            if layer + 1 < len(weights):
                drive = spikes @ weights[layer + 1]
        out.append(isyn)
    return torch.stack(out, 1)


def train_lif(net: Any, x: Any, y: Any, *, epochs: int, lr: float, seed: int) -> list[float]:
    """Fit the two weight matrices of Rockpool network ``net`` (:func:`lif_network`) with
    full-batch Adam on the cross-entropy of the time-averaged output synaptic current (the
    readout the SUT uses on the chip), running :func:`lif_forward` with the network's own
    decays; the trained weights are written back into ``net``. Returns the loss per epoch."""
    import torch

    linear = [m for m in net.modules().values() if type(m).__name__ == "LinearTorch"]
    lif = [m for m in net.modules().values() if type(m).__name__ == "LIFTorch"]
    alpha, beta = float(lif[0].alpha.detach().reshape(-1)[0]), float(lif[0].beta.detach().reshape(-1)[0])
    gen = torch.Generator().manual_seed(seed)
    weights = [torch.nn.Parameter(torch.randn(m.weight.shape, generator=gen)
                                  * (0.5 / m.weight.shape[0]) ** 0.5)
               for m in linear]
    opt = torch.optim.Adam(weights, lr=lr)
    losses = []
    for _ in range(epochs):
        loss = torch.nn.functional.cross_entropy(lif_forward(weights, x, alpha=alpha, beta=beta).mean(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    with torch.no_grad():
        for m, w in zip(linear, weights):
            m.weight.copy_(w)
    return losses
