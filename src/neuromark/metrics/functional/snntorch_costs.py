"""Ops per neuron update of every neuron class in ``snntorch._neurons`` (snnTorch 1.0).

Derived from each neuron's update equation in snnTorch's API reference
(https://snntorch.readthedocs.io/en/latest/snntorch.html, one section per neuron; the same
text is each class's docstring), counted per neuron and step by kind: ``mul``
(multiplications), ``add`` (additions and subtractions) and ``other`` (division, log, abs,
sigmoid, tanh, ReLU). Conventions, fixed by neurobench 2.3.0's figures for Leaky and
Synaptic (4; 6 and 8), which they reproduce exactly:

- the spike itself (``U - U_thr`` and the step) is not counted, for any neuron;
- the input current's add (``+ I_in``) is a neuron op; the weights producing ``I_in``
  are synaptic ops (``synaptic_operations``), biases are counted by neither;
- a reset costs one multiply and one subtract per reset state (``R * U_thr`` or
  ``R * (...)``, reusing the sub-expression already computed); ``none``: no reset ops;
- a recurrent synapse of ``RLeaky``/``RSynaptic`` is a synaptic op: a Linear or Conv2d
  layer (``all_to_all=True``) or its one-to-one form ``V * S`` (``all_to_all=False``, one
  synapse per neuron and step, :mod:`~neuromark.instrument.elementwise_counter`), both
  counted by ``synaptic_operations``; the add joining it to the state is here in both cases;
- an LSTM cell's matrix products (``W_ih x + W_hh h``) are synaptic ops; its gate
  non-linearities and Hadamard products are neuron ops (``SynapticOperations(
  recurrent_gates=True)``, neurobench's cell definition, counts the 3 products there too).

Lapicque and Alpha keep neurobench's totals (11; 18 and 24), explained by the breakdowns
below; :func:`snntorch_ops` documents where neurobench counts per-layer constants.
Whole-sequence neurons (:data:`WHOLE_SEQUENCE`) take their recurrent equivalent.

Example:
    >>> import snntorch as snn  # doctest: +SKIP
    >>> snntorch_ops(snn.RLeaky(beta=0.5, linear_features=4))  # doctest: +SKIP
    Ops(mul=2, add=3, other=0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ops:
    """Arithmetic of one neuron update by kind (see the module doc)."""

    mul: float = 0
    add: float = 0
    other: float = 0

    @property
    def total(self) -> float:
        return self.mul + self.add + self.other

    def __add__(self, more: Ops) -> Ops:
        return Ops(self.mul + more.mul, self.add + more.add, self.other + more.other)



#: snnTorch neurons that take a whole sequence (T, B, ...) in one call: their membrane is
#: not seen step by step, and every neuron is updated at every step (see NeuronOperations).
WHOLE_SEQUENCE = frozenset({"StateLeaky", "LinearLeaky", "LeakyParallel", "AssociativeLeaky"})


class CostUndefined(ValueError):
    """A configuration of an snnTorch neuron whose neuron ops cannot be counted."""


def _resets(module: Any, count: int) -> Ops:
    mode = getattr(module, "_reset_mechanism", getattr(module, "reset_mechanism", None))
    if mode not in ("subtract", "zero", "none"):
        raise CostUndefined(f"unknown reset mechanism {mode!r}")
    return Ops(0, 0, 0) if mode == "none" else Ops(count, count)


def _mode(module: Any) -> str:
    return str(getattr(module, "_reset_mechanism", getattr(module, "reset_mechanism", "")))


def _leaky(m: Any) -> Ops:
    # U' = beta*U + I_in - R*U_thr  |  zero: - R*(beta*U + I_in)
    return Ops(mul=1, add=1) + _resets(m, 1)


def _synaptic(m: Any) -> Ops:
    # I' = alpha*I + I_in; U' = beta*U + I' - R*U_thr  |  zero: both states reset
    return Ops(mul=2, add=2) + _resets(m, 2 if _mode(m) == "zero" else 1)


def _recurrent_synapse(m: Any) -> Ops:
    # + V(S): the add is a neuron op; V(S) itself, a Linear/Conv2d recurrent layer or the
    # one-to-one V*S (all_to_all=False), is counted by synaptic_operations
    return Ops(add=1)


def _rleaky(m: Any) -> Ops:
    return _leaky(m) + _recurrent_synapse(m)


def _rsynaptic(m: Any) -> Ops:
    # the docstring's zero reset resets U only (I_syn keeps its value)
    return Ops(mul=2, add=2) + _resets(m, 1) + _recurrent_synapse(m)


def _lapicque(m: Any) -> Ops:
    # snnTorch computes I*R*(1/(R*C))*T + (1 - T/(R*C))*U per neuron: R*C (mul), 1/RC and
    # T/RC (2 div), I*R, *(1/RC), *T, *U (4 mul), 1 - ., + (2 add) = 11 with the reset;
    # 4 of them (R*C, 1/RC, T/RC, 1 - T/RC) are layer constants: 7 without them
    return Ops(mul=5, add=2, other=2) + _resets(m, 1)


def _alpha(m: Any) -> Ops:
    # alpha*I_exc + I_in, beta*I_inh - I_in (2 mul, 2 add); tau_alpha = log(a) /
    # (log(b) - log(a)) + 1 (3 log, 1 div, 2 add); tau_alpha*(I_exc + I_inh) (1 mul, 1 add)
    base = Ops(mul=3, add=5, other=4)
    mode = _mode(m)
    if mode == "zero":
        # snnTorch's _base_zero evaluates the base twice; neurobench's 24 is 2 x 12 and
        # leaves out the three reset multiply-subtracts its subtract figure counts
        return base + base
    return base + _resets(m, 3)


def _slstm(m: Any) -> Ops:
    # i, f, o = sigmoid(.), g = tanh(.), tanh(c) (5 other); c' = f*c + i*g (2 mul, 1 add);
    # h' = o*tanh(c') (1 mul); a reset applies to h only
    if getattr(m, "max_pool", 0) or getattr(m, "avg_pool", 0):
        raise CostUndefined("its spikes are pooled (max_pool/avg_pool), so its outputs "
                            "are not its neurons; dense neuron ops would be undercounted")
    return Ops(mul=3, add=1, other=5) + _resets(m, 1)


def _delta_leaky(m: Any) -> Ops:
    # U' = beta*U + I_in; fires on |U' - U| > theta: the difference and abs are the
    # quantity it compares (1 add, 1 other); no reset is applied, whatever the mechanism
    return Ops(mul=1, add=2, other=1)


def _state_leaky(m: Any) -> Ops:
    # U[t] = sum_k exp(-k/tau) I[t-k]: recurrent equivalent beta*U + I (1 mul, 1 add);
    # truncated to K taps, + the tap leaving the window: - beta^K * I[t-K] (1 mul, 1 add)
    return Ops(mul=1, add=1) + (Ops() if getattr(m, "kernel_truncation_steps", None) is None
                                else Ops(mul=1, add=1))


def _leaky_parallel(m: Any) -> Ops:
    # an nn.RNN: beta*U is its diagonal W_hh, + I_in part of its MACs (synaptic); the ReLU
    # that clips the state is the neuron op
    return Ops(other=1)


def _associative(m: Any) -> Ops:
    # S[i, j]' = alpha_j * S[i, j] + v_i * k_j (2 mul, 1 add); alpha_j = sigmoid(.) once per
    # key j, shared by the d_value neurons of its column; v, k, alpha come from Linear layers
    if getattr(m, "use_q_projection", False) and m.d_value != m.d_key:
        raise CostUndefined("with use_q_projection and d_value != d_key its outputs are not "
                            "its neurons; dense neuron ops would be miscounted")
    return Ops(mul=2, add=1, other=1 / m.d_value)


#: Cost function by snnTorch class name.
SNNTORCH_OPS: dict[str, Callable[[Any], Ops]] = {
    "Leaky": _leaky, "RLeaky": _rleaky, "Synaptic": _synaptic, "RSynaptic": _rsynaptic,
    "Lapicque": _lapicque, "Alpha": _alpha, "SLSTM": _slstm, "SConv2dLSTM": _slstm,
    "DeltaLeaky": _delta_leaky, "StateLeaky": _state_leaky, "LinearLeaky": _state_leaky,
    "LeakyParallel": _leaky_parallel, "AssociativeLeaky": _associative,
}


def is_snntorch_neuron(module: Any) -> bool:
    """Whether ``module`` is one of snnTorch's own neuron classes (by class and module)."""
    cls = type(module)
    return cls.__name__ in SNNTORCH_OPS and cls.__module__.startswith("snntorch")


def snntorch_ops(module: Any) -> Ops:
    """Ops per update of the snnTorch neuron ``module``, by kind; raises
    :class:`CostUndefined` for a configuration that cannot be counted and ``KeyError`` for
    a class not in :data:`SNNTORCH_OPS`."""
    return SNNTORCH_OPS[type(module).__name__](module)
