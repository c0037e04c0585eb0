"""Estimated energy from operation counts: E = MACs E_MAC + ACs E_AC (+ neuron ops E_update
+ memory accesses E_mem, when the profile has them).

An ESTIMATE: the profile's per-operation figures times counts, never a measurement (see
:mod:`~neuromark.metrics.functional.energy_profiles` for the caveats).

Example:
    >>> round(energy_estimate(1e6, 2e6, "horowitz45-fp32"), 15)  # 1e6 x 4.6 pJ + 2e6 x 0.9 pJ
    6.4e-06
"""

from __future__ import annotations

import math
from pathlib import Path

from neuromark.metrics.functional.energy_profiles import EnergyProfile, get_profile


def _count(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0:
        raise ValueError(f"energy_estimate: {name} must be a finite count >= 0, got {value!r}")
    return float(value)


def energy_estimate(eff_macs: float, eff_acs: float,
                    profile: str | Path | EnergyProfile = "horowitz45-fp32", *,
                    neuron_updates: float = 0, memory_accesses: float = 0) -> float:
    """Estimated energy in joules of ``eff_macs`` MACs and ``eff_acs`` ACs (e.g. synaptic
    operations' Effective_MACs / Effective_ACs per sample), plus ``neuron_updates``
    (NeuronOperations' effective op count) and ``memory_accesses``.

    ``profile``: a registered name (``horowitz45-fp32``, ``-fp16``, ``-int32``, ``-int8``),
    a YAML profile file, or an :class:`EnergyProfile`. Non-zero neuron updates or memory
    accesses with a profile that has no figure for them raise ``ValueError`` (they are
    never dropped silently); the shipped profiles have no memory figure.
    """
    prof = get_profile(profile)
    energy = _count("eff_macs", eff_macs) * prof.mac_j + _count("eff_acs", eff_acs) * prof.ac_j
    for name, count, per_op in (("neuron_updates", neuron_updates, prof.neuron_update_j),
                                ("memory_accesses", memory_accesses, prof.memory_access_j)):
        if _count(name, count) == 0:
            continue
        if per_op is None:
            field = "neuron_update_j" if name == "neuron_updates" else "memory_access_j"
            raise ValueError(f"energy_estimate: {name}={count:g} but profile {prof.label()} has "
                             f"no {field}; use a profile that has one, or leave {name} at 0")
        energy += count * per_op
    return energy


def mac_price(profile: EnergyProfile, bits: int | None) -> tuple[float, int | None]:
    """(joules per MAC, width priced at) of a MAC by a weight of ``bits`` bits under
    ``profile``: the smallest width of ``profile.mac_j_by_bits`` that holds ``bits`` (an
    upper bound when wider); ``mac_j`` (width None) when ``bits`` is None, the profile lists
    no widths, or the weight is wider than all of them."""
    widths = sorted(w for w in (profile.mac_j_by_bits or {}) if bits is not None and w >= bits)
    if not widths:
        return profile.mac_j, None
    return profile.mac_j_by_bits[widths[0]], widths[0]  # type: ignore[index]
