"""neuromark: benchmarks for neuromorphic computing.

The import stays light: heavy dependencies (torch, snntorch, tonic, loadgen, dwave) are
imported by the modules that need them. ``Benchmark`` is resolved lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuromark._lazy import lazy_attributes

__version__ = "0.3.0"

if TYPE_CHECKING:
    from neuromark.results import Results, Score
    from neuromark.runner import Benchmark

__all__ = ["Benchmark", "Results", "Score", "__version__"]

_LAZY = {
    "Benchmark": "neuromark.runner",
    "Results": "neuromark.results",
    "Score": "neuromark.results",
}


__getattr__ = lazy_attributes(__name__, _LAZY)
