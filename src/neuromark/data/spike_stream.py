"""Streaming batches of binned spikes from an SHD-layout file: memory O(batch), not O(file).

:class:`SpikeBatches` reads the file in chunks of samples (one pass per epoch,
:func:`~neuromark.data.hdf5_spikes.iter_spike_chunks`) and bins each batch with a compiled
kernel straight from the flat arrays into ``(B, T, channels // pool)`` float32 counts: no
per-sample Python objects, no whole-split array. The counts equal those of binning the
whole file at once (a spike-file data set's ``dense()``; binning convention of
:mod:`neuromark.data.binning`: ``T = ceil(t_max_us / dt_us)``, a spike at exactly
``t_max_us`` in the last bin, times floored to microseconds).

Spikes after ``t_max_us`` (rule): ``late="error"`` (default, as ``dense()``) raises
:class:`~neuromark.errors.DataError` naming the file, the sample, the time and the number of
such spikes in that batch; ``late="drop"`` leaves them out and counts them in
:attr:`SpikeBatches.dropped` (the classification task records and prints the count).

With ``shuffle=True`` (training) the order is a seeded permutation, redrawn each epoch from
``np.random.default_rng(seed)``; the file's spikes are then held in memory once, compactly in
their stored dtypes (4 bytes per SHD spike: float16 time + uint16 unit), since a random order
cannot be read in one pass. Without shuffling nothing but the current chunk is held.

With ``pin_memory=True`` (the target is a CUDA device) each batch is binned straight into
page-locked memory, so the runner's ``non_blocking`` copy to the GPU is asynchronous.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from neuromark._numba import numba
from neuromark.data.binning import check_binning, jitter_units, n_bins
from neuromark.data.event_dtypes import seconds_to_us
from neuromark.data.hdf5_spikes import CHUNK_SAMPLES, SpikeHeader, iter_spike_chunks, sample_index
from neuromark.errors import ConfigError, DataError

#: Marks a float16 pattern that is not a finite number in :func:`float16_us_table`.
_NOT_FINITE = np.iinfo(np.int64).min
#: Kernel status codes.
_OK, _BAD_TIME, _BAD_UNIT, _LATE = 0, 1, 2, 3


@lru_cache(maxsize=1)
def float16_us_table() -> np.ndarray:
    """(65536,) int64: microseconds of every float16 bit pattern, floored as
    :func:`~neuromark.data.event_dtypes.seconds_to_us` does (non-finite patterns: int64 min)."""
    values = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = np.isfinite(values)
    table = np.full(values.shape, _NOT_FINITE, dtype=np.int64)
    table[finite] = seconds_to_us(values[finite])
    return table


@lru_cache(maxsize=8)
def float16_bin_table(dt_us: int, t_max_us: int, steps: int) -> np.ndarray:
    """(65536,) int32: the bin of every float16 bit pattern (:func:`float16_us_table`,
    floored to ``dt_us`` bins, the last bin holding ``t_max_us``), -1 for a negative or
    non-finite time, -2 for a time after ``t_max_us``: the kernel then divides nothing."""
    us = float16_us_table()
    bins = np.minimum(np.maximum(us, 0) // dt_us, steps - 1)
    return np.where(us < 0, -1, np.where(us > t_max_us, -2, bins)).astype(np.int32)


@numba.njit(cache=True, nogil=True)
def _bin_kernel(codes, table, units, offsets, dt_us, t_max_us, channels, pool, drop_late,
                out):  # pragma: no cover - compiled
    """Write the counts of samples ``offsets`` into ``out`` (B, T, channels // pool): each
    sample's row is zeroed just before its spikes are added, while it is in cache (zeroing
    the whole batch first left it in memory: ~16 ns per spike instead of ~4).

    ``codes`` are float16 bit patterns looked up in ``table`` (when it is not empty: their
    bins, :func:`float16_bin_table`) or int64 microseconds. Returns (status, flat index of
    the first bad spike, late spikes); the checks run in the same order either way (time,
    unit, late)."""
    steps = out.shape[1]
    late = 0
    first_late = -1
    looked_up = table.shape[0] > 0
    for b in range(offsets.shape[0] - 1):
        row = out[b]
        row[:] = 0.0
        for i in range(offsets[b], offsets[b + 1]):
            u = np.int64(units[i])
            if looked_up:
                k = np.int64(table[codes[i]])
                if k >= 0 and 0 <= u < channels:  # the common case: one lookup, one add
                    row[min(k, steps - 1), u if pool == 1 else u // pool] += 1.0
                    continue
                t = np.int64(0) if k >= 0 else (np.int64(-1) if k == -1 else t_max_us + 1)
            else:
                t = np.int64(codes[i])
                k = t // dt_us if t >= 0 else np.int64(0)
            if t < 0:
                return _BAD_TIME, i, late
            if u < 0 or u >= channels:
                return _BAD_UNIT, i, late
            if t > t_max_us:
                if late == 0:
                    first_late = i
                late += 1
                continue
            if k >= steps:
                k = steps - 1
            row[k, u if pool == 1 else u // pool] += 1.0
    if late and not drop_late:
        return _LATE, first_late, late
    return _OK, -1, late


def _time_codes(times: np.ndarray, dt_us: int, t_max_us: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes, table) for the kernel: float16 bit patterns and their bins, or int64 µs."""
    if times.dtype == np.float16:
        return times.view(np.uint16), float16_bin_table(int(dt_us), int(t_max_us),
                                                        n_bins(dt_us, t_max_us))
    if times.dtype.kind != "f":
        raise DataError(f"spike times must be floating-point seconds, got {times.dtype}")
    bad = ~np.isfinite(times)
    codes = seconds_to_us(np.where(bad, -1.0, times))
    return codes, np.zeros(0, dtype=np.int64)


def bin_batch(times: np.ndarray, units: np.ndarray, offsets: np.ndarray, *, dt_us: int, t_max_us: int,
              channels: int, pool: int = 1, late: Literal["error", "drop"] = "error",
              name: str = "<memory>", first: int | np.ndarray = 0, out: np.ndarray | None = None
              ) -> tuple[np.ndarray, int]:
    """Bin flat spikes of B samples to ((B, T, channels // pool) float32 counts, late spikes).

    Args:
        times: (S,) spike times in seconds (float16 as stored in SHD, or any float dtype).
        units: (S,) channel indices below ``channels``; offsets: (B+1,) sample boundaries.
        dt_us, t_max_us: bin width and window (µs); pool: channels summed per output channel.
        late: what to do with spikes after ``t_max_us`` (module docstring).
        name, first: file name and index of the first sample (or (B,) indices of all of
            them), for error messages.
        out: a (B, T, channels // pool) float32 array the counts are written to, whatever
            it held (default: a new one).

    Raises:
        DataError: a negative or non-finite time, a unit outside 0..channels-1, or (with
            ``late="error"``) a spike after ``t_max_us``, naming the file and the sample.
    """
    codes, table = _time_codes(times, dt_us, t_max_us)
    if out is None:
        out = np.empty((offsets.shape[0] - 1, n_bins(dt_us, t_max_us), channels // pool), dtype=np.float32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    status, index, count = _bin_kernel(codes, table, units, offsets, int(dt_us), int(t_max_us),
                                       int(channels), int(pool), late == "drop", out)
    if status != _OK:
        row = int(sample_index(offsets, index))
        sample = int(first[row]) if isinstance(first, np.ndarray) else first + row
        if status == _BAD_TIME:
            raise DataError(f"{name}: sample {sample}: spike time {float(times[index])} s is negative "
                            "or not finite")
        if status == _BAD_UNIT:
            raise DataError(f"{name}: sample {sample}: unit {int(units[index])} is out of range "
                            f"0..{channels - 1}")
        late_us = int(float16_us_table()[codes[index]]) if table.size else int(codes[index])
        raise DataError(f"{name}: sample {sample}: spike at {late_us} us is after t_max_us="
                        f"{t_max_us} ({count} such spike(s) in the {offsets.shape[0] - 1}"
                        " sample(s) binned with it); raise t_max_us, or drop and count them with late='drop'")
    return out, int(count)


class SpikeBatches:
    """Iterable of ``(frames (B, T, channels // pool) float32 tensor, labels (B,) int64
    tensor)`` read and binned batch by batch from an SHD-layout file (module docstring).

    Args:
        path: the file; header: its :class:`~neuromark.data.hdf5_spikes.SpikeHeader`.
        batch_size, dt_us, t_max_us, pool: batching and binning (µs; ``pool`` channels summed).
        shuffle, seed: seeded permutation per epoch (default: file order).
        drop_last: leave out the last, incomplete batch.
        late: spikes after ``t_max_us``: ``"error"`` or ``"drop"`` (counted in ``dropped``).
        jitter_sigma, jitter_per: channel jitter before pooling (std in channels; one shift
            per sample or per spike, :func:`~neuromark.data.binning.jitter_units`), drawn
            from the same seeded generator; 0 for none.
        chunk_samples: samples read from the file at once (independent of the batch size).
        pin_memory: bin each batch into page-locked memory (needs CUDA).
    """

    def __init__(self, path: str | os.PathLike[str], header: SpikeHeader, batch_size: int, dt_us: int,
                 t_max_us: int, *, pool: int = 1, shuffle: bool = False, seed: int | None = None,
                 drop_last: bool = False, late: Literal["error", "drop"] = "error",
                 jitter_sigma: float = 0.0, jitter_per: Literal["sample", "spike"] = "sample",
                 chunk_samples: int | None = None, pin_memory: bool = False) -> None:
        check_binning(batch_size, dt_us, t_max_us, pool, header.channels)
        if late not in ("error", "drop"):
            raise ConfigError(f"late must be 'error' or 'drop', got {late!r}")
        if not (jitter_sigma >= 0 and math.isfinite(jitter_sigma)):
            raise ConfigError(f"jitter_sigma must be a finite number >= 0, got {jitter_sigma!r}")
        self.path, self.header = path, header
        self.batch_size, self.dt_us, self.t_max_us, self.pool = batch_size, dt_us, t_max_us, pool
        self.shuffle, self.drop_last, self.late = shuffle, drop_last, late
        self.jitter_sigma, self.jitter_per = jitter_sigma, jitter_per
        self.chunk_samples = CHUNK_SAMPLES if chunk_samples is None else chunk_samples
        if self.chunk_samples < 1:
            raise ConfigError(f"chunk_samples must be >= 1, got {self.chunk_samples}")
        self.rng = np.random.default_rng(seed)
        self.pin_memory = pin_memory
        #: Spikes after ``t_max_us`` left out so far (``late="drop"``).
        self.dropped = 0
        #: Spikes and samples binned so far (the front-end cost's events per sample).
        self.spikes_read = 0
        self.samples_read = 0
        self._held: HeldSpikes | None = None
        #: batches yielded before, reused once nothing else refers to them (see _new)
        self._buffers: list[np.ndarray] = []

    def __len__(self) -> int:
        n = len(self.header)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    @property
    def samples(self) -> int:
        """Samples per epoch (after ``drop_last``)."""
        n = len(self.header)
        return (n // self.batch_size) * self.batch_size if self.drop_last else n

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._shuffled() if self.shuffle else self._streamed()

    def _bin(self, times: np.ndarray, units: np.ndarray, offsets: np.ndarray, first: int | np.ndarray,
             out: np.ndarray) -> None:
        """Write the counts of samples ``offsets`` (jittered when asked) to ``out``."""
        if self.jitter_sigma > 0:
            moved, keep = jitter_units(units, offsets, sigma=self.jitter_sigma,
                                       channels=self.header.channels, rng=self.rng, per=self.jitter_per)
            kept = np.concatenate([[0], np.cumsum(keep)])
            times, units, offsets = times[keep], moved[keep], kept[offsets]
        _, late = bin_batch(times, units, offsets, dt_us=self.dt_us, t_max_us=self.t_max_us,
                            channels=self.header.channels, pool=self.pool, late=self.late,
                            name=str(self.path), first=first, out=out)
        self.dropped += late
        self.spikes_read += int(times.shape[0])
        self.samples_read += int(offsets.shape[0]) - 1

    def _new(self, rows: int) -> np.ndarray:
        """A (rows, T, C) float32 batch for :meth:`_bin` to overwrite; in page-locked memory
        with ``pin_memory`` (a numpy view of a pinned tensor, see :meth:`_tensor`)."""
        shape = (rows, n_bins(self.dt_us, self.t_max_us), self.header.channels // self.pool)
        if self.pin_memory:
            import torch

            return torch.empty(shape, dtype=torch.float32, pin_memory=True).numpy()
        return self._reused(shape)

    def _reused(self, shape: tuple[int, int, int]) -> np.ndarray:
        """A float32 array of ``shape``, its contents undefined (the kernel zeroes each row
        before binning it): the memory of an earlier batch that nothing refers to any more
        (its tensor and every view of it gone; ``sys.getrefcount`` then sees only this list
        and its own argument), else new memory. A new batch of tens of MB costs a page
        fault per 4 KiB when first written, several times the binning itself in a VM. At
        most two are kept: the runner drops each batch before asking for the next (one
        buffer then serves every batch), a caller that holds it gets a second one."""
        buffers = self._buffers
        for i in range(len(buffers)):  # a larger one serves a short last batch (its rows)
            if buffers[i].shape[1:] == shape[1:] and buffers[i].shape[0] >= shape[0] \
                    and sys.getrefcount(buffers[i]) == 2:
                return buffers[i][:shape[0]]
        fresh = np.empty(shape, dtype=np.float32)
        self._buffers = (buffers + [fresh])[-2:]
        return fresh

    def _tensor(self, out: np.ndarray) -> Any:
        """The batch ``out`` as a tensor: for a pinned batch the tensor whose storage the
        pinned allocator owns (so a ``non_blocking`` copy keeps it alive until done)."""
        import torch

        base = out.base
        return base if self.pin_memory and isinstance(base, torch.Tensor) else torch.from_numpy(out)

    def _streamed(self) -> Iterator[tuple[Any, Any]]:
        """Batches assembled from chunks read in file order (a batch may span chunks, a chunk
        batches): only one chunk of spikes and the batch being filled are held."""
        import torch

        total, labels = self.samples, self.header.labels
        out, start, filled = None, 0, 0
        for first, times, units, offsets in iter_spike_chunks(self.path, chunk_samples=self.chunk_samples,
                                                              stop=total):
            pos, n = 0, offsets.shape[0] - 1
            while pos < n:
                if out is None:
                    start, filled = first + pos, 0
                    out = self._new(min(self.batch_size, total - start))
                take = min(n - pos, out.shape[0] - filled)
                a, b = offsets[pos], offsets[pos + take]
                self._bin(times[a:b], units[a:b], offsets[pos:pos + take + 1] - a, first + pos,
                          out[filled:filled + take])
                pos, filled = pos + take, filled + take
                if filled == out.shape[0]:
                    frames, out = self._tensor(out), None
                    yield frames, torch.as_tensor(labels[start:start + filled], dtype=torch.long)
                    del frames  # not held while the next batch is binned (see _reused)

    def _hold(self) -> HeldSpikes:
        """The whole file's spikes in their stored dtypes (:meth:`HeldSpikes.read`), read once."""
        if self._held is None:
            self._held = HeldSpikes.read(self.path, chunk_samples=self.chunk_samples)
        return self._held

    def _shuffled(self) -> Iterator[tuple[Any, Any]]:
        import torch

        held = self._hold()
        order = self.rng.permutation(len(self.header))[:self.samples]
        for lo in range(0, order.shape[0], self.batch_size):
            idx = order[lo:lo + self.batch_size]
            out = self._new(idx.shape[0])
            self._bin(*held.gather(idx), idx, out)
            yield self._tensor(out), torch.as_tensor(self.header.labels[idx], dtype=torch.long)
            del out  # not held while the next batch is binned (see _reused)



@dataclass
class HeldSpikes:
    """Spikes of N samples held in memory as the chunks they were read in (each chunk's
    ``times``, ``units`` and (n_c+1,) ``offsets`` from 0), gathered by sample index.

    Kept as chunks rather than copied into one array: the copy would need the chunks and the
    array at once, and the freed chunks stay in the allocator's heap, doubling the peak.
    """

    times: list[np.ndarray]
    units: list[np.ndarray]
    offsets: list[np.ndarray]
    firsts: np.ndarray  # (chunks + 1,) int64: index of each chunk's first sample, then N

    @classmethod
    def flat(cls, times: np.ndarray, units: np.ndarray, offsets: np.ndarray) -> HeldSpikes:
        """One chunk: flat arrays of N samples (``offsets`` (N+1,), from 0)."""
        return cls([times], [units], [np.asarray(offsets, dtype=np.int64)],
                   np.array([0, offsets.shape[0] - 1], dtype=np.int64))

    @classmethod
    def read(cls, path: str | os.PathLike[str], *, chunk_samples: int = CHUNK_SAMPLES) -> HeldSpikes:
        """A whole file's spikes in their stored dtypes (4 bytes per SHD spike: float16
        seconds + uint16 units), read in one pass of ``chunk_samples`` samples at a time."""
        times, units, offsets, firsts = [], [], [], [0]
        for first, t, u, o in iter_spike_chunks(path, chunk_samples=chunk_samples):
            times.append(t)
            units.append(u)
            offsets.append(o)
            firsts.append(first + o.shape[0] - 1)
        if not times:  # no samples
            return cls.flat(np.zeros(0, np.float16), np.zeros(0, np.uint16), np.zeros(1, np.int64))
        return cls(times, units, offsets, np.asarray(firsts, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.firsts[-1])

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spikes of samples ``rows`` (B,), in that order: (times, units, offsets
        (B+1,)) copies holding only those samples."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(self.times) == 1:
            return _gather(self.times[0], self.units[0], self.offsets[0], rows)
        chunk = np.searchsorted(self.firsts, rows, side="right") - 1
        local = rows - self.firsts[chunk]
        grouped = np.argsort(chunk, kind="stable")  # rows grouped by chunk, in order within
        parts = [_gather(self.times[c], self.units[c], self.offsets[c], local[chunk == c])
                 for c in np.unique(chunk)]
        # put the samples, gathered chunk by chunk, back in the order of rows
        times = np.concatenate([p[0] for p in parts])
        units = np.concatenate([p[1] for p in parts])
        counts = np.concatenate([np.diff(p[2]) for p in parts])
        starts = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        order = np.empty_like(grouped)
        order[grouped] = np.arange(grouped.shape[0])
        return _gather(times, units, starts, order)


def _gather(times: np.ndarray, units: np.ndarray, offsets: np.ndarray, rows: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples ``rows`` of flat arrays (vectorised): (times, units, offsets (B+1,))."""
    starts, counts = offsets[rows], offsets[rows + 1] - offsets[rows]
    sub = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=sub[1:])
    take = np.repeat(starts - sub[:-1], counts) + np.arange(sub[-1])
    return times[take], units[take], sub
