"""ASC benchmark: TAU 2020 Mobile loader rules on a fixture in the real layout, MFE vs
librosa, the reference CNN and its int8 variant."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuromark.benchmarks.acoustic_scenes.dcase import (
    CLASSES,
    DcaseASC,
    describe,
    split_files,
    validation_split,
)
from neuromark.benchmarks.acoustic_scenes.model import TrainRecipe, build, quantize_int8, train
from neuromark.errors import DataError
from neuromark.processors.mel import MelFilterbankEnergies, mel_filterbank, mel_filterbank_energies

sf = pytest.importorskip("soundfile")

TRAIN = ["airport-barcelona-0-0-a", "bus-lyon-1-1-a", "park-paris-2-2-a", "airport-barcelona-0-1-b",
         "metro-helsinki-3-3-a"]
EVALUATE = ["street_traffic-milan-4-4-a", "park-prague-5-5-s1"]
UNLISTED = ["bus-vienna-6-6-a", "bus-vienna-6-7-b", "tram-london-7-7-a"]


def write_tau_fixture(root, seconds=2.5, rate=44100):
    """A few short wav files and fold1 CSVs in the real TAU 2020 Mobile layout."""
    (root / "audio").mkdir(parents=True)
    (root / "evaluation_setup").mkdir()
    rng = np.random.default_rng(0)
    for stem in TRAIN + EVALUATE + UNLISTED:
        sf.write(root / "audio" / f"{stem}.wav", 0.1 * rng.standard_normal(int(seconds * rate)), rate,
                 subtype="PCM_16")
    for name, stems in (("fold1_train.csv", TRAIN), ("fold1_evaluate.csv", EVALUATE)):
        rows = ["filename\tscene_label"] + [f"audio/{s}.wav\t{s.split('-')[0]}" for s in stems]
        (root / "evaluation_setup" / name).write_text("\n".join(rows) + "\n")
    return root


def test_loader_rules_on_fixture(tmp_path):
    root = write_tau_fixture(tmp_path / "tau")
    files = split_files(root)
    # device a, 4 classes; metro/tram dropped; device b and s1 dropped
    assert files["train"] == [("audio/airport-barcelona-0-0-a.wav", 0), ("audio/bus-lyon-1-1-a.wav", 2),
                              ("audio/park-paris-2-2-a.wav", 3)]
    # evaluate list + the unlisted device-a bus file
    assert files["test"] == [("audio/street_traffic-milan-4-4-a.wav", 1), ("audio/bus-vienna-6-6-a.wav", 2)]
    train = DcaseASC(root, "train")
    assert len(train) == 3 * 2  # 2.5 s -> two whole 1-s slices per file
    audio, label = train[3]
    assert audio.shape == (8000,) and audio.dtype == np.float32 and label == CLASSES.index("bus")
    assert [train.label(i) for i in range(len(train))] == [0, 0, 2, 2, 3, 3]
    assert describe(train)["per_class"] == {"airport": 2, "street_traffic": 0, "bus": 2, "park": 2}
    with pytest.raises(IndexError, match="index 6 out of range"):
        train[6]


def test_loader_resamples_tone_to_8k(tmp_path):
    root = write_tau_fixture(tmp_path / "tau")
    t = np.arange(44100 * 2) / 44100
    sf.write(root / "audio/park-paris-2-2-a.wav", 0.5 * np.sin(2 * np.pi * 440 * t), 44100, subtype="FLOAT")
    audio, _ = DcaseASC(root, "train")[5]  # second slice of the park file
    spectrum = np.abs(np.fft.rfft(audio))
    assert np.argmax(spectrum) == 440  # 1-s slice: 1 Hz per bin
    assert np.max(np.abs(audio)) == pytest.approx(0.5, abs=0.01)


def test_full_data_count_check(tmp_path, monkeypatch):
    import neuromark.benchmarks.acoustic_scenes.dcase as mod

    root = write_tau_fixture(tmp_path / "tau")
    monkeypatch.setattr(mod, "FULL_DEV_FILES", 10)  # the fixture now "looks complete"
    with pytest.raises(DataError, match="train split has 6 1-s slices, expected 41360"):
        DcaseASC(root, "train")


def test_loader_bad_inputs(tmp_path):
    root = write_tau_fixture(tmp_path / "tau")
    (root / "evaluation_setup/fold1_train.csv").write_text("file,label\naudio/x.wav,bus\n")
    with pytest.raises(DataError, match=r"fold1_train.csv:1: expected the header 'filename<TAB>scene_label'"):
        DcaseASC(root, "train")
    with pytest.raises(DataError, match="ASC setup file not found"):
        DcaseASC(tmp_path / "nothing", "test")
    with pytest.raises(DataError, match="split must be 'train' or 'test'"):
        DcaseASC(root, "validation")


def test_validation_split_is_seeded_and_disjoint():
    a_train, a_val = validation_split(100, 0.2, seed=3)
    b_train, b_val = validation_split(100, 0.2, seed=3)
    np.testing.assert_array_equal(a_val, b_val)
    assert len(a_val) == 20 and not set(a_train) & set(a_val)
    assert not np.array_equal(validation_split(100, 0.2, seed=4)[1], a_val)


def test_mel_filterbank_matches_librosa():
    librosa = pytest.importorskip("librosa")
    np.testing.assert_allclose(mel_filterbank(8000, 256, 40),
                               librosa.filters.mel(sr=8000, n_fft=256, n_mels=40), atol=1e-8)
    y = np.random.default_rng(1).standard_normal(8000).astype(np.float32)
    ours = mel_filterbank_energies(y, log=False).numpy()
    ref = librosa.feature.melspectrogram(y=y, sr=8000, n_fft=256, hop_length=128, n_mels=40,
                                         center=True, pad_mode="constant")
    assert ours.shape == ref.shape == (40, 63)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-6 * ref.max())


def test_mfe_processor_shapes_and_log():
    mfe = MelFilterbankEnergies()
    x = np.zeros((2, 8000), dtype=np.float32)
    feats, targets = mfe(x, [0, 1])
    assert tuple(feats.shape) == (2, 40, 63) and targets == [0, 1]
    assert torch.allclose(feats, torch.full_like(feats, float(np.log(1e-6))))
    with pytest.raises(ValueError, match="need 0 <= fmin < fmax"):
        mel_filterbank(8000, 256, 40, fmax=5000)


def test_cnn_trains_and_int8_agrees():
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(128, 1, 40, 63, generator=gen)
    y = torch.arange(128) % 4
    for k in range(4):  # class k = a loud band of mel rows 10k..10k+9: easily separable
        x[y == k, :, 10 * k:10 * k + 10] += 2.0
    model = build(0)
    losses = train(model, x, y, TrainRecipe(epochs=3, batch_size=32))
    assert losses[-1] < losses[0]
    with torch.inference_mode():
        acc = (model(x).argmax(1) == y).float().mean().item()
        q = quantize_int8(model, [x[:64]])
        agree = (q(x).argmax(1) == model(x).argmax(1)).float().mean().item()
    assert acc > 0.9 and agree > 0.9
    assert q.conv1.weight().dtype == torch.qint8 and q.fc.weight().dtype == torch.qint8


def test_train_entry_point_writes_weights_the_sut_loads(tmp_path, capsys):
    from neuromark.benchmarks.acoustic_scenes.model import main
    from neuromark.benchmarks.acoustic_scenes.sut import build_pipeline

    root = write_tau_fixture(tmp_path / "tau")
    out = tmp_path / "w.pt"
    assert main(["--root", str(root), "--out", str(out), "--epochs", "1", "--val", "0.34"]) == 0
    assert "validation accuracy" in capsys.readouterr().out
    saved = torch.load(out, weights_only=True)
    assert {"model", "mean", "std", "val_accuracy"} <= set(saved)
    pipe = build_pipeline(data=str(root), samples=4, seed=0, train_epochs=0, int8=False, threads=1,
                          weights=str(out))
    assert pipe.info["weights"] == str(out)
    assert pipe.info["feature_norm"]["mean"] == pytest.approx(saved["mean"])
    for name, value in pipe.model.state_dict().items():
        assert torch.equal(value, saved["model"][name])


def test_audio_many_matches_getitem_and_reads_each_file_once(tmp_path, monkeypatch):
    import neuromark.benchmarks.acoustic_scenes.dcase as mod

    root = write_tau_fixture(tmp_path / "tau")
    train = DcaseASC(root, "train")
    reads = []
    real = mod.load_wav
    monkeypatch.setattr(mod, "load_wav", lambda path, rate: reads.append(path.name) or real(path, rate))
    many = train.audio_many([5, 0, 4, 1])
    assert sorted(reads) == ["airport-barcelona-0-0-a.wav", "park-paris-2-2-a.wav"]
    for i in (0, 1, 4, 5):
        np.testing.assert_array_equal(many[i], train[i][0])
    with pytest.raises(IndexError, match="index 9 out of range"):
        train.audio_many([9])
