"""Candidate models for reach-direction PSTH predictivity (they never see neural data).

- :func:`kinematic_features`: the lagged linear cosine-tuning reference: cursor velocity
  (x, y), speed and position (x, y) at leads of 0-160 ms (the encoding model of Georgopoulos
  et al. 1982 with Moran & Schwartz 1999's speed term), 25 "units".
- :class:`ReachController`: a task-driven recurrent controller: a GRU whose inputs are the
  target and cursor positions (mm / 100) and whose output is the cursor velocity (mm/step),
  trained on a session's training reaches; its hidden units are the candidate's units.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

LEADS = (0, 10, 20, 30, 40)  # samples of 4 ms


def kinematic_features(cursor: np.ndarray, leads: tuple[int, ...] = LEADS) -> np.ndarray:
    """(K, 5 * len(leads)) velocity x/y (mm/step), speed and position x/y (mm / 100) at
    each lead (the value ``lead`` samples later; the last value repeated past the end)."""
    v = np.gradient(cursor, axis=0)
    base = np.concatenate([v, np.linalg.norm(v, axis=1, keepdims=True), cursor / 100.0], axis=1)
    k = len(cursor)
    cols = [base[np.minimum(np.arange(k) + lead, k - 1)] for lead in leads]
    return np.concatenate(cols, axis=1)


class ReachController(nn.Module):
    """GRU controller: (S, L, 4) [target x, y, cursor x, y] / 100 -> (S, L, 2) velocity."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.readout = nn.Linear(hidden, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        units, _ = self.gru(x)
        return self.readout(units), units


def controller_inputs(cursor: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(K, 4) float32 controller inputs."""
    return (np.concatenate([target, cursor], axis=1) / 100.0).astype(np.float32)


def fit_controller(cursor: np.ndarray, target: np.ndarray, segments: list[tuple[int, int]], *,
                   hidden: int = 64, iterations: int = 200, chunk: int = 250, batch: int = 16,
                   lr: float = 1e-2, seed: int = 0, device: Any = "cpu") -> ReachController:
    """Train on random ``chunk``-sample windows starting inside the training reaches, on
    ``device`` (built on the CPU after seeding, then moved; returned on the CPU)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = ReachController(hidden).to(device)
    x = torch.from_numpy(controller_inputs(cursor, target)).to(device)
    y = torch.from_numpy(np.gradient(cursor, axis=0).astype(np.float32)).to(device)
    starts = np.concatenate([np.arange(a, b) for a, b in segments])
    starts = starts[starts + chunk <= len(cursor)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(iterations):
        rows = torch.from_numpy(rng.choice(starts, batch)[:, None] + np.arange(chunk)[None]).to(device)
        out, _ = model(x[rows])
        loss = nn.functional.mse_loss(out[:, 20:], y[rows][:, 20:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.cpu().eval()


def controller_units(model: ReachController, cursor: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(K, hidden) hidden units over the whole recording (one stream)."""
    with torch.no_grad():
        _, units = model(torch.from_numpy(controller_inputs(cursor, target))[None])
    return units[0].numpy()
