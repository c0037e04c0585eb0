"""The nmnist family: both folder layouts and their errors, the kernel's binning of the
events, the baseline network and its training command, and the shipped baseline through
``neuromark run`` against a plain-torch evaluation on tonic's decoding of the same files.

The data set contract (verify, damage, no download while reading) runs centrally from
``cases.DATASET_CASES`` (``tests/test_dataset_contract.py``).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.benchmarks.nmnist.dataset import NMNIST, NMNIST_ENTRY, SHIPPED_DIR, frames_of
from neuromark.benchmarks.nmnist.model import NMNISTSNN, SHIPPED_CHECKPOINT, nmnist_snn, train
from neuromark.benchmarks.nmnist.reader import read_recording, write_recording
from neuromark.cli import main
from neuromark.data.event_dtypes import make_camera_events
from neuromark.errors import ConfigError, DataError

ROOT = Path(__file__).resolve().parents[1]
SHORT = ROOT / "configs" / "nmnist" / "nmnist_snn_short.yaml"


def _needs_snntorch() -> None:
    pytest.importorskip("snntorch", reason="the baseline is an snnTorch network (extra: snntorch)")


def _lines(path: Path) -> list[tuple[int, int]]:
    rows = [line.split() for line in path.read_text().splitlines()[1:] if line.strip()]
    return [(int(a), int(b)) for a, b in rows]


def test_the_shipped_subset_is_read_in_list_order_with_the_lists_labels():
    test, train_split = NMNIST(split="test"), NMNIST(split="train")
    assert len(test) == 30 and len(train_split) == 10
    assert [(int(f.stem), y) for f, y in test.samples] == _lines(SHIPPED_DIR / "test30.txt")
    assert train_split.targets[:4] == [5, 0, 4, 1] and test.targets[:2] == [7, 2]  # MNIST's own order
    NMNIST_ENTRY.verify(SHIPPED_DIR)


def test_frames_are_the_kernels_bins_of_each_event_at_its_polarity_row_and_column(tmp_path):
    ev = make_camera_events([0, 9_999, 10_000, 339_999, 340_000], [3, 3, 33, 0, 7], [5, 5, 0, 33, 8],
                            [1, 1, 0, 1, 0])
    frames = frames_of(ev, dt_us=10_000, t_max_us=340_000)
    assert frames.shape == (34, 2, 34, 34) and frames.dtype == np.float32
    assert frames.sum() == 5
    assert frames[0, 1, 5, 3] == 2          # two ON events in bin 0 at x 3, y 5
    assert frames[1, 0, 0, 33] == 1         # t = 10,000 us starts bin 1
    assert frames[33, 1, 33, 0] == 1        # the last bin
    assert frames[33, 0, 8, 7] == 1         # t = t_max goes in the last bin (the kernel's rule)


def test_a_late_event_is_an_error_naming_the_file_or_is_dropped_and_counted(tmp_path):
    root = tmp_path / "nm"
    write_recording(root / "Test" / "3" / "00001.bin", make_camera_events([0, 50, 900], [1, 2, 3], [1, 1, 1],
                                                                          [0, 1, 1]))
    (root / "Train").mkdir()
    with pytest.raises(DataError, match=r"00001\.bin: event 2 at 900 us is after t_max_us=500"):
        len(NMNIST(root, "test", dt_us=100, t_max_us=500))
    data = NMNIST(root, "test", dt_us=100, t_max_us=500, late="drop")
    frames, label = data[0]
    assert label == 3 and frames.shape == (5, 2, 34, 34) and float(frames.sum()) == 2
    assert data.dropped_late == {"00001.bin": 1}


def test_bad_binning_options_are_config_errors_before_any_read(tmp_path):
    with pytest.raises(ConfigError, match="dt_us must be a positive integer"):
        NMNIST(tmp_path / "absent", dt_us=0)
    with pytest.raises(ConfigError, match="t_max_us=5 must be >= dt_us=10"):
        NMNIST(tmp_path / "absent", dt_us=10, t_max_us=5)


def _published(root: Path) -> Path:
    for name, folder, label in (("1.bs2", "Train", 5), ("60001.bs2", "Test", 7)):
        (root / folder / str(label)).mkdir(parents=True)
        shutil.copyfile(SHIPPED_DIR / name, root / folder / str(label) / f"{name[:-4]}.bin")
    return root


def test_the_published_layout_reads_labels_from_the_digit_folders(tmp_path):
    data = NMNIST(_published(tmp_path / "nm"), "test")
    assert data.targets == [7]
    assert np.array_equal(data.events(0), read_recording(SHIPPED_DIR / "60001.bs2"))


@pytest.mark.parametrize(("make", "said"), [
    (lambda r: r.mkdir(), "not an N-MNIST folder: neither Train/ and Test/"),
    (lambda r: (r / "Test" / "seven").mkdir(parents=True), r"Test/seven: not a digit folder 0-9"),
    (lambda r: (r / "Test" / "7").mkdir(parents=True) or (r / "Test" / "7" / "a.txt").write_text("x"),
     r"Test/7/a\.txt: not a \.bin recording"),
    (lambda r: (r / "Test" / "7").mkdir(parents=True), r"Test: no \.bin recordings"),
    (lambda r: r.mkdir() or (r / "test9.txt").write_text("#h\n60001 7\nsixty 2\n"),
     r"test9\.txt:3: expected '<sample number> <label>', got 'sixty 2'"),
    (lambda r: r.mkdir() or (r / "test9.txt").write_text("#h\n60001 12\n"), r"test9\.txt:2: label 12 is not"),
    (lambda r: r.mkdir() or (r / "test9.txt").write_text("#h\n5 1\n"),
     r"5\.bs2: missing \(listed in test9\.txt, line 2\)"),
    (lambda r: r.mkdir() or (r / "test1.txt").write_text("") or (r / "test2.txt").write_text(""),
     r"2 \(test1\.txt, test2\.txt\) test\*\.txt label list"),
])
def test_a_wrong_layout_names_the_folder_or_file_and_what_was_expected(tmp_path, make, said):
    root = tmp_path / "nm"
    make(root)
    with pytest.raises(DataError, match=said):
        len(NMNIST(root, "test"))


def test_the_network_steps_over_time_and_the_shipped_checkpoint_fits_it():
    _needs_snntorch()
    model = nmnist_snn()
    assert sum(p.numel() for p in model.module.parameters()) == 14_546
    out = model(torch.zeros(3, 4, 2, 34, 34))
    assert out.shape == (3, 4, 10)
    payload = torch.load(SHIPPED_CHECKPOINT, weights_only=True)
    model.module.load_state_dict(payload["state_dict"])
    assert payload["meta"]["train_samples"] == 1000 and payload["meta"]["seed"] == 0


def test_training_is_seeded(tmp_path):
    _needs_snntorch()
    data = NMNIST(split="train", dt_us=40_000)
    first = train(data, epochs=1, batch_size=4, seed=3, quiet=True)[0].state_dict()
    again = train(data, epochs=1, batch_size=4, seed=3, quiet=True)[0].state_dict()
    other = train(data, epochs=1, batch_size=4, seed=4, quiet=True)[0].state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["fc.weight"], other["fc.weight"])


def _plain_accuracy(files_labels: list[tuple[Path, int]], state: dict) -> float:
    """Accuracy of the checkpoint on tonic's decoding of the files, binned with numpy here,
    stepped by hand (ties: the lowest class, as NeuroBench's ChooseMaxCount)."""
    tonic = pytest.importorskip("tonic", reason="tonic (the independent N-MNIST decoder) is not installed")
    from tonic.io import read_mnist_file

    net = NMNISTSNN()
    net.load_state_dict(state)
    net.eval()
    correct = 0
    for path, label in files_labels:
        ev = read_mnist_file(str(path), dtype=tonic.datasets.NMNIST.dtype)
        frames = np.zeros((34, 2, 34, 34), np.float32)
        np.add.at(frames, (np.minimum(ev["t"] // 10_000, 33), ev["p"], ev["y"], ev["x"]), 1)
        with torch.no_grad():
            net.reset_state()
            counts = sum(net(torch.from_numpy(frames[k])[None]) for k in range(34))[0]
        correct += int(int(torch.argmax(counts)) == label)
    return correct / len(files_labels)


def test_the_short_config_runs_the_shipped_baseline_and_agrees_with_a_plain_evaluation(tmp_path):
    _needs_snntorch()
    out = tmp_path / "out"
    assert main(["run", str(SHORT), "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--quiet"]) == 0
    (result,) = [json.loads(p.read_text()) for p in out.glob("*.json")]
    scores = result["scores"]
    for name in ("classification_accuracy", "footprint", "connection_sparsity", "activation_sparsity",
                 "synaptic_operations", "membrane_updates"):
        assert name in scores, name
    acc = scores["classification_accuracy"]
    assert result["details"]["samples"] == 30
    assert acc["error"] == pytest.approx(math.sqrt(acc["value"] * (1 - acc["value"]) / 29))
    assert result["flags"] == []  # no tied decoding, no untrained weights
    assert scores["footprint"]["raw"]["parameters"] == 14_546 * 4
    _same_as_the_docs_figures(result)
    files = [(SHIPPED_DIR / f"{n}.bs2", y) for n, y in _lines(SHIPPED_DIR / "test30.txt")]
    state = torch.load(SHIPPED_CHECKPOINT, weights_only=True)["state_dict"]
    assert acc["value"] == pytest.approx(_plain_accuracy(files, state), abs=1e-12)


def _same_as_the_docs_figures(result: dict) -> None:
    """The run re-derives docs/figures.json's nmnist_snn_short figures (to the digit where
    they were derived on this machine's float path; else the accuracy alone)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    doc_figures = sys.modules.get("doc_figures") or importlib.util.module_from_spec(spec)
    if "doc_figures" not in sys.modules:
        sys.modules["doc_figures"] = doc_figures
        spec.loader.exec_module(doc_figures)
    markers = doc_figures.doc_markers
    recorded = {k: e for k, e in markers.load_figures().items() if k.startswith("nmnist_snn_short.")}
    fresh = doc_figures.figures_of("nmnist_snn_short", [result])
    assert set(fresh) == set(recorded)
    same_path = {e.get("float_path") for e in recorded.values()} == {markers.float_path()}
    for key in fresh if same_path else ["nmnist_snn_short.classification_accuracy"]:
        assert fresh[key] == pytest.approx(recorded[key]["value"], rel=1e-6, abs=1e-9), key


def test_a_folder_that_is_not_n_mnist_fails_the_run_with_its_name_and_no_traceback(tmp_path, capsys):
    _needs_snntorch()
    config = tmp_path / "bad.yaml"
    text = SHORT.read_text().replace("options:            # no root: the shipped subset",
                                     f"options:\n    root: {tmp_path / 'empty'}")
    text = text.replace("../../src/", f"{ROOT}/src/")
    (tmp_path / "empty").mkdir()
    config.write_text(text)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert f"{tmp_path / 'empty'}: not an N-MNIST folder" in err and "Traceback" not in err


def _zip(path: Path, members: dict[str, bytes]) -> str:
    import hashlib
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return hashlib.md5(path.read_bytes()).hexdigest()  # noqa: S324 (the published digest's kind)


def test_download_checks_the_md5_unpacks_the_published_layout_and_records_it(tmp_path, monkeypatch):
    """Local archives through file:// URLs (no network): a good pair unpacks and verifies;
    a wrong md5 keeps nothing."""
    from neuromark.benchmarks.nmnist import dataset
    from neuromark.errors import ChecksumError

    served = tmp_path / "served"
    served.mkdir()
    rec = (SHIPPED_DIR / "1.bs2").read_bytes()
    md5 = {split: _zip(served / f"{split}.zip", {f"{folder}/5/00001.bin": rec})
           for split, folder in (("train", "Train"), ("test", "Test"))}
    good = {s: (f"file://{served / f'{s}.zip'}", f"{s}.zip", md5[s]) for s in ("train", "test")}
    monkeypatch.setattr(dataset, "ARCHIVES", good)
    monkeypatch.setattr(type(NMNIST_ENTRY), "manifest", {f"{s}.zip": f"md5:{md5[s]}" for s in md5})
    root = NMNIST_ENTRY.download(tmp_path / "data")
    assert (root / "SHA256SUMS").is_file() and NMNIST(root, "test").targets == [5]
    NMNIST_ENTRY.verify(root)
    monkeypatch.setattr(dataset, "ARCHIVES", {**good, "train": (good["train"][0], "train.zip", "0" * 32)})
    with pytest.raises(ChecksumError, match="train.zip"):
        NMNIST_ENTRY.download(tmp_path / "other")
    assert not (tmp_path / "other" / "train.zip").exists() and not (tmp_path / "other" / "Train").exists()
