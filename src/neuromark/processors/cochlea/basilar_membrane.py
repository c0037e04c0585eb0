"""Hydrodynamic basilar-membrane model in the frequency domain.

Implements the long-wave (WKB) solution of the shallow-water cochlea of N. Sieroka,
H. G. Dosch, A. Rupp, "Semirealistic models of the cochlea", J. Acoust. Soc. Am. 120(1),
297 (2006), as Cramer et al. (2022) use it (constants: :mod:`.params`). For angular frequency
``w`` and place ``x``::

    xi(w, x) = s(x) - m w^2 - i w r(x)                 membrane impedance / (-i w)
    g(w, x)  = w sqrt(rho / (h xi(w, x)))              local wave number
    G(w, x)  = integral of g from 0 to x (closed form, see ``_phase``)
    P(w, x)  = sqrt(G / g) H0^(1)(G)                   pressure
    V(w, x)  = 2 w / xi(w, x) * P(w, x) / P(w, 0) * Z(w)   membrane velocity per unit input
    Z(w)     = middle-ear / stapes impedance term (Bessel functions, ``_stapes``)

The membrane velocity of channel ``x`` is ``Re(IFFT(V(w, x) * FFT(audio)))``. As in the
reference implementation (lauscher 1.0.1), only the ``N // 2 + 1`` non-negative frequency
bins are used, placed on the grid ``2 pi * linspace(1, fs // 2, N // 2 + 1)``, and the
inverse transform has that length, so the output rate is ``fs // 2``.

The (channel, frequency) transfer matrix is one numba kernel, parallel over channels; the
inverse FFTs run in blocks of channels, which keeps the peak memory at a few hundred MB for
a one-second clip.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import scipy.fft
from scipy import special

from neuromark.processors.cochlea.params import BasilarMembraneParams

_BLOCK = 50  # channels per block of the transfer matrix

# --- Hankel function H0^(1)(z) for complex z --------------------------------------------
# scipy.special.hankel1 (AMOS) costs ~0.5-1 us per point and the transfer matrix needs ~13
# million points for a 0.8-s clip at 48 kHz. Here: the ascending series for |z| < 8
# (Abramowitz & Stegun 9.1.12, 9.1.13) and Hankel's asymptotic expansion truncated at its
# smallest term for |z| >= 8 (DLMF 10.17.5, valid for -pi < arg z < 2 pi); relative error
# < 1e-7 for Re z >= 0, the half-plane the model needs. It lives in this module because
# numba's on-disk cache does not notice changes to jitted functions in other files.

_EULER_GAMMA = 0.5772156649015329
_SWITCH = 8.0  # |z| at which the asymptotic expansion takes over from the power series
_TOL = 1e-12  # relative size of the last term kept


@numba.njit(cache=True, inline="always")
def _h0_series(z: complex) -> complex:
    """J0(z) + i Y0(z) from the ascending series (A&S 9.1.12, 9.1.13)."""
    q = -(z * z) * 0.25
    term = 1.0 + 0.0j
    j0 = 1.0 + 0.0j
    ysum = 0.0 + 0.0j
    harmonic = 0.0
    for k in range(1, 80):
        term = term * q * (1.0 / (k * k))
        harmonic += 1.0 / k
        j0 += term
        ysum += harmonic * term
        if abs(term.real) + abs(term.imag) < 1e-17:
            break
    y0 = (2.0 / math.pi) * ((np.log(z * 0.5) + _EULER_GAMMA) * j0 - ysum)
    return j0 + 1j * y0


@numba.njit(cache=True, inline="always")
def _h0_asymptotic(z: complex) -> complex:
    """H0(z) ~ sqrt(2/(pi z)) e^{i(z - pi/4)} sum_k i^k a_k(0) / z^k (DLMF 10.17.5).

    a_k(0) = (-1)^k 1^2 3^2 ... (2k-1)^2 / (k! 8^k).
    """
    inv = 1.0 / z
    total = 1.0 + 0.0j
    term = 1.0 + 0.0j
    best = 1.0
    for k in range(1, 40):
        # a_k(0) / a_{k-1}(0) = -(2k - 1)^2 / (8k), so each term gains a factor -i (2k-1)^2 / (8k z)
        nxt = term * inv * (-1j * ((2 * k - 1) ** 2 / (8.0 * k)))
        size = abs(nxt.real) + abs(nxt.imag)
        if size > best:  # the series has started to diverge: stop at the smallest term
            break
        term = nxt
        best = size
        total += term
        if size < _TOL:
            break
    return np.sqrt(2.0 / math.pi * inv) * np.exp(1j * (z - math.pi / 4.0)) * total


@numba.njit(cache=True)
def h0_scalar(z: complex) -> complex:
    """H0^(1)(z) for one complex z with z != 0 and -pi < arg z <= pi (best for Re z >= 0)."""
    if abs(z) < _SWITCH:
        return _h0_series(z)
    return _h0_asymptotic(z)


@numba.njit(cache=True)
def _h0_array(flat_in: np.ndarray, flat_out: np.ndarray) -> None:
    for i in range(flat_in.size):
        flat_out[i] = h0_scalar(flat_in[i])


def hankel1_0(z: np.ndarray) -> np.ndarray:
    """H0^(1)(z) elementwise; ``z`` complex of any shape (same shape returned, complex128)."""
    z = np.ascontiguousarray(z, dtype=np.complex128)
    out = np.empty_like(z)
    _h0_array(z.ravel(), out.ravel())
    return out


def frequency_grid(n_samples: int, sample_rate: int) -> tuple[np.ndarray, int]:
    """Angular frequencies (rad/s, shape (n_samples // 2 + 1,)) and the output rate in Hz."""
    n_bins = n_samples // 2 + 1
    out_rate = sample_rate // 2
    return 2.0 * np.pi * np.linspace(1.0, out_rate, n_bins), out_rate


def _xi(p: BasilarMembraneParams, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    decay = np.exp(-p.alpha * x)
    return p.c0 * decay - p.a - p.m * w**2 - 1j * w * p.r0 * np.sqrt(decay)


def _wave_number(p: BasilarMembraneParams, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return w * np.sqrt(p.rho / (p.h * _xi(p, w, x)))


def _phase(p: BasilarMembraneParams, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """G(w, x): the WKB phase, closed-form integral of g over [0, x] (Sieroka et al. 2006).

    ``w`` has shape (1, F) and ``x`` shape (C, 1); returns (C, F) complex.
    """
    k2 = p.a + p.m * w**2  # (1, F)
    k = np.sqrt(k2)
    g0 = _wave_number(p, w, np.zeros(1))

    def branch(x_: np.ndarray) -> np.ndarray:
        r = p.r0 * np.exp(-p.alpha * x_ / 2.0)
        return -np.sqrt(_xi(p, w, x_)) + 1j * (2.0 * k2 + 1j * w * r) / (2.0 * k)

    ratio = branch(np.zeros((1, 1))) / (np.exp(p.alpha * x / 2.0) * branch(x))
    coef = 2j * np.sqrt(2.0) * w / (p.alpha * np.sqrt(2.0 * p.h * k2))
    return 2.0 * g0 / p.alpha - coef * np.log(ratio)


def _pressure_reference(p: BasilarMembraneParams, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    big_g = _phase(p, w, x)
    return np.sqrt(big_g / _wave_number(p, w, x)) * special.hankel1(0, big_g)


def _stapes(p: BasilarMembraneParams, w: np.ndarray) -> np.ndarray:
    """Z(w) of Sieroka et al.: the boundary term at the stapes, shape like ``w``."""
    arg = 2.0 * w / p.alpha * np.sqrt(2.0 / (p.h * p.c0))
    num = 1j * special.j0(arg) + special.y0(arg)
    den = special.j1(arg) - 1j * special.y1(arg)
    return np.sqrt(2.0 * p.c0 / p.h) * num / den


def _base(p: BasilarMembraneParams, w: np.ndarray) -> np.ndarray:
    """The place-independent factor 2 w Z(w) / P(w, 0), shape like ``w``."""
    return 2.0 * w * _stapes(p, w) / _pressure_reference(p, w, np.zeros((1, 1)))


def transfer_matrix_reference(
    p: BasilarMembraneParams, w: np.ndarray, channels: np.ndarray
) -> np.ndarray:
    """V(w, x) in plain numpy/scipy (slow; for tests), shape (len(channels), len(w))."""
    w2 = np.asarray(w, dtype=np.float64)[None, :]
    x = p.places[np.asarray(channels)][:, None]
    return _base(p, w2) * _pressure_reference(p, w2, x) / _xi(p, w2, x)


@numba.njit(cache=True, parallel=True)
def _transfer_kernel(
    w: np.ndarray,
    places: np.ndarray,
    base: np.ndarray,
    coef: np.ndarray,
    branch0: np.ndarray,
    g0term: np.ndarray,
    k2: np.ndarray,
    k: np.ndarray,
    consts: np.ndarray,
    out: np.ndarray,
) -> None:
    """Fills out[c, f] = V(w[f], places[c]); the per-frequency factors come precomputed.

    Above a channel's resonance the travelling wave is cut off before reaching its place
    and |V| falls monotonically; once it is below ``tol`` times the channel's maximum at a
    frequency above twice the resonance, the remaining bins are set to 0.
    """
    c0, a, m, r0, alpha, rho_over_h = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
    tol = consts[6]
    sqrt_rho_over_h = math.sqrt(rho_over_h)
    for c in numba.prange(places.size):
        x = places[c]
        decay = math.exp(-alpha * x)
        r = r0 * math.sqrt(decay)
        grow = math.exp(alpha * x / 2.0)
        stiffness = c0 * decay - a
        w_stop = 2.0 * math.sqrt(max(stiffness, 0.0) / m)
        vmax = 0.0
        for f in range(w.size):
            wf = w[f]
            xi = complex(stiffness - m * wf * wf, -wf * r)
            sq = np.sqrt(xi)  # Im(xi) < 0: never on the branch cut, so sqrt(1/xi) = 1/sqrt(xi)
            g = wf * sqrt_rho_over_h / sq
            branch = -sq + 1j * complex(2.0 * k2[f], wf * r) / (2.0 * k[f])
            big_g = g0term[f] - coef[f] * np.log(branch0[f] / (grow * branch))
            pressure = np.sqrt(big_g / g) * h0_scalar(big_g)
            v = base[f] * pressure / xi
            if not (math.isfinite(v.real) and math.isfinite(v.imag)):
                v = 0.0j
            out[c, f] = v
            size = abs(v)
            if size > vmax:
                vmax = size
            elif wf > w_stop and size < tol * vmax:
                for rest in range(f + 1, w.size):
                    out[c, rest] = 0.0j
                break


def transfer_matrix(
    p: BasilarMembraneParams, n_samples: int, sample_rate: int, tol: float = 1e-10
) -> np.ndarray:
    """V(w, x) for every channel and frequency bin, shape (channels, n_samples // 2 + 1), complex128.

    Bins above twice a channel's resonance where |V| has fallen below ``tol`` times the
    channel's maximum are set to exactly 0 (``tol=0`` computes every bin).
    """
    w, _ = frequency_grid(n_samples, sample_rate)
    k2 = p.a + p.m * w**2
    k = np.sqrt(k2)
    xi0 = _xi(p, w, np.zeros(1))
    branch0 = -np.sqrt(xi0) + 1j * (2.0 * k2 + 1j * w * p.r0) / (2.0 * k)
    g0term = 2.0 * _wave_number(p, w, np.zeros(1)) / p.alpha
    coef = 2j * np.sqrt(2.0) * w / (p.alpha * np.sqrt(2.0 * p.h * k2))
    consts = np.array([p.c0, p.a, p.m, p.r0, p.alpha, p.rho / p.h, tol])
    out = np.empty((p.channels, w.size), dtype=np.complex128)
    _transfer_kernel(
        w, p.places, _base(p, w).ravel().astype(np.complex128), coef.astype(np.complex128),
        branch0.astype(np.complex128), g0term.astype(np.complex128), k2, k, consts, out,
    )
    return out


def membrane_velocity(
    audio: np.ndarray, sample_rate: int, p: BasilarMembraneParams, transfer: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Basilar-membrane velocity, shape (channels, len(audio) // 2 + 1), and its rate in Hz.

    ``transfer`` may be a precomputed :func:`transfer_matrix` for this length and rate.
    ``Re(ifft(Y))`` is computed as the inverse real FFT of the Hermitian part of ``Y``,
    which halves the work of the complex inverse transform.
    """
    n = audio.shape[0]
    n_bins = n // 2 + 1
    spectrum = scipy.fft.fft(audio)[:n_bins]
    _, out_rate = frequency_grid(n, sample_rate)
    if transfer is None:
        transfer = transfer_matrix(p, n, sample_rate)
    if transfer.shape != (p.channels, n_bins):
        raise ValueError(f"transfer matrix has shape {transfer.shape}, expected {(p.channels, n_bins)}")
    half = n_bins // 2 + 1
    mirror = (-np.arange(half)) % n_bins  # index of bin -k (mod n_bins)
    out = np.empty((p.channels, n_bins), dtype=np.float64)
    for lo in range(0, p.channels, _BLOCK):
        block = transfer[lo : lo + _BLOCK] * spectrum[None, :]
        hermitian = 0.5 * (block[:, :half] + np.conj(block[:, mirror]))
        out[lo : lo + _BLOCK] = scipy.fft.irfft(hermitian, n=n_bins, axis=1, workers=-1)
    return out, out_rate
