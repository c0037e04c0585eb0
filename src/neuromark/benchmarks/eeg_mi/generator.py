"""Offline EEG motor-imagery generator in the Lee2019 ``.mat`` and the challenge ``.npy`` layouts.

``layout: mat`` writes ``session{S}/s{N}/sess{SS}_subj{NN}_EEG_MI.mat`` (MATLAB v5, structs
``EEG_MI_train`` and ``EEG_MI_test`` with ``x`` (samples, 62) µV single, ``fs``, ``chan``,
``t`` (onsets, samples), ``y_dec`` (1 right, 2 left), ``y_logic``, ``y_class``, ``class``,
``EMG`` (4 channels), ``EMG_index``); ``layout: npy`` writes ``train_X.npy``, ``train_y.npy``,
``val_X.npy``, ``val_y.npy`` made from the same continuous signals by the reader's
preprocessing (8-30 Hz Butterworth, 100 Hz, 1.0-3.5 s; µV) and within-subject split (the
test part stays unwritten, as the challenge's hidden set); ``both`` writes both.

What it models: 62 channels at the Lee2019 electrode names with 2-D scalp positions
(:data:`POSITIONS`, from MNE's ``standard_1005`` montage, projected); a spatially smooth
1/f^alpha background (subject-specific alpha in [1.0, 1.6], ~10 µV); an occipital alpha
rhythm; a sensorimotor mu (9-13 Hz, subject-specific peak) and beta (about twice mu)
rhythm over each hemisphere (sources at C3 and C4, Gaussian spatial spread), whose
amplitude drops during imagery over the hemisphere contralateral to the imagined hand
(event-related desynchronisation, 0.5-4 s after the cue, smooth onset); a subject-specific
ERD strength: ``illiterate_fraction`` of the subjects (seeded) get almost none (the
"BCI illiteracy" of about half the subjects in Lee et al. 2019), the others 25-60 %;
trial timing of the paper (3 s fixation, 4 s imagery, 6 ± 1.5 s rest; options).

What it does not model: volume conduction through a head model, eye and muscle artefacts,
non-stationarity across sessions beyond a new noise draw, the ipsilateral ERS, the online
phase's feedback, the real files' ``smt``/``pre_rest``/``post_rest`` fields. Its figures test
the pipeline and rank models on a known structure; they say nothing about real EEG accuracy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from neuromark.benchmarks.eeg_mi.lee2019 import Preprocessing, Run, epochs
from neuromark.benchmarks.eeg_mi.reader import within_subject_split
from neuromark.config import Seed, StrictModel

VERSION = 1
_POS = ("Fp1:-0.25,0.71 Fp2:0.25,0.72 F7:-0.60,0.36 F3:-0.43,0.45 Fz:0.00,0.50 F4:0.44,0.46 "
        "F8:0.62,0.38 FC5:-0.65,0.16 FC1:-0.29,0.22 FC2:0.29,0.22 FC6:0.67,0.17 T7:-0.71,-0.14 "
        "C3:-0.55,-0.10 Cz:0.00,-0.08 C4:0.57,-0.09 T8:0.72,-0.13 TP9:-0.73,-0.39 CP5:-0.67,-0.39 "
        "CP1:-0.30,-0.40 CP2:0.33,-0.40 CP6:0.71,-0.39 TP10:0.73,-0.40 P7:-0.61,-0.62 P3:-0.45,-0.67 "
        "Pz:0.00,-0.69 P4:0.47,-0.67 P8:0.62,-0.62 PO9:-0.47,-0.83 O1:-0.25,-0.95 Oz:0.00,-0.97 "
        "O2:0.25,-0.95 PO10:0.47,-0.83 FC3:-0.51,0.19 FC4:0.53,0.20 C5:-0.68,-0.12 C1:-0.31,-0.08 "
        "C2:0.32,-0.08 C6:0.71,-0.11 CP3:-0.54,-0.40 CPz:0.00,-0.40 CP4:0.56,-0.40 P1:-0.24,-0.68 "
        "P2:0.27,-0.68 POz:0.00,-0.87 FT9:-0.71,0.12 FTT9h:-0.71,-0.02 TTP7h:-0.73,-0.26 TP7:-0.72,-0.39 "
        "TPP9h:-0.66,-0.52 FT10:0.71,0.12 FTT10h:0.71,-0.02 TPP8h:0.67,-0.51 TP8:0.73,-0.39 "
        "TPP10h:0.67,-0.52 F9:-0.59,0.35 F10:0.61,0.36 AF7:-0.46,0.58 AF3:-0.29,0.65 AF4:0.30,0.66 "
        "AF8:0.47,0.59 PO3:-0.31,-0.86 PO4:0.31,-0.86")
#: Channel name -> (x, y) on the unit head disc (right, front), in the surrogate's channel order.
POSITIONS = {n: tuple(float(v) for v in p.split(",")) for n, p in (s.split(":") for s in _POS.split())}
CHANNELS = list(POSITIONS)


class EegSurrogate(StrictModel):
    """Options of the ``synthesize:`` data set option of ``eeg_mi``."""

    subjects: int = Field(54, ge=1, le=54)
    sessions: int = Field(2, ge=1, le=2)
    trials: int = Field(100, ge=4, description="trials per run, half right, half left")
    fs: float = Field(1000.0, ge=100, description="Hz (Lee2019: 1000)")
    fixation_s: float = Field(3.0, ge=1.0)
    imagery_s: float = Field(4.0, ge=3.5)
    rest_s: float = Field(6.0, ge=0.5)
    rest_jitter_s: float = Field(1.5, ge=0)
    illiterate_fraction: float = Field(0.5, ge=0, le=1)
    layout: Literal["mat", "npy", "both"] = "mat"
    test_run: bool = Field(True, description="write EEG_MI_test (the online phase) into the .mat files")
    seed: Seed = 0


def _pattern(center: str, sigma: float = 0.22) -> np.ndarray:
    c = np.asarray(POSITIONS[center])
    d2 = ((np.asarray(list(POSITIONS.values())) - c) ** 2).sum(1)
    return np.exp(-d2 / (2 * sigma ** 2))


def _narrow(rng: np.random.Generator, n: int, fs: float, f0: float, width: float = 1.5) -> np.ndarray:
    """Unit-rms narrow-band noise around ``f0`` Hz."""
    from scipy import signal

    sos = signal.butter(2, (f0 - width, f0 + width), btype="bandpass", fs=fs, output="sos")
    x = signal.sosfilt(sos, rng.normal(size=n))
    return x / x.std()


def _pink(rng: np.random.Generator, n: int, channels: int, fs: float, alpha: float) -> np.ndarray:
    """(n, channels) unit-rms noise with a 1/f^alpha power spectrum."""
    from scipy import fft

    size = fft.next_fast_len(n, real=True)
    spec = fft.rfft(rng.normal(size=(size, channels)), axis=0)
    f = fft.rfftfreq(size, 1 / fs)
    f[0] = f[1]
    x = fft.irfft(spec / f[:, None] ** (alpha / 2), size, axis=0)[:n]
    return x / x.std()


def subject_traits(seed: int, subject: int, n_subjects: int, illiterate_fraction: float) -> dict[str, float]:
    """Seeded traits of a subject: mu peak, 1/f exponent, ERD strength (weak for the
    'illiterate' share)."""
    order = np.random.default_rng([seed, 7]).permutation(np.arange(1, n_subjects + 1))
    weak = subject in order[:round(illiterate_fraction * n_subjects)]
    rng = np.random.default_rng([seed, subject])
    return {"mu_hz": rng.uniform(9.5, 12.5), "alpha_exp": rng.uniform(1.0, 1.6),
            "erd": rng.uniform(0.0, 0.08) if weak else rng.uniform(0.25, 0.6), "weak": float(weak)}


def simulate_run(settings: EegSurrogate, subject: int, session: int, run: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x (samples, 62) µV float32, onsets (trials,) samples, y_dec (trials,) 1/2)."""
    fs, traits = settings.fs, subject_traits(settings.seed, subject, settings.subjects,
                                              settings.illiterate_fraction)
    rng = np.random.default_rng([settings.seed, subject, session, run])
    labels = rng.permutation(np.resize([1, 2], settings.trials))  # balanced (one more right if odd)
    jitter = min(settings.rest_jitter_s, settings.rest_s - 0.5)
    rests = settings.rest_s + rng.uniform(-1, 1, settings.trials) * jitter
    lengths = settings.fixation_s + settings.imagery_s + rests
    starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]]) + 1.0
    onsets = np.round((starts + settings.fixation_s) * fs).astype(np.int64)
    n = int(np.ceil((starts[-1] + lengths[-1] + 1.0) * fs))
    t = np.arange(n) / fs
    x = 10.0 * _pink(rng, n, len(CHANNELS), fs, traits["alpha_exp"])
    x += 6.0 * np.outer(_pink(rng, n, 1, fs, traits["alpha_exp"])[:, 0], _pattern("Cz", 0.6))
    x += 5.0 * np.outer(_narrow(rng, n, fs, 10.0), _pattern("Oz", 0.25))
    for hemisphere, center in ((1, "C3"), (2, "C4")):  # right-hand MI desynchronises C3
        drop = np.zeros(n)
        span = int(settings.imagery_s * fs) + 1
        for onset, label in zip(onsets, labels):
            if label == hemisphere:  # y_dec 1 (right) -> C3, 2 (left) -> C4
                rel = t[onset:onset + span] - onset / fs
                drop[onset:onset + span] = (np.clip((rel - 0.3) / 0.4, 0, 1)
                                            * np.clip((settings.imagery_s - rel) / 0.3, 0, 1))
        envelope = 1 - traits["erd"] * drop
        rhythm = (8.0 * _narrow(rng, n, fs, traits["mu_hz"])
                  + 4.0 * _narrow(rng, n, fs, 2 * traits["mu_hz"] - 1, 2.5))
        x += np.outer(envelope * rhythm, _pattern(center))
    return x.astype(np.float32), onsets, labels


def _struct(settings: EegSurrogate, subject: int, session: int, run: int) -> dict[str, object]:
    x, onsets, labels = simulate_run(settings, subject, session, run)
    rng = np.random.default_rng([settings.seed, subject, session, run, 1])
    chan = np.empty((1, len(CHANNELS)), dtype=object)
    chan[0, :] = CHANNELS
    classes = np.empty((2, 2), dtype=object)
    classes[:] = [[1, "right"], [2, "left"]]
    y_class = np.empty((1, len(labels)), dtype=object)
    y_class[0, :] = ["right" if v == 1 else "left" for v in labels]
    emg_index = np.empty((1, 4), dtype=object)
    emg_index[0, :] = ["EMG1", "EMG2", "EMG3", "EMG4"]
    return {"x": x, "fs": float(settings.fs), "chan": chan, "t": onsets[None].astype(np.float64),
            "y_dec": labels[None].astype(np.float64),
            "y_logic": np.stack([labels == 1, labels == 2]).astype(np.uint8), "y_class": y_class,
            "class": classes, "EMG": (5.0 * rng.normal(size=(len(x), 4))).astype(np.float32),
            "EMG_index": emg_index}


def write_eeg(root: Path, settings: EegSurrogate) -> None:
    """Write the surrogate (see the module docstring) into ``root``."""
    from scipy.io import savemat

    arrays: dict[str, list[np.ndarray]] = {"train_X": [], "train_y": [], "val_X": [], "val_y": []}
    for subject in range(1, settings.subjects + 1):
        for session in range(1, settings.sessions + 1):
            names = ("EEG_MI_train", "EEG_MI_test") if settings.layout != "npy" and settings.test_run \
                else ("EEG_MI_train",)
            structs = {name: _struct(settings, subject, session, run) for run, name in enumerate(names)}
            if settings.layout in ("mat", "both"):
                name = f"sess{session:02d}_subj{subject:02d}_EEG_MI.mat"
                path = root / f"session{session}" / f"s{subject}" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                savemat(path, structs, do_compression=False, oned_as="row")
                with open(path, "r+b") as handle:  # a fixed header text: same seed, same bytes
                    handle.write(b"MATLAB 5.0 MAT-file, written by neuromark's EEG surrogate".ljust(116))
            if settings.layout in ("npy", "both"):
                _add_epochs(arrays, structs["EEG_MI_train"], settings.seed + 1000 * subject + session)
    if settings.layout in ("npy", "both"):
        for name, parts in arrays.items():
            np.save(root / f"{name}.npy", np.concatenate(parts))


def _add_epochs(arrays: dict[str, list[np.ndarray]], struct: dict[str, object], seed: int) -> None:
    """The challenge's preprocessing and within-subject split of one run (test part dropped)."""
    run = Run(np.asarray(struct["x"], np.float64), float(struct["fs"]), CHANNELS,  # type: ignore[arg-type]
              np.asarray(struct["t"]).reshape(-1).astype(np.int64),
              np.asarray(struct["y_dec"]).reshape(-1).astype(np.int64) - 1)
    x, y = epochs(run, Preprocessing(unit="uV"))
    parts = within_subject_split(y, np.zeros(len(y), int), seed)
    for part, key in (("train", "train"), ("valid", "val")):
        arrays[f"{key}_X"].append(x[parts[part]])
        arrays[f"{key}_y"].append(y[parts[part]])
