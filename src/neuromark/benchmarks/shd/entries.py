"""Spike files in the SHD layout as binned classification data sets, batch by batch.

:class:`BinnedSpikes` yields ``(frames, label)`` per sample: (T, channels // pool) float32
spike counts (the binning convention of :mod:`neuromark.data.binning`) and the int class.
Its :meth:`~BinnedSpikes.loader` reads the file in chunks and bins one batch at a time with a
compiled kernel (:mod:`neuromark.data.spike_stream`), so evaluation holds one chunk of spikes
and one batch of dense frames, never the whole split. The registered dataset entries (``spoken_digits``,
``shd``, ``ssc``, ``spike_files``) take ``split`` plus the binning options of a config::

    dataset: {name: spoken_digits, options: {dt_us: 10000, t_max_us: 850000, pool: 10}}
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.benchmarks.shd.datasets import CITATION, SHD, SSC, SpikeFileDataset
from neuromark.benchmarks.shd.encoder_cost import binned_spikes_cost
from neuromark.benchmarks.shd.spoken_digits import SHIPPED_DIR, shipped_corpus
from neuromark.config import jobs_within
from neuromark.data.binning import bin_samples, check_binning, drop_late, n_bins, pool_samples
from neuromark.data.entry import SUMS, Entry, read_sums, sums_owned, synthesize_into
from neuromark.data.hdf5_spikes import SHD_CHANNELS, SpikeSamples, read_header
from neuromark.errors import ConfigError, DataError
from neuromark.processors.cochlea.model import SHD_SAMPLE_RATE, Cochlea
from neuromark.processors.cochlea.params import BasilarMembraneParams, CochleaParams
from neuromark.processors.encoder_cost import chain, cochlea_cost
from neuromark.registry import generators


class BinnedSpikes(SpikeFileDataset):
    """A spike file in the SHD layout, binned: ``dataset[i] = (frames (T, C) float32, label)``
    (its parent yields the events; ``samples`` holds the file's flat arrays, before pooling).

    Args:
        path: the ``.h5`` file (read once, on first use, and checked).
        dt_us, t_max_us: bin width and binning window in microseconds; every spike must lie
            in ``[0, t_max_us]`` unless ``late`` is ``"drop"``.
        pool: sum this many neighbouring channels (700 -> 70 with 10).
        channels: channels of the file (units are checked against it).
        citation: bibtex of the data set, for the results file.
        late: spikes after ``t_max_us`` in :meth:`loader`: ``"error"`` or ``"drop"`` (counted).
    """

    def __init__(self, path: str | os.PathLike[str], *, dt_us: int = 10_000, t_max_us: int = 1_000_000,
                 pool: int = 1, channels: int = SHD_CHANNELS, citation: str = "",
                 late: Literal["error", "drop"] = "error") -> None:
        try:
            check_binning(1, dt_us, t_max_us, pool, channels)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        if late not in ("error", "drop"):
            raise ConfigError(f"{path}: late must be 'error' or 'drop', got {late!r}")
        super().__init__(path, channels=channels)
        self.dt_us, self.t_max_us, self.pool = int(dt_us), int(t_max_us), pool
        self.citation, self.late = citation, late
        self._held: Any = None
        self._last_stream: Any = None  # the last loader made, for the spikes it binned
        #: the audio rate of the cochlea that made the file's spikes (SHD, SSC, the shipped
        #: corpus: 48 kHz), or None for spikes of unknown origin (``spike_files``)
        self.cochlea_rate: int | None = None

    def front_end_cost(self) -> dict[str, Any]:
        """The encoders before the model (issue 47.4): the cochlea that made the spikes
        (where known; a clip of ``t_max_us``), then binning and pooling per spike, with the
        mean spikes per sample binned by this split's last loader (else of the whole file
        when it was read already; else not measured: the file is not read for it)
        (:func:`neuromark.processors.encoder_cost.cochlea_cost`, :mod:`.encoder_cost`)."""
        stream = self._last_stream
        if stream is not None and stream.samples_read:
            per_sample: float | None = stream.spikes_read / stream.samples_read
        elif self._samples is not None:
            offsets = self._samples.offsets
            per_sample = float(offsets[-1]) / max(1, len(offsets) - 1)
        else:
            per_sample = None
        parts = [binned_spikes_cost(self.channels, self.dt_us, self.t_max_us, self.pool, per_sample)]
        if self.cochlea_rate is not None:
            cochlea = Cochlea(CochleaParams(basilar_membrane=BasilarMembraneParams(channels=self.channels)))
            clip = int(round(self.t_max_us * 1e-6 * self.cochlea_rate))
            parts.insert(0, cochlea_cost(cochlea, clip, self.cochlea_rate))
        return chain(" + ".join(p.encoder for p in parts), parts)

    @property
    def input_shape(self) -> tuple[int, int]:
        """(T, channels // pool) of one sample's frames."""
        return n_bins(self.dt_us, self.t_max_us), self.channels // self.pool

    def time_step_s(self) -> tuple[float, str]:
        """One time bin (:mod:`neuromark.metrics.execution_rate`)."""
        return self.dt_us * 1e-6, f"dataset option dt_us = {self.dt_us} us, one time bin"

    @property
    def num_classes(self) -> int:
        """Class names in the file, or the largest label + 1."""
        return max(len(self.header.keys), int(self.header.labels.max(initial=-1)) + 1)

    def frames(self, samples: SpikeSamples | None = None) -> np.ndarray:
        """(N, T, C) float32 counts of ``samples`` (default: all of this file), pooled; with
        ``late="drop"`` spikes after ``t_max_us`` are left out (as the loader does)."""
        samples = self.samples if samples is None else samples
        if self.late == "drop":
            samples, _ = drop_late(samples, self.t_max_us)
        if self.pool > 1:
            samples = pool_samples(samples, self.pool)
        return bin_samples(samples, self.dt_us, self.t_max_us, np.float32)

    def held_spikes(self) -> Any:
        """The whole file's spikes for shuffled training batches
        (:class:`~neuromark.data.spike_stream.HeldSpikes`): the arrays of ``samples`` when
        those were read already, else the stored dtypes read once in chunks and kept (4
        bytes per SHD spike); never binned as a whole."""
        from neuromark.data.spike_stream import HeldSpikes  # numba's kernels: heavy

        if self._samples is not None:
            return HeldSpikes.flat(self._samples.times, self._samples.units, self._samples.offsets)
        if self._held is None:
            self._held = HeldSpikes.read(self.path)
        return self._held

    def __getitem__(self, index: int) -> tuple[Any, int]:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self.path}: sample {index} out of range (0..{n - 1})")
        index %= n
        return self.frames(_slice(self.samples, index, index + 1))[0], int(self.samples.labels[index])

    def loader(self, batch_size: int, dt_us: int | None = None, t_max_us: int | None = None, *,
               pool: int | None = None, shuffle: bool = False, seed: int | None = None,
               drop_last: bool = False, pin_memory: bool = False, **options: Any) -> Any:
        """Streamed batches ``(frames (B, T, C) float32, labels (B,) int64)`` with this data
        set's binning unless given (:meth:`SpikeFileDataset.loader`; ``options``: ``late``,
        ``jitter_sigma``, ``jitter_per``, ``chunk_samples``); ``pin_memory``: frames in
        page-locked memory, for asynchronous copies to a CUDA device."""
        options.setdefault("late", self.late)
        self._last_stream = super().loader(batch_size, self.dt_us if dt_us is None else dt_us,
                                           self.t_max_us if t_max_us is None else t_max_us,
                                           pool=self.pool if pool is None else pool, shuffle=shuffle,
                                           seed=seed, drop_last=drop_last, pin_memory=pin_memory,
                                           **options)
        return self._last_stream

    def num_batches(self, batch_size: int, drop_last: bool = False) -> int:
        return len(self) // batch_size if drop_last else math.ceil(len(self) / batch_size)


def _slice(samples: SpikeSamples, start: int, stop: int) -> SpikeSamples:
    """Samples ``start:stop`` as views of the flat arrays."""
    lo, hi = samples.offsets[start], samples.offsets[stop]
    return replace(samples, times=samples.times[lo:hi], units=samples.units[lo:hi],
                   offsets=samples.offsets[start:stop + 1] - lo, labels=samples.labels[start:stop],
                   speakers=None if samples.speakers is None else samples.speakers[start:stop])


def spoken_digits(split: str = "test", *, dt_us: int = 10_000, t_max_us: int = 1_000_000,
                  pool: int = 1, late: Literal["error", "drop"] = "error") -> BinnedSpikes:
    """The spoken-digit corpus shipped with neuromark (espeak-ng + our cochlea, SHD layout)."""

    paths = shipped_corpus()
    if split not in paths:
        raise ConfigError(f"spoken_digits: unknown split {split!r} (one of {', '.join(paths)})")
    data = BinnedSpikes(paths[split], dt_us=dt_us, t_max_us=t_max_us, pool=pool, citation=CITATION,
                        late=late)
    data.cochlea_rate = SHD_SAMPLE_RATE
    return data


def shd(split: str = "test", *, root: str | os.PathLike[str] = "data/shd", dt_us: int = 10_000,
        t_max_us: int = 1_400_000, pool: int = 1, late: Literal["error", "drop"] = "error") -> BinnedSpikes:
    """Spiking Heidelberg Digits ``root/shd_<split>.h5`` (splits train, test)."""

    return _heidelberg(SHD, split, root, dt_us=dt_us, t_max_us=t_max_us, pool=pool, late=late)


def ssc(split: str = "test", *, root: str | os.PathLike[str] = "data/ssc", dt_us: int = 10_000,
        t_max_us: int = 1_400_000, pool: int = 1, late: Literal["error", "drop"] = "error") -> BinnedSpikes:
    """Spiking Speech Commands ``root/ssc_<split>.h5`` (splits train, valid, test)."""

    return _heidelberg(SSC, split, root, dt_us=dt_us, t_max_us=t_max_us, pool=pool, late=late)


def _heidelberg(cls: Any, split: str, root: str | os.PathLike[str], **binning: Any) -> BinnedSpikes:
    if split not in cls.splits:
        raise ConfigError(f"{cls.__name__}: unknown split {split!r} (one of {', '.join(cls.splits)})")
    path = Path(root) / f"{cls.prefix}_{split}.h5"
    if not path.is_file():
        raise ConfigError(f"{path}: no such file; download it with "
                          f"{cls.__name__}({str(root)!r}, {split!r}).download() or copy it there")
    data = BinnedSpikes(path, citation=cls.citation, **binning)
    data.cochlea_rate = SHD_SAMPLE_RATE
    return data


def spike_files(split: str = "test", *, train: str | None = None, test: str | None = None,
                valid: str | None = None, channels: int = SHD_CHANNELS, dt_us: int = 10_000,
                t_max_us: int = 1_000_000, pool: int = 1, late: Literal["error", "drop"] = "error"
                ) -> BinnedSpikes:
    """Any spike files in the SHD layout, one per split (``train``, ``valid``, ``test`` paths)."""
    paths = {"train": train, "valid": valid, "test": test}
    if split not in paths or paths[split] is None:
        given = ", ".join(k for k, v in paths.items() if v) or "none"
        raise ConfigError(f"spike_files: no file for split {split!r} (given: {given})")
    path = Path(str(paths[split]))
    if not path.is_file():
        raise ConfigError(f"{path}: no such spike file (split {split!r})")
    return BinnedSpikes(path, dt_us=dt_us, t_max_us=t_max_us, pool=pool, channels=channels, late=late)


# ---- data set entries (neuromark.data.entry.DatasetEntry) ------------------------------------


class _SpikeFileEntry(Entry):
    """Common part of the SHD-layout entries: each ``.h5`` of the layout must open as an
    SHD-layout file (header read, naming the file when truncated or malformed)."""

    def check_file(self, path: Path) -> None:
        if path.suffix == ".h5":
            read_header(path, channels=SHD_CHANNELS)


class SpokenDigitsEntry(_SpikeFileEntry):
    """Entry ``spoken_digits``: the corpus shipped with neuromark (``train.h5``, ``test.h5``,
    ``SHA256SUMS``); ``synthesize`` runs its generator (espeak-ng + the cochlea)."""

    name = "spoken_digits"
    citation = CITATION
    shipped = SHIPPED_DIR

    def layout(self, root: Path) -> list[Path]:
        return [root / f"{split}.h5" for split in ("train", "test")]

    def verify(self, root: str | os.PathLike[str]) -> None:
        folder = Path(root)
        if not (folder / SUMS).is_file():  # the corpus always carries its checksums
            raise DataError(f"{folder / SUMS}: missing checksum file (spoken_digits)")
        super().verify(folder)

    def download(self, root: str | os.PathLike[str]) -> Path:
        """No network: copies the shipped, checked files into ``root``."""
        import shutil

        folder = Path(root)
        super().verify(self.shipped)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("train.h5", "test.h5", SUMS):
            shutil.copyfile(self.shipped / name, folder / name)
        self.verify(folder)
        return folder

    def synthesize(self, root: str | os.PathLike[str], *, speakers: list[int] | None = None,
                   digits: list[int] | None = None, jobs: int | None = None,
                   constants: str = "lauscher") -> Path:
        """Write the corpus (speakers by id, digits: subsets for tests; ``constants``: the
        cochlea's, ``lauscher`` or ``paper``) into ``root``."""
        jobs_within(jobs, "synthesize.jobs")
        gen = generators.get("spoken_digits")
        gen.check_constants(constants, "synthesize.constants")  # the cochlea's names, before work
        SPEAKERS, build_corpus = gen.SPEAKERS, gen.build_corpus  # noqa: N806

        chosen = [SPEAKERS[i] for i in speakers] if speakers is not None else list(SPEAKERS)
        picked = list(range(10)) if digits is None else list(digits)
        recipe = {"corpus": "spoken_digits", "speakers": [s.id for s in chosen], "digits": picked,
                  **({"cochlea_constants": constants} if constants != "lauscher" else {})}
        return synthesize_into(root, recipe, lambda tmp: build_corpus(
            tmp, speakers=chosen, digits=picked, jobs=jobs, cochlea_constants=constants),
            what="spoken-digit",
            legacy=sums_owned)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> BinnedSpikes:
        return BinnedSpikes(Path(root) / f"{split}.h5", citation=CITATION, **options)

    def __call__(self, split: str = "test", *, dt_us: int = 10_000, t_max_us: int = 1_000_000,
                 pool: int = 1, late: Literal["error", "drop"] = "error") -> BinnedSpikes:
        return spoken_digits(split, dt_us=dt_us, t_max_us=t_max_us, pool=pool, late=late)


class HeidelbergEntry(_SpikeFileEntry):
    """Entries ``shd`` and ``ssc``: ``root/<prefix>_<split>.h5`` for every split; the
    published md5 of each ``.h5.zip`` is checked when the archive is in ``root``."""

    def __init__(self, reader: type[SHD] | type[SSC]) -> None:
        self.reader = reader
        self.name = reader.prefix
        self.citation = reader.citation
        self.urls = tuple(reader.url(s) for s in reader.splits)
        self.manifest = {f"{reader.prefix}_{s}.h5.zip": f"md5:{reader.md5[s]}" for s in reader.splits}

    def layout(self, root: Path) -> list[Path]:
        return [root / f"{self.name}_{split}.h5" for split in self.reader.splits]

    def download(self, root: str | os.PathLike[str]) -> Path:
        for split in self.reader.splits:
            self.reader(root, split).download()
        return self.record(root)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> BinnedSpikes:
        return _heidelberg(self.reader, split, root, **options)

    def __call__(self, split: str = "test", *, root: str | os.PathLike[str] | None = None,
                 dt_us: int = 10_000, t_max_us: int = 1_400_000, pool: int = 1,
                 late: Literal["error", "drop"] = "error") -> BinnedSpikes:
        folder = f"data/{self.name}" if root is None else root
        return _heidelberg(self.reader, split, folder, dt_us=dt_us, t_max_us=t_max_us, pool=pool,
                           late=late)


class SpikeFilesEntry(_SpikeFileEntry):
    """Entry ``spike_files``: any SHD-layout files of the user's (``root/*.h5``); nothing to
    download."""

    name = "spike_files"
    citation = "a user's spike files in the SHD layout of Cramer et al. (2022); cite their source"

    def layout(self, root: Path) -> list[Path]:
        listed = {root / n for n in read_sums(root / SUMS)} if (root / SUMS).is_file() else set()
        return sorted(set(root.glob("*.h5")) | listed) or [root / "<split>.h5"]

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> BinnedSpikes:
        return spike_files(split, **{split: str(Path(root) / f"{split}.h5")}, **options)

    def __call__(self, split: str = "test", *, train: str | None = None, test: str | None = None,
                 valid: str | None = None, channels: int = SHD_CHANNELS, dt_us: int = 10_000,
                 t_max_us: int = 1_000_000, pool: int = 1, late: Literal["error", "drop"] = "error"
                 ) -> BinnedSpikes:
        return spike_files(split, train=train, test=test, valid=valid, channels=channels, dt_us=dt_us,
                           t_max_us=t_max_us, pool=pool, late=late)


SPOKEN_DIGITS = SpokenDigitsEntry()
SHD_ENTRY = HeidelbergEntry(SHD)
SSC_ENTRY = HeidelbergEntry(SSC)
SPIKE_FILES = SpikeFilesEntry()
