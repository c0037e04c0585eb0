"""Data sets (one module per data set), the event dtype, downloads with checksum checks."""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

_LAZY = {
    "MSWC": "neuromark.data.mswc",
    "PrimateReaching": "neuromark.data.primate_reaching",
    "SpeechCommands": "neuromark.data.speech_commands",
}

__all__ = sorted(_LAZY)

__getattr__ = lazy_attributes(__name__, _LAZY)
