"""Data sets (one module per data set), the event dtype, downloads with checksum checks."""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

_LAZY = {
    "MSWC": "neuromark.benchmarks.keywords.mswc",
    "PrimateReaching": "neuromark.benchmarks.primate_reaching.reader",
    "SpeechCommands": "neuromark.benchmarks.keywords.speech_commands",
}

__all__ = sorted(_LAZY)

__getattr__ = lazy_attributes(__name__, _LAZY)
