"""One shared test case every data set entry passes (tonic's ``DatasetTestCase`` is the
model): a per-dataset fixture writes a tiny file set in the real layout (plus the
``SHA256SUMS`` record ``download`` and ``synthesize`` leave), then the generic checks run.

Every name of :data:`neuromark.registry.datasets`, and the entries of the readers tasks use
without registering them (``gen4``, ``mswc``), has a case here; a new one without a case
fails :func:`test_every_entry_has_a_case`."""

from __future__ import annotations

import re
import shutil
import socket
import urllib.request
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from neuromark.data.entry import SUMS, SynthesizingEntry, layout_files, write_sums
from neuromark.errors import DataError
from neuromark.registry import datasets
from neuromark.testing import ContractError
from neuromark.testing.dataset import (
    DAMAGES,
    check_dataset_entry,
    check_declares_contract,
    check_reads_without_download,
    check_sample,
    check_synthesize,
    check_verify,
    check_verify_names_damage,
)

sf = pytest.importorskip("soundfile")
SRC = Path(__file__).resolve().parents[1] / "src" / "neuromark"
UNREGISTERED = {"gen4": "neuromark.benchmarks.event_detection.gen4:GEN4",
                "mswc": "neuromark.benchmarks.keywords.mswc:MSWC_ENTRY"}
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


def _entry(name: str) -> Any:
    if name in UNREGISTERED:
        import importlib

        module, _, attr = UNREGISTERED[name].partition(":")
        return getattr(importlib.import_module(module), attr)
    return datasets.get(name)


def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a data set touched the network")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(urllib.request, "urlretrieve", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def _spikes(rng: np.random.Generator, n: int, labels: int, t_max: float = 0.09, channels: int = 700):
    times = [np.sort(rng.uniform(0, t_max, 30)) for _ in range(n)]
    units = [rng.integers(0, channels, 30) for _ in range(n)]
    return times, units, np.arange(n) % labels


class DatasetTestCase:
    """Subclasses set the entry ``name``, write the fixture, and declare a sample."""

    name: ClassVar[str]
    split: ClassVar[str] = "test"
    options: ClassVar[dict[str, Any]] = {}
    shape: ClassVar[tuple[int, ...] | None] = None
    dtype: ClassVar[str] = "float32"
    num_classes: ClassVar[int | None] = None
    damage: ClassVar[str]  # the file (relative to root) the damage tests break
    synth: ClassVar[dict[str, Any] | None] = None  # options of a small synthesize, where present

    def write(self, root: Path) -> None:
        raise NotImplementedError

    @pytest.fixture
    def entry(self) -> Any:
        return _entry(self.name)

    @pytest.fixture
    def root(self, tmp_path: Path) -> Path:
        root = tmp_path / "data"
        root.mkdir()
        self.write(root)
        if not (root / SUMS).is_file():
            write_sums(root, layout_files(root))
        return root

    def sample(self, entry: Any, root: Path) -> tuple[Any, Any]:
        return entry.load(root, self.split, **self.options)[0]

    def _reader(self, entry: Any, root: Path, split: str, options: Any) -> tuple[Any, Any]:
        return self.sample(entry, root)

    # the checks are neuromark.testing.dataset's, which plugin authors run on their entries

    def test_declares_the_contract(self, entry):
        check_declares_contract(entry)

    def test_verify_passes_on_the_fixture(self, entry, root):
        check_verify(entry, root)

    @pytest.mark.parametrize("how", DAMAGES)
    def test_verify_names_a_damaged_file(self, entry, root, how):
        check_verify_names_damage(entry, root, self.damage, how)

    def test_reads_without_download(self, entry, root):
        check_reads_without_download(entry, root, self.split, self.options, self._reader)

    def test_samples_have_the_declared_shape_dtype_and_labels(self, entry, root):
        check_sample(entry, root, self.split, self.options, shape=self.shape, dtype=self.dtype,
                     num_classes=self.num_classes, sample=self._reader)

    def test_synthesize_writes_a_verified_deterministic_layout(self, entry, tmp_path):
        if self.synth is None:
            assert not isinstance(entry, SynthesizingEntry) or self.name == "mswc"
            pytest.skip(f"{self.name}: no generator (or one too slow for this case)")
        check_synthesize(entry, tmp_path, self.synth, self.split, self.options, self._reader)


# ---- the cases ------------------------------------------------------------------------------


class TestSpokenDigits(DatasetTestCase):
    name = "spoken_digits"
    options = {"dt_us": 10_000, "t_max_us": 100_000, "late": "drop"}
    shape, num_classes, damage = (10, 700), 20, "test.h5"
    synth = {"speakers": [0, 3], "digits": [1]}

    def write(self, root):
        from neuromark.benchmarks.shd.spoken_digits import KEYS
        from neuromark.data.hdf5_spikes import write_shd_file

        rng = np.random.default_rng(0)
        for split in ("train", "test"):
            write_shd_file(root / f"{split}.h5", *_spikes(rng, 4, 20), speakers=[0, 1, 2, 3], keys=KEYS)

    def test_download_copies_the_shipped_corpus(self, entry, tmp_path, monkeypatch):
        _no_network(monkeypatch)
        entry.verify(entry.download(tmp_path / "copy"))


class TestSHD(DatasetTestCase):
    name = "shd"
    options = {"dt_us": 10_000, "t_max_us": 100_000}
    shape, num_classes, damage = (10, 700), 20, "shd_test.h5"

    def write(self, root):
        from neuromark.data.hdf5_spikes import write_shd_file

        rng = np.random.default_rng(1)
        for split in ("train", "test"):
            write_shd_file(root / f"shd_{split}.h5", *_spikes(rng, 3, 20))


class TestSSC(TestSHD):
    name = "ssc"
    num_classes, damage = 35, "ssc_valid.h5"

    def write(self, root):
        from neuromark.data.hdf5_spikes import write_shd_file

        rng = np.random.default_rng(2)
        for split in ("train", "valid", "test"):
            write_shd_file(root / f"ssc_{split}.h5", *_spikes(rng, 3, 35))


class TestSpikeFiles(TestSHD):
    name = "spike_files"
    damage = "test.h5"

    def write(self, root):
        from neuromark.data.hdf5_spikes import write_shd_file

        write_shd_file(root / "test.h5", *_spikes(np.random.default_rng(3), 3, 20))


class TestMackeyGlass(DatasetTestCase):
    name = "mackey_glass"
    options = {"tau": 17, "length": 2.0}
    shape, dtype, damage = (1,), "float64", "mackey_glass_tau17.npy"

    def write(self, root):
        shipped = _entry("mackey_glass").shipped
        for name in ("lyapunov.csv", "mackey_glass_tau17.npy"):
            shutil.copyfile(shipped / name, root / name)


class TestDcase(DatasetTestCase):
    name = "dcase2020_asc"
    options = {"check_counts": False}
    shape, num_classes, damage = (8000,), 4, "audio/bus-lyon-1001-40001-a.wav"

    def write(self, root):
        rng = np.random.default_rng(4)
        names = ["airport-paris-1-1-a.wav", "bus-lyon-1001-40001-a.wav", "park-rome-7-2-a.wav"]
        (root / "audio").mkdir()
        for name in names:
            sf.write(str(root / "audio" / name), 0.1 * rng.standard_normal(16_000 * 2), 16_000,
                     subtype="PCM_16")
        (root / "evaluation_setup").mkdir()
        (root / "evaluation_setup" / "fold1_train.csv").write_text(
            f"filename\tscene_label\naudio/{names[0]}\tairport\n")
        (root / "evaluation_setup" / "fold1_evaluate.csv").write_text(
            f"filename\tscene_label\naudio/{names[1]}\tbus\n")


class TestDVSGesture(DatasetTestCase):
    name = "dvs_gesture"
    options = {"n_time_bins": 5}
    shape, num_classes, damage = (5, 2, 32, 32), 11, "ibmGestureTest/user03_led/2.npy"
    synth = {"train_users": 1, "test_users": 1, "duration_s": 0.1, "seed": 0}

    def write(self, root):
        from neuromark.benchmarks.dvs_gesture.reader import write_sample
        from neuromark.data.events import make_camera_events

        rng = np.random.default_rng(5)
        for folder, labels in (("ibmGestureTrain/user01_natural", (0, 1)),
                               ("ibmGestureTest/user03_led", (0, 2))):
            for label in labels:
                t = np.sort(rng.integers(0, 200, 400)) * 1000
                ev = make_camera_events(t, rng.integers(0, 128, 400), rng.integers(0, 128, 400),
                                        rng.integers(0, 2, 400))
                write_sample(root / folder / f"{label}.npy", ev)


class TestSpeechCommands(DatasetTestCase):
    name = "speech_commands"
    split, shape, num_classes, damage = "testing", (16_000,), 35, "zero/s3_nohash_0.wav"
    synth = {"speakers": 3, "words": ["yes", "zero"]}

    def write(self, root):
        rng = np.random.default_rng(6)
        for word in ("yes", "zero"):
            (root / word).mkdir()
            for speaker in ("s1", "s2", "s3"):
                sf.write(str(root / word / f"{speaker}_nohash_0.wav"),
                         (0.1 * rng.standard_normal(12_000)).astype(np.float32), 16_000, subtype="PCM_16")
        (root / "validation_list.txt").write_text("yes/s2_nohash_0.wav\nzero/s2_nohash_0.wav\n")
        (root / "testing_list.txt").write_text("yes/s3_nohash_0.wav\nzero/s3_nohash_0.wav\n")

    @pytest.fixture(autouse=True)
    def _espeak(self, request):
        if "synthesize" in request.node.name and shutil.which("espeak-ng") is None:
            pytest.skip("espeak-ng not installed")


class TestPrimateReaching(DatasetTestCase):
    name = "primate_reaching"
    options = {"session": "indy_20160622_01"}
    shape, damage = (1, 96), "indy_20160622_01.mat"
    synth = {"duration_s": 6.0, "seed": 0, "sessions": ["indy_20160622_01"]}

    def write(self, root):
        from neuromark.benchmarks.primate_reaching.generator import SurrogateSettings, write_surrogate

        write_surrogate(root, SurrogateSettings(6.0, 1, ("indy_20160622_01",)))

    def test_recorded_files_are_checked_against_the_published_md5(self, entry, root):
        (root / "surrogate.json").unlink()
        (root / SUMS).unlink()
        with pytest.raises(DataError, match="indy_20160622_01.mat.*md5"):
            entry.verify(root)


class TestGen4(DatasetTestCase):
    name = "gen4"
    damage = "test/b_td.dat"
    synth = {"files": {"train": 1, "test": 1}, "duration_s": 0.7, "height": 16, "width": 24, "seed": 0}

    def write(self, root):
        from neuromark.data.events import make_camera_events
        from neuromark.data.prophesee import make_boxes, write_boxes, write_dat

        rng = np.random.default_rng(7)
        for split, stem in (("train", "a"), ("test", "b")):
            (root / split).mkdir()
            t = np.sort(rng.integers(0, 100_000, 500))
            write_dat(root / split / f"{stem}_td.dat", make_camera_events(
                t, rng.integers(0, 64, 500), rng.integers(0, 48, 500), rng.integers(0, 2, 500)),
                width=64, height=48)
            write_boxes(root / split / f"{stem}_bbox.npy", make_boxes([50_000], [3], [4], [20], [10], [2]))

    def sample(self, entry, root):
        events, boxes = entry.load(root, self.split)[0]
        assert len(events) > 0 and set(boxes["class_id"]) <= {0, 1, 2, 3}
        return np.zeros(1, np.float32), 0


class TestMSWC(DatasetTestCase):
    name = "mswc"
    split, shape, num_classes, damage = "base_test", (48_000,), 200, "MSWC/fa/evaluation.csv"

    def write(self, root):
        from neuromark.benchmarks.keywords.mswc import INCREMENTAL_LANGUAGES, KEYWORD_LANGUAGE, KEYWORDS

        rng = np.random.default_rng(8)
        folder = root / "MSWC"
        lists = {"base_train": [0, 1], "base_val": [2], "base_test": [3]}
        lists.update({f"{lang}/evaluation": [KEYWORD_LANGUAGE.index(lang)] for lang in INCREMENTAL_LANGUAGES})
        for name, labels in lists.items():
            rows = ["LINK,WORD,LANGUAGE"]
            for label in labels:
                lang, word = KEYWORD_LANGUAGE[label], KEYWORDS[label]
                clip = folder / lang / "clips" / word / f"{name.replace('/', '_')}.wav"
                clip.parent.mkdir(parents=True, exist_ok=True)
                sf.write(str(clip), (0.1 * rng.standard_normal(40_000)).astype(np.float32), 48_000,
                         subtype="PCM_16")
                rows.append(f"{word}/{clip.name},{word},{lang}")
            (folder / f"{name}.csv").parent.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


class TestWISDM(DatasetTestCase):
    name = "wisdm"
    options = {"split_by": "window"}
    shape, num_classes, damage = (40, 6), 7, "wisdm-dataset/raw/watch/gyro/data_1601_gyro_watch.txt"
    synth = {"subjects": 3, "seconds": 6, "activities": "POF", "phone": False, "seed": 0}

    def write(self, root):
        from test_wisdm import write_raw

        write_raw(root, subjects=(1600, 1601), codes="POFQRGS", n=45)


class TestEEGMI(DatasetTestCase):
    name = "eeg_mi"
    options = {"sessions": [1]}
    shape, num_classes, damage = (250, 62), 2, "session1/s2/sess01_subj02_EEG_MI.mat"
    synth = {"subjects": 2, "sessions": 1, "trials": 8, "fs": 125, "fixation_s": 1, "rest_s": 1,
             "layout": "both", "seed": 0}

    def write(self, root):
        from test_eeg_mi import write_mat

        for subject in (1, 2):
            write_mat(root, subject, trials=8)


CASES = {c.name: c for c in DatasetTestCase.__subclasses__()
         + [s for c in DatasetTestCase.__subclasses__() for s in c.__subclasses__()]}


def test_every_entry_has_a_case():
    assert set(datasets.names()) | set(UNREGISTERED) <= set(CASES)


def test_no_task_imports_a_generator():
    """Generators are data set options: no module under tasks/ imports neuromark.synth."""
    offenders = [str(p.relative_to(SRC)) for p in sorted((SRC / "tasks").rglob("*.py"))
                 if re.search(r"^\s*(from|import)\s+neuromark\.synth\b", p.read_text(encoding="utf-8"),
                              re.MULTILINE)]
    assert offenders == []


class _Lax:
    """An entry that breaks the contract: an ftp address, an unknown digest, no checking."""

    name, citation, urls, manifest = "lax", "@misc{lax}", ("ftp://example.org/x",), {"x": "sha1:00"}

    def download(self, root):
        return Path(root)

    def verify(self, root):
        pass


def test_the_checks_fail_on_a_broken_entry(tmp_path):
    with pytest.raises(ContractError) as caught:
        check_declares_contract(_Lax())
    assert "urls is ('ftp://example.org/x',)" in str(caught.value)
    assert "manifest['x'] = 'sha1:00'" in str(caught.value)
    (tmp_path / "x.bin").write_bytes(b"0123456789")
    with pytest.raises(ContractError, match="verify.. passed with x.bin corrupted"):
        check_verify_names_damage(_Lax(), tmp_path, "x.bin", "corrupted")


def test_the_whole_check_in_one_call(tmp_path):
    """What a plugin author calls: every check of neuromark.testing.dataset at once."""
    case = TestDVSGesture()
    check_dataset_entry(_entry(case.name), case.write, tmp_path, damage=case.damage,
                        options=case.options, shape=case.shape, num_classes=case.num_classes,
                        synth=case.synth)
