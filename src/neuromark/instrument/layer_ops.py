"""Weight column counts, and the counter of full recurrent layers (``nn.RNN/LSTM/GRU``).

Recurrent layers apply two matrices per step: W_ih to x_t and W_hh to h_{t-1}. A full layer
is called once with the whole sequence, so each matrix is counted once per call over all
steps on the torch path (:mod:`~neuromark.instrument.deferred`), a sample's ops over the
whole sequence being ACs or MACs together. The hidden sequence
of every layer and direction is needed: the last layer's comes from the output, earlier
layers' from a single-layer replay that shares the weights (one extra forward of those
layers). neurobench 2.3.0 silently skips full recurrent layers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

from neuromark.errors import UnsupportedLayerError
from neuromark.instrument.call_totals import CallTotals
from neuromark.instrument.deferred import Copies, KeepBudget
from neuromark.instrument.weight_memo import WeightMemo
from neuromark.metrics.functional.synops import weight_column_nnz


class WeightCache:
    """Column non-zero counts of weight matrices, recomputed when a weight changes (in
    place: its version moves; its storage: its address moves), for one run (see
    :mod:`~neuromark.instrument.weight_memo`)."""

    def __init__(self) -> None:
        self._memo: WeightMemo[Tensor] = WeightMemo(lambda w: weight_column_nnz(w.detach()))

    def col_nnz(self, weight: Tensor) -> Tensor:
        return self._memo.get(weight)


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


class RecurrentCounter(CallTotals):
    """Effective and dense operations of successive calls of one full recurrent layer."""

    def __init__(self, name: str, module: nn.RNNBase, weights: WeightCache,
                 copies: Copies | None = None, budget: KeepBudget | None = None) -> None:
        super().__init__(name, budget)
        self.module = module
        self.weights = weights
        self.copies = copies or Copies()

    def add_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        """Record one call ``layer(input, hx)`` from its arguments and output."""
        x = args[0] if args else kwargs["input"]
        state = args[1] if len(args) > 1 else kwargs.get("hx")
        for inputs, weight in _matrix_inputs(self.module, x, state, output):
            steps, samples = inputs.shape[0], inputs.shape[1]  # time-major (L, N, in)
            self.dense += steps * samples * weight.numel()
            self.kept.add(inputs.transpose(0, 1), weight.shape[1],
                          self.weights.col_nnz(weight), self.copies, steps)


def _matrix_inputs(module: nn.RNNBase, x: Any, state: Any,
                   output: Any) -> list[tuple[Tensor, Tensor]]:
    """(inputs, weight) for every matrix of every layer and direction: (x_t over all t,
    W_ih) and (h_{t-1} over all t, W_hh), sequences time-major."""
    if isinstance(x, PackedSequence):
        raise UnsupportedLayerError("PackedSequence inputs cannot be counted yet; pass padded "
                                    "tensors (padding steps are then counted as executed)")
    if getattr(module, "proj_size", 0):
        raise UnsupportedLayerError("LSTM with proj_size > 0 cannot be counted")
    h_state, c_state = state if isinstance(state, tuple) else (state, None)
    unbatched = x.dim() == 2
    seq = x.unsqueeze(1) if unbatched else (x.transpose(0, 1) if module.batch_first else x)
    out = output[0]
    out = out.unsqueeze(1) if unbatched else (out.transpose(0, 1) if module.batch_first else out)
    directions = 2 if module.bidirectional else 1
    hidden = module.hidden_size
    if h_state is None:
        h_state = torch.zeros(module.num_layers * directions, seq.shape[1], hidden,
                              dtype=seq.dtype, device=seq.device)
    elif unbatched:
        h_state = h_state.unsqueeze(1)
    if c_state is not None and unbatched:
        c_state = c_state.unsqueeze(1)
    pairs: list[tuple[Tensor, Tensor]] = []
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
            pairs.append((layer_in, getattr(module, f"weight_ih_l{layer}{suffix}")))
            pairs.append((prev, getattr(module, f"weight_hh_l{layer}{suffix}")))
        layer_in = layer_out
    return pairs
