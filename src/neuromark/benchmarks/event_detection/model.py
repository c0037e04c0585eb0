"""A small recurrent event-camera detector: conv stem, ConvGRU (or conv + LIF) memory,
anchor-free centre-point head (CenterNet, Zhou et al. 2019, arXiv 1904.07850).

Input ``(x (B, T, C, H, W), keep (B,))`` from
:class:`~neuromark.benchmarks.event_detection.stream.SequentialStream`; the recurrent state of
slot ``b`` is zeroed where ``keep[b] == 0`` (a new file), else carried across calls.
Output ``(B, T, K + 4, H/4, W/4)``: K class heat-map logits, log box size (w, h) in cells,
sub-cell centre offset (x, y). :func:`decode` turns it into scored boxes.

The LIF variant replaces the ConvGRU by a conv layer feeding leaky integrate-and-fire
neurons (subtractive reset, fast-sigmoid surrogate gradient, Zenke & Ganguli 2018), the
same substitution the peer's hybrid model makes for its ConvRNN.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from neuromark.data.prophesee import BOX_DTYPE

STRIDE = 4


@dataclass(frozen=True)
class DetectorConfig:
    """Architecture: input channels, classes, base width, memory kind, LIF decay/threshold."""

    in_channels: int = 6
    classes: int = 3
    width: int = 16
    memory: Literal["gru", "lif"] = "gru"
    beta: float = 0.8
    threshold: float = 1.0


class ConvGRUCell(nn.Module):
    """Convolutional GRU (Ballas et al. 2016): gates from conv over ``[x, h]``."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.gates = nn.Conv2d(2 * channels, 2 * channels, 3, padding=1)
        self.candidate = nn.Conv2d(2 * channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        z, r = torch.sigmoid(self.gates(torch.cat([x, h], 1))).chunk(2, 1)
        c = torch.tanh(self.candidate(torch.cat([x, r * h], 1)))
        return (1 - z) * h + z * c


class _Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, v: torch.Tensor) -> torch.Tensor:  # noqa: D401 - autograd
        ctx.save_for_backward(v)
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (v,) = ctx.saved_tensors
        return grad / (1 + 10 * v.abs()) ** 2


class LIF(nn.Module):
    """Leaky integrate-and-fire neurons: ``v = beta v + I``, spike when ``v > threshold``,
    subtractive reset. The membrane ``v`` is the state."""

    def __init__(self, beta: float, threshold: float) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, current: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        v = self.beta * v + current
        spikes = _Spike.apply(v - self.threshold)
        return spikes, v - spikes * self.threshold


class EventDetector(nn.Module):
    """See the module docstring. ``memory_state`` holds the carried state (B, 2w, H/4, W/4)."""

    def __init__(self, config: DetectorConfig = DetectorConfig()) -> None:
        super().__init__()
        self.config = config
        w = config.width
        self.stem = nn.Sequential(nn.Conv2d(config.in_channels, w, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), nn.ReLU())
        if config.memory == "gru":
            self.memory: nn.Module = ConvGRUCell(2 * w)
        else:
            self.memory = nn.Conv2d(2 * w, 2 * w, 3, padding=1)
            self.lif = LIF(config.beta, config.threshold)
        self.head = nn.Sequential(nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(2 * w, config.classes + 4, 1))
        with torch.no_grad():  # CenterNet's prior: heat maps start near 0.1
            self.head[-1].bias[:config.classes].fill_(-2.19)
        self.memory_state: torch.Tensor | None = None

    def forward(self, batch: Any) -> torch.Tensor:
        x, keep = batch if isinstance(batch, (tuple, list)) else (batch, None)
        b, t = x.shape[:2]
        feats = self.stem(x.flatten(0, 1))
        feats = feats.view(b, t, *feats.shape[1:])
        state = self.memory_state
        if state is None or state.shape[0] != b or state.shape[2:] != feats.shape[3:]:
            state = feats.new_zeros(b, *feats.shape[2:])
        elif keep is not None:
            state = state * keep.view(b, 1, 1, 1).to(state.dtype)
        outs = []
        for k in range(t):
            if self.config.memory == "gru":
                state = self.memory(feats[:, k], state)
                y = state
            else:
                y, state = self.lif(self.memory(feats[:, k]), state)
            outs.append(self.head(y))
        self.memory_state = state
        return torch.stack(outs, 1)

    def forget(self) -> None:
        """Drop the carried state (a new pass over the data)."""
        self.memory_state = None

    def checkpoint(self) -> dict[str, Any]:
        return {"kind": "event_detector", "config": asdict(self.config), "state_dict": self.state_dict()}


def decode(output: torch.Tensor, stamps: np.ndarray, *, height: int, width: int,
           score_threshold: float = 0.05,
           max_boxes: int = 100) -> list[np.ndarray]:
    """Output ``(B, T, K + 4, h, w)`` -> per slot, the boxes of its T bins (:data:`BOX_DTYPE`,
    ``t`` = ``stamps[b, k]``): heat-map peaks (3x3 max), score >= ``score_threshold``,
    the best ``max_boxes`` per bin, clipped to the ``width`` x ``height`` frame."""
    b_, t_, c_, h_, w_ = output.shape
    k_ = c_ - 4
    heat = torch.sigmoid(output[:, :, :k_].float()).flatten(0, 1)
    peaks = heat * (nn.functional.max_pool2d(heat, 3, 1, 1) == heat)
    scores, idx = peaks.flatten(1).topk(min(max_boxes, k_ * h_ * w_), dim=1)
    reg = output[:, :, k_:].float().flatten(0, 1)
    out = []
    for b in range(b_):
        frames = []
        for k in range(t_):
            i = b * t_ + k
            ok = scores[i] >= score_threshold
            s, j = scores[i][ok], idx[i][ok]
            cls, cell = j // (h_ * w_), j % (h_ * w_)
            cy, cx = cell // w_, cell % w_
            r = reg[i][:, cy, cx]
            bw, bh = torch.exp(r[0].clamp(max=8)) * STRIDE, torch.exp(r[1].clamp(max=8)) * STRIDE
            x0 = ((cx + r[2]) * STRIDE - bw / 2).clamp(0, width)
            y0 = ((cy + r[3]) * STRIDE - bh / 2).clamp(0, height)
            x1 = ((cx + r[2]) * STRIDE + bw / 2).clamp(0, width)
            y1 = ((cy + r[3]) * STRIDE + bh / 2).clamp(0, height)
            boxes = np.zeros(len(s), BOX_DTYPE)
            boxes["t"] = stamps[b, k]
            for name, v in (("x", x0), ("y", y0), ("w", x1 - x0), ("h", y1 - y0), ("class_id", cls),
                            ("class_confidence", s)):
                boxes[name] = v.numpy()
            frames.append(boxes)
        out.append(np.concatenate(frames))
    return out


def encode_targets(boxes: np.ndarray, stamps: np.ndarray, classes: int, h: int, w: int
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Training targets of one slot's T bins: heat maps (T, K, h, w) with Gaussian peaks,
    regression (T, 4, h, w) and a positive mask (T, h, w); bins without boxes get mask -1
    in heat[.., 0, 0] ... (unlabelled: see ``labelled``)."""
    t_ = len(stamps)
    heat = np.zeros((t_, classes, h, w), np.float32)
    reg = np.zeros((t_, 4, h, w), np.float32)
    pos = np.zeros((t_, h, w), np.float32)
    yy, xx = np.mgrid[0:h, 0:w]
    for k, stamp in enumerate(stamps):
        for box in boxes[boxes["t"] == stamp]:
            cx, cy = (box["x"] + box["w"] / 2) / STRIDE, (box["y"] + box["h"] / 2) / STRIDE
            ix, iy = min(int(cx), w - 1), min(int(cy), h - 1)
            sigma = max(min(box["w"], box["h"]) / STRIDE / 6, 0.5)
            g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma ** 2))
            c = int(box["class_id"])
            heat[k, c] = np.maximum(heat[k, c], g)
            reg[k, :, iy, ix] = (math.log(max(box["w"], 1) / STRIDE), math.log(max(box["h"], 1) / STRIDE),
                                 cx - ix, cy - iy)
            pos[k, iy, ix] = 1
    return torch.from_numpy(heat), torch.from_numpy(reg), torch.from_numpy(pos)


def detection_loss(output: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor, pos: torch.Tensor,
                   labelled: torch.Tensor) -> torch.Tensor:
    """CenterNet loss over labelled bins: focal heat-map loss (alpha 2, beta 4) + L1 on
    size and offset at centres; shapes (N, K+4, h, w), (N, K, h, w), (N, 4, h, w), (N, h, w),
    labelled (N,) bool."""
    if not labelled.any():
        return output.sum() * 0
    out, heat, reg, pos = output[labelled], heat[labelled], reg[labelled], pos[labelled]
    k = heat.shape[1]
    p = torch.sigmoid(out[:, :k]).clamp(1e-4, 1 - 1e-4)
    peak = heat == 1
    focal = torch.where(peak, -((1 - p) ** 2) * torch.log(p),
                        -((1 - heat) ** 4) * p ** 2 * torch.log(1 - p)).sum()
    n = pos.sum().clamp(min=1)
    l1 = ((out[:, k:] - reg).abs() * pos.unsqueeze(1)).sum()
    return (focal + l1) / n


