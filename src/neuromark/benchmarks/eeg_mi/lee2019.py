"""Lee et al. (2019) / OpenBMI motor imagery ``.mat`` files and the ThorEEGMI preprocessing.

Layout (GigaDB 100542, as MOABB's ``Lee2019_MI`` fetches it): ``session{S}/s{N}/
sess{SS}_subj{NN}_EEG_MI.mat``; a flat folder of those files is read too. Each holds the
structs ``EEG_MI_train`` (offline phase, 100 labelled trials) and ``EEG_MI_test`` (online
phase), with fields ``x`` (samples, 62) µV, ``fs`` (Hz), ``chan`` (62 names), ``t`` (trial
onsets in samples; used as 0-based indices, as MOABB does), ``y_dec`` (1 = right hand,
2 = left hand), ``class``, ``EMG``, ... The files are MATLAB v5/v7 (MOABB reads them with
``scipy.io.loadmat``); a v7.3 (HDF5) file is refused naming it.

ThorEEGMI preprocessing (``research/wave4-tasks.md`` §C; no script is public): band-pass
8-30 Hz, resample to 100 Hz, epoch 1.0-3.5 s after the onset -> (250, 62). UNVERIFIED
there, so options here: the filter (``butter``: Butterworth of ``order``, zero-phase
``sosfiltfilt``, as MNE's ``filter(method="iir")`` that MOABB's paradigms call, the
default; or ``fir``: ``firwin`` of ``order + 1`` taps, zero-phase), the unit (the file's
``uV``, the default, or ``V`` as MOABB scales; the challenge arrays' unit is UNVERIFIED).
The resampler is ``scipy.signal.resample_poly`` on the filtered continuous signal.
Labels: 0 = right, 1 = left (the challenge's, ``y_dec - 1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.errors import DataError

FIELDS = ("x", "fs", "chan", "t", "y_dec")
RUNS = {"train": "EEG_MI_train", "test": "EEG_MI_test"}
FILE = re.compile(r"sess(\d{2})_subj(\d{2})_EEG_MI\.mat")


def mat_name(session: int, subject: int) -> str:
    return f"sess{session:02d}_subj{subject:02d}_EEG_MI.mat"


def find_files(root: Path) -> dict[tuple[int, int], Path]:
    """``{(subject, session): path}`` of the ``.mat`` files below ``root`` (GigaDB's
    ``session{S}/s{N}/`` folders or flat)."""
    found: dict[tuple[int, int], Path] = {}
    for path in sorted(root.rglob("sess*_subj*_EEG_MI.mat")):
        match = FILE.fullmatch(path.name)
        if match:
            found[(int(match.group(2)), int(match.group(1)))] = path
    return found


@dataclass
class Run:
    """One struct of a file: x (samples, channels) float64 µV, fs Hz, channel names, onsets
    (trials,) sample indices, labels (trials,) 0 = right, 1 = left."""

    x: np.ndarray
    fs: float
    chan: list[str]
    onsets: np.ndarray
    labels: np.ndarray


def _struct(path: Path, name: str) -> Any:
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    try:
        mat = loadmat(path, variable_names=[name])
    except NotImplementedError:  # scipy: "Please use HDF reader for matlab v7.3 files"
        raise DataError(f"{path}: a MATLAB v7.3 (HDF5) file; Lee2019 files are MATLAB v5/v7 "
                        "(scipy.io.loadmat): re-save it with -v7") from None
    except (MatReadError, ValueError, OSError, TypeError, EOFError) as exc:
        raise DataError(f"{path}: not a readable MATLAB file (corrupt or truncated?): {exc}") from None
    if name not in mat:
        raise DataError(f"{path}: no struct {name} (expected EEG_MI_train and EEG_MI_test)")
    struct = mat[name]
    if struct.dtype.names is None or struct.size != 1:
        raise DataError(f"{path}: {name} is not a 1x1 struct")
    return struct.reshape(-1)[0]


def read_run(path: Path, run: Literal["train", "test"] = "train") -> Run:
    """One run of a Lee2019 MI file, checked (fields, shapes, finite, onsets in range, labels)."""
    name = RUNS[run]
    struct = _struct(path, name)
    missing = [f for f in FIELDS if f not in struct.dtype.names]
    if missing:
        raise DataError(f"{path}: {name} has no field {', '.join(missing)} (needs {', '.join(FIELDS)})")
    where = f"{path}: {name}"
    x = np.asarray(struct["x"])
    if x.ndim != 2 or not np.issubdtype(x.dtype, np.number) or x.shape[0] < x.shape[1]:
        raise DataError(f"{where}.x: expected (samples, channels) numbers, got {x.shape} {x.dtype}")
    fs = np.asarray(struct["fs"], dtype=float).reshape(-1)
    if fs.size != 1 or not np.isfinite(fs[0]) or fs[0] <= 0:
        raise DataError(f"{where}.fs: expected one sampling rate > 0 Hz, got {fs.tolist()}")
    chan = [str(np.asarray(c).reshape(-1)[0]) if np.asarray(c).size else "" for c in
            np.asarray(struct["chan"], dtype=object).reshape(-1)]
    if len(chan) != x.shape[1]:
        raise DataError(f"{where}.chan: {len(chan)} names for {x.shape[1]} channels of x")
    onsets = np.asarray(struct["t"]).reshape(-1)
    labels = np.asarray(struct["y_dec"]).reshape(-1)
    if onsets.shape != labels.shape:
        raise DataError(f"{where}: t has {onsets.size} onsets, y_dec {labels.size} labels")
    if onsets.size == 0:
        raise DataError(f"{where}: no trials (t and y_dec are empty); a motor-imagery run needs "
                        "at least one cue onset")
    if not np.issubdtype(onsets.dtype, np.number) or (onsets != np.round(onsets)).any() or \
            (onsets < 0).any() or (onsets >= len(x)).any():
        raise DataError(f"{where}.t: onsets must be whole sample indices in 0..{len(x) - 1}")
    bad = np.flatnonzero(~np.isin(labels, (1, 2)))
    if bad.size:
        raise DataError(f"{where}.y_dec: trial {int(bad[0])}: label {labels[bad[0]].item():g} (expected 1 = "
                        "right, 2 = left)")
    finite = np.isfinite(x).all(1)
    if not finite.all():
        raise DataError(f"{where}.x: sample {int(np.flatnonzero(~finite)[0])} holds NaN or infinity")
    return Run(x.astype(np.float64), float(fs[0]), chan, onsets.astype(np.int64), labels.astype(np.int64) - 1)


@dataclass(frozen=True)
class Preprocessing:
    """ThorEEGMI's documented steps, with the undocumented choices as options."""

    band_hz: tuple[float, float] = (8.0, 30.0)
    filter: Literal["butter", "fir"] = "butter"
    order: int = 4
    fs_out: float = 100.0
    window_s: tuple[float, float] = (1.0, 3.5)
    unit: Literal["V", "uV"] = "uV"

    @property
    def steps(self) -> int:
        return int(round((self.window_s[1] - self.window_s[0]) * self.fs_out))


def band_pass(x: np.ndarray, fs: float, p: Preprocessing) -> np.ndarray:
    """(samples, channels) band-passed along time, zero-phase (scipy.signal)."""
    from scipy import signal

    low, high = p.band_hz
    if not 0 < low < high < fs / 2:
        raise DataError(f"band {p.band_hz} Hz does not fit below Nyquist ({fs / 2} Hz)")
    if p.filter == "butter":
        sos = signal.butter(p.order, (low, high), btype="bandpass", fs=fs, output="sos")
        return signal.sosfiltfilt(sos, x, axis=0)
    taps = signal.firwin(p.order + 1, (low, high), pass_zero=False, fs=fs)
    return signal.filtfilt(taps, [1.0], x, axis=0)


def epochs(run: Run, p: Preprocessing) -> tuple[np.ndarray, np.ndarray]:
    """(trials, steps, channels) float32 and labels (trials,): filtered, resampled,
    windowed. A window past the recording's end is a :class:`DataError`."""
    from scipy import signal

    ratio = Fraction(p.fs_out / run.fs).limit_denominator(1000)
    filtered = band_pass(run.x, run.fs, p)
    resampled = signal.resample_poly(filtered, ratio.numerator, ratio.denominator, axis=0)
    starts = np.round(run.onsets * p.fs_out / run.fs + p.window_s[0] * p.fs_out).astype(np.int64)
    if (starts + p.steps > len(resampled)).any():
        i = int(np.flatnonzero(starts + p.steps > len(resampled))[0])
        raise DataError(f"trial {i}: window {p.window_s} s after onset {run.onsets[i]} runs past the "
                        f"recording ({len(run.x)} samples)")
    if len(starts) == 0:
        raise DataError("no trials (no cue onset in t)")
    out = np.stack([resampled[s:s + p.steps] for s in starts])
    scale = 1e-6 if p.unit == "V" else 1.0
    return (out * scale).astype(np.float32), run.labels
