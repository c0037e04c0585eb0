"""Primate reaching (O'Doherty, Cardoso, Makin & Sabes, Zenodo record 583331, v1): the
NeuroBench motor-prediction data, read from the MATLAB v7.3 (HDF5) session files.

File layout (h5py's view of MATLAB's column-major arrays: a MATLAB k x n array is (n, k)):

- ``t`` (1, K): sample times in s at 250 Hz; ``cursor_pos``, ``target_pos`` (2, K) in mm;
- ``spikes`` (u, n): object references (cell array, u <= 5 units per channel, unit 0 the
  unsorted "hash" unit), each to a (1, m) float64 array of spike times in s; an empty cell
  is a ``uint64`` array ``[0, 0]`` with the attribute ``MATLAB_empty`` (not two spikes at 0 s);
- ``chan_names``, ``wf``, ``finger_pos``: not read.

Input contract (:func:`read_session`, before any binning): at least one unit and channel,
``t`` finite and 4-ms spaced, ``cursor_pos``/``target_pos`` finite at every sample (a NaN
cursor names the sample), finite spike times, and at least one spike in the session.
``on_invalid="drop"`` drops instead: non-finite spike times, and the samples whose cursor
or target is not finite together with those whose velocity label (a central difference)
reaches such a cursor; reaches are cut around them (the split by reach is unchanged: a
dropped target keeps the reach of the sample before it), and :attr:`PrimateReaching.invalid_records`
counts them per rule.

Preprocessing (NeuroBench 2.3.0 ``PrimateReaching``, with its bugs fixed, see
docs/primate_reaching.md): on the 4-ms grid ``E_j = t[0] - bin_width + 0.004 j`` (integer j,
never a float ``arange``), each spike falls into sub-bin ``j = floor((s - E_0) / 0.004)``
and is stored one place later (the bin *ending* after it); occupancy is binary and OR-ed
over the units of a channel (hash unit included); for ``bin_width > 4 ms`` a causal sum of
``w = bin_width / 4 ms`` sub-bins gives one value per ``t`` sample. Sample k thus holds the
occupied 4-ms bins of ``[t[k-1] - bin_width, t[k-1])``. Label = central difference of
``cursor_pos`` per 4-ms step (mm/step, ``np.gradient``). Reaches are the segments between
changes of ``target_pos``; the split is chronological by reach: ``floor(r n)`` train, then
half of the rest validation, the remainder test.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.primate_reaching.contract import carried, cut_segments, split_counts
from neuromark.benchmarks.primate_reaching.encoder_cost import window_counts_cost
from neuromark.data.download import fetch, verify_file
from neuromark.errors import ConfigError, DataError

#: Session name -> md5 published with NeuroBench's loader (Zenodo record 583331, version 1).
FILES = {
    "indy_20160622_01": "c33d5fff31320d709d23fe445561fb6e",
    "indy_20160630_01": "197413a5339630ea926cbd22b8b43338",
    "indy_20170131_02": "2790b1c869564afaa7772dbf9e42d784",
    "loco_20170210_03": "4cae63b58c4cb9c8abd44929216c703b",
    "loco_20170215_02": "739b70762d838f3a1f358733c426bb02",
    "loco_20170301_05": "47342da09f9c950050c9213c3df38ea3",
}
SESSIONS = tuple(FILES)
URL = "https://zenodo.org/record/583331/files/{name}.mat"
STEP_S = 0.004  #: the 250-Hz sample period
SPLITS = ("train", "val", "test")
CITATION = """@misc{odoherty2017nonhuman,
  title={Nonhuman Primate Reaching with Multichannel Sensorimotor Cortex Electrophysiology},
  author={O'Doherty, Joseph E. and Cardoso, Mariana M. B. and Makin, Joseph G. and Sabes, Philip N.},
  publisher={Zenodo}, year={2017}, doi={10.5281/zenodo.583331}}"""


@dataclass(frozen=True)
class Session:
    """One recording as read from its file.

    Attributes:
        t: (K,) sample times in s; cursor, target: (K, 2) positions in mm.
        spikes: per channel, per unit, the spike times in s (empty arrays for empty cells).
    """

    t: np.ndarray
    cursor: np.ndarray
    target: np.ndarray
    spikes: list[list[np.ndarray]]
    #: (K,) int8 why each sample is dropped (0: kept; else 1 + an index into
    #: :data:`~neuromark.benchmarks.primate_reaching.contract.SAMPLE_RULES`), None when every sample is
    #: kept; the number of spike times dropped (``on_invalid="drop"``).
    dropped: np.ndarray | None = None
    dropped_spikes: int = 0

    @property
    def channels(self) -> int:
        return len(self.spikes)


def _field(f: Any, name: str, path: Path) -> np.ndarray:
    if name not in f:
        raise DataError(f"{path}: no field {name!r} (a NeuroBench primate-reaching .mat file "
                        "holds t, cursor_pos, target_pos and spikes)")
    return np.asarray(f[name][()])


def _cell(f: Any, ref: Any, path: Path, where: str, drop: list[int] | None = None) -> np.ndarray:
    """Spike times of one cell (float64, seconds); an empty cell gives an empty array.
    ``drop``: non-finite times are dropped and counted in ``drop[0]`` instead of refused."""
    if not ref:
        raise DataError(f"{path}: spikes{where} holds a null reference")
    data = f[ref]
    if "MATLAB_empty" in data.attrs and int(np.asarray(data.attrs["MATLAB_empty"]).ravel()[0]):
        return np.empty(0)
    times = np.asarray(data[()], dtype=np.float64).ravel()
    finite = np.isfinite(times)
    if not finite.all():
        if drop is None:
            raise DataError(f"{path}: spikes{where}: finite spike times: spike {int(np.argmin(finite))} "
                            f"is {times[np.argmin(finite)]} ({int((~finite).sum())} in all; "
                            "on_invalid: drop drops and counts them)")
        drop[0] += int((~finite).sum())
        return times[finite]
    return times


def read_session(path: str | os.PathLike[str], on_invalid: str = "error") -> Session:
    """Read one MATLAB v7.3 session file (h5py; object references dereferenced), checked
    against the input contract (module notes; ``on_invalid="drop"`` drops and counts)."""
    import h5py

    if on_invalid not in ("error", "drop"):
        raise ConfigError(f"on_invalid must be 'error' or 'drop', got {on_invalid!r}")
    drop = [0] if on_invalid == "drop" else None
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        with h5py.File(path, "r") as f:
            t = _field(f, "t", path).astype(np.float64).ravel()
            cursor = _field(f, "cursor_pos", path).astype(np.float64)
            target = _field(f, "target_pos", path).astype(np.float64)
            refs = _field(f, "spikes", path)
            if refs.dtype != object or refs.ndim != 2 or 0 in refs.shape:
                raise DataError(f"{path}: 'spikes' must be a (units, channels) array of object "
                                f"references with at least one unit and channel, got "
                                f"{refs.dtype} {refs.shape}")
            spikes = [[_cell(f, refs[u, c], path, f"[unit {u}, channel {c}]", drop)
                       for u in range(refs.shape[0])] for c in range(refs.shape[1])]
    except OSError as exc:
        raise DataError(f"{path}: not a readable MATLAB v7.3 (HDF5) file: {exc}") from None
    for name, arr in (("cursor_pos", cursor), ("target_pos", target)):
        if arr.shape != (2, t.size):
            raise DataError(f"{path}: {name} has shape {arr.shape}, expected (2, {t.size}) to match t")
    if t.size < 3 or not np.isfinite(t).all():
        raise DataError(f"{path}: t must hold at least 3 finite sample times, got {t.size}")
    why = np.zeros(t.size, np.int8)
    for rule, (name, arr) in enumerate((("cursor_pos", cursor), ("target_pos", target)), 1):
        bad = np.flatnonzero(~np.isfinite(arr).all(axis=0))
        if bad.size and drop is None:
            raise DataError(f"{path}: session {path.stem!r}: {name} is not finite at sample "
                            f"{int(bad[0])} (t = {t[bad[0]]:.3f} s; {bad.size} sample(s) in all; "
                            "on_invalid: drop drops and counts them)")
        why[bad[why[bad] == 0]] = rule
    if why.any():  # drop: a velocity that reaches a dropped cursor goes too
        why[(why == 0) & ~np.isfinite(np.gradient(cursor, axis=1)).all(axis=0)] = 3
        target = carried(target, why == 2)
    if not any(cell.size for channel in spikes for cell in channel):
        raise DataError(f"{path}: session {path.stem!r}: every spike cell is empty (no spike in "
                        f"any of {len(spikes)} channels); a decoder cannot be fit on it")
    step = float(np.median(np.diff(t)))
    if abs(step - STEP_S) > 1e-3 * STEP_S:
        raise DataError(f"{path}: t is sampled every {step * 1e3:.4f} ms; the benchmark's grid "
                        "assumes 4 ms (250 Hz)")
    return Session(t, cursor.T.copy(), target.T.copy(), spikes, why if why.any() else None,
                   drop[0] if drop else 0)


def sub_bins(bin_width: float) -> int:
    """``bin_width / 4 ms`` as an integer (a bin width that is not a multiple raises)."""
    w = round(bin_width / STEP_S)
    if w < 1 or not math.isclose(w * STEP_S, bin_width, rel_tol=1e-9):
        raise ConfigError(f"bin_width={bin_width}: must be a positive multiple of 0.004 s")
    return w


def bin_session(session: Session, bin_width: float = STEP_S) -> np.ndarray:
    """Binned input (K, C) uint8: sample k counts the occupied 4-ms bins (any unit of the
    channel) of ``[t[k-1] - bin_width, t[k-1])`` (see the module docstring)."""
    w = sub_bins(bin_width)
    k = session.t.size
    n_edges = k - 1 + w  # E_0 .. E_{n-1}; histogram bins j = 0 .. n-2
    origin = session.t[0] - w * STEP_S
    occupied = np.zeros((n_edges, session.channels), dtype=bool)
    for c, units in enumerate(session.spikes):
        times = np.concatenate(units) if units else np.empty(0)
        j = np.floor((times - origin) / STEP_S).astype(np.int64)
        j = j[(j >= 0) & (j <= n_edges - 2)]
        occupied[j + 1, c] = True  # the bin ending after the spike
    counts = np.cumsum(occupied, axis=0, dtype=np.int32)
    window = counts[w - 1:].copy()
    window[1:] -= counts[:n_edges - w]
    return window.astype(np.uint8)


def velocity(cursor: np.ndarray) -> np.ndarray:
    """(K, 2) cursor velocity in mm per 4-ms step: central differences, one-sided at the ends."""
    return np.gradient(cursor, axis=0).astype(np.float32)


def reach_segments(target: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` index ranges between changes of ``target`` (K, 2), as NeuroBench
    cuts them: a boundary at each i with ``target[i+1] != target[i]`` (empty ranges dropped)."""
    change = np.flatnonzero(np.any(np.diff(target, axis=0) != 0, axis=1))
    bounds = [0, *change.tolist(), len(target)]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def split_segments(n: int, train_ratio: float) -> dict[str, slice]:
    """Which of ``n`` chronological reaches fall in each split (slices of the reach list)."""
    if not 0 < train_ratio < 1:
        raise ConfigError(f"train_ratio={train_ratio}: must lie in (0, 1)")
    n_train = math.floor(train_ratio * n)
    n_val = (n - n_train) // 2
    return {"train": slice(0, n_train), "val": slice(n_train, n_train + n_val),
            "test": slice(n_train + n_val, n)}


@functools.lru_cache(maxsize=2)
def _binned(path: str, mtime_ns: int, size: int, bin_width: float, on_invalid: str = "error"
            ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], Session]:
    """(inputs (K, C), labels (K, 2), reaches, the session without its arrays' copies) of a
    file, kept for the splits of the same session (keyed by path, modification time, size
    and the contract's mode; read-only arrays)."""
    del mtime_ns, size  # part of the key only
    rec = read_session(path, on_invalid)
    x, y = bin_session(rec, bin_width), velocity(rec.cursor)
    x.flags.writeable = y.flags.writeable = False
    return x, y, reach_segments(rec.target), rec


class PrimateReaching:
    """One session's split: sample i is ``(x, y)``, x (num_steps, C) float32 (oldest step
    first; steps before the recording are zeros), y (2,) float32 cursor velocity (mm/step).

    Args:
        root: folder holding ``<session>.mat``.
        session: one of :data:`SESSIONS` (any other name is read from ``root`` as well, for
            user files in the same layout).
        split: "train", "val" or "test".
        bin_width: input window in s (a multiple of 4 ms); num_steps: steps per sample.
        train_ratio: fraction of reaches in the training split (NeuroBench's examples: 0.5).
        on_invalid: ``"error"`` (default) refuses a session that breaks the input contract;
            ``"drop"`` drops the invalid samples and spike times (module notes), counted in
            :attr:`invalid_records`.
    """

    citation = CITATION

    def __init__(self, root: str | os.PathLike[str], session: str, split: str = "test", *,
                 bin_width: float = STEP_S, num_steps: int = 1, train_ratio: float = 0.5,
                 on_invalid: str = "error") -> None:
        if on_invalid not in ("error", "drop"):
            raise ConfigError(f"PrimateReaching: on_invalid must be 'error' or 'drop', got {on_invalid!r}")
        if split not in SPLITS:
            raise ConfigError(f"PrimateReaching: unknown split {split!r} (one of {', '.join(SPLITS)})")
        if num_steps < 1:
            raise ConfigError(f"PrimateReaching: num_steps={num_steps} must be >= 1")
        sub_bins(bin_width)
        split_segments(2, train_ratio)
        self.root, self.session, self.split = Path(root), session, split
        self.bin_width, self.num_steps, self.train_ratio = bin_width, num_steps, train_ratio
        self.on_invalid = on_invalid
        self._invalid: dict[str, int] = {}
        self.path = self.root / f"{session}.mat"
        self._loaded: tuple[np.ndarray, np.ndarray, list[tuple[int, int]]] | None = None
        self._spikes_per_step: float | None = None
        self._indices: np.ndarray | None = None

    # -- data --------------------------------------------------------------------------
    def _load(self) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
        if self._loaded is None:
            if not self.path.is_file():
                raise DataError(f"{self.path}: no such file")
            stat = self.path.stat()
            x, y, segments, rec = _binned(str(self.path.resolve()), stat.st_mtime_ns, stat.st_size,
                                          self.bin_width, self.on_invalid)
            reaches = segments[split_segments(len(segments), self.train_ratio)[self.split]]
            chosen = cut_segments(reaches, rec.dropped)
            self._invalid = split_counts(reaches, rec.dropped, rec.dropped_spikes)
            self._spikes_per_step = sum(u.size for units in rec.spikes for u in units) / max(1, len(x))
            if not chosen:
                raise DataError(f"{self.path}: the {self.split} split holds no reach "
                                f"({len(segments)} reaches, train_ratio={self.train_ratio})")
            self._loaded = (x, y, chosen)
        return self._loaded

    @property
    def invalid_records(self) -> dict[str, int]:
        """Records dropped per rule (``on_invalid="drop"``): samples of this split, spike
        times of the whole session; ``{}`` when none."""
        self._load()
        return dict(self._invalid)

    @property
    def segments(self) -> list[tuple[int, int]]:
        """This split's reaches as ``[start, stop)`` sample ranges of the recording."""
        return self._load()[2]

    @property
    def indices(self) -> np.ndarray:
        """Recording sample index of each sample of this split, chronological."""
        if self._indices is None:
            self._indices = np.concatenate([np.arange(a, b) for a, b in self.segments])
        return self._indices

    @property
    def channels(self) -> int:
        return int(self._load()[0].shape[1])

    @property
    def input_shape(self) -> tuple[int, int]:
        return (self.num_steps, self.channels)

    def front_end_cost(self) -> Any:
        """The input binning's cost per step (issue 47.4;
        :func:`~.encoder_cost.window_counts_cost`), with the recording's
        spikes per step."""
        self._load()
        return window_counts_cost(self.channels, sub_bins(self.bin_width), self._spikes_per_step)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(inputs (K, C) float32 for the whole recording, labels (N, 2) of this split)."""
        x, y, _ = self._load()
        return x.astype(np.float32), y[self.indices]

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        import torch

        x, y, _ = self._load()
        idx = self.indices
        if not -len(idx) <= i < len(idx):
            raise IndexError(f"sample {i} out of range for {len(idx)} samples")
        k = int(idx[i])
        ratio = sub_bins(self.bin_width)
        rows = k - ratio * np.arange(self.num_steps)[::-1]
        out = np.zeros((self.num_steps, x.shape[1]), dtype=np.float32)
        keep = rows >= 0  # NeuroBench wraps negative rows to the recording's end
        out[keep] = x[rows[keep]]
        return torch.from_numpy(out), torch.from_numpy(y[k].copy())

    def stream(self, chunk: int = 250) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
        """The split as ONE stream in chunks: ``(x (1, L, C), y (1, L, 2), {"new_stream"})``
        with L = ``chunk`` (the last chunk shorter); ``new_stream`` is True on the first.
        Needs ``num_steps == 1`` (a streaming model keeps its own history)."""
        import torch

        if self.num_steps != 1:
            raise ConfigError(f"stream(): num_steps={self.num_steps}; a stream feeds one step per sample")
        if chunk < 1:
            raise ConfigError(f"stream(): chunk={chunk} must be >= 1")
        x, y, _ = self._load()
        idx = self.indices
        for start in range(0, len(idx), chunk):
            rows = idx[start:start + chunk]
            yield (torch.from_numpy(x[rows].astype(np.float32))[None],
                   torch.from_numpy(y[rows].copy())[None], {"new_stream": start == 0})

    def loader(self, batch_size: int, *, shuffle: bool = False, seed: int = 0,
               drop_last: bool = False) -> Any:
        """A torch DataLoader of ``(B, num_steps, C)`` samples; the test split never shuffles
        (the decoders keep state from one sample to the next)."""
        import torch

        if shuffle and self.split == "test":
            raise ConfigError("PrimateReaching: the test split is never shuffled")
        gen = torch.Generator().manual_seed(seed)
        return torch.utils.data.DataLoader(self, batch_size=batch_size, shuffle=shuffle,
                                           generator=gen, drop_last=drop_last)

    # -- files ---------------------------------------------------------------------------
    def download(self) -> Path:
        """Fetch ``<session>.mat`` from Zenodo into ``root`` (md5-verified); never called by tests."""
        md5 = self._md5()
        return fetch(URL.format(name=self.session), self.root, md5=md5)

    def verify(self) -> None:
        """Check the file's md5 against the published one."""
        verify_file(self.path, md5=self._md5())

    def _md5(self) -> str:
        if self.session not in FILES:
            raise ConfigError(f"{self.session!r} is not a published session (one of {', '.join(SESSIONS)})")
        return FILES[self.session]


def primate_reaching(split: str = "test", *, root: str = "data/primate_reaching",
                     session: str = SESSIONS[0], bin_width: float = STEP_S, num_steps: int = 1,
                     train_ratio: float = 0.5, on_invalid: str = "error") -> PrimateReaching:
    """Registry entry: one session's split (see :class:`PrimateReaching`)."""
    return PrimateReaching(root, session, split, bin_width=bin_width, num_steps=num_steps,
                           train_ratio=train_ratio, on_invalid=on_invalid)
