"""The small cases neuromark's central tests run for the shd family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def random_spikes(rng: Any, n: int, labels: int, t_max: float = 0.09, channels: int = 700
                  ) -> tuple[list[Any], list[Any], Any]:
    """``n`` samples of 30 random spikes each: (times in s per sample, channels per sample,
    labels 0..labels-1 in turn); ``rng`` is a numpy Generator."""
    import numpy as np

    times = [np.sort(rng.uniform(0, t_max, 30)) for _ in range(n)]
    units = [rng.integers(0, channels, 30) for _ in range(n)]
    return times, units, np.arange(n) % labels


def write_spoken_digits(root: Path) -> None:
    """``train.h5`` and ``test.h5`` in the SHD layout, 4 samples of 20 classes by speakers
    0-3, with the corpus's class names."""
    import numpy as np

    from neuromark.benchmarks.shd.spoken_digits import KEYS
    from neuromark.data.hdf5_spikes import write_shd_file

    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        write_shd_file(root / f"{split}.h5", *random_spikes(rng, 4, 20), speakers=[0, 1, 2, 3], keys=KEYS)


def write_shd(root: Path) -> None:
    """``shd_train.h5`` and ``shd_test.h5``, 3 samples of 20 classes each."""
    import numpy as np

    from neuromark.data.hdf5_spikes import write_shd_file

    rng = np.random.default_rng(1)
    for split in ("train", "test"):
        write_shd_file(root / f"shd_{split}.h5", *random_spikes(rng, 3, 20))


def write_ssc(root: Path) -> None:
    """``ssc_{train,valid,test}.h5``, 3 samples of 35 classes each."""
    import numpy as np

    from neuromark.data.hdf5_spikes import write_shd_file

    rng = np.random.default_rng(2)
    for split in ("train", "valid", "test"):
        write_shd_file(root / f"ssc_{split}.h5", *random_spikes(rng, 3, 35))


def write_spike_file(root: Path) -> None:
    """One ``test.h5`` of 3 samples (20 classes)."""
    import numpy as np

    from neuromark.data.hdf5_spikes import write_shd_file

    write_shd_file(root / "test.h5", *random_spikes(np.random.default_rng(3), 3, 20))


def download_copies_the_shipped_corpus(entry: Any, root: Path, tmp_path: Path) -> None:
    """``download`` of the shipped corpus copies it (no network) into a folder that verifies."""
    from neuromark.testing.dataset import no_network

    with no_network():
        entry.verify(entry.download(tmp_path / "copy"))


_SHD = {"options": {"dt_us": 10_000, "t_max_us": 100_000}, "shape": (10, 700), "num_classes": 20}

TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "spoken_digits": {"write": write_spoken_digits,
                      "options": {"dt_us": 10_000, "t_max_us": 100_000, "late": "drop"},
                      "shape": (10, 700), "num_classes": 20, "damage": "test.h5",
                      "synth": {"speakers": [0, 3], "digits": [1]},
                      "extra": {"download_copies_the_shipped_corpus": download_copies_the_shipped_corpus}},
    "shd": {**_SHD, "write": write_shd, "damage": "shd_test.h5"},
    "ssc": {**_SHD, "write": write_ssc, "num_classes": 35, "damage": "ssc_valid.h5"},
    "spike_files": {**_SHD, "write": write_spike_file, "damage": "test.h5"},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
