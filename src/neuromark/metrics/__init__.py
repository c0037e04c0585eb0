"""Metrics: pure functions in ``functional/`` plus thin static and workload classes."""

from __future__ import annotations

from typing import Any

_LAZY = {
    "Footprint": "neuromark.metrics.static",
    "ParameterCount": "neuromark.metrics.static",
    "ConnectionSparsity": "neuromark.metrics.static",
    "ClassificationAccuracy": "neuromark.metrics.correctness",
    "MSE": "neuromark.metrics.correctness",
    "SMAPE": "neuromark.metrics.correctness",
    "R2": "neuromark.metrics.correctness",
    "ActivationSparsity": "neuromark.metrics.complexity",
    "SynapticOperations": "neuromark.metrics.complexity",
    "MembraneUpdates": "neuromark.metrics.complexity",
    "StaticMetric": "neuromark.metrics.base",
    "WorkloadMetric": "neuromark.metrics.base",
    "Step": "neuromark.metrics.base",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neuromark.metrics' has no attribute {name!r}")
