"""NeuroBench v1.0's trained baselines as registered models: each factory builds the
architecture of :mod:`neuromark.networks.neurobench_v1` untrained (a row config loads
NeuroBench's checkpoint into it, ``model.checkpoint``).

:data:`BASELINES` maps each registered name to the kernel's architecture key and how the
runner steps it: ``torch`` (the module takes the whole input) or ``snntorch`` (one time step
per call; input ``(B, T, *features)``).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel
from neuromark.networks.neurobench_v1 import ARCHITECTURES

#: Registered name -> (architecture key of :data:`ARCHITECTURES`, adapter kind).
BASELINES: dict[str, tuple[str, str]] = {
    "neurobench_ann2d": ("ann2d", "torch"), "neurobench_ann3d": ("ann3d", "torch"),
    "neurobench_snn2": ("snn2", "torch"), "neurobench_snn_flat": ("snn_flat", "torch"),
    "neurobench_m5": ("m5", "torch"), "neurobench_s2s_snn": ("s2s_snn", "snntorch"),
    "neurobench_gesture_csnn": ("gesture_csnn", "snntorch"),
    "neurobench_eeg_snn": ("eeg_snn", "torch"), "neurobench_scnn": ("scnn", "snntorch"),
}


def _primate(key: str, channels: int) -> nn.Module:
    if not (isinstance(channels, int) and channels > 0):
        raise ValueError(f"channels must be a positive integer (the decoder's input width), "
                         f"got {channels!r}")
    return ARCHITECTURES[key](channels)


def ann2d(channels: int = 96) -> nn.Module:
    """Primate reaching ANN2D; ``channels``: recorded units (input width)."""
    return _primate("ann2d", channels)


def ann3d(channels: int = 96) -> nn.Module:
    """Primate reaching ANN3D; ``channels``: recorded units (input width)."""
    return _primate("ann3d", channels)


def snn2(channels: int = 96) -> nn.Module:
    """Primate reaching SNN2; ``channels``: recorded units (input width)."""
    return _primate("snn2", channels)


def snn_flat(channels: int = 96) -> nn.Module:
    """Primate reaching SNN_Flat ("SNN3"); ``channels``: recorded units (input width)."""
    return _primate("snn_flat", channels)


def m5() -> nn.Module:
    """Keyword spotting M5 ANN (35 classes, 8 kHz clips)."""
    return ARCHITECTURES["m5"](0)


def s2s_snn() -> nn.Module:
    """Keyword spotting Speech2Spikes SNN (20 features per step, 35 classes)."""
    return ARCHITECTURES["s2s_snn"](0)


def gesture_csnn() -> nn.Module:
    """DVS Gesture CSNN (2 x 32 x 32 frames, 11 classes)."""
    return ARCHITECTURES["gesture_csnn"](0)


def eeg_snn() -> nn.Module:
    """EEG motor imagery SNN (62 channels, 2 classes)."""
    return ARCHITECTURES["eeg_snn"](0)


def scnn() -> nn.Module:
    """NeHAR spiking CNN (6 inertial channels per step, 7 classes)."""
    return ARCHITECTURES["scnn"](0)


def adapter_for(name: str, net: nn.Module) -> Any:
    """``net`` (built by ``name``'s factory) in the adapter its stepping needs; parameters
    that apply no synapse (SNN_Flat's output scalings, ``neuromark_elementwise_parameters``)
    exempt from the coverage check."""
    exempt = tuple(getattr(net, "neuromark_elementwise_parameters", ()))
    kind = BASELINES[name][1]
    return (SNNTorchModel(net, exempt_params=exempt) if kind == "snntorch"
            else TorchModel(net, exempt_params=exempt))
