"""Meddis transmitter-pool inner hair cell: membrane velocity -> firing probability.

R. Meddis, "Simulation of mechanical to neural transduction in the auditory receptor",
J. Acoust. Soc. Am. 79(3), 702 (1986) and "Simulation of auditory-neural transduction:
Further studies", J. Acoust. Soc. Am. 83(3), 1056 (1988). Three pools: free transmitter
``q``, cleft ``c`` and re-processing store ``w``; the membrane permeability is
``k(s) = g (s + A) / (s + A + B)`` for ``s + A > 0`` and 0 otherwise. Forward-Euler steps
at the model rate, each pool clipped at 0, starting from the spontaneous steady state; the
output is the firing probability per sample, ``h * c * dt``. Channels are independent, so
the numba kernel runs them in parallel.
"""

from __future__ import annotations

import numba
import numpy as np

from neuromark.processors.cochlea.params import HairCellParams


def _steady_state(p: HairCellParams) -> tuple[float, float, float]:
    """Spontaneous (silent-input) values of the free pool q, the cleft c and the store w."""
    k0 = p.g * p.a / (p.a + p.b)
    c = p.m * p.y * k0 / (p.l * k0 + p.y * (p.l + p.r))
    q = c * (p.l + p.r) / k0
    w = c * p.r / p.x
    return q, c, w


@numba.njit(cache=True, parallel=True)
def _meddis(velocity: np.ndarray, consts: np.ndarray, init: np.ndarray, out: np.ndarray) -> None:
    """velocity, out: (channels, samples).

    consts = [y M dt, y dt, x dt, r dt, (l + r) dt, g dt, A, B, h dt, M].
    """
    ymdt, ydt, xdt, rdt, lrdt, gdt = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
    a, b, hdt, m = consts[6], consts[7], consts[8], consts[9]
    for ch in numba.prange(velocity.shape[0]):
        q, c, w = init[0], init[1], init[2]
        for t in range(velocity.shape[1]):
            s = velocity[ch, t] + a
            k = gdt * s / (s + b) if s > 0.0 else 0.0
            replenish = ymdt - ydt * q if q < m else 0.0
            eject = k * q
            reprocess = xdt * w
            q_new = q + replenish - eject + reprocess
            c_new = c + eject - lrdt * c
            w_new = w + rdt * c - reprocess
            q = q_new if q_new > 0.0 else 0.0
            c = c_new if c_new > 0.0 else 0.0
            w = w_new if w_new > 0.0 else 0.0
            out[ch, t] = c * hdt


def firing_probability(
    velocity: np.ndarray, sample_rate: float, p: HairCellParams, out: np.ndarray | None = None
) -> np.ndarray:
    """Per-sample firing probability of each channel; ``velocity`` (channels, samples) -> same shape.

    ``out`` may be ``velocity`` itself (float64, C-contiguous) to work in place.
    """
    dt = 1.0 / float(sample_rate)
    consts = np.array(
        [p.y * p.m * dt, p.y * dt, p.x * dt, p.r * dt, (p.l + p.r) * dt, p.g * dt, p.a, p.b, p.h * dt, p.m]
    )
    velocity = np.ascontiguousarray(velocity, dtype=np.float64)
    if out is None:
        out = np.empty_like(velocity)
    _meddis(velocity, consts, np.array(_steady_state(p)), out)
    return out
