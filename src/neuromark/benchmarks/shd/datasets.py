"""The Spiking Heidelberg Digits (SHD) and Spiking Speech Commands (SSC) data sets.

Cramer, Stradmann, Schemmel and Zenke (2020), "The Heidelberg spiking data sets for the
systematic evaluation of spiking neural networks", IEEE TNNLS 33:2744-2757,
https://doi.org/10.1109/TNNLS.2020.3044364; files at https://zenkelab.org/datasets/.

Checksums: the data set's authors publish md5 sums (``md5sums.txt`` next to the files);
no sha256 is published. We store the md5 of the ``.h5.zip`` archives as given by tonic
1.7.0 (``tonic.datasets.SHD``/``SSC``); ``sha256`` stays None until one is pinned (set it on
the class or pass ``sha256=`` to :func:`neuromark.data.download.fetch`). The ``.h5.gz``
files on the same server are listed in ``GZ_URLS`` and verified against the server's
``md5sums.txt`` by :meth:`HeidelbergSpikes.download` with ``archive="gz"``.

Nothing downloads in ``__init__``: call :meth:`download` (network) or put the ``.h5`` files
in ``root`` yourself. Sample counts are read from the files, never hard-coded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from torch.utils.data import Dataset

from neuromark.data.binning import bin_samples, pool_samples
from neuromark.data.download import fetch, unpack, verify_file
from neuromark.data.hdf5_spikes import SHD_CHANNELS, SpikeHeader, SpikeSamples, read_header, read_shd_file
from neuromark.errors import ChecksumError, ConfigError, DataError

BASE_URL = "https://zenkelab.org/datasets/"

CITATION = """@article{cramer2020heidelberg,
  title={The Heidelberg Spiking Data Sets for the Systematic Evaluation of Spiking Neural Networks},
  author={Cramer, Benjamin and Stradmann, Yannik and Schemmel, Johannes and Zenke, Friedemann},
  journal={IEEE Transactions on Neural Networks and Learning Systems},
  volume={33}, number={7}, pages={2744--2757}, year={2022},
  doi={10.1109/TNNLS.2020.3044364}
}"""


class SpikeFileDataset(Dataset):
    """Any spike file in the SHD layout, as a ``torch.utils.data.Dataset``.

    ``dataset[i]`` is ``(events, label)``: events of
    :data:`~neuromark.data.event_dtypes.SPIKE_EVENT_DTYPE` (``t`` in microseconds, ``unit``) after
    ``transform``, and the int label after ``target_transform`` (as ``tonic`` returns them).
    Indexing reads the whole file once, on first use, and checks it (see
    :func:`read_shd_file`); ``len``, ``targets`` and ``classes`` read only its header.

    For training and benchmarking, :meth:`loader` streams binned batches (memory O(batch));
    :meth:`dense` bins all samples at once (small files).
    """

    def __init__(self, path: str | os.PathLike[str], *, transform: Any = None,
                 target_transform: Any = None, channels: int = SHD_CHANNELS) -> None:
        self.path = Path(path)
        self.transform = transform
        self.target_transform = target_transform
        self.channels = channels
        self._samples: SpikeSamples | None = None
        self._header: SpikeHeader | None = None

    @property
    def header(self) -> SpikeHeader:
        """Labels, speakers and class names (read on first access, without the spikes)."""
        if self._header is None:
            self._header = read_header(self.path, channels=self.channels)
        return self._header

    @property
    def samples(self) -> SpikeSamples:
        """All samples as flat arrays (read on first access)."""
        if self._samples is None:
            self._samples = read_shd_file(self.path, channels=self.channels)
        return self._samples

    @property
    def classes(self) -> list[str]:
        """Class names from ``extra/keys``."""
        return list(self.header.keys)

    @property
    def targets(self) -> np.ndarray:
        """(N,) labels."""
        return self.header.labels

    def __len__(self) -> int:
        return len(self.header)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self.path}: sample {index} out of range (0..{n - 1})")
        index %= n
        events: Any = self.samples.events(index)
        label: Any = int(self.samples.labels[index])
        if self.transform is not None:
            events = self.transform(events)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return events, label

    def dense(self, dt_us: int, t_max_us: int, *, pool: int = 1, dtype: Any = np.float32
              ) -> tuple[np.ndarray, np.ndarray]:
        """All samples binned to (N, T, channels // pool) counts, and (N,) labels."""

        samples = self.samples
        if pool > 1:
            samples = pool_samples(samples, pool)
        return bin_samples(samples, dt_us, t_max_us, dtype), samples.labels

    def loader(self, batch_size: int, dt_us: int, t_max_us: int, *, pool: int = 1, shuffle: bool = False,
               seed: int | None = None, drop_last: bool = False, late: Literal["error", "drop"] = "error",
               jitter_sigma: float = 0.0, jitter_per: Literal["sample", "spike"] = "sample",
               chunk_samples: int | None = None, pin_memory: bool = False) -> Any:
        """Batches ``(frames (B, T, channels // pool) float32, labels (B,) int64)`` as torch
        tensors (page-locked with ``pin_memory``, for a CUDA device), read from the file in
        chunks and binned per batch by a compiled kernel: the counts of :meth:`dense`, memory
        O(batch) (a
        :class:`~neuromark.data.spike_stream.SpikeBatches`; see there for ``late``, jitter,
        and ``shuffle``, which holds the file's spikes compactly, 4 bytes per SHD spike).

        Raises:
            ConfigError: ``batch_size`` or ``dt_us`` <= 0, ``t_max_us`` < ``dt_us``, a
                ``pool`` that does not divide the channels (naming the argument).
        """
        from neuromark.data.spike_stream import SpikeBatches

        return SpikeBatches(self.path, self.header, batch_size, dt_us, t_max_us, pool=pool,
                            shuffle=shuffle, seed=seed, drop_last=drop_last, late=late,
                            jitter_sigma=jitter_sigma, jitter_per=jitter_per, chunk_samples=chunk_samples,
                            pin_memory=pin_memory)


class HeidelbergSpikes(SpikeFileDataset):
    """Base of :class:`SHD` and :class:`SSC`: ``root/<prefix>_<split>.h5``."""

    prefix: ClassVar[str] = ""
    splits: ClassVar[tuple[str, ...]] = ()
    #: md5 of ``<prefix>_<split>.h5.zip`` (from tonic 1.7.0); sha256 unpublished (None).
    md5: ClassVar[dict[str, str]] = {}
    sha256: ClassVar[dict[str, str | None]] = {}
    citation: ClassVar[str] = CITATION

    def __init__(self, root: str | os.PathLike[str], split: str = "train", *, transform: Any = None,
                 target_transform: Any = None) -> None:
        if split not in self.splits:
            raise ConfigError(f"{type(self).__name__}: unknown split {split!r} "
                              f"(one of {', '.join(self.splits)})")
        self.root = Path(root)
        self.split = split
        super().__init__(self.root / f"{self.prefix}_{split}.h5", transform=transform,
                         target_transform=target_transform)

    @classmethod
    def url(cls, split: str, archive: str = "zip") -> str:
        """Download URL of ``split`` (``archive`` "zip" as tonic uses, or "gz")."""
        return f"{BASE_URL}{cls.prefix}_{split}.h5.{archive}"

    def download(self, *, archive: str = "zip") -> Path:
        """Download, verify and unpack this split into ``root`` (network!); returns the .h5 path.

        ``archive="gz"`` fetches the ``.h5.gz`` file, verified against the md5 the server
        lists in ``md5sums.txt``.
        """

        if self.path.is_file():
            return self.path
        url = self.url(self.split, archive)
        if archive == "zip":
            md5 = self.md5[self.split]
        elif archive == "gz":
            md5 = _server_md5(f"{self.prefix}_{self.split}.h5.gz")
        else:
            raise ConfigError(f"archive must be 'zip' or 'gz', got {archive!r}")
        packed = fetch(url, self.root, md5=md5, sha256=self.sha256.get(self.split))
        unpack(packed, self.root)
        if not self.path.is_file():
            raise DataError(f"{packed}: did not contain {self.path.name}")
        return self.path

    def verify(self) -> None:
        """Check the archive's checksum (when it is in ``root``) and read and check the .h5 file.

        Raises :class:`ChecksumError` or :class:`DataError` naming the file.
        """

        packed = self.root / f"{self.prefix}_{self.split}.h5.zip"
        if packed.is_file():
            verify_file(packed, md5=self.md5[self.split], sha256=self.sha256.get(self.split))
        if not self.path.is_file():
            raise DataError(f"{self.path}: no such file; call download() or copy it into {self.root}")
        self._samples = self._header = None
        _ = self.samples


def _server_md5(filename: str) -> str:
    """The md5 the server lists for ``filename`` in ``md5sums.txt`` (network)."""
    import urllib.request

    url = BASE_URL + "md5sums.txt"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310
            text = response.read().decode("utf-8")
    except OSError as exc:
        raise DataError(f"cannot download {url}: {exc}") from exc
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == filename:
            return parts[0]
    raise ChecksumError(f"{url} lists no md5 for {filename}")


class SHD(HeidelbergSpikes):
    """Spiking Heidelberg Digits: 20 classes (digits 0-9, English and German), 700 channels.

    Files ``shd_train.h5`` and ``shd_test.h5`` in ``root``.
    """

    prefix = "shd"
    splits = ("train", "test")
    md5 = {"train": "f3252aeb598ac776c1b526422d90eecb", "test": "1503a5064faa34311c398fb0a1ed0a6f"}
    sha256 = {"train": None, "test": None}


class SSC(HeidelbergSpikes):
    """Spiking Speech Commands: 35 classes, 700 channels.

    Files ``ssc_train.h5``, ``ssc_valid.h5`` and ``ssc_test.h5`` in ``root``.
    """

    prefix = "ssc"
    splits = ("train", "valid", "test")
    md5 = {"train": "d102be95e7144fcc0553d1f45ba94170", "valid": "b4eee3516a4a90dd0c71a6ac23a8ae43",
           "test": "a35ff1e9cffdd02a20eb850c17c37748"}
    sha256 = {"train": None, "valid": None, "test": None}
