"""SUT ``asc_cnn``: the ASC reference pipeline, MFE pre-processing + CNN inference.

Pre-processing (:class:`~neuromark.processors.mel.MelFilterbankEnergies`, then feature
standardisation) and inference (:class:`~neuromark.benchmarks.acoustic_scenes.model.AscCNN`, float32 or
int8) are timed separately per 1-s sample at batch size 1 under
``torch.inference_mode()`` with ``torch.set_num_threads(threads)``.

Samples come from the TAU 2020 Mobile test split
(:class:`~neuromark.benchmarks.acoustic_scenes.dcase.DcaseASC`)
or, for offline smoke runs, from :func:`synthetic_audio`: class ``k`` is a tone at
``SYNTH_TONES_HZ[k]`` in white noise, so a quickly trained model can separate them.

Config::

    sut: {name: asc_cnn, options: {data: synthetic, samples: 64, threads: 1}}
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from neuromark.benchmarks.acoustic_scenes.dcase import DcaseASC
from neuromark.errors import ConfigError
from neuromark.processors.encoder_cost import Stage, combine, mel_energies_cost, ops
from neuromark.processors.mel import MelFilterbankEnergies
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT

SYNTH_TONES_HZ = (300.0, 700.0, 1500.0, 3000.0)


def synthetic_audio(n: int, sample_rate: int = 8000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` one-second clips (n, sample_rate) float32 and labels (n,) cycling 0..3."""
    rng = np.random.default_rng(seed)
    t = np.arange(sample_rate) / sample_rate
    labels = np.arange(n) % len(SYNTH_TONES_HZ)
    phase = rng.uniform(0, 2 * np.pi, size=n)
    tones = np.sin(2 * np.pi * np.asarray(SYNTH_TONES_HZ)[labels, None] * t[None, :] + phase[:, None])
    audio = 0.3 * tones + 0.3 * rng.standard_normal((n, sample_rate))
    return audio.astype(np.float32), labels.astype(np.int64)


@dataclass
class AscPipeline:
    """The pieces of the ASC SUT; ``labels[i]`` is the class of library sample ``i``."""

    library: InMemoryLibrary
    sut: StagedSUT
    labels: np.ndarray
    model: Any
    info: dict[str, Any]
    reference: Any = None
    #: the input encoders' cost (:mod:`neuromark.processors.encoder_cost`), a results block
    front_end: dict[str, Any] | None = None


def _from_config(value: str, config_dir: Path | None) -> Path:
    """A path option: relative paths lie in the config file's folder (no fallback to the
    working directory, as everywhere in a config); returned absolute for provenance."""
    path = Path(value).expanduser()
    if not path.is_absolute() and config_dir is not None:
        path = config_dir / path
    return path.absolute()


def build_pipeline(*, data: str, samples: int, seed: int, train_epochs: int, int8: bool,
                   threads: int, weights: str | None, n_mels: int = 40,
                   config_dir: Path | None = None) -> AscPipeline:
    """Build the MFE + CNN SUT over ``data`` ("synthetic" or a TAU 2020 root folder)."""
    import torch

    from neuromark.benchmarks.acoustic_scenes.model import TrainRecipe, build, quantize_int8, train

    torch.set_num_threads(threads)
    mfe = MelFilterbankEnergies(sample_rate=8000, n_mels=n_mels)
    frames = mfe.frames(8000)
    info: dict[str, Any] = {"data": data, "threads": threads, "int8": int8, "n_mels": n_mels,
                            "frames": frames, "sample_rate_hz": 8000,
                            "data_time_s": 1.0}  # one sample = 1 s of audio (real-time rule)
    if data == "synthetic":
        test_audio, test_labels = synthetic_audio(samples, seed=seed + 1)
        resample = None  # made at 8 kHz
        fetch = test_audio.__getitem__
        fetch_many = None
        train_audio, train_labels = synthetic_audio(max(64, samples), seed=seed)
    else:
        root = _from_config(data, config_dir)
        info["data"] = str(root)
        test = DcaseASC(root, "test")
        resample = test.front_end_cost()  # the files' rate to 8 kHz
        count = min(samples, len(test)) if samples else len(test)
        test_labels = np.asarray([test.label(i) for i in range(count)])
        fetch = lambda i: test[i][0]  # noqa: E731
        fetch_many = test.audio_many
        train_audio = train_labels = None
        if train_epochs:
            train_set = DcaseASC(root, "train")
            pairs = [train_set[i] for i in range(len(train_set))]
            train_audio = np.stack([a for a, _ in pairs])
            train_labels = np.asarray([y for _, y in pairs])
        samples = count
    model = build(seed, n_mels=n_mels, frames=frames)
    mean, std = 0.0, 1.0
    if train_audio is not None:
        feats = mfe.features(train_audio)[:, None]
        mean, std = float(feats.mean()), float(feats.std()) or 1.0
        if train_epochs:
            losses = train(model, (feats - mean) / std, torch.as_tensor(train_labels),
                           TrainRecipe(epochs=train_epochs, seed=seed))
            info["train_loss"] = losses
    if weights:
        path = _from_config(weights, config_dir)
        if not path.is_file():
            raise ConfigError(f"sut.options.weights: no such file {path} (relative paths are "
                              "read from the config file's folder)")
        weights = str(path)
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"] if "model" in state else state)
        mean, std = float(state.get("mean", mean)), float(state.get("std", std))
    info["weights"] = weights or ("trained on synthetic data" if data == "synthetic" and train_epochs
                                  else "trained" if train_epochs else "untrained (seeded random)")
    info["feature_norm"] = {"mean": mean, "std": std}
    float_model = copy.deepcopy(model).eval()  # the float reference of the accuracy pass
    if int8:
        calib = (mfe.features(train_audio[:32])[:, None] - mean) / std if train_audio is not None \
            else torch.randn(32, 1, n_mels, frames)
        model = quantize_int8(model, [calib])
        info["engine"] = torch.backends.quantized.engine

    def preprocess(audio: np.ndarray) -> Any:
        with torch.inference_mode():
            return ((mfe.features(audio) - mean) / std)[None, None]

    def infer(features: Any) -> Any:
        with torch.inference_mode():
            return model(features)[0]

    def reference(indices: Sequence[int]) -> list[np.ndarray]:
        """The float32 model's class scores for those samples (untimed; for ``int8`` the
        model before quantisation)."""
        out = []
        with torch.inference_mode():
            for start in range(0, len(indices), 256):  # audio files read in chunks, not all held
                chunk = list(indices[start:start + 256])
                audio = fetch_many(chunk) if fetch_many is not None else {i: fetch(i) for i in chunk}
                out += [float_model(preprocess(audio[i]))[0].numpy().astype("<f4") for i in chunk]
        return out

    library = InMemoryLibrary("asc-synthetic" if data == "synthetic" else "asc-tau2020-test",
                              fetch, samples, fetch_many=fetch_many)
    sut = StagedSUT("asc-mfe-cnn" + ("-int8" if int8 else ""), library, preprocess, infer,
                    response_dtype="<f4", warmup=0)
    return AscPipeline(library, sut, np.asarray(test_labels), model, info, reference,
                       _front_end(resample, n_mels))


def _front_end(resample: dict[str, Any] | None, n_mels: int) -> dict[str, Any]:
    """The SUT's front end (issue 47.4): the MFE of each 1-s slice at 8 kHz and its
    standardisation (the SUT's pre-processing stage), after the resampling of the TAU files
    when they are at another rate."""
    base = mel_energies_cost(MelFilterbankEnergies(sample_rate=8000, n_mels=n_mels), 8000)
    cells = base.options["frames"] * n_mels
    mfe = replace(base, stages=[*base.stages, Stage("standardise", ops(add=cells, div=cells),
                                                    "(x - mean) / std per feature value")])
    if resample is None:
        return mfe.to_json()
    return combine(f"{resample['encoder']} + {mfe.encoder}", [resample, mfe.to_json()])


def asc_cnn(*, data: str = "synthetic", samples: Annotated[int, Field(ge=1)] = 64,
            train_epochs: Annotated[int, Field(ge=0)] = 0, int8: bool = False,
            threads: Annotated[int, Field(ge=1)] = 1, weights: str | None = None,
            n_mels: Annotated[int, Field(ge=4)] = 40, seed: int = 0,
            config_dir: Path | None = None) -> BuiltSUT:
    """The ``asc_cnn`` entry of :data:`neuromark.registry.suts`.

    Args:
        data: "synthetic" or a TAU 2020 root folder (relative to the config file's folder).
        samples: library size (test slices used).
        train_epochs: quick training on the train split / synthetic clips.
        int8: PyTorch eager post-training static quantization of the CNN.
        threads: ``torch.set_num_threads`` during the run (restored by ``close``).
        weights: a file written by ``python -m neuromark.benchmarks.acoustic_scenes.model`` (relative to the
            config file's folder).
        n_mels: mel bands of the MFE.
    """
    import torch

    threads_before = torch.get_num_threads()
    try:
        pipe = build_pipeline(data=data, samples=samples, seed=seed, train_epochs=train_epochs,
                              int8=int8, threads=threads, weights=weights, n_mels=n_mels,
                              config_dir=config_dir)
    except BaseException:
        torch.set_num_threads(threads_before)
        raise
    return BuiltSUT(pipe.sut, pipe.library, pipe.labels, pipe.info,
                    close=lambda: torch.set_num_threads(threads_before),
                    metric="classification_accuracy", reference=pipe.reference,
                    front_end=pipe.front_end)
