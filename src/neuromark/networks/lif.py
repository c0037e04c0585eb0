"""LIF spiking networks for SHD-style spike data, as in Cramer et al. (2020).

Cramer, Stradmann, Schemmel and Zenke, "The Heidelberg spiking data sets for the systematic
evaluation of spiking neural networks", IEEE TNNLS 2022, doi:10.1109/TNNLS.2020.3044364,
Sec. IV (eqs. 1-4 and 10-11); surrogate gradient of Zenke and Ganguli (2018), "SuperSpike",
Neural Computation 30(6).

Discrete-time current-based LIF neuron i (time step δt)::

    S_i[n]   = Θ(U_i[n] - ϑ)                                  spikes, ϑ = 1
    U_i[n+1] = (λ U_i[n] + (1 - λ) I_i[n]) (1 - S_i[n])          λ = exp(-δt / τ_mem)
    I_i[n+1] = κ I_i[n] + Σ_j W_ij x_j[n] + Σ_j V_ij S_j[n]      κ = exp(-δt / τ_syn)

(V = 0 for the feed-forward network.) Θ's derivative is replaced by the fast sigmoid
1 / (β |U - ϑ| + 1)², β = 100. The readout is a layer of non-spiking leaky integrators
(same U and I equations, no threshold); the loss is the cross entropy of the maximum over
time of the readout membranes, plus the spike-count regularisers of eqs. 10-11:

    L_lower = s_l / N Σ_i ReLU(ν_l - ζ_i)²        (per neuron: too few spikes)
    L_upper = s_u ReLU(1/N Σ_i ζ_i - ν_u)²         (population: too many spikes)

with ζ_i the spike count of hidden neuron i in one sample, averaged over the batch.

The neuron modules run ONE time step per call (so the harness's probes see every step),
keep their membrane in ``mem`` and synaptic current in ``syn``, define ``reset_state()``
and set ``neuromark_neuron = True``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor, nn


class FastSigmoidSpike(torch.autograd.Function):
    """Heaviside forward; fast-sigmoid surrogate derivative 1 / (β|x| + 1)² backward."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, beta: float) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        ctx.beta = beta
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return grad / (ctx.beta * x.abs() + 1.0) ** 2, None


def spike_fn(x: Tensor, beta: float = 100.0) -> Tensor:
    """Θ(x) with the fast-sigmoid surrogate gradient (steepness ``beta``)."""
    return FastSigmoidSpike.apply(x, beta)


def decay(dt_ms: float, tau_ms: float) -> float:
    """exp(-δt / τ): κ for τ_syn, λ for τ_mem."""
    if dt_ms <= 0 or tau_ms <= 0:
        raise ValueError(f"dt_ms and tau_ms must be positive, got {dt_ms} and {tau_ms}")
    return math.exp(-dt_ms / tau_ms)


class _SynapticState(nn.Module):
    """Membrane ``mem`` and synaptic current ``syn`` (B, H), zeroed on first use and by
    ``reset_state()``; the harness reads ``mem`` and ``syn`` (``neuromark_neuron``).

    With ``learn_tau`` the decays are per neuron and trained: κ = exp(-1/τ_syn) and
    λ = exp(-1/τ_mem) with τ in time steps, stored as ``log_tau_syn``/``log_tau_mem`` (H,)
    and started at the given κ and λ (neuron parameters: the harness exempts them from the
    synapse count).
    """

    neuromark_neuron = True

    def __init__(self, size: int, kappa: float, lam: float, *, learn_tau: bool = False) -> None:
        super().__init__()
        self.size, self.kappa_init, self.lam_init = size, kappa, lam
        self.learn_tau = learn_tau
        if learn_tau:
            self.log_tau_syn = nn.Parameter(torch.full((size,), math.log(-1.0 / math.log(kappa))))
            self.log_tau_mem = nn.Parameter(torch.full((size,), math.log(-1.0 / math.log(lam))))
        self.mem: Tensor | None = None
        self.syn: Tensor | None = None

    @property
    def kappa(self) -> Tensor | float:
        """Synaptic decay per step: a float, or (H,) when learned."""
        return torch.exp(-torch.exp(-self.log_tau_syn)) if self.learn_tau else self.kappa_init

    @property
    def lam(self) -> Tensor | float:
        """Membrane decay per step: a float, or (H,) when learned."""
        return torch.exp(-torch.exp(-self.log_tau_mem)) if self.learn_tau else self.lam_init

    def reset_state(self) -> None:
        self.mem = None
        self.syn = None

    def _state_for(self, current: Tensor) -> tuple[Tensor, Tensor]:
        """(mem, syn), zeros shaped like ``current`` when fresh or the batch changed."""
        if self.mem is None or self.syn is None or self.mem.shape != current.shape:
            self.mem = torch.zeros_like(current)
            self.syn = torch.zeros_like(current)
        return self.mem, self.syn


class LIFNeuron(_SynapticState):
    """Current-based LIF neurons, one time step per call: input current (B, H) -> spikes (B, H).

    Args:
        size: number of neurons H.
        kappa, lam: synaptic and membrane decay factors per step.
        recurrent: optional (H -> H) ``nn.Linear`` adding V S[n] to the next current.
        threshold: ϑ; beta: surrogate steepness.
    """

    #: ops per update for NeuronOperations: snnTorch Synaptic's zero-reset figure (the same
    #: current-based update with a reset to zero)
    neuromark_neuron_cost = 8

    def __init__(self, size: int, kappa: float, lam: float, *, recurrent: nn.Linear | None = None,
                 threshold: float = 1.0, beta: float = 100.0, learn_tau: bool = False) -> None:
        super().__init__(size, kappa, lam, learn_tau=learn_tau)
        self.threshold, self.beta = threshold, beta
        self.recurrent = recurrent

    def forward(self, current: Tensor) -> Tensor:
        mem, syn_prev = self._state_for(current)
        lam = self.lam
        spikes = spike_fn(mem - self.threshold, self.beta)
        self.mem = (lam * mem + (1.0 - lam) * syn_prev) * (1.0 - spikes.detach())
        syn = self.kappa * syn_prev + current
        if self.recurrent is not None:
            syn = syn + self.recurrent(spikes)
        self.syn = syn
        return spikes


class LeakyReadout(_SynapticState):
    """Non-spiking leaky integrators, one step per call: current (B, K) -> membrane (B, K)."""

    #: ops per update for NeuronOperations: a current-based leaky integrator without spikes,
    #: as NIR's CubaLI (neuromark.models.nir_neurons)
    neuromark_neuron_cost = 4

    def forward(self, current: Tensor) -> Tensor:
        mem, syn = self._state_for(current)
        lam = self.lam
        self.mem = lam * mem + (1.0 - lam) * syn
        self.syn = self.kappa * syn + current
        return self.mem


class ReadoutStack(nn.Module):
    """A feed-forward SNN run ONE time step per call whose output layer is spiking
    (``readout="spikes"``: the logits are the spike counts over time) or a layer of
    non-spiking :class:`LeakyReadout` integrators (``"membrane"``: the membranes averaged
    over time, as Cramer et al. 2020 read out SNN classifiers; no ties between classes).

    A subclass builds its layers after ``super().__init__`` (its output layer through
    :meth:`output_layer`) and lists their attribute names, input first, in ``chain``.
    """

    chain: tuple[str, ...] = ()

    def __init__(self, readout: str, model: str) -> None:
        super().__init__()
        if readout not in ("spikes", "membrane"):
            raise ValueError(f"{model} readout must be 'spikes' or 'membrane', got {readout!r}")
        self.readout = readout

    def output_layer(self, spiking: Any, classes: int, beta: float) -> nn.Module:
        """``spiking()`` (the spiking output layer) or ``classes`` leaky integrators of decay ``beta``."""
        return spiking() if self.readout == "spikes" else LeakyReadout(classes, 0.0, beta)

    def forward(self, x: Tensor) -> Tensor:
        """(B, inputs) -> the output layer's spikes or membranes (B, classes)."""
        for name in self.chain:
            x = getattr(self, name)(x)
        return x[0] if isinstance(x, tuple) else x

    def logits(self, outputs: Tensor) -> Tensor:
        """(B, T, classes) outputs -> (B, classes): the spike count, or the membrane's mean over time."""
        return outputs.sum(1) if self.readout == "spikes" else outputs.mean(1)


@dataclass(frozen=True)
class SNNConfig:
    """Hyper-parameters of :class:`SpikingClassifier` (times in ms)."""

    inputs: int
    classes: int
    hidden: int = 128
    recurrent: bool = True
    dt_ms: float = 10.0
    tau_syn_ms: float = 10.0
    tau_mem_ms: float = 20.0
    threshold: float = 1.0
    beta: float = 100.0
    init_gain: float = 1.0
    recurrent_gain: float = 0.5
    learn_tau: bool = False
    dropout: float = 0.0
    input_log: bool = False
    input_bias: bool = False


class SpikingClassifier(nn.Module):
    """Input spikes (B, T, inputs) -> readout membranes (B, T, classes).

    One hidden LIF layer (recurrent or feed-forward) and a leaky readout; the prediction is
    the argmax of the maximum (or mean) over time of the readout (see :func:`max_over_time`).
    Options of :class:`SNNConfig`: ``learn_tau`` trains per-neuron time constants;
    ``dropout`` drops hidden spikes on their way to the readout while training (the
    recurrent path keeps them); ``input_log`` feeds log(1 + counts) instead of the counts
    (pooled bins hold up to tens of spikes; zeros stay zeros); ``input_bias`` gives the input
    layer a bias (it can cancel the cochlea's spontaneous background drive).
    """

    def __init__(self, config: SNNConfig) -> None:
        super().__init__()
        self.config = config
        kappa, lam = decay(config.dt_ms, config.tau_syn_ms), decay(config.dt_ms, config.tau_mem_ms)
        self.fc1 = nn.Linear(config.inputs, config.hidden, bias=config.input_bias)
        rec = nn.Linear(config.hidden, config.hidden, bias=False) if config.recurrent else None
        self.lif1 = LIFNeuron(config.hidden, kappa, lam, recurrent=rec, threshold=config.threshold,
                              beta=config.beta, learn_tau=config.learn_tau)
        self.fc2 = nn.Linear(config.hidden, config.classes, bias=False)
        self.readout = LeakyReadout(config.classes, kappa, lam, learn_tau=config.learn_tau)
        self._init_weights()
        self.last_hidden_spikes: Tensor | None = None

    def _init_weights(self) -> None:
        # Gaussian weights, std = gain / sqrt(fan-in); the input gain is divided by (1 - λ) to
        # compensate the (1 - λ) factor of the membrane equation.
        c = self.config
        nn.init.normal_(self.fc1.weight, 0.0, c.init_gain / (1.0 - self.lif1.lam_init) / math.sqrt(c.inputs))
        nn.init.normal_(self.fc2.weight, 0.0, 1.0 / (1.0 - self.readout.lam_init) / math.sqrt(c.hidden))
        if self.fc1.bias is not None:
            nn.init.zeros_(self.fc1.bias)
        if self.lif1.recurrent is not None:
            nn.init.normal_(self.lif1.recurrent.weight, 0.0, c.recurrent_gain / math.sqrt(c.hidden))

    def reset_state(self) -> None:
        self.lif1.reset_state()
        self.readout.reset_state()

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 3 or x.shape[-1] != self.config.inputs:
            raise ValueError(f"expected input (batch, time, {self.config.inputs}), got {tuple(x.shape)}")
        self.reset_state()
        current = self.fc1(torch.log1p(x) if self.config.input_log else x)
        spikes = torch.stack([self.lif1(current[:, t]) for t in range(x.shape[1])], dim=1)
        self.last_hidden_spikes = spikes
        if self.training and self.config.dropout > 0:
            spikes = nn.functional.dropout(spikes, self.config.dropout)
        out = self.fc2(spikes)
        return torch.stack([self.readout(out[:, t]) for t in range(x.shape[1])], dim=1)

    def checkpoint(self) -> dict[str, Any]:
        """A ``torch.load(weights_only=True)``-safe checkpoint of this model."""
        return {"kind": "snn", "config": asdict(self.config), "state_dict": self.state_dict()}


def max_over_time(output: Tensor) -> Tensor:
    """(B, T, K) -> (B, K): maximum of each readout over time (Cramer et al. 2020, eq. 9)."""
    return output.max(dim=1).values


def mean_over_time(output: Tensor) -> Tensor:
    """(B, T, K) -> (B, K): mean of each readout over time (the readout of e.g.
    Perez-Nieves et al. 2021; every step contributes to the gradient)."""
    return output.mean(dim=1)


def spike_count_regularisers(spikes: Tensor, *, lower_strength: float = 1.0, lower_threshold: float = 1.0,
                             upper_strength: float = 0.06, upper_threshold: float = 10.0
                             ) -> tuple[Tensor, Tensor]:
    """(L_lower, L_upper) of eqs. 10-11 for hidden spikes (B, T, N), averaged over the batch.

    ``lower_threshold`` ν_l and ``upper_threshold`` ν_u are spike counts per sample.
    """
    counts = spikes.sum(dim=1)  # ζ: (B, N)
    lower = lower_strength * torch.relu(lower_threshold - counts).pow(2).mean(dim=1)
    upper = upper_strength * torch.relu(counts.mean(dim=1) - upper_threshold).pow(2)
    return lower.mean(), upper.mean()
