"""``neuromark data cochlea``: folders and label CSVs of audio files to SHD-layout spikes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

soundfile = pytest.importorskip("soundfile")
pytest.importorskip("numba")

from neuromark.cli import main  # noqa: E402
from neuromark.errors import DataError  # noqa: E402
from neuromark.processors.cochlea.convert import discover  # noqa: E402


def _tone(path: Path, freq: float, rate: int = 16000, seconds: float = 0.05) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(rate * seconds)) / rate
    soundfile.write(str(path), 0.5 * np.sin(2 * np.pi * freq * t), rate)


def test_discover_uses_subfolders_as_classes(tmp_path: Path) -> None:
    _tone(tmp_path / "yes" / "b.wav", 500)
    _tone(tmp_path / "yes" / "a.flac", 600)
    _tone(tmp_path / "no" / "deep" / "c.wav", 700)
    (tmp_path / "no" / "notes.txt").write_text("not audio")
    files, labels, keys, speakers = discover(tmp_path)
    assert keys == ["no", "yes"]
    assert [f.name for f in files] == ["c.wav", "a.flac", "b.wav"]
    assert labels.tolist() == [0, 1, 1] and speakers is None


def test_discover_reads_label_csv(tmp_path: Path) -> None:
    _tone(tmp_path / "x.wav", 500)
    _tone(tmp_path / "y.wav", 600)
    csv = tmp_path / "labels.csv"
    csv.write_text("file,label,speaker\ny.wav,up,4\nx.wav,down,2\n")
    files, labels, keys, speakers = discover(tmp_path, csv)
    assert [f.name for f in files] == ["y.wav", "x.wav"]
    assert keys == ["down", "up"] and labels.tolist() == [1, 0] and speakers.tolist() == [4, 2]
    csv.write_text("file,label\nx.wav,3\ny.wav,0\n")
    assert discover(tmp_path, csv)[1].tolist() == [3, 0]


def test_label_csv_errors_name_file_and_line(tmp_path: Path) -> None:
    _tone(tmp_path / "x.wav", 500)
    csv = tmp_path / "labels.csv"
    csv.write_text("file,label\nx.wav,1\nmissing.wav,2\n")
    with pytest.raises(DataError, match=r"labels.csv:3: audio file .*missing.wav does not exist"):
        discover(tmp_path, csv)
    csv.write_text("path,class\nx.wav,1\n")
    with pytest.raises(DataError, match="labels.csv: the header must name the columns 'file' and 'label'"):
        discover(tmp_path, csv)
    with pytest.raises(DataError, match="no audio files"):
        discover(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_cli_writes_readable_shd_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from neuromark.data.hdf5_spikes import read_shd_file

    _tone(tmp_path / "in" / "low" / "a.wav", 300)
    _tone(tmp_path / "in" / "high" / "b.wav", 5000)
    out = tmp_path / "out.h5"
    assert main(["data", "cochlea", str(tmp_path / "in"), str(out), "--jobs", "1"]) == 0
    samples = read_shd_file(out)
    assert len(samples) == 2 and samples.keys == ["high", "low"]
    assert samples.labels.tolist() == [0, 1]
    # the 5-kHz tone drives basal (low-index) channels more than the 300-Hz tone does
    hi_units, lo_units = samples.spikes(0)[1], samples.spikes(1)[1]
    assert np.median(hi_units) < np.median(lo_units)
    assert "wrote" in capsys.readouterr().out
    import h5py

    with h5py.File(out) as handle:  # no --sample-rate: resampled to SHD's 48 kHz
        assert int(handle.attrs["cochlea_sample_rate"]) == 48000


def test_cli_bad_input_exits_1_naming_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "cochlea", str(tmp_path / "nope"), str(tmp_path / "o.h5")]) == 1
    assert "nope: not a directory" in capsys.readouterr().err


@pytest.mark.slow
def test_worker_processes_give_the_same_spikes_as_one_process() -> None:
    from neuromark.processors.cochlea.convert import Clip, clips_to_spikes

    rate = 16000
    t = np.arange(int(0.05 * rate)) / rate
    clips = [Clip(np.sin(2 * np.pi * f * t), rate) for f in (300.0, 900.0, 2700.0)]
    one = clips_to_spikes(clips, seed=5, jobs=1)
    two = clips_to_spikes(clips, seed=5, jobs=2)
    for (t1, u1), (t2, u2) in zip(one, two):
        assert np.array_equal(t1, t2) and np.array_equal(u1, u2)
