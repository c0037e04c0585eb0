"""Parameters of the cochlea model of Cramer et al. (2022), Sec. III-A.

Reference: B. Cramer, Y. Stradmann, J. Schemmel, F. Zenke, "The Heidelberg Spiking Data
Sets for the Systematic Evaluation of Spiking Neural Networks", IEEE TNNLS 33(7), 2022
(arXiv:1910.07407). Two sets of constants (:func:`constants`):

- ``"lauscher"`` (the default): the values of the authors' ``lauscher`` package, version
  1.0.1, which the agreement test compares our spikes against. They are NOT those printed
  in the paper's Table II: the hair cell's g, y, l, r, x are Meddis's (1986/88) 2000 /
  5.05 / 2500 / 6580 / 66.3 per second (Table II: 1000 / 11.11 / 1250 / 16667 / 250),
  the stiffness offset ``a`` is 3500 (Table II's Greenwood-map a: 35), the bushy cell's
  total weight 13e3 is shared by 40 fibres (Table II: 0.54 / N_HC per fibre), and the
  window is a Hann ramp over each half of the clip (Table II: 30-ms ramps).
- ``"paper"``: Table II's hair-cell rates (taken as per second, the unit of the Meddis
  equations here), its ``a`` = 35 and 30-ms Hann ramps at both ends. Its bushy weight is
  NOT taken: 0.54 / N_HC in this model's units gives no spike at all (the paper's
  equations scale the synaptic input differently; not reconciled here), so the bushy
  cell keeps lauscher's weight. ``docs/shd.md`` compares both with lauscher.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neuromark.errors import ConfigError


@dataclass(frozen=True)
class BasilarMembraneParams:
    """Hydrodynamic (shallow-water) basilar-membrane model (Sieroka, Dosch & Rupp 2006).

    SI units per unit width: stiffness ``s(x) = c0 exp(-alpha x) - a`` [N/m^3],
    damping ``r(x) = de sqrt(c0 m) exp(-alpha x / 2)``, mass ``m`` [kg/m^2], fluid density
    ``rho``, channel height ``h``; places ``x`` are spaced evenly on [0, length].
    """

    channels: int = 700
    a: float = 3500.0
    alpha: float = 3.0
    rho: float = 1.0
    length: float = 3.5
    c0: float = 1e9
    de: float = 0.15
    h: float = 0.1
    m: float = 0.05

    @property
    def places(self) -> np.ndarray:
        """Place of each channel along the membrane, shape (channels,)."""
        return np.linspace(0.0, self.length, self.channels)

    @property
    def r0(self) -> float:
        """Damping at the base, ``de * sqrt(c0 * m)``."""
        return self.de * float(np.sqrt(self.c0 * self.m))

    def characteristic_frequency(self) -> np.ndarray:
        """Undamped resonance frequency of each channel in Hz, ``sqrt(s(x)/m) / 2 pi``."""
        s = self.c0 * np.exp(-self.alpha * self.places) - self.a
        return np.sqrt(np.clip(s, 0.0, None) / self.m) / (2 * np.pi)


@dataclass(frozen=True)
class HairCellParams:
    """Meddis (1986, 1988) transmitter-pool inner hair cell; rates in 1/s, amounts in units."""

    y: float = 5.05  # replenishment rate from the factory
    g: float = 2000.0  # permeability scale
    l: float = 2500.0  # loss rate from the cleft  # noqa: E741
    r: float = 6580.0  # re-uptake rate from the cleft
    x: float = 66.3  # re-processing rate from the store back to the free pool
    a: float = 5.0  # permeability offset
    b: float = 300.0  # permeability half-saturation
    h: float = 50000.0  # firing-rate gain: probability per second per unit in the cleft
    m: float = 1.0  # maximum free transmitter


@dataclass(frozen=True)
class BushyCellParams:
    """Bushy cell: LIF neuron fed by ``n_convergence`` refractory auditory-nerve fibres."""

    n_convergence: int = 40
    tau_mem: float = 1e-3  # s
    tau_syn: float = 5e-4  # s
    tau_refrac: float = 1e-3  # s (fibres and bushy cell)
    weight: float = 13e3  # total input weight, shared equally by the fibres


@dataclass(frozen=True)
class CochleaParams:
    """All stages, plus the input conditioning: RMS level and a Hann window, ramping over
    each half of the clip (``ramp_s`` None, lauscher's) or over ``ramp_s`` seconds at
    each end."""

    rms_level: float = 0.3
    basilar_membrane: BasilarMembraneParams = field(default_factory=BasilarMembraneParams)
    hair_cell: HairCellParams = field(default_factory=HairCellParams)
    bushy_cell: BushyCellParams = field(default_factory=BushyCellParams)
    ramp_s: float | None = None


#: Names of the constant sets of :func:`constants` (see the module).
CONSTANTS = ("lauscher", "paper")


def check_constants(name: str, where: str = "constants") -> str:
    """``name`` if it names a constant set (:data:`CONSTANTS`), else a
    :class:`~neuromark.errors.ConfigError` naming ``where`` (raised before any work)."""
    if name not in CONSTANTS:
        raise ConfigError(f"{where}: cochlea constants {name!r}: one of {', '.join(CONSTANTS)}")
    return name


def constants(name: str = "lauscher", channels: int = 700) -> CochleaParams:
    """The cochlea's constants ``"lauscher"`` (default) or ``"paper"`` (see the module)."""
    bm = BasilarMembraneParams(channels=channels)
    if name == "lauscher":
        return CochleaParams(basilar_membrane=bm)
    if name == "paper":
        return CochleaParams(
            basilar_membrane=BasilarMembraneParams(channels=channels, a=35.0),
            hair_cell=HairCellParams(g=1000.0, y=11.11, l=1250.0, r=16667.0, x=250.0),
            ramp_s=0.03)
    raise ValueError(f"cochlea constants {name!r}: one of {', '.join(CONSTANTS)}")
