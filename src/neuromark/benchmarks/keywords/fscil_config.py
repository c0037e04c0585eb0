"""The options of the keyword FSCIL task (``task: fscil``): what a config may say, with its
defaults and bounds. The protocol is :mod:`neuromark.benchmarks.keywords.fscil`; the corpus
and the backbone :mod:`neuromark.benchmarks.keywords.fscil_backbone`.

Config::

    task: fscil
    benchmark: {id: mswc-fscil-m5, version: "1.0"}
    data:
      root: cache:keywords/mswc        # holds MSWC/ (the real set, or the synthetic one)
      synthesize: {base_train: 40, base_test: 10, evaluation: 40}   # omit for the real set
    model: {name: keyword_m5, options: {n_channel: 64}, checkpoint: cache:checkpoints/x.pt}
    features: {kind: mfcc}
    train: {epochs: 30, batch_size: 256, lr: 0.01}   # cached by recipe (neuromark.training)
    train_if_missing: true                          # false: a missing or stale backbone is an error
    fscil: {shots: 5, support_pool: 20, query_pool: 20, query_shots: 20, repeats: 10, seed: 0}
    device: cpu        # cpu (default), cuda, cuda:N or auto: the backbone trains and runs there
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from neuromark.benchmarks.keywords.mswc import SAMPLE_RATE
from neuromark.config import IdentitySettings, Seed, StrictModel
from neuromark.devices import DeviceName
from neuromark.metrics.names import MetricEntry
from neuromark.model_label import ModelLabel
from neuromark.training.recipe import BatchSize, Epochs, LearningRate, Threads, TrainRecipe

COMPLEXITY = ["footprint", "connection_sparsity", "activation_sparsity", "synaptic_operations"]


class SynthSettings(StrictModel):
    """Clips per word of the synthetic corpus (``mswc`` entry's ``synthesize``)."""

    base_train: int = Field(40, ge=1)
    base_val: int = Field(0, ge=0)
    base_test: int = Field(10, ge=1)
    evaluation: int = Field(40, ge=2)
    clips_per_voice: int = Field(1, ge=1)
    format: Literal["opus", "wav"] = "opus"


class DataSettings(StrictModel):
    root: str
    synthesize: SynthSettings | None = None
    languages: list[str] | None = None  # incremental languages (default: all 10)
    long_clips: Literal["error", "truncate"] = "error"


class ModelSettings(StrictModel):
    name: str
    options: dict[str, Any] = {}
    checkpoint: str
    label: ModelLabel | None = None  # in results file names and leaderboards (default: name)


class FeatureSettings(StrictModel):
    kind: Literal["mfcc", "delta_mel", "waveform"] = "mfcc"
    n_fft: int = Field(512, ge=16)
    hop_length: int = Field(240, ge=1)
    n_mels: int = Field(20, ge=1)
    n_mfcc: int = Field(20, ge=1)
    fmin: float = Field(20.0, ge=0)
    fmax: float = Field(4000.0, gt=0)
    threshold: float = Field(1.0, gt=0)

    def time_step_s(self) -> tuple[float, str] | None:
        """delta_mel spike frames, which the spiking backbones take one per step; None for
        mfcc and waveform (M5 reads a whole clip at once) (``metrics/execution_rate.py``)."""
        return ((self.hop_length / SAMPLE_RATE, f"features: delta_mel frames, hop {self.hop_length} "
                 f"samples at {SAMPLE_RATE} Hz, one per model step") if self.kind == "delta_mel" else None)


class FSCILSettings(StrictModel):
    shots: int = Field(5, ge=1)
    support_pool: int = Field(100, ge=1)
    query_pool: int = Field(100, ge=1)
    query_shots: int = Field(100, ge=1)
    repeats: int = Field(1, ge=1)
    seed: Seed = 0
    order: list[str] | None = None  # a fixed language order (default: seeded permutations)


class EvalSettings(StrictModel):
    batch_size: int = Field(256, ge=1)
    complexity: list[MetricEntry] = COMPLEXITY  # names or {name, options}
    complexity_samples: int | None = Field(None, ge=1, description="per session; None: all")


class TrainSettings(TrainRecipe):
    """``train:`` of an FSCIL config (the backbone's pre-training on the base classes)."""

    epochs: Epochs = 30
    batch_size: BatchSize = 256
    lr: LearningRate = 0.01
    threads: Threads = 1
    weight_decay: float = Field(1e-4, ge=0)
    step_size: int = Field(20, ge=1)
    gamma: float = Field(0.1, gt=0)
    time_shift: int = Field(0, ge=0, description="augmentation: random roll by up to this many frames")

    def recipe(self) -> dict[str, Any]:
        """The settings but ``threads`` (they do not change the trained weights)."""
        return self.model_dump(exclude={"threads"})


class FSCILConfig(StrictModel):
    task: Literal["fscil"]
    description: str = ""
    benchmark: IdentitySettings
    data: DataSettings
    model: ModelSettings
    features: FeatureSettings = FeatureSettings()
    train: TrainSettings = TrainSettings()
    train_if_missing: bool = True
    fscil: FSCILSettings = FSCILSettings()
    eval: EvalSettings = EvalSettings()
    device: DeviceName = "cpu"
