"""The ``task: qubo`` config: workloads x seeds x scenarios x solvers.

Example (``configs/qubo/mis_default.yaml``)::

    task: qubo
    benchmark: {id: qubo-mis-default, version: "1.0"}
    workloads: {sizes: [100, 250], densities: [0.05], seeds: [0, 1]}
    solvers: [{name: neuromark-sa}, {name: dwave-tabu}]
    seeds: [0]
    fixed_timeout: {timeouts: [0.01, 0.1]}
    meter: {name: rapl}                       # optional; any registered power meter
    bks: auto                                 # optional; compute missing BKS rows first
    bks_budget_s: 60                          # ... within 60 s in all (the default)

Instead of generated ``workloads``, a config can name library instances (DIMACS ``.gph``,
QOBLIB ``.qs(.xz)``, MQLib; :mod:`neuromark.benchmarks.qubo.library`), as files and/or every
instance file of a folder, relative to the config's folder::

    instances: {files: [../../tests/fixtures/realdata/qubo_mis/karate.gph], folder: mis/}

Each instance's target is its optimum: ``<name>.opt.sol`` beside it, else the known-value
table (``known_optima.csv``, matched by the instance's content: :mod:`~neuromark.benchmarks.qubo.known`);
one without either is an error before any solving.

Each solver's results id is ``<benchmark.id>-<solver label or name>``.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field, field_validator, model_validator

from neuromark.components import ComponentSpec
from neuromark.config import IdentitySettings, Jobs, Seed, StrictModel
from neuromark.system.power.spec import MeterSpec

#: The parent benchmark of every QUBO result when ``benchmark.parent`` is not set.
PARENT = "neurobench-qubo-mis"
#: Seconds ``bks: auto`` may spend computing missing best-known solutions, when the config
#: does not set ``bks_budget_s``.
DEFAULT_BKS_BUDGET_S = 60.0


def _positive(values: list[float], what: str) -> list[float]:
    for v in values:
        if not v > 0:
            raise ValueError(f"{what} must be positive seconds, got {v!r}")
    return values


def _sizes(v: list[int]) -> list[int]:
    bad = [n for n in v if n < 1]
    if bad:
        raise ValueError(f"sizes must be >= 1, got {bad}")
    return v


def _densities(v: list[float]) -> list[float]:
    bad = [d for d in v if not 0 < d <= 1]
    if bad:
        raise ValueError(f"densities must be in (0, 1], got {bad}")
    return v


def _non_negative(what: str) -> Callable[[list[float]], list[float]]:
    """A validator: every value of the list ``what`` is >= 0 (the message quotes the list)."""

    def check(v: list[float]) -> list[float]:
        if any(x < 0 for x in v):
            raise ValueError(f"{what} must be >= 0, got {v}")
        return v

    return check


class WorkloadSet(StrictModel):
    sizes: list[int] = Field(min_length=1)
    densities: list[float] = Field(min_length=1)
    seeds: list[Seed] = Field(default=[0], min_length=1)

    _sizes = field_validator("sizes")(_sizes)
    _densities = field_validator("densities")(_densities)


class InstanceSet(StrictModel):
    """Library instance files and/or a folder of them (paths relative to the config)."""

    files: list[str] = []
    folder: str | None = None

    @model_validator(mode="after")
    def _some(self) -> InstanceSet:
        if not self.files and self.folder is None:
            raise ValueError("instances: name 'files', a 'folder', or both")
        return self


class SolverSpec(ComponentSpec):
    """``{name, options, label}``: a registered solver, its constructor options, and the
    label that tells two entries of the same solver apart (default: the name)."""

    label: str | None = None

    @property
    def tag(self) -> str:
        return self.label or self.name


class FixedTimeout(StrictModel):
    timeouts: list[float] = Field(min_length=1)

    @field_validator("timeouts")
    @classmethod
    def _t(cls, v: list[float]) -> list[float]:
        return _positive(v, "timeouts")


class TimeToSolution(StrictModel):
    gaps: list[float] = Field(default=[0.1, 0.05, 0.01], min_length=1)
    cap_s: float = 10.0

    _gaps = field_validator("gaps")(_non_negative("gaps"))

    @field_validator("cap_s")
    @classmethod
    def _cap(cls, v: float) -> float:
        return _positive([v], "cap_s")[0]


class MaxSize(StrictModel):
    sizes: list[int] = Field(default=[100, 1000, 5000], min_length=1)
    densities: list[float] = Field(default=[0.01, 1.0], min_length=1)
    timeout_s: float = 1.0

    _sizes = field_validator("sizes")(_sizes)
    _densities = field_validator("densities")(_densities)

    @field_validator("timeout_s")
    @classmethod
    def _t(cls, v: float) -> float:
        return _positive([v], "timeout_s")[0]


class QuboConfig(StrictModel):
    task: str
    benchmark: IdentitySettings = IdentitySettings(id="qubo-mis")
    description: str = ""
    workloads: WorkloadSet | None = None
    instances: InstanceSet | None = None
    solvers: list[SolverSpec] = Field(min_length=1)
    seeds: list[Seed] = Field(default=[0], min_length=1)
    fixed_timeout: FixedTimeout | None = None
    time_to_solution: TimeToSolution | None = None
    max_size: MaxSize | None = None
    bks: str | None = None  # a table (relative to the config's folder), or "auto"
    bks_budget_s: float | None = None  # with bks: auto; None: DEFAULT_BKS_BUDGET_S
    meter: MeterSpec | None = None  # {name, point, options}
    jobs: Jobs = 1
    plots: bool = True

    @model_validator(mode="after")
    def _one_source(self) -> QuboConfig:
        if (self.workloads is None) == (self.instances is None):
            raise ValueError("give either 'workloads' (generated graphs) or 'instances' "
                             "(library files), not both or neither")
        return self

    @field_validator("bks_budget_s")
    @classmethod
    def _budget(cls, v: float | None) -> float | None:
        return None if v is None else _positive([v], "bks_budget_s")[0]
