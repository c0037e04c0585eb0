"""The YAML schema of a system-track benchmark (``task: system``).

Example (``configs/system/asc_cpu_singlestream.yaml``)::

    task: system
    name: asc_synthetic-cpu_singlestream
    sut: {kind: asc_cnn, data: synthetic, samples: 64, threads: 1}
    loadgen: {scenario: SingleStream, min_query_count: 256, min_duration_s: 1.0,
              expected_latency_s: 0.003}
    timing: {warmup: 10}
    power: {meter: "null", reason: "no power instrument on this CPU"}
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from neuromark.config import StrictModel
from neuromark.system.loadgen import LoadGenSettings


class AscSUT(StrictModel):
    """MFE + CNN reference pipeline; ``data`` is "synthetic" or a TAU 2020 root folder."""

    kind: Literal["asc_cnn"]
    data: str = "synthetic"
    samples: int = Field(64, ge=1, description="library size (test slices used)")
    train_epochs: int = Field(0, ge=0)
    int8: bool = False
    threads: int = Field(1, ge=1)
    weights: str | None = None
    n_mels: int = Field(40, ge=4)


class EsnSUT(StrictModel):
    """The Mackey-Glass ESN forecast step; ``data`` is "synthetic" or "mackey_glass"."""

    kind: Literal["esn"]
    data: Literal["synthetic", "mackey_glass"] = "synthetic"
    tau: int = Field(17, ge=1)
    samples: int = Field(500, ge=1, description="test time steps in the library")
    reservoir_size: int | None = Field(None, ge=1)
    threads: int = Field(1, ge=1)


class NullSUTConfig(StrictModel):
    kind: Literal["null"]
    samples: int = Field(64, ge=1)


class SleepSUTConfig(StrictModel):
    kind: Literal["sleep"]
    sleep_s: float = Field(1e-3, ge=0)
    samples: int = Field(64, ge=1)


SUTConfig = Annotated[AscSUT | EsnSUT | NullSUTConfig | SleepSUTConfig, Field(discriminator="kind")]


class TimingConfig(StrictModel):
    warmup: int = Field(10, ge=0, description="untimed samples run before the test")


class PowerConfig(StrictModel):
    """``meter``: null | rapl | nvml | csv. Windows in seconds. ``amortised``: one long
    stream window over continuous samples instead of power × mean latency."""

    meter: Literal["null", "rapl", "nvml", "csv"] = "null"
    reason: str = "no power meter configured"
    rapl_root: str = "/sys/class/powercap"
    gpu_index: int = Field(0, ge=0)
    csv: str | None = None
    offset_s: float | None = None
    wall_clock: bool = Field(False, description="csv t_s are UNIX times (time.time())")
    interval_s: float = Field(0.01, gt=0)
    idle_s: float = Field(2.0, gt=0)
    active_s: float = Field(2.0, gt=0)
    amortised: bool = False


class SystemConfig(StrictModel):
    task: Literal["system"]
    name: str | None = None
    version: str = "1.0"
    description: str = ""
    sut: SUTConfig
    loadgen: LoadGenSettings = LoadGenSettings()
    accuracy: bool = Field(False, description="also run LoadGen AccuracyOnly and score it")
    timing: TimingConfig = TimingConfig()
    power: PowerConfig = PowerConfig()
    seed: int = Field(0, ge=0)
