"""Neuromorphic chips' own SDKs as systems under test (issue 44).

- :mod:`~neuromark.system.chips.features`: the spoken-digit corpus (the registry's data set
  ``spoken_digits``, looked up by name) as the small integer inputs these chips take (spike
  counts per time bin and channel group).
- :mod:`~neuromark.system.chips.akida_sut`: BrainChip Akida (``akida``): an MLP trained by
  neuromark, quantised to Akida's integer layers, run on the SDK's software engine, mapped
  onto a virtual (or real) Akida device; or a user's own ``.fbz`` made by BrainChip's
  quantizeml + cnn2snn (:mod:`~neuromark.system.chips.akida_file`,
  :mod:`~neuromark.system.chips.akida_user_file`).
- :mod:`~neuromark.system.chips.xylo_sut`: SynSense Xylo (``rockpool`` + ``xylosim``): a LIF
  SNN trained by neuromark, mapped and quantised by Rockpool's Xylo mapper, run on XyloSim
  (bit-accurate) or a real board (XyloSamna).
- :mod:`~neuromark.system.chips.cpu_sut`: the CPU rows (float and int8 MLP) of the one task
  every shipped system runs (``spoken_digits_8``).
- :mod:`~neuromark.system.chips.meters`: the SDKs' own power recording (Akida PowerMeter,
  Xylo's power monitor) as :data:`neuromark.registry.meters` entries.

The SDKs are optional extras (``neuromark[akida]``, ``neuromark[xylo]``); their absence gives
one message naming the extra (:func:`require`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from neuromark.errors import ConfigError

#: extra -> (import name, pinned install command)
EXTRAS = {
    "akida": ("akida", "pip install 'neuromark[akida]'  (akida==2.19.3)"),
    "xylo": ("rockpool", "pip install 'neuromark[xylo]' && pip install --no-deps rockpool==3.1.0 "
                         "&& pip install --no-deps --no-build-isolation xylosim==0.1.3 "
                         "(docs/chips.md)"),
    "xylosim": ("xylosim", "pip install pybind11 && pip install --no-deps --no-build-isolation "
                           "xylosim==0.1.3  (built from source with the system C++ compiler)"),
}


def require(extra: str) -> ModuleType:
    """Import the SDK of ``extra`` or raise :class:`ConfigError` naming what to install."""
    module, how = EXTRAS[extra]
    try:
        return importlib.import_module(module)
    except Exception as exc:  # a broken install raises more than ImportError
        raise ConfigError(f"the {extra!r} SDK ({module}) is not usable here "
                          f"({type(exc).__name__}: {exc}); install it: {how}") from exc
