"""Reading and writing spike data sets in the Heidelberg (SHD/SSC) HDF5 layout.

The layout of Cramer et al. (2020), "The Heidelberg spiking data sets for the systematic
evaluation of spiking neural networks", IEEE TNNLS, https://doi.org/10.1109/TNNLS.2020.3044364::

    spikes/times            (N,) variable-length float16, seconds, sorted in each sample
    spikes/units            (N,) variable-length uint16, channel 0..699
    labels                  (N,) uint16 class index
    extra/speaker           (N,) uint16 speaker id
    extra/keys              (n_classes,) class names as bytes
    extra/meta_info/gender, age, body_height   per-speaker arrays (indexed by speaker id)

``read_shd_file`` loads a whole file into flat arrays (one concatenation, no per-sample
Python loop on the hot path) and checks it; every error names the file and the sample.
``read_header`` reads everything but the spikes (labels, speakers, class names), and
``iter_spike_chunks`` reads the spikes a few dozen samples at a time, in file order, as
flat arrays of the file's own dtypes (2 + 2 bytes per spike for SHD): one pass, memory
O(chunk), for data sets larger than memory.
``write_shd_file`` (:mod:`neuromark.data.hdf5_write`, re-exported here) writes the same
layout (readable by ``tonic.datasets.SHD``), atomically
and byte-for-byte deterministically.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neuromark.data.event_dtypes import make_spike_events
from neuromark.data.hdf5_write import SHD_CHANNELS, write_shd_file
from neuromark.errors import DataError


def sample_index(offsets: np.ndarray, flat_index: int | np.ndarray) -> Any:
    """The sample holding position ``flat_index`` of flat arrays split at ``offsets`` (N+1,)."""
    return np.searchsorted(offsets, flat_index, side="right") - 1


@dataclass
class SpikeSamples:
    """All samples of one spike file as flat arrays.

    Attributes:
        times: (S,) float64 spike times in seconds, all samples concatenated (float16 in SHD
            files, widened exactly).
        units: (S,) uint16 channel indices.
        offsets: (N+1,) int64; sample ``i`` is ``times[offsets[i]:offsets[i+1]]``.
        labels: (N,) int64 class indices.
        speakers: (N,) int64 speaker ids, or None when the file has none.
        keys: class names (``extra/keys``), possibly empty.
        meta_info: ``extra/meta_info`` arrays by name.
        channels: number of channels the units were checked against.
        path: the file read, or None.
    """

    times: np.ndarray
    units: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    speakers: np.ndarray | None = None
    keys: list[str] = field(default_factory=list)
    meta_info: dict[str, np.ndarray] = field(default_factory=dict)
    channels: int = SHD_CHANNELS
    path: Path | None = None

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def name(self) -> str:
        return str(self.path) if self.path else "<memory>"

    def spikes(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """(times in s, units) of sample ``index``."""
        start, stop = self.offsets[index], self.offsets[index + 1]
        return self.times[start:stop], self.units[start:stop]

    def events(self, index: int) -> np.ndarray:
        """Sample ``index`` as an :data:`~neuromark.data.event_dtypes.SPIKE_EVENT_DTYPE` array (t in µs)."""
        return make_spike_events(*self.spikes(index))

    def counts(self) -> np.ndarray:
        """(N,) number of spikes per sample."""
        return np.diff(self.offsets)

    def sample_of(self, flat_index: int | np.ndarray) -> Any:
        """The sample index holding the spike at position ``flat_index`` of the flat arrays."""
        return sample_index(self.offsets, flat_index)

    def subset(self, indices: ArrayLike) -> SpikeSamples:
        """A new SpikeSamples holding only ``indices`` (in that order)."""
        idx = np.asarray(indices, dtype=np.int64)
        counts = self.counts()[idx]
        offsets = np.zeros(idx.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        take = (np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx])
                if idx.size else np.zeros(0, dtype=np.int64))
        return replace(self, times=self.times[take], units=self.units[take], offsets=offsets,
                       labels=self.labels[idx],
                       speakers=None if self.speakers is None else self.speakers[idx],
                       keys=list(self.keys), meta_info=dict(self.meta_info))


def _decode(values: Any) -> list[str]:
    return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in np.asarray(values).ravel()]


def _read_dataset(handle: Any, key: str, path: Path) -> np.ndarray:
    """Read ``handle[key]`` fully; a missing or unreadable dataset names the file and sample."""
    if key not in handle:
        raise DataError(f"{path}: missing dataset {key!r}; not an SHD-layout file (expected "
                        "spikes/times, spikes/units, labels)")
    dataset = handle[key]
    try:
        return dataset[()]
    except (OSError, RuntimeError, ValueError, KeyError) as exc:
        # Find the first unreadable sample so that the message can name it.
        for i in range(dataset.shape[0] if dataset.shape else 0):
            try:
                dataset[i]
            except (OSError, RuntimeError, ValueError, KeyError):
                raise DataError(f"{path}: {key}: sample {i} is unreadable (corrupt or truncated "
                                f"file): {exc}") from exc
        raise DataError(f"{path}: {key}: unreadable (corrupt or truncated file): {exc}") from exc


def _flatten(times_obj: np.ndarray, units_obj: np.ndarray, name: str, *, first: int = 0,
             widen: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concatenate per-sample arrays (sample numbers in errors start at ``first``); times
    are widened to float64 unless ``widen`` is False (then kept in the file's dtype)."""
    if times_obj.ndim != 1 or units_obj.ndim != 1:
        raise DataError(f"{name}: spikes/times and spikes/units must be 1-D (one entry per "
                        f"sample), got shapes {times_obj.shape} and {units_obj.shape}")
    if times_obj.shape[0] != units_obj.shape[0]:
        raise DataError(f"{name}: spikes/times has {times_obj.shape[0]} samples but spikes/units "
                        f"has {units_obj.shape[0]}")
    n_times = np.fromiter((len(t) for t in times_obj), dtype=np.int64, count=times_obj.shape[0])
    n_units = np.fromiter((len(u) for u in units_obj), dtype=np.int64, count=units_obj.shape[0])
    bad = np.flatnonzero(n_times != n_units)
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{name}: sample {first + i}: spikes/times has {n_times[i]} entries but "
                        f"spikes/units has {n_units[i]} ({bad.size} sample(s) mismatched)")
    offsets = np.zeros(n_times.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_times, out=offsets[1:])
    if times_obj.shape[0]:
        times = np.concatenate(list(times_obj))
        units = np.concatenate(list(units_obj))
        if widen:
            times = times.astype(np.float64, copy=False)
    else:
        times = np.zeros(0, dtype=np.float64 if widen else np.float16)
        units = np.zeros(0, dtype=np.uint16)
    return times, units, offsets


def check_samples(samples: SpikeSamples) -> None:
    """Check units < channels, finite non-negative times, and label/speaker counts.

    Raises :class:`DataError` naming the file and the first offending sample.
    """
    name, n = samples.name, len(samples)
    if samples.offsets.shape[0] != n + 1:
        raise DataError(f"{name}: labels has {n} entries but spikes has "
                        f"{samples.offsets.shape[0] - 1} samples")
    if samples.speakers is not None and samples.speakers.shape[0] != n:
        raise DataError(f"{name}: extra/speaker has {samples.speakers.shape[0]} entries but "
                        f"labels has {n}")
    if samples.units.size:
        if not np.issubdtype(samples.units.dtype, np.integer):
            raise DataError(f"{name}: spikes/units must be integers, got {samples.units.dtype}")
        bad = np.flatnonzero((samples.units >= samples.channels) | (samples.units < 0))
        if bad.size:
            i = int(samples.sample_of(bad[0]))
            raise DataError(f"{name}: sample {i}: unit {int(samples.units[bad[0]])} is out of range "
                            f"0..{samples.channels - 1} ({bad.size} spike(s) out of range)")
    if samples.times.size:
        bad = np.flatnonzero(~np.isfinite(samples.times) | (samples.times < 0))
        if bad.size:
            i = int(samples.sample_of(bad[0]))
            raise DataError(f"{name}: sample {i}: spike time {float(samples.times[bad[0]])} s is negative "
                            "or not finite")
    if n and (samples.labels < 0).any():
        i = int(np.flatnonzero(samples.labels < 0)[0])
        raise DataError(f"{name}: sample {i}: negative label {int(samples.labels[i])}")


def integer_labels(labels: np.ndarray, name: str) -> np.ndarray:
    """``labels`` as int64 class indices; a float label (``2.5``, NaN) is a
    :class:`DataError` naming the file and sample rather than truncated."""
    if labels.dtype.kind in "iub":
        return labels.astype(np.int64)
    if labels.dtype.kind != "f":
        raise DataError(f"{name}: labels have dtype {labels.dtype}; expected integer class indices")
    bad = np.flatnonzero(~np.isfinite(labels) | (labels != np.round(labels)))
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{name}: sample {i}: label {float(labels[i])} is not an integer class index "
                        f"({bad.size} such label(s))")
    return labels.astype(np.int64)


def _read_all(handle: Any, file: Path) -> tuple[Any, Any, Any, Any, list[str], dict[str, np.ndarray]]:
    times_obj = _read_dataset(handle, "spikes/times", file)
    units_obj = _read_dataset(handle, "spikes/units", file)
    labels = _read_dataset(handle, "labels", file)
    speakers = _read_dataset(handle, "extra/speaker", file) if "extra/speaker" in handle else None
    keys = _decode(_read_dataset(handle, "extra/keys", file)) if "extra/keys" in handle else []
    meta: dict[str, np.ndarray] = {}
    if "extra/meta_info" in handle:
        for key in handle["extra/meta_info"]:
            meta[key] = _read_dataset(handle, f"extra/meta_info/{key}", file)
    return times_obj, units_obj, labels, speakers, keys, meta


def read_shd_file(path: str | os.PathLike[str], *, channels: int = SHD_CHANNELS) -> SpikeSamples:
    """Read and check a whole SHD-layout HDF5 file.

    Args:
        path: the ``.h5`` file (e.g. ``shd_train.h5``, ``ssc_valid.h5``, or our own corpus).
        channels: units must be below this (700 for SHD/SSC).

    Raises:
        DataError: not HDF5, truncated or corrupt, missing datasets, mismatched lengths,
            units >= channels, negative or non-finite times (naming the file and sample).
    """
    import h5py

    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    try:
        handle = h5py.File(file, "r")
    except OSError as exc:
        raise DataError(f"{file}: not a readable HDF5 file (corrupt or truncated?): {exc}") from exc
    try:
        with handle:
            times_obj, units_obj, labels, speakers, keys, meta = _read_all(handle, file)
    except DataError:
        raise
    except (OSError, RuntimeError, KeyError, ValueError, TypeError) as exc:
        raise DataError(f"{file}: corrupt HDF5 structure: {exc}") from exc
    times, units, offsets = _flatten(np.asarray(times_obj).reshape(-1), np.asarray(units_obj).reshape(-1),
                                     str(file))
    samples = SpikeSamples(
        times=times, units=units, offsets=offsets,
        labels=integer_labels(np.asarray(labels).reshape(-1), str(file)),
        speakers=None if speakers is None else np.asarray(speakers).reshape(-1).astype(np.int64),
        keys=keys, meta_info=meta, channels=channels, path=file)
    check_samples(samples)
    return samples


@dataclass
class SpikeHeader:
    """Everything of a spike file but its spikes (read without touching them).

    Attributes:
        labels: (N,) int64 class indices (checked: integers, non-negative).
        speakers: (N,) int64 speaker ids, or None.
        keys: class names; meta_info: ``extra/meta_info`` arrays by name.
        time_dtype: dtype of the stored spike times (float16 in SHD/SSC).
        channels: number of channels units are checked against; path: the file.
    """

    labels: np.ndarray
    speakers: np.ndarray | None
    keys: list[str]
    meta_info: dict[str, np.ndarray]
    time_dtype: np.dtype
    channels: int
    path: Path

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def _open(path: str | os.PathLike[str]) -> tuple[Any, Path]:
    import h5py

    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    try:
        return h5py.File(file, "r"), file
    except OSError as exc:
        raise DataError(f"{file}: not a readable HDF5 file (corrupt or truncated?): {exc}") from exc


def read_header(path: str | os.PathLike[str], *, channels: int = SHD_CHANNELS) -> SpikeHeader:
    """Labels, speakers, class names and the spike datasets' shapes of an SHD-layout file,
    checked (sample counts agree, labels are non-negative integers); the spikes are not read.

    Raises:
        DataError: missing datasets, mismatched sample counts, bad labels (naming the file).
    """
    handle, file = _open(path)
    try:
        with handle:
            for key in ("spikes/times", "spikes/units", "labels"):
                if key not in handle:
                    raise DataError(f"{file}: missing dataset {key!r}; not an SHD-layout file "
                                    "(expected spikes/times, spikes/units, labels)")
            times, units = handle["spikes/times"], handle["spikes/units"]
            labels = np.asarray(_read_dataset(handle, "labels", file)).reshape(-1)
            speakers = (np.asarray(_read_dataset(handle, "extra/speaker", file)).reshape(-1)
                        if "extra/speaker" in handle else None)
            keys = _decode(_read_dataset(handle, "extra/keys", file)) if "extra/keys" in handle else []
            meta = ({key: _read_dataset(handle, f"extra/meta_info/{key}", file)
                     for key in handle["extra/meta_info"]} if "extra/meta_info" in handle else {})
            shapes = (times.shape, units.shape)
            vlen = times.dtype.metadata.get("vlen") if times.dtype.metadata else None
    except DataError:
        raise
    except (OSError, RuntimeError, KeyError, ValueError, TypeError) as exc:
        raise DataError(f"{file}: corrupt HDF5 structure: {exc}") from exc
    if len(shapes[0]) != 1 or len(shapes[1]) != 1 or vlen is None:
        raise DataError(f"{file}: spikes/times and spikes/units must be 1-D variable-length "
                        f"datasets (one entry per sample), got shapes {shapes[0]} and {shapes[1]}")
    if shapes[0][0] != shapes[1][0]:
        raise DataError(f"{file}: spikes/times has {shapes[0][0]} samples but spikes/units "
                        f"has {shapes[1][0]}")
    n = labels.shape[0]
    if shapes[0][0] != n:
        raise DataError(f"{file}: labels has {n} entries but spikes has {shapes[0][0]} samples")
    if speakers is not None and speakers.shape[0] != n:
        raise DataError(f"{file}: extra/speaker has {speakers.shape[0]} entries but labels has {n}")
    labels = integer_labels(labels, str(file))
    if n and (labels < 0).any():
        i = int(np.flatnonzero(labels < 0)[0])
        raise DataError(f"{file}: sample {i}: negative label {int(labels[i])}")
    return SpikeHeader(labels=labels, speakers=None if speakers is None else speakers.astype(np.int64),
                       keys=keys, meta_info=meta, time_dtype=np.dtype(vlen), channels=channels,
                       path=file)


#: Samples read from the file at once by :func:`iter_spike_chunks`: 64 SHD samples are
#: ~1.3 MB of spikes; h5py's variable-length read needs several times that while it runs.
CHUNK_SAMPLES = 64


def iter_spike_chunks(path: str | os.PathLike[str], *, chunk_samples: int = CHUNK_SAMPLES,
                      start: int = 0, stop: int | None = None
                      ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Read the spikes of samples ``start:stop`` in chunks of ``chunk_samples``, in file order.

    Yields ``(first, times, units, offsets)`` per chunk: ``first`` the index of its first
    sample, ``times`` (S,) in the file's dtype (float16 seconds for SHD), ``units`` (S,) as
    stored, ``offsets`` (n+1,) int64 sample boundaries. Only the chunk is in memory; units and
    times are checked by the binning kernel, lengths here (errors name the file and sample).
    """
    if chunk_samples < 1:
        raise ValueError(f"chunk_samples must be >= 1, got {chunk_samples}")
    from neuromark.data.hdf5_vlen import VlenPairReader

    handle, file = _open(path)
    with handle:
        times_ds, units_ds = handle["spikes/times"], handle["spikes/units"]
        end = times_ds.shape[0] if stop is None else min(stop, times_ds.shape[0])
        raw = VlenPairReader.open(handle, file)  # None: h5py reads every chunk
        try:
            for first in range(start, end, chunk_samples):
                last = min(end, first + chunk_samples)
                got = raw.read(first, last) if raw is not None else None
                yield (first, *got) if got is not None else _read_chunk(times_ds, units_ds, file,
                                                                         first, last)
        finally:
            if raw is not None:
                raw.close()


def _read_chunk(times_ds: Any, units_ds: Any, file: Path, first: int, last: int
                ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Samples ``first:last`` read by h5py (see :func:`iter_spike_chunks`)."""
    try:
        times_obj, units_obj = times_ds[first:last], units_ds[first:last]
    except (OSError, RuntimeError, ValueError, KeyError) as exc:
        raise DataError(f"{file}: samples {first}..{last - 1} are unreadable (corrupt or "
                        f"truncated file): {exc}") from exc
    times, units, offsets = _flatten(times_obj, units_obj, str(file), first=first, widen=False)
    return first, times, units, offsets


__all__ = ["CHUNK_SAMPLES", "SHD_CHANNELS", "SpikeHeader", "SpikeSamples", "check_samples",
           "integer_labels", "iter_spike_chunks", "read_header", "read_shd_file", "sample_index",
           "write_shd_file"]
