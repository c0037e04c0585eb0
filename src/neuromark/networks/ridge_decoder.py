"""The streaming Wiener (ridge) decoder that several benchmark families share: primate
reaching's ``ridge_decoder`` and closed-loop's ``loop_wiener`` agent.

A decoder is a torch module fed one stream in chunks: input (S, L, C) (S streams side by
side, L steps, C channels), output (S, L, 2). Its state between chunks is the input
history (the last ``lags * width - 1`` steps, zeros before a stream's first step), cleared
by ``reset_state()``; ``keep_streams(rows)`` keeps only the given rows' history when
streams end (the batch then shrinks to those rows, in that order).

- :func:`window_sums`: causal sums over ``lags`` windows of ``width`` steps each;
- :class:`RidgeDecoder`: a linear readout of those sums (default 5 x 8 steps);
- :func:`fit_ridge`: its closed-form ridge fit (centred, with intercept) on a
  :class:`TrainData` recording and its training segments.

Checkpoints hold the state dict only (``readout.weight``, ``readout.bias``; the history is
not persistent), so the families that register these decoders own their checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from pydantic import Field
from torch import Tensor, nn

from neuromark.config import Seed, StrictModel
from neuromark.errors import DataError


class DecoderOptions(StrictModel):
    """``model.options`` of a streaming decoder (unused keys of another decoder are refused
    by each family)."""

    seed: Seed = 0


class RidgeOptions(DecoderOptions):
    """The ridge decoder's options: ``lags`` windows of ``width`` steps, penalty ``alpha``."""

    lags: int = Field(5, ge=1, le=50)
    width: int = Field(8, ge=1, le=250, description="steps per lag window")
    alpha: float = Field(1.0, ge=0, description="ridge penalty, relative to the mean feature variance x N")


def window_sums(x: Tensor, history: Tensor, width: int, lags: int) -> tuple[Tensor, Tensor]:
    """Causal window sums: (S, L, C) input with (S, lags*width - 1, C) history ->
    ((S, L, lags*C) features, new history). Feature block j sums steps
    ``[n - (j+1)*width + 1, n - j*width]``."""
    full = torch.cat([history, x], dim=1)
    zero = torch.zeros_like(full[:, :1])
    csum = torch.cat([zero, torch.cumsum(full, dim=1)], dim=1)
    span = lags * width - 1
    n = x.shape[1]
    end = torch.arange(n, device=x.device) + span + 1  # index after step n in csum
    blocks = [csum[:, end - j * width] - csum[:, end - (j + 1) * width] for j in range(lags)]
    return torch.cat(blocks, dim=-1), full[:, full.shape[1] - span:] if span else full[:, :0]


class StreamHistory(nn.Module):
    """Input history of the streams (S, span, C): a decoder's state between chunks (a
    buffer that is not saved in checkpoints)."""

    def __init__(self, span: int) -> None:
        super().__init__()
        self.span = span
        self.register_buffer("history", torch.zeros(1, span, 0), persistent=False)

    def reset_state(self) -> None:
        self.history = torch.zeros(1, self.span, 0)

    def keep_streams(self, rows: Tensor) -> None:
        """Keep the history of the streams in ``rows`` (indices into the current batch)."""
        if self.history.shape[0] > 0 and self.history.shape[2] > 0:
            self.history = self.history[rows]

    def get(self, x: Tensor) -> Tensor:
        """The history for input ``x`` (S, L, C): zeros when the streams or channels differ."""
        h = self.history
        if h.shape[0] != x.shape[0] or h.shape[2] != x.shape[2]:
            h = torch.zeros(x.shape[0], self.span, x.shape[2], dtype=x.dtype, device=x.device)
        return h


class RidgeDecoder(nn.Module):
    """Wiener/ridge filter over lagged window sums: (S, L, C) -> (S, L, 2)."""

    def __init__(self, channels: int, lags: int = 5, width: int = 8) -> None:
        super().__init__()
        self.lags, self.width = lags, width
        self.state = StreamHistory(lags * width - 1)
        self.readout = nn.Linear(lags * channels, 2)

    def reset_state(self) -> None:
        self.state.reset_state()

    def keep_streams(self, rows: Tensor) -> None:
        """Keep only the state of the parallel streams in ``rows`` (see the module)."""
        self.state.keep_streams(rows)

    def forward(self, x: Tensor) -> Tensor:
        feats, self.state.history = window_sums(x, self.state.get(x), self.width, self.lags)
        return self.readout(feats)


@dataclass(frozen=True)
class TrainData:
    """A recording for training: inputs (K, C) of the whole recording, labels (K, 2), and
    the training split's segments as ``[start, stop)`` ranges of steps."""

    x: np.ndarray
    y: np.ndarray
    segments: list[tuple[int, int]]

    @property
    def indices(self) -> np.ndarray:
        return np.concatenate([np.arange(a, b) for a, b in self.segments])


def window_features(data: TrainData, width: int, lags: int) -> Tensor:
    """The window sums (:func:`window_sums`) at every training index, (N, lags*C), their
    history taken from the recording (zeros before its first step)."""
    x = torch.from_numpy(data.x.astype(np.float32))[None]
    pad = torch.zeros(1, lags * width - 1, x.shape[2])
    feats, _ = window_sums(x, pad, width, lags)
    return feats[0, torch.from_numpy(data.indices)]


def fit_ridge(options: RidgeOptions, data: TrainData) -> RidgeDecoder:
    """Closed-form ridge (centred, with intercept) on the training split."""
    model = RidgeDecoder(data.x.shape[1], options.lags, options.width)
    f = window_features(data, model.width, model.lags).double()
    y = torch.from_numpy(data.y[data.indices]).double()
    mu_f, mu_y = f.mean(0), y.mean(0)
    fc, yc = f - mu_f, y - mu_y
    gram = fc.T @ fc
    variance = float(torch.diagonal(gram).mean())
    if not variance > 0:
        raise DataError("ridge fit: the training split's input features do not vary (no spike, "
                        "or the same count in every window); the normal equations are singular")
    penalty = options.alpha * variance
    try:
        w = torch.linalg.solve(gram + penalty * torch.eye(gram.shape[0], dtype=gram.dtype), fc.T @ yc)
    except torch.linalg.LinAlgError:  # alpha = 0 and a feature that never varies
        raise DataError(f"ridge fit: the normal equations are singular (alpha={options.alpha:g} and "
                        "a channel without spikes in the training split); set alpha > 0") from None
    with torch.no_grad():
        model.readout.weight.copy_(w.T.float())
        model.readout.bias.copy_((mu_y - mu_f @ w).float())
    return model
