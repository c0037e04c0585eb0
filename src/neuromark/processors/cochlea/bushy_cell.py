"""Bushy cells: refractory auditory-nerve fibres converging onto one LIF neuron per channel.

Cramer et al. (2022), Sec. III-A (constants: :mod:`.params`): each channel has
``n_convergence`` fibres that fire independently with the hair cell's per-sample
probability and are silent for ``tau_refrac`` after each spike; they drive a current-based
LIF neuron (``tau_syn``, ``tau_mem``, threshold 1, reset to 0, refractory ``tau_refrac``),
whose spikes are the output. Fibres of one channel are exchangeable, so instead of
sampling each fibre (40 random numbers per sample and channel, as lauscher does) we draw
the number of fibres that spike at each sample from Binomial(available fibres, p): this
has exactly the same distribution, and needs one uniform number per sample and channel
(inverse-CDF sampling). Numbers come from a seeded ``np.random.Generator``, so results are
reproducible.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from neuromark.processors.cochlea.params import BushyCellParams


@numba.njit(cache=True, inline="always")
def _binomial_inverse(u: float, n: int, p: float) -> int:
    """Smallest k with P(X <= k) >= u for X ~ Binomial(n, p)."""
    if n <= 0 or p <= 0.0 or u <= 1.0 - n * p:  # P(X = 0) = (1 - p)^n >= 1 - n p >= u
        return 0
    if p >= 1.0:
        return n
    ratio = p / (1.0 - p)
    pk = math.exp(n * math.log1p(-p))
    cdf = pk
    k = 0
    while u > cdf and k < n:
        pk *= (n - k) / (k + 1.0) * ratio
        k += 1
        cdf += pk
    return k


@numba.njit(cache=True, parallel=True)
def _bushy(
    prob: np.ndarray,
    uniform: np.ndarray,
    n_fibres: int,
    refrac: float,
    syn_decay: float,
    mem_decay: float,
    gain: float,
    out: np.ndarray,
) -> None:
    """prob, uniform: (channels, samples); out (uint8, same shape) gets 1 where a bushy cell spikes.

    A fibre that spiked at sample j is silent at samples j + d for 1 <= d < refrac. The LIF
    neuron integrates ``gain * I_syn`` per sample, clips at 1, and spikes at the sample where
    it reached 1; it is then held at 0 while its refractory counter (``refrac``) runs down.
    """
    n_samples = prob.shape[1]
    dead = 0
    while dead + 1 < refrac:
        dead += 1
    for ch in numba.prange(prob.shape[0]):
        fired = np.zeros(dead + 1, dtype=np.int64)  # ring buffer of fibre spikes, last `dead` samples
        busy = 0
        v_prev = 0.0
        i_syn = 0.0
        counter = 0.0
        for t in range(n_samples):
            slot = t % (dead + 1)
            busy -= fired[slot]  # the fibres that spiked `dead + 1` samples ago are available again
            k = _binomial_inverse(uniform[ch, t], n_fibres - busy, prob[ch, t])
            fired[slot] = k
            busy += k
            v = 0.0
            if t > 0:
                if counter <= 0.0:
                    if v_prev < 1.0:
                        v = v_prev * mem_decay
                    else:
                        counter = refrac
                        out[ch, t - 1] = 1
                i_syn *= syn_decay
            i_syn += k
            if counter <= 0.0:
                v += i_syn * gain
            if v > 1.0:
                v = 1.0
            counter -= 1.0
            v_prev = v


def bushy_spikes(
    prob: np.ndarray, sample_rate: float, p: BushyCellParams, rng: np.random.Generator
) -> np.ndarray:
    """Spike raster (uint8, shape (channels, samples)) of the bushy cells for ``prob`` (same shape)."""
    dt = 1.0 / float(sample_rate)
    prob = np.ascontiguousarray(prob, dtype=np.float64)
    uniform = rng.random(prob.shape)
    out = np.zeros(prob.shape, dtype=np.uint8)
    _bushy(
        prob,
        uniform,
        int(p.n_convergence),
        p.tau_refrac * float(sample_rate),
        math.exp(-dt / p.tau_syn),
        math.exp(-dt / p.tau_mem),
        p.weight / p.n_convergence * dt,
        out,
    )
    return out
