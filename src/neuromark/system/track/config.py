"""The ``system`` task's config: the YAML schema and its checks.

Config (``configs/acoustic_scenes/asc_cpu_singlestream.yaml``)::

    task: system
    benchmark: {id: asc_synthetic-cpu_singlestream, version: "1.0"}
    sut: {name: asc_cnn, options: {data: synthetic, samples: 64, threads: 1}}
    loadgen: {scenario: SingleStream, min_query_count: 256, min_duration_s: 1.0,
              expected_latency_s: 0.003}
    timing: {warmup: 10}
    meter: {name: "null", options: {reason: "no power instrument on this CPU"}}
    power: {floor_s: 2.0, active_s: 2.0, amortised: false}

:class:`SystemConfig` is the whole config (``power:`` the measurement windows, in seconds;
``accuracy:`` the quality target, :mod:`neuromark.system.quality`; ``estimate:`` the energy
estimate, :mod:`neuromark.system.track.estimate`). A key it does not know, an older spelling
included, is an error naming the file, line and the keys allowed there. The run itself is
:mod:`neuromark.system.track.task`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from neuromark.components import ComponentSpec
from neuromark.config import IdentitySettings, Seed, StrictModel
from neuromark.identity import check_label
from neuromark.system.loadgen import LoadGenSettings
from neuromark.system.power.spec import MeterSpec
from neuromark.system.quality import AccuracyRule
from neuromark.system.track.estimate import EstimateSettings

CITATION = """@article{Yik2025neurobench,
  title = {The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author = {Yik, Jason and others}, journal = {Nature Communications}, volume = {16}, pages = {1545},
  year = {2025}}
@misc{mlperf_loadgen, title = {{MLPerf} Inference LoadGen}, howpublished =
  {\\url{https://github.com/mlcommons/inference/tree/master/loadgen}}}"""

#: The results' parent id when ``benchmark.parent`` is not set.
PARENT = "neurobench-system-track"


class TimingConfig(StrictModel):
    warmup: int = Field(10, ge=0, description="untimed samples run before the test")


class PowerWindows(StrictModel):
    """``power:``: the measurement windows in seconds (the instrument is ``meter:``).

    ``floor_s``: the floor window (configured and ready, not asleep); ``active_s``: each
    active window; ``sleep_s``: an optional true idle (sleep) window; ``amortised``: one
    separate long stream run (energy / samples) instead of power × latency; ``latency``:
    ``measured`` (the mean latency of each stage) or ``data_time`` (the real-time rule:
    ``data_time_s`` per inference, default the SUT's ``data_time_s``, 1 s for ASC)."""

    floor_s: float = Field(2.0, gt=0)
    active_s: float = Field(2.0, gt=0)
    sleep_s: float | None = Field(None, gt=0)
    amortised: bool = False
    latency: Literal["measured", "data_time"] = "measured"
    data_time_s: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _one_rule(self) -> PowerWindows:
        if self.amortised and self.latency == "data_time":
            raise ValueError("amortised: true (energy / samples of a stream run) and latency: "
                             "data_time (power x data time) are two rules; choose one")
        return self


class SystemSUTSpec(ComponentSpec):
    """``sut: {name, options, label}``: the registered SUT, its options, and the label the
    user gives the system (results ``<benchmark id>--<label>.json``, the leaderboard's row;
    default: the SUT's own label, e.g. ``akida-virtual-SixNodesIPv2``, else its entry
    name). Remote SUTs take one too."""

    label: str | None = None

    @field_validator("label")
    @classmethod
    def _label_is_a_name(cls, value: str | None) -> str | None:
        return None if value is None else check_label(value)


class SystemConfig(StrictModel):
    task: Literal["system"]
    benchmark: IdentitySettings | None = Field(
        None, description="identity; default id <sut name>-<scenario>")
    description: str = ""
    sut: SystemSUTSpec
    loadgen: LoadGenSettings = LoadGenSettings()
    accuracy: AccuracyRule | bool | None = Field(
        None, description="how the AccuracyOnly pass is scored and its quality target "
                          "(neuromark.system.quality); true: scored, no target; false: not scored")
    timing: TimingConfig = TimingConfig()
    meter: MeterSpec | None = Field(None, description="default: not measured (null meter)")
    power: PowerWindows = PowerWindows()
    seed: Seed = 0
    profile: Literal["test", "submission"] = Field(
        "test", description="the rules the submission checker applies (neuromark.system.rules)")
    compliance: bool | list[Literal["TEST01", "TEST04", "TEST05"]] = Field(
        False, description="run the MLPerf compliance tests after the test (true: all three)")
    latency: Literal["measured", "data_time"] | None = Field(
        None, description="the spec's latency rule for energy per inference; same as power.latency")
    estimate: EstimateSettings | None = Field(
        None, description="also estimate energy per inference from the SUT's operation counts "
                          "(energy_estimate, beside the measured energy_per_inference)")

    @model_validator(mode="after")
    def _latency_rule(self) -> SystemConfig:
        """A top-level ``latency:`` is the spec's spelling of ``power.latency``."""
        if self.latency is not None:
            if "latency" in self.power.model_fields_set and self.power.latency != self.latency:
                raise ValueError(f"latency: {self.latency} and power.latency: {self.power.latency} "
                                 "disagree; give one")
            power = PowerWindows(**{**self.power.model_dump(), "latency": self.latency})
            object.__setattr__(self, "power", power)
        return self

    def accuracy_rule(self) -> AccuracyRule | None:
        """The accuracy rule; None for ``accuracy: false`` (the AccuracyOnly run is still
        made, not scored); ``true`` or no ``accuracy:`` score the SUT's outputs with its
        own metric when it gives labels, without a quality target."""
        if self.accuracy is False:
            return None
        return self.accuracy if isinstance(self.accuracy, AccuracyRule) else AccuracyRule()

    def info(self) -> Any:
        """The results' :class:`~neuromark.results.BenchmarkIdentity`."""
        settings = self.benchmark or IdentitySettings(
            id=f"{self.sut.name}-{self.loadgen.scenario.lower()}")
        if settings.parent is None:
            settings = settings.model_copy(update={"parent": PARENT})
        return settings.info(CITATION)


