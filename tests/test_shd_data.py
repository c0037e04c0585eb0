"""SHD layout reader/writer, data sets, downloads and ``neuromark data info`` (offline)."""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

from neuromark.benchmarks.shd.datasets import SHD, SSC, SpikeFileDataset
from neuromark.cli import main
from neuromark.data.download import fetch, file_digest, unpack, verify_file
from neuromark.data.event_dtypes import SPIKE_EVENT_DTYPE, make_spike_events, seconds_to_us
from neuromark.data.hdf5_spikes import read_shd_file, write_shd_file
from neuromark.errors import ChecksumError, ConfigError, DataError

TIMES = [np.array([0.5, 0.001, 0.25]), np.array([]), np.array([1.0, 0.75])]
UNITS = [np.array([3, 699, 0]), np.array([], dtype=int), np.array([10, 20])]


def write_small(path: Path) -> Path:
    return write_shd_file(path, TIMES, UNITS, [1, 0, 1], [4, 5, 4], ["zero", "one"],
                          {"gender": ["female", "male", "male", "female", "male", "female"],
                           "age": np.arange(6, dtype=np.uint16)})


def write_raw(path: Path, times: list, units: list, labels: list, *, tdtype=np.float16) -> Path:
    """An SHD-layout file written directly with h5py (for malformed cases)."""
    with h5py.File(path, "w") as f:
        t = f.create_dataset("spikes/times", (len(times),), dtype=h5py.vlen_dtype(tdtype))
        for i, x in enumerate(times):
            t[i] = np.asarray(x, dtype=tdtype)
        u = f.create_dataset("spikes/units", (len(units),), dtype=h5py.vlen_dtype(np.uint16))
        for i, x in enumerate(units):
            u[i] = np.asarray(x, dtype=np.uint16)
        f.create_dataset("labels", data=np.asarray(labels, dtype=np.uint16))
    return path


def test_events_dtype_and_us_conversion():
    assert SPIKE_EVENT_DTYPE.names == ("t", "unit")
    # float16(0.001) = 0.0010004043579101562 s -> floor to 1000 us
    assert seconds_to_us(np.float16(0.001)).item() == 1000
    ev = make_spike_events(np.array([0.25, 1.5]), np.array([7, 8]))
    assert ev["t"].tolist() == [250_000, 1_500_000] and ev["unit"].tolist() == [7, 8]
    with pytest.raises(ValueError, match="equal length"):
        make_spike_events([0.1, 0.2], [1])


def test_write_read_roundtrip_exact_layout(tmp_path):
    path = write_small(tmp_path / "x.h5")
    with h5py.File(path) as f:
        assert f["spikes/times"].dtype.metadata["vlen"] == np.float16
        assert f["spikes/units"].dtype.metadata["vlen"] == np.uint16
        assert f["labels"].dtype == np.uint16 and f["extra/speaker"].dtype == np.uint16
        assert f["extra/keys"][()].tolist() == [b"zero", b"one"]
        assert f["extra/meta_info/gender"][()][1] == b"male"
        # sorted by time within a sample, float16 storage
        assert f["spikes/times"][0].tolist() == [np.float16(0.001), 0.25, 0.5]
        assert f["spikes/units"][0].tolist() == [699, 0, 3]
    s = read_shd_file(path)
    assert len(s) == 3 and s.counts().tolist() == [3, 0, 2]
    assert s.labels.tolist() == [1, 0, 1] and s.speakers.tolist() == [4, 5, 4]
    assert s.keys == ["zero", "one"]
    assert s.meta_info["age"].tolist() == [0, 1, 2, 3, 4, 5]
    times, units = s.spikes(2)
    assert times.tolist() == [0.75, 1.0] and units.tolist() == [20, 10]
    assert s.events(0)["t"].tolist() == [1000, 250_000, 500_000]
    sub = s.subset([2, 0])
    assert sub.labels.tolist() == [1, 1] and sub.counts().tolist() == [2, 3]
    assert sub.spikes(1)[1].tolist() == [699, 0, 3]


def test_writer_is_deterministic(tmp_path):
    a = write_small(tmp_path / "a.h5").read_bytes()
    b = write_small(tmp_path / "b.h5").read_bytes()
    assert hashlib.sha256(a).hexdigest() == hashlib.sha256(b).hexdigest()


@pytest.mark.parametrize("times, units, match", [
    ([[0.1, 0.2]], [[1]], "sample 0: 2 times but 1 units"),
    ([[0.1], [0.2]], [[1], [700]], r"sample 1: units must be in 0..699"),
    ([[0.1], [-0.2]], [[1], [2]], "sample 1: spike times must be finite"),
    ([[0.1], [1e6]], [[1], [2]], "sample 1: spike times must be finite"),
])
def test_writer_rejects_bad_samples(tmp_path, times, units, match):
    with pytest.raises(DataError, match=match):
        write_shd_file(tmp_path / "bad.h5", times, units, [0] * len(times))
    assert not (tmp_path / "bad.h5").exists()


@pytest.mark.parametrize("labels, speakers, match", [
    ([0, 70000], None, r"sample 1: label 70000 is not an integer in 0\.\.65535"),  # was stored as 4464
    ([0, 1], [3, -1], r"sample 1: speaker id -1 is not an integer in 0\.\.65535"),  # was 65535
    ([0, 1], [65536, 0], r"sample 0: speaker id 65536 is not an integer"),  # was 0
    ([0.0, 1.5], None, r"sample 1: label 1\.5 is not an integer"),  # was 1
    ([0.0, np.nan], None, r"sample 1: label nan is not an integer"),
])
def test_writer_rejects_labels_and_speakers_beyond_uint16(tmp_path, labels, speakers, match):
    with pytest.raises(DataError, match=match):
        write_shd_file(tmp_path / "bad.h5", [[0.1], [0.2]], [[1], [2]], labels, speakers)
    assert not (tmp_path / "bad.h5").exists()
    assert list(tmp_path.iterdir()) == []  # no temp file left behind either


def test_writer_keeps_the_uint16_extremes(tmp_path):
    path = write_shd_file(tmp_path / "x.h5", [[0.1], [0.2]], [[1], [2]], np.array([65535, 0]),
                          np.array([0, 65535], dtype=np.int64))
    samples = read_shd_file(path)
    assert samples.labels.tolist() == [65535, 0] and samples.speakers.tolist() == [0, 65535]
    path = write_shd_file(tmp_path / "y.h5", [[0.1]], [[1]], np.array([3.0]))  # integral floats pass
    assert read_shd_file(path).labels.tolist() == [3]


def test_writer_rejects_count_mismatch(tmp_path):
    with pytest.raises(DataError, match="2 times arrays, 2 units arrays and 1 labels"):
        write_shd_file(tmp_path / "bad.h5", [[0.1], [0.2]], [[1], [2]], [0])


def test_reader_names_sample_with_unit_out_of_range(tmp_path):
    path = write_raw(tmp_path / "u.h5", [[0.1], [0.2, 0.3]], [[1], [5, 700]], [0, 1])
    with pytest.raises(DataError, match=r"u\.h5: sample 1: unit 700 is out of range 0\.\.699"):
        read_shd_file(path)
    assert len(read_shd_file(path, channels=701)) == 2


def test_reader_names_sample_with_mismatched_lengths(tmp_path):
    path = write_raw(tmp_path / "m.h5", [[0.1], [0.2, 0.3], [0.4]], [[1], [5], [6]], [0, 1, 0])
    with pytest.raises(DataError, match=r"m\.h5: sample 1: spikes/times has 2 entries but spikes/units"):
        read_shd_file(path)


def test_reader_rejects_label_count_and_negative_times(tmp_path):
    path = write_raw(tmp_path / "l.h5", [[0.1], [0.2]], [[1], [5]], [0])
    with pytest.raises(DataError, match=r"l\.h5: labels has 1 entries but spikes has 2 samples"):
        read_shd_file(path)
    path = write_raw(tmp_path / "n.h5", [[0.1], [0.2, -0.3]], [[1], [5, 6]], [0, 0])
    with pytest.raises(DataError, match=r"n\.h5: sample 1: spike time -0\.3.* negative"):
        read_shd_file(path)


def test_reader_rejects_missing_dataset_truncated_and_non_hdf5(tmp_path):
    with h5py.File(tmp_path / "empty.h5", "w") as f:
        f.create_dataset("labels", data=[0])
    with pytest.raises(DataError, match=r"empty\.h5: missing dataset 'spikes/times'"):
        read_shd_file(tmp_path / "empty.h5")
    good = write_small(tmp_path / "good.h5").read_bytes()
    (tmp_path / "trunc.h5").write_bytes(good[: len(good) // 2])
    with pytest.raises(DataError, match=r"trunc\.h5: not a readable HDF5 file .*truncated"):
        read_shd_file(tmp_path / "trunc.h5")
    (tmp_path / "text.h5").write_text("hello")
    with pytest.raises(DataError, match=r"text\.h5: not a readable HDF5"):
        read_shd_file(tmp_path / "text.h5")
    with pytest.raises(DataError, match=r"nope\.h5: no such file"):
        read_shd_file(tmp_path / "nope.h5")


def test_spike_file_dataset_items_and_dense(tmp_path):
    path = write_small(tmp_path / "x.h5")
    ds = SpikeFileDataset(path, target_transform=lambda y: y + 100)
    assert len(ds) == 3 and ds.classes == ["zero", "one"]
    events, label = ds[2]
    assert label == 101 and events.dtype == SPIKE_EVENT_DTYPE
    assert events["t"].tolist() == [750_000, 1_000_000] and events["unit"].tolist() == [20, 10]
    assert ds[-1][0].tolist() == events.tolist()
    with pytest.raises(IndexError, match="sample 3 out of range"):
        ds[3]
    frames, labels = ds.dense(250_000, 1_000_000, pool=10)
    assert frames.shape == (3, 4, 70) and labels.tolist() == [1, 0, 1]
    # sample 2: 0.75 s unit 20 -> bin 3, ch 2; 1.0 s (= t_max) unit 10 -> last bin, ch 1
    assert frames[2, 3, 2] == 1 and frames[2, 3, 1] == 1 and frames[2].sum() == 2
    assert frames[0, 0, 69] == 1 and frames[0, 1, 0] == 1 and frames[0, 2, 0] == 1


def test_shd_ssc_classes_find_files_and_verify(tmp_path):
    write_small(tmp_path / "shd_test.h5")
    ds = SHD(tmp_path, "test")
    assert ds.path == tmp_path / "shd_test.h5" and len(ds) == 3
    assert SHD.url("train") == "https://zenkelab.org/datasets/shd_train.h5.zip"
    assert SSC.url("valid", "gz") == "https://zenkelab.org/datasets/ssc_valid.h5.gz"
    assert "Cramer" in SHD.citation
    ds.verify()
    with pytest.raises(ConfigError, match="unknown split 'valid'"):
        SHD(tmp_path, "valid")
    with pytest.raises(DataError, match=r"shd_train\.h5: no such file"):
        SHD(tmp_path, "train").verify()
    (tmp_path / "shd_test.h5.zip").write_bytes(b"not the real archive")
    with pytest.raises(ChecksumError, match=r"shd_test\.h5\.zip: md5 is .* expected 1503a506"):
        ds.verify()
    # download() returns the existing file without touching the network
    assert ds.download() == ds.path


def test_fetch_file_url_verifies_sha256(tmp_path):
    src = tmp_path / "src" / "data.bin"
    src.parent.mkdir()
    src.write_bytes(b"spikes" * 100)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    out = fetch(src.as_uri(), tmp_path / "dl", sha256=digest)
    assert out.read_bytes() == src.read_bytes() and file_digest(out) == digest
    with pytest.raises(ChecksumError, match=r"data\.bin: sha256 is .* expected 0000"):
        fetch(src.as_uri(), tmp_path / "dl2", sha256="0" * 64)
    assert list((tmp_path / "dl2").iterdir()) == []  # nothing that looks complete is left
    with pytest.raises(ChecksumError, match="without a sha256 or md5"):
        fetch(src.as_uri(), tmp_path / "dl3")
    with pytest.raises(DataError, match="cannot download file://"):
        fetch((tmp_path / "missing.bin").as_uri(), tmp_path / "dl4", sha256=digest)
    md5 = hashlib.md5(src.read_bytes()).hexdigest()
    verify_file(out, md5=md5, sha256=digest)
    with pytest.raises(ChecksumError, match="no checksum known"):
        verify_file(out)


def test_unpack_gz_and_zip(tmp_path):
    payload = b"\x89HDF fake payload" * 50
    gz = tmp_path / "shd_test.h5.gz"
    gz.write_bytes(gzip.compress(payload))
    assert unpack(gz) == [tmp_path / "shd_test.h5"]
    assert (tmp_path / "shd_test.h5").read_bytes() == payload
    zp = tmp_path / "a.h5.zip"
    with zipfile.ZipFile(zp, "w") as z:
        z.writestr("ssc_valid.h5", payload)
    assert unpack(zp, tmp_path / "out") == [tmp_path / "out" / "ssc_valid.h5"]
    (tmp_path / "bad.h5.gz").write_bytes(gzip.compress(payload)[:20])
    with pytest.raises(DataError, match=r"bad\.h5\.gz: corrupt or truncated gzip"):
        unpack(tmp_path / "bad.h5.gz")
    (tmp_path / "bad.zip").write_bytes(b"PK not really")
    with pytest.raises(DataError, match=r"bad\.zip: corrupt or truncated zip"):
        unpack(tmp_path / "bad.zip")
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as z:
        z.writestr("../escape.h5", payload)
    with pytest.raises(DataError, match="unsafe member path '../escape.h5'"):
        unpack(tmp_path / "evil.zip")
    with pytest.raises(DataError, match="cannot unpack '.tar'"):
        unpack(tmp_path / "x.tar")


def test_cli_data_info(tmp_path, capsys):
    path = write_small(tmp_path / "x.h5")
    assert main(["data", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "samples: 3" in out and "classes: 2" in out
    assert "   0 zero                     1" in out and "   1 one                      2" in out
    assert "spikes: 5 (per sample: min 0, mean 1.7, max 3)" in out
    assert "time range: 0.001000 .. 1.000000 s" in out
    assert "channel range: 0 .. 699 (of 700)" in out and "speakers: 2" in out


def test_cli_data_info_bad_file(tmp_path, capsys):
    bad = write_raw(tmp_path / "bad.h5", [[0.1]], [[900]], [0])
    assert main(["data", "info", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.h5: sample 0: unit 900 is out of range" in err
    (tmp_path / "junk.h5").write_bytes(b"junk")
    assert main(["data", "info", str(tmp_path / "junk.h5")]) == 1
    assert "junk.h5: not a readable HDF5 file" in capsys.readouterr().err


def test_dataset_transform_bins_one_sample_and_data_without_subcommand(tmp_path, capsys):
    from neuromark.processors.spike_transforms import BinSpikes

    ds = SpikeFileDataset(write_small(tmp_path / "x.h5"),
                          transform=BinSpikes(dt_us=500_000, t_max_us=1_000_000, channels=700))
    frame, label = ds[0]
    assert frame.shape == (2, 700) and label == 1
    # sample 0: 0.001 s unit 699, 0.25 s unit 0 -> bin 0; 0.5 s unit 3 -> bin 1
    assert frame[0, 699] == 1 and frame[0, 0] == 1 and frame[1, 3] == 1 and frame.sum() == 3
    assert main(["data"]) == 2
    assert "info" in capsys.readouterr().out


def test_written_spike_files_get_normal_permissions(tmp_path):
    import os

    from neuromark.data.hdf5_spikes import write_shd_file

    path = write_shd_file(tmp_path / "x.h5", [[0.1]], [[3]], [0])
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_downloaded_and_unpacked_files_get_normal_permissions(tmp_path):
    import os

    mask = os.umask(0)
    os.umask(mask)
    src = tmp_path / "src" / "data.bin"
    src.parent.mkdir()
    src.write_bytes(b"spikes")
    out = fetch(src.as_uri(), tmp_path / "dl", sha256=hashlib.sha256(b"spikes").hexdigest())
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    gz = tmp_path / "x.h5.gz"
    gz.write_bytes(gzip.compress(b"payload"))
    [unpacked] = unpack(gz, tmp_path / "un")
    assert unpacked.stat().st_mode & 0o777 == 0o666 & ~mask
    assert sorted(p.name for p in (tmp_path / "un").iterdir()) == ["x.h5"]  # no temp file left
    # md5 and sha256 are compared case-insensitively, in fetch as in verify_file
    upper = fetch(src.as_uri(), tmp_path / "dl5", md5=hashlib.md5(b"spikes").hexdigest().upper())
    verify_file(upper, md5=hashlib.md5(b"spikes").hexdigest().upper())
    with pytest.raises(ChecksumError, match=r"data\.bin: md5 is .* expected 0+ \(corrupt or incomplete"):
        verify_file(upper, md5="0" * 32)
