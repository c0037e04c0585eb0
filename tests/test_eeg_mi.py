"""EEG motor imagery: the Lee2019 ``.mat`` reader and ThorEEGMI preprocessing, the challenge
arrays, splits, generator and the CSP + LDA reference; fixtures written here in the real
layouts (MATLAB v5 structs as scipy.io writes them, ``.npy`` arrays)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.eeg_mi import lee2019
from neuromark.benchmarks.eeg_mi.cases import mat_struct, write_mat
from neuromark.benchmarks.eeg_mi.reader import EEG_MI, read_arrays, within_subject_split
from neuromark.errors import DataError

sio = pytest.importorskip("scipy.io")






def test_reads_and_preprocesses_to_250_steps(tmp_path):
    for subject in (1, 2):
        write_mat(tmp_path, subject, trials=20)
    data = EEG_MI.load(tmp_path, "train", sessions=[1])
    x, y = data[0]
    assert tuple(x.shape) == (250, 62) and str(x.dtype) == "torch.float32" and y in (0, 1)
    counts = [len(EEG_MI.load(tmp_path, s, sessions=[1])) for s in ("train", "valid", "test")]
    assert counts == [2 * 12, 2 * 4, 2 * 4]  # per subject and class (10): ceil(1.5) = 2 test, 2 valid
    v = EEG_MI.load(tmp_path, "test", sessions=[1], unit="V").arrays()[0]
    u = EEG_MI.load(tmp_path, "test", sessions=[1]).arrays()[0]
    assert np.allclose(v * 1e6, u, rtol=1e-4, atol=1e-3)


def test_band_pass_keeps_mu_and_removes_out_of_band():
    fs, t = 200.0, np.arange(2000) / 200.0
    for p in (lee2019.Preprocessing(), lee2019.Preprocessing(filter="fir", order=200)):
        gain = [np.std(lee2019.band_pass(np.sin(2 * np.pi * f * t)[:, None], fs, p)[400:-400]) / np.sqrt(0.5)
                for f in (2.0, 12.0, 45.0)]
        assert gain[1] > 0.9 and gain[0] < 0.1 and gain[2] < 0.1, (p.filter, gain)


def test_labels_are_right_0_left_1(tmp_path):
    write_mat(tmp_path, 1, trials=4)
    run = lee2019.read_run(tmp_path / "session1/s1/sess01_subj01_EEG_MI.mat")
    assert run.labels.tolist() == [0, 1, 0, 1] and run.chan[-2:] == ["C3", "C4"] and run.fs == 200


@pytest.mark.parametrize("change, match", [
    ({"drop": ("y_dec",)}, "EEG_MI_train has no field y_dec"),
    ({"drop": ("chan", "fs")}, "no field fs, chan"),
    ({"y_dec": np.array([[1.0, 3.0, 1.0, 2.0]])}, r"y_dec: trial 1: label 3"),
    ({"t": np.array([[200.0, 1600.0, 3000.0, 10 ** 7]])}, r"\.t: onsets must be whole sample indices"),
])
def test_malformed_struct_names_file_and_field(tmp_path, change, match):
    path = write_mat(tmp_path, 1, trials=4, **change)
    with pytest.raises(DataError, match=rf"sess01_subj01_EEG_MI.mat.*{match}"):
        lee2019.read_run(path)


def test_nan_and_v73_and_garbage_are_named(tmp_path):
    rng = np.random.default_rng(0)
    x = (10 * rng.normal(size=(int(200 * 29), 62))).astype(np.float32)
    x[500, 3] = np.nan
    path = write_mat(tmp_path, 1, trials=4, x=x)
    with pytest.raises(DataError, match=r"EEG_MI_train\.x: sample 500 holds NaN"):
        lee2019.read_run(path)
    h5py = pytest.importorskip("h5py")
    v73 = tmp_path / lee2019.mat_name(1, 2)
    with h5py.File(v73, "w", userblock_size=512) as f:
        f["x"] = np.zeros(3)
    with open(v73, "r+b") as f:
        f.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64".ljust(116) + b"\x00" * 8 + b"\x00\x02IM")
    with pytest.raises(DataError, match="v7.3"):
        lee2019.read_run(v73)
    junk = tmp_path / lee2019.mat_name(1, 3)
    junk.write_bytes(b"not a mat file at all" * 10)
    with pytest.raises(DataError, match="sess01_subj03_EEG_MI.mat: not a readable MATLAB file"):
        lee2019.read_run(junk)


def test_missing_subject_file_is_named(tmp_path):
    write_mat(tmp_path, 1, trials=4)
    with pytest.raises(DataError, match="sess01_subj02_EEG_MI.mat"):
        len(EEG_MI.load(tmp_path, "test", subjects=[1, 2], sessions=[1]))


def test_channels_option_keeps_named_electrodes_and_names_a_missing_one(tmp_path):
    write_mat(tmp_path, 1, trials=4)
    full = EEG_MI.load(tmp_path, "test", sessions=[1]).arrays()[0]
    some = EEG_MI.load(tmp_path, "test", sessions=[1], channels=["C4", "c3", "E7"])
    assert some.input_shape == (250, 3)
    assert np.array_equal(some.arrays()[0], full[:, :, [61, 60, 7]])
    with pytest.raises(DataError, match=r"sess01_subj01_EEG_MI.mat: no channel Cz"):
        len(EEG_MI.load(tmp_path, "test", sessions=[1], channels=["C3", "Cz"]))
    with pytest.raises(DataError, match="needs source: mat"):
        EEG_MI.load(tmp_path, "test", source="npy", channels=["C3"])


def test_within_subject_split_is_68_16_16_and_cross_subject_refuses_overlap(tmp_path):
    labels = np.tile([0, 1], 100)
    groups = np.repeat([11, 12], 100)
    parts = within_subject_split(labels, groups, seed=0)
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [136, 32, 32]
    for subject in (1, 2, 3):
        write_mat(tmp_path, subject, trials=4)
    lists = {"train": [1, 2], "valid": [3], "test": [2]}
    with pytest.raises(DataError, match="subject 2 is in both the train and the test split"):
        len(EEG_MI.load(tmp_path, "test", sessions=[1], split_by="subject", subject_lists=lists))
    ok = {"train": [1], "valid": [2], "test": [3]}
    test = EEG_MI.load(tmp_path, "test", sessions=[1], split_by="subject", subject_lists=ok)
    assert set(test.subject_ids.tolist()) == {3}


def write_arrays(root: Path, rng, n_train=20, n_val=6) -> None:
    for part, n in (("train", n_train), ("val", n_val)):
        np.save(root / f"{part}_X.npy", rng.normal(size=(n, 250, 62)).astype(np.float32))
        np.save(root / f"{part}_y.npy", np.arange(n) % 2)


def test_challenge_arrays(tmp_path):
    write_arrays(tmp_path, np.random.default_rng(0))
    sizes = {s: len(EEG_MI.load(tmp_path, s, source="npy")) for s in ("train", "valid", "test")}
    assert sizes == {"train": 16, "valid": 4, "test": 6}  # valid: ceil(0.15 * 10) = 2 per class
    y = np.load(tmp_path / "val_y.npy")
    y[2] = 2
    np.save(tmp_path / "val_y.npy", y)
    with pytest.raises(DataError, match=r"val_y.npy: expected 6 labels 0 \(right\) or 1"):
        read_arrays(tmp_path)
    np.save(tmp_path / "val_y.npy", np.arange(6) % 2)
    x = np.load(tmp_path / "train_X.npy")
    x[4, 0, 0] = np.inf
    np.save(tmp_path / "train_X.npy", x)
    with pytest.raises(DataError, match="train_X.npy: trial 4 holds NaN or infinity"):
        read_arrays(tmp_path)


def test_surrogate_is_lateralised_and_csp_lda_finds_it(tmp_path):
    pytest.importorskip("mne")
    from neuromark.benchmarks.eeg_mi.models import CSP_LDA

    root = EEG_MI.synthesize(tmp_path / "s", subjects=4, sessions=1, trials=32, fs=125, fixation_s=1,
                             rest_s=1, rest_jitter_s=0.2, illiterate_fraction=0.25, layout="mat", seed=0)
    EEG_MI.verify(root)
    train, test = (EEG_MI.load(root, s, source="mat") for s in ("train", "test"))
    model, info = CSP_LDA.fit(CSP_LDA.options_model(), CSP_LDA.train_model(), train, 2)
    import torch

    x, y = test.arrays()
    pred = model.net(torch.from_numpy(x)).argmax(1).numpy()
    assert (pred == y).mean() > 0.7  # chance 0.5; one of four subjects near chance


def test_download_refuses_without_trusted_checksums(tmp_path):
    with pytest.raises(DataError, match="no published checksum for train_X.npy"):
        EEG_MI.download(tmp_path)
    with pytest.raises(DataError, match="sess01_subj01_EEG_MI.mat"):
        EEG_MI.download(tmp_path, arrays=False, subjects=[1])
    assert not any(tmp_path.iterdir())


def test_csp_lda_module_predicts_as_mne_and_scikit_learn():
    """The torch module (spatial Linear, log mean power, Linear) = MNE CSP + LDA."""
    pytest.importorskip("mne")
    import torch
    from mne.decoding import CSP
    from mne.utils import use_log_level
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    from neuromark.benchmarks.eeg_mi.models import fit_csp_lda

    rng = np.random.default_rng(0)
    y = np.arange(60) % 2
    x = rng.normal(size=(60, 50, 8))
    x[:, :, 0] *= np.where(y == 1, 2.0, 1.0)[:, None]  # class 1: more power on channel 0
    net = fit_csp_lda({"inputs": 8, "classes": 2, "n_components": 4}, x, y)
    with use_log_level("WARNING"):
        features = CSP(n_components=4, log=True).fit(x.transpose(0, 2, 1), y).transform(x.transpose(0, 2, 1))
    expected = LinearDiscriminantAnalysis().fit(features, y).predict(features)
    got = net(torch.from_numpy(x).float()).argmax(1).numpy()
    assert (got == expected).mean() >= 0.98 and (got == y).mean() > 0.8


def test_eeg_snn_readouts_sizes_reset_and_training_logits():
    """The challenge's spiking readout and the leaky-integrator one: same 49,282 parameters;
    the membrane is graded from the start, reset between trials, and trained by its mean
    over time (the spike count for the spiking readout)."""
    pytest.importorskip("snntorch")
    import torch

    from neuromark.benchmarks.eeg_mi.models import EEGSNN
    from neuromark.networks.series_family import logits_of, run_steps

    torch.manual_seed(0)
    nets = {r: EEGSNN(readout=r) for r in ("spikes", "membrane")}
    assert [sum(p.numel() for p in n.parameters()) for n in nets.values()] == [49_282, 49_282]
    x = torch.randn(3, 20, 62) * 4
    with torch.no_grad():
        mem = run_steps(nets["membrane"], x)
        again = run_steps(nets["membrane"], x)  # a second trial starts from a reset state
        assert mem.shape == (3, 20, 2) and torch.count_nonzero(mem[:, 1:]) == 3 * 19 * 2
        assert torch.equal(mem, again)
        assert torch.allclose(logits_of("step", nets["membrane"], x), mem.mean(1))
        spikes = run_steps(nets["spikes"], x)
        assert set(spikes.unique().tolist()) <= {0.0, 1.0}
        assert torch.equal(logits_of("step", nets["spikes"], x), spikes.sum(1))
    with pytest.raises(ValueError, match="readout"):
        EEGSNN(readout="rate")


# --- hostile inputs (#41): no trials, channel counts that disagree ------------------------


def test_eeg_recording_with_no_trials_is_refused_naming_the_run(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "session1" / "s1" / lee2019.mat_name(1, 1)
    path.parent.mkdir(parents=True)
    empty = mat_struct(rng, trials=4, t=np.zeros((1, 0)), y_dec=np.zeros((1, 0)))
    sio.savemat(path, {"EEG_MI_train": empty, "EEG_MI_test": mat_struct(rng)})
    with pytest.raises(DataError, match=r"sess01_subj01_EEG_MI.mat: EEG_MI_train: no trials"):
        lee2019.read_run(path)
    with pytest.raises(DataError, match=r"sess01_subj01_EEG_MI.mat: EEG_MI_train: no trials"):
        len(EEG_MI.load(tmp_path, "test", sessions=[1]))


def test_eeg_npy_runs_with_different_channel_counts_are_refused(tmp_path):
    rng = np.random.default_rng(0)
    write_arrays(tmp_path, rng)
    np.save(tmp_path / "val_X.npy", rng.normal(size=(6, 250, 61)).astype(np.float32))
    with pytest.raises(DataError, match=r"val_X.npy: trials of 250 steps x 61 channels, expected 250 x 62"):
        len(EEG_MI.load(tmp_path, "test", source="npy"))
    np.save(tmp_path / "val_X.npy", np.zeros((0, 250, 62), np.float32))
    np.save(tmp_path / "val_y.npy", np.zeros(0, np.int64))
    with pytest.raises(DataError, match=r"val_X.npy: no trials"):
        read_arrays(tmp_path)
