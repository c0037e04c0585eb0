"""Energy profiles: joules per operation for an *estimate* of energy from operation counts.

A profile is named, versioned and cites its source. neuromark ships Horowitz's 45 nm
figures (M. Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC
2014, pp. 10-14, doi:10.1109/ISSCC.2014.6757323; 45 nm, 0.9 V) at four precisions, with
E_MAC = multiply + add and E_AC = add, and a neuron-update op costed as one add. They hold
arithmetic only: no memory term (data movement, which dominates real hardware, is not in
them). Users add their own profiles as YAML files (schema :class:`EnergyProfile`, errors
with file:line like every config) or in Python through
``neuromark.registry.energy_profiles.register(name, profile)``::

    name: my-chip-int8
    version: "1"
    source: "Datasheet rev. B, table 4"
    precision: int8
    node: 22 nm
    mac_j: 0.2e-12
    ac_j: 0.03e-12
    neuron_update_j: 0.05e-12        # optional: joules per neuron op
    memory_access_j: 5.0e-12         # optional: joules per memory access ...
    memory_source: "CACTI 7, 32 KB SRAM, 64-bit read"   # ... with its source
    mac_j_by_bits: {4: 0.05e-12, 8: 0.2e-12}   # optional: a MAC by a narrower weight

``mac_j_by_bits`` prices the MACs of a layer whose weights are stored at fewer bits
(:func:`~neuromark.metrics.functional.precision.operand_bits`, issue 31.2) at the
smallest width listed that holds them (an upper bound when wider than the weight); a
weight wider than every width listed is priced at ``mac_j``. The shipped profiles list
the Horowitz widths of their own kind up to their own (fp32: 16, 32; int32: 8, 32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from neuromark.config import ConfigFile, StrictModel, load_config, validate
from neuromark.errors import ConfigError, UnknownNameError
from neuromark.registry import energy_profiles

#: The physical range of a figure per operation, in joules. Below: Landauer's bound for
#: erasing one bit, kT ln 2 = 2.9e-21 J at 300 K (R. Landauer, "Irreversibility and heat
#: generation in the computing process", IBM J. Res. Dev. 5(3), 1961, doi:10.1147/rd.53.0183),
#: rounded down. Above: 1 uJ, some 400x a 64-bit DRAM access (1.3-2.6 nJ, Horowitz 2014), the
#: costliest operation in the shipped sources. A figure outside is a unit slip (pJ written as
#: J) or a typo, and would give an estimate off by orders of magnitude (1e308 J/op: inf).
MIN_J, MAX_J = 1e-21, 1e-6


def _physical(value: float) -> float:
    if not MIN_J <= value <= MAX_J:
        raise ValueError(f"joules per operation must lie in [{MIN_J:g}, {MAX_J:g}] (Landauer's "
                         f"bound to 1 uJ; a figure in pJ is written 1.0e-12)")
    return value


Joules = Annotated[float, AfterValidator(_physical)]

HOROWITZ = ("M. Horowitz, \"Computing's energy problem (and what we can do about it)\", "
            "ISSCC 2014, pp. 10-14, doi:10.1109/ISSCC.2014.6757323 (45 nm, 0.9 V)")

#: Printed with every estimate from a shipped profile.
CAVEATS = (
    "an estimate from operation counts, not a measurement",
    "arithmetic only: data movement, memory access and control are not included "
    "(an instruction costs ~70 pJ against 0.1 pJ for the add itself, Horowitz 2014)",
    "45 nm figures; newer nodes are cheaper per op",
    "the MAC/AC ratio that SNN energy claims rest on often vanishes in hardware-aware "
    "accounting (Dampfhoffer et al., IEEE TETCI 2022; Lemaire et al., 2022)",
)


class EnergyProfile(StrictModel):
    """Joules per operation, with its name, version and source.

    ``mac_j``: one multiply-accumulate; ``ac_j``: one accumulate (a spike-driven add);
    ``neuron_update_j``: one neuron operation (NeuronOperations' op count), optional;
    ``memory_access_j``: one memory access, optional, and then ``memory_source`` is
    required."""

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    source: str = Field(min_length=1)
    precision: str = ""
    node: str = ""
    mac_j: Joules
    ac_j: Joules
    neuron_update_j: Joules | None = None
    memory_access_j: Joules | None = None
    memory_source: str | None = None
    mac_j_by_bits: dict[Annotated[int, Field(ge=1, le=64)], Joules] | None = None
    caveats: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _memory_has_source(self) -> EnergyProfile:
        if self.memory_access_j is not None and not (self.memory_source or "").strip():
            raise ValueError("memory_access_j needs memory_source: where the figure comes from")
        return self

    def label(self) -> str:
        """e.g. ``horowitz45-fp32 v1 (fp32, 45 nm)``."""
        extra = ", ".join(x for x in (self.precision, self.node) if x)
        return f"{self.name} v{self.version}" + (f" ({extra})" if extra else "")


# Horowitz 2014, Fig. 1.1.9: (multiply, add) energy in pJ at 45 nm, by kind and width.
_HOROWITZ_PJ = {("fp", 32): (3.7, 0.9), ("fp", 16): (1.1, 0.4), ("int", 32): (3.1, 0.1),
                ("int", 8): (0.2, 0.03)}


def _horowitz(kind: str, bits: int) -> EnergyProfile:
    mult_pj, add_pj = _HOROWITZ_PJ[kind, bits]
    narrower = {w: sum(_HOROWITZ_PJ[kind, w]) * 1e-12 for k, w in _HOROWITZ_PJ
                if k == kind and w <= bits}
    return EnergyProfile(
        name=f"horowitz45-{kind}{bits}", version="1", source=HOROWITZ,
        precision=f"{kind}{bits}", node="45 nm", mac_j=(mult_pj + add_pj) * 1e-12,
        ac_j=add_pj * 1e-12, neuron_update_j=add_pj * 1e-12, mac_j_by_bits=narrower,
        caveats=CAVEATS)


HOROWITZ45_FP32 = _horowitz("fp", 32)
HOROWITZ45_FP16 = _horowitz("fp", 16)
HOROWITZ45_INT32 = _horowitz("int", 32)
HOROWITZ45_INT8 = _horowitz("int", 8)


def load_profile(path: str | Path) -> EnergyProfile:
    """A user profile from a YAML file; errors name the file, key and line. A user profile
    may not take a registered profile's name (``horowitz45-fp32``): its figures would be
    reported under the built-in's name."""
    config = load_config(path)
    profile = profile_from(config.data, config)
    if profile.name in energy_profiles:
        raise ConfigError(f"{config.where(('name',))}: name: {profile.name!r} is a built-in "
                          f"energy profile; give yours a name of its own (registered: "
                          f"{', '.join(energy_profiles.names())})")
    return profile


def profile_from(data: Any, config: ConfigFile | None = None) -> EnergyProfile:
    """Validate a mapping as an :class:`EnergyProfile` (errors with file:line)."""
    if not isinstance(data, dict):
        where = config.where(()) if config else "<profile>"
        raise ConfigError(f"{where}: an energy profile is a mapping of keys (name, version, "
                          f"source, mac_j, ac_j, ...), got {type(data).__name__}")
    memory_source = data.get("memory_source")
    if data.get("memory_access_j") is not None and not (isinstance(memory_source, str)
                                                        and memory_source.strip()):
        where = config.where(("memory_access_j",)) if config else "<profile>"
        raise ConfigError(f"{where}: memory_access_j needs memory_source: where the figure "
                          "comes from")
    return validate(EnergyProfile, data, config)


def get_profile(profile: str | Path | EnergyProfile) -> EnergyProfile:
    """A profile by registered name (``neuromark.registry.energy_profiles``), by YAML path
    (``*.yaml``/``*.yml``), or passed through."""
    if isinstance(profile, EnergyProfile):
        return profile
    text = str(profile)
    if isinstance(profile, Path) or text.endswith((".yaml", ".yml")):
        return load_profile(profile)
    try:
        found = energy_profiles.get(text)
    except UnknownNameError as exc:
        raise ConfigError(f"energy profile: {exc}; or give a YAML profile file") from None
    if not isinstance(found, EnergyProfile):
        raise ConfigError(f"energy profile {text!r} is registered as {type(found).__name__}, "
                          "not an EnergyProfile")
    return found
