"""QUBO solvers: the :class:`Solver` protocol, neuromark's annealer and tabu search, D-Wave
baselines.

Registered in :data:`neuromark.registry.solvers` as ``neuromark-sa``, ``neuromark-tabu``,
``dwave-tabu`` and ``dwave-sa`` (lazy), so configs name them.
"""

from neuromark.benchmarks.qubo.solvers.base import Solver, SolveResult, allowed_overrun, check_timeout

__all__ = ["Solver", "SolveResult", "allowed_overrun", "check_timeout"]
