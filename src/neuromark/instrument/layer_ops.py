"""Per-layer synaptic-operation counters, one per connection-layer type.

Each counter is called from a forward hook with the layer's inputs and output and returns
``(effective, dense, is_ac)`` parts: a list of ``(effective, dense, spikes)`` triples (one
per weight matrix the layer applies), where ``spikes`` says whether that matrix's input was
a spike tensor (ACs) or not (MACs).

Recurrent layers apply two matrices per step: W_ih to x_t and W_hh to h_{t-1}. For full
``nn.RNN/LSTM/GRU`` layers the hidden sequence of every layer and direction is needed;
the last layer's comes from the output, earlier layers' from a single-layer replay that
shares the weights (one extra forward of those layers). neurobench 2.3.0 silently skips
full recurrent layers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

from neuromark.errors import UnsupportedLayerError
from neuromark.metrics.functional.synops import (
    linear_dense,
    linear_effective,
    spike_stats,
    weight_column_nnz,
)
from neuromark.models.base import RNN_TYPES

#: (effective ops, dense ops, spike defect, input peak |x|); see ``spike_stats``.
Part = tuple[Tensor, float, Tensor, Tensor]
Counter = Callable[[nn.Module, tuple[Any, ...], Any, "WeightCache"], list[Part]]


class WeightCache:
    """Column non-zero counts of weight matrices, recomputed when a weight changes."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[int, int, Tensor]] = {}

    def col_nnz(self, weight: Tensor) -> Tensor:
        key = id(weight)
        stamp = (weight.data_ptr(), weight._version)
        hit = self._cache.get(key)
        if hit is not None and hit[:2] == stamp:
            return hit[2]
        value = weight_column_nnz(weight.detach())
        self._cache[key] = (*stamp, value)
        return value


def _linear(module: nn.Linear, args: tuple[Any, ...], output: Any, cache: WeightCache) -> list[Part]:
    return [_matrix_part(args[0], module.weight, cache)]


def _matrix_part(x: Tensor, weight: Tensor, cache: WeightCache) -> Part:
    """One weight matrix applied to x (..., in)."""
    indicator, defect, peak = spike_stats(x)
    return (linear_effective(indicator, cache.col_nnz(weight)), linear_dense(x, weight),
            defect, peak)


def _single_layer_replay(module: nn.RNNBase, layer: int) -> nn.RNNBase:
    """A one-layer copy of ``module``'s layer ``layer`` sharing its parameters (time-major)."""
    replays = module.__dict__.setdefault("_neuromark_replays", {})
    if layer in replays:
        return replays[layer]
    directions = 2 if module.bidirectional else 1
    in_size = module.input_size if layer == 0 else module.hidden_size * directions
    kwargs: dict[str, Any] = dict(num_layers=1, bias=module.bias, batch_first=False,
                                  bidirectional=module.bidirectional)
    if isinstance(module, nn.RNN):
        kwargs["nonlinearity"] = module.nonlinearity
    replay = type(module)(in_size, module.hidden_size, **kwargs)
    for suffix in ("", "_reverse")[:directions]:
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            name = f"{kind}_l{layer}{suffix}"
            if hasattr(module, name):
                setattr(replay, f"{kind}_l0{suffix}", getattr(module, name))
    replay.eval()
    replays[layer] = replay
    return replay


def _rnn(module: nn.RNNBase, args: tuple[Any, ...], output: Any, cache: WeightCache) -> list[Part]:
    x = args[0]
    if isinstance(x, PackedSequence):
        raise UnsupportedLayerError("PackedSequence inputs cannot be counted yet; pass padded "
                                    "tensors (padding steps are then counted as executed)")
    if getattr(module, "proj_size", 0):
        raise UnsupportedLayerError("LSTM with proj_size > 0 cannot be counted")
    state = args[1] if len(args) > 1 else None
    h_state, c_state = state if isinstance(state, tuple) else (state, None)
    unbatched = x.dim() == 2
    seq = x.unsqueeze(1) if unbatched else (x.transpose(0, 1) if module.batch_first else x)
    out = output[0]
    out = out.unsqueeze(1) if unbatched else (out.transpose(0, 1) if module.batch_first else out)
    directions = 2 if module.bidirectional else 1
    hidden = module.hidden_size
    if h_state is None:
        h_state = torch.zeros(module.num_layers * directions, seq.shape[1], hidden, dtype=seq.dtype)
    elif unbatched:
        h_state = h_state.unsqueeze(1)
    if c_state is not None and unbatched:
        c_state = c_state.unsqueeze(1)
    parts: list[Part] = []
    layer_in = seq
    for layer in range(module.num_layers):
        rows = slice(layer * directions, (layer + 1) * directions)
        if layer == module.num_layers - 1:
            layer_out = out
        else:
            h0 = h_state[rows]
            replay_state: Any = h0
            if isinstance(module, nn.LSTM):
                replay_state = (h0, c_state[rows] if c_state is not None else torch.zeros_like(h0))
            layer_out = _single_layer_replay(module, layer)(layer_in, replay_state)[0]
        for d in range(directions):
            suffix = "_reverse" if d else ""
            h_seq = layer_out[..., d * hidden:(d + 1) * hidden]
            h_init = h_state[layer * directions + d].unsqueeze(0)
            # hidden state entering each step: forward runs t = 0..L-1, reverse t = L-1..0
            prev = torch.cat([h_init, h_seq[:-1]]) if d == 0 else torch.cat([h_seq[1:], h_init])
            parts.append(_matrix_part(layer_in, getattr(module, f"weight_ih_l{layer}{suffix}"), cache))
            parts.append(_matrix_part(prev, getattr(module, f"weight_hh_l{layer}{suffix}"), cache))
        layer_in = layer_out
    return parts


def counter_for(module: nn.Module) -> Counter:
    """The counter of a connection layer; other layer types raise naming the type."""
    if isinstance(module, nn.Linear):
        return _linear  # type: ignore[return-value]
    if isinstance(module, RNN_TYPES):
        return _rnn  # type: ignore[return-value]
    raise UnsupportedLayerError(f"cannot count synaptic operations of {type(module).__name__}")
