"""LIF SNN baselines, references, checkpoints, `neuromark train` and the classification task."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.data.hdf5_spikes import write_shd_file
from neuromark.errors import ConfigError, DataError
from neuromark.networks.lif import (
    LeakyReadout,
    LIFNeuron,
    SNNConfig,
    SpikingClassifier,
    decay,
    max_over_time,
    spike_count_regularisers,
    spike_fn,
)
from neuromark.networks.reference_classifiers import LSTMClassifier, LSTMConfig, fit_linear_svm_counts
from neuromark.networks.spike_classifiers import load_checkpoint
from neuromark.processors.decoding import Decoder
from neuromark.tasks.base import plan_and_run
from neuromark.tasks.classification import TASK
from neuromark.training.checkpoints import save_checkpoint


def test_decay_factors():
    assert decay(1.0, 10.0) == pytest.approx(math.exp(-0.1))
    with pytest.raises(ValueError, match="positive"):
        decay(0.0, 5.0)


def test_lif_dynamics_hand_computed():
    neuron = LIFNeuron(1, kappa=0.5, lam=0.5)
    currents = [4.0, 0.0, 0.0, 0.0, 0.0]
    spikes, mems = [], []
    for c in currents:
        spikes.append(float(neuron(torch.tensor([[c]]))))
        mems.append(float(neuron.mem))
    # n=0: S=0, U1=0, I1=4; n=1: U2=.5*4=2, I2=2; n=2: S=1 (U=2>1), U3=(1+1)*0=0, I3=1;
    # n=3: U4=.5*1=.5, I4=.5; n=4: U5=.25+.25=.5
    assert spikes == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert mems == pytest.approx([0.0, 2.0, 0.0, 0.5, 0.5])
    neuron.reset_state()
    assert neuron.mem is None and neuron.syn is None


def test_recurrent_spikes_enter_the_next_current():
    rec = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.constant_(rec.weight, 3.0)
    neuron = LIFNeuron(1, kappa=0.5, lam=0.5, recurrent=rec)
    neuron.mem = torch.tensor([[2.0]])
    neuron.syn = torch.tensor([[0.0]])
    assert float(neuron(torch.tensor([[1.0]]))) == 1.0
    assert float(neuron.syn.detach()) == pytest.approx(0.0 * 0.5 + 1.0 + 3.0)  # I = κI + Wx + V S


def test_leaky_readout_does_not_spike():
    readout = LeakyReadout(1, kappa=0.5, lam=0.5)
    outs = [float(readout(torch.tensor([[c]]))) for c in (10.0, 0.0, 0.0)]
    assert outs == pytest.approx([0.0, 5.0, 5.0])  # U2 = .5*10; U3 = .5*5 + .5*5


def test_fast_sigmoid_surrogate_gradient():
    x = torch.tensor([0.01, -0.02, 0.5], requires_grad=True)
    out = spike_fn(x, beta=100.0)
    assert out.tolist() == [1.0, 0.0, 1.0]
    out.sum().backward()
    assert x.grad.tolist() == pytest.approx([1 / (1 + 1) ** 2, 1 / (2 + 1) ** 2, 1 / (50 + 1) ** 2])


def test_spike_count_regularisers_hand_computed():
    spikes = torch.zeros(1, 4, 2)
    spikes[0, :, 0] = 1.0  # neuron 0: 4 spikes, neuron 1: none
    lower, upper = spike_count_regularisers(spikes, lower_strength=2.0, lower_threshold=1.0,
                                            upper_strength=0.5, upper_threshold=1.0)
    assert float(lower) == pytest.approx(2.0 * (0 + 1.0) / 2)  # s_l/N Σ ReLU(ν_l - ζ)²
    assert float(upper) == pytest.approx(0.5 * (2.0 - 1.0) ** 2)  # s_u ReLU(mean ζ - ν_u)²


def test_spiking_classifier_shapes_state_and_errors():
    net = SpikingClassifier(SNNConfig(inputs=6, classes=3, hidden=5, recurrent=True))
    out = net(torch.rand(2, 7, 6))
    assert out.shape == (2, 7, 3) and net.last_hidden_spikes.shape == (2, 7, 5)
    assert net.lif1.mem.shape == (2, 5) and net.readout.mem.shape == (2, 3)
    assert max_over_time(out).shape == (2, 3) and Decoder("max_over_time")(out).shape == (2,)
    assert net.lif1.recurrent is not None
    assert SpikingClassifier(SNNConfig(inputs=6, classes=3, recurrent=False)).lif1.recurrent is None
    with pytest.raises(ValueError, match=r"expected input \(batch, time, 6\), got \(2, 7, 5\)"):
        net(torch.rand(2, 7, 5))


def test_linear_svm_matches_sklearn_and_separates():
    rng = np.random.default_rng(0)
    frames = rng.poisson(0.2, (60, 5, 4)).astype(np.float32)
    labels = np.arange(60) % 3
    for c in range(3):
        frames[labels == c, :, c] += 2.0
    model = fit_linear_svm_counts(frames.sum(1), labels, 3)
    logits = model(torch.as_tensor(frames))
    assert logits.shape == (60, 1, 3)
    assert (Decoder("max_over_time")(logits).numpy() == labels).all()
    from sklearn.svm import LinearSVC

    counts = frames.sum(1)
    mean, std = counts.mean(0), counts.std(0)
    ref = LinearSVC(random_state=0, max_iter=20_000).fit((counts - mean) / std, labels)
    np.testing.assert_allclose(logits[:, 0].detach().numpy(), ref.decision_function((counts - mean) / std),
                               rtol=1e-4, atol=1e-4)


def test_lstm_classifier_shapes():
    net = LSTMClassifier(LSTMConfig(inputs=4, classes=2, hidden=8))
    assert net(torch.rand(3, 5, 4)).shape == (3, 5, 2)


def test_checkpoint_roundtrip_weights_only(tmp_path):
    net = SpikingClassifier(SNNConfig(inputs=4, classes=2, hidden=3))
    path = save_checkpoint(tmp_path / "c.pt", net, {"recipe_hash": "abc", "loss": [1.0, 0.5]})
    payload = torch.load(path, weights_only=True)
    assert payload["kind"] == "snn" and payload["meta"]["loss"] == [1.0, 0.5]
    loaded, meta = load_checkpoint(path)
    assert meta["recipe_hash"] == "abc" and not loaded.training
    x = torch.rand(2, 4, 4)
    torch.testing.assert_close(loaded(x), net(x))
    (tmp_path / "bad.pt").write_bytes(b"garbage")
    with pytest.raises(DataError, match=r"bad\.pt: not a loadable checkpoint"):
        load_checkpoint(tmp_path / "bad.pt")
    torch.save({"x": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(DataError, match=r"other\.pt: not a neuromark classification checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    with pytest.raises(DataError, match=r"none\.pt: no such checkpoint; run `neuromark train"):
        load_checkpoint(tmp_path / "none.pt")


def test_saved_checkpoint_gets_normal_permissions(tmp_path):
    import os

    mask = os.umask(0)
    os.umask(mask)
    net = SpikingClassifier(SNNConfig(inputs=4, classes=2, hidden=3))
    path = save_checkpoint(tmp_path / "sub" / "c.pt", net, {})  # was 0600 (mkstemp's mode)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
    assert [p.name for p in path.parent.iterdir()] == ["c.pt"]  # no temp file left


def make_corpus(folder: Path, n_train: int = 40, n_test: int = 20) -> None:
    """Two classes: spikes in channels 0-349 early (class 0) or 350-699 late (class 1)."""
    rng = np.random.default_rng(0)
    for split, n in (("train", n_train), ("test", n_test)):
        times, units, labels = [], [], []
        for i in range(n):
            c = i % 2
            k = int(rng.integers(80, 120))
            times.append(rng.uniform(0.0, 0.1, k) + 0.1 * c)
            units.append(rng.integers(350 * c, 350 * c + 350, k))
            labels.append(c)
        write_shd_file(folder / f"{split}.h5", times, units, labels, keys=["early-low", "late-high"])


def config_text(folder: Path, kind: str = "rsnn", epochs: int = 3) -> str:
    return f"""task: classification
benchmark: {{id: toy-{kind}, version: "1.0"}}
dataset:
  name: spike_files
  options: {{train: {folder}/train.h5, test: {folder}/test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}
model: {{name: {kind}, options: {{hidden: 16}}, checkpoint: {folder}/{kind}.pt}}
train: {{epochs: {epochs}, batch_size: 10, lr: 0.02, seed: 3}}
eval: {{batch_size: 8}}
"""


def test_config_errors_name_the_key(tmp_path):
    make_corpus(tmp_path)
    text = config_text(tmp_path).replace("name: rsnn", "name: rsn")
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: model\.name: unknown model 'rsn'; "
                                          r"did you mean 'rsnn'"):
        TASK.plan(parse_yaml(text, tmp_path / "c.yaml"), RunContext.build())
    text = config_text(tmp_path).replace("hidden: 16", "hiden: 16")
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: model\.options\.hiden: unknown key; "
                                          "did you mean hidden"):
        TASK.plan(parse_yaml(text, tmp_path / "c.yaml"), RunContext.build())
    text = config_text(tmp_path).replace("pool: 10", "pool: 10, corpus: spoken_digits")
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: dataset\.options\.corpus: unknown key"):
        TASK.plan(parse_yaml(text, tmp_path / "c.yaml"), RunContext.build())
    text = config_text(tmp_path).replace("pool: 10", "pool: ten")
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: dataset\.options\.pool: Input should be a valid "
                                          "integer"):
        TASK.plan(parse_yaml(text, tmp_path / "c.yaml"), RunContext.build())
    text = config_text(tmp_path).replace("test.h5", "missing.h5")
    with pytest.raises(ConfigError, match=r"dataset 'spike_files' \(test\): "
                                          r".*missing\.h5: no such spike file"):
        TASK.plan(parse_yaml(text), RunContext.build())
    text = config_text(tmp_path).replace("dataset:\n  name: spike_files\n  options:", "data:")
    with pytest.raises(ConfigError, match=r"data: unknown key; did you mean dataset\?"):
        TASK.plan(parse_yaml(text), RunContext.build())
    text = config_text(tmp_path).replace("name: rsnn,", "kind: rsnn,")
    with pytest.raises(ConfigError, match=r"model\.kind: unknown key \(allowed: name, options, "):
        TASK.plan(parse_yaml(text), RunContext.build())
    text = config_text(tmp_path).replace(f", checkpoint: {tmp_path}/rsnn.pt", "")
    with pytest.raises(ConfigError, match=r"model\.checkpoint: model 'rsnn' is trained by its recipe"):
        TASK.plan(parse_yaml(text), RunContext.build())
    text = config_text(tmp_path).replace("eval: {batch_size: 8}", "eval: {metrics: [acuracy]}")
    with pytest.raises(ConfigError, match=r"eval\.metrics\[0\]: unknown metric 'acuracy'"):
        TASK.plan(parse_yaml(text), RunContext.build())


@pytest.mark.parametrize("kind", ["rsnn", "snn", "lstm", "svm"])
def test_classification_task_end_to_end(tmp_path, kind):
    make_corpus(tmp_path)
    config = parse_yaml(config_text(tmp_path, kind, epochs=12), tmp_path / "c.yaml")
    [results] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)
    assert results.benchmark.id == f"toy-{kind}"
    acc = results.scores["classification_accuracy"]
    assert acc.value >= 0.9, f"{kind}: accuracy {acc.value} on a separable toy problem"
    assert acc.error == pytest.approx(math.sqrt(acc.value * (1 - acc.value) / 19), abs=1e-9) \
        or acc.error == pytest.approx(0.0)
    spiking = ("activation_sparsity", "membrane_updates")
    for key in ("footprint", "synaptic_operations", *spiking):
        assert (key in results.scores) == (key not in spiking or kind in ("snn", "rsnn")), key
    assert results.details["trained_now"] is True and results.details["chance_accuracy"] == 0.5
    if kind != "svm":
        assert results.artefacts == [f"out/toy-{kind}_training.png"]
        assert (tmp_path / "out" / f"toy-{kind}_training.png").stat().st_size > 1000
    if kind == "rsnn":  # 70*16 + 16*16 + 16*2 weights, float32; state: (mem, syn) x (16 + 2)
        assert results.scores["footprint"].value == (70 * 16 + 16 * 16 + 16 * 2) * 4 + 2 * (16 + 2) * 4
        assert results.scores["membrane_updates"].value <= (16 + 2) * 10
    [again] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)  # cached checkpoint
    assert again.details["trained_now"] is False
    assert again.scores["classification_accuracy"].value == acc.value


def test_run_reads_data_and_loads_the_checkpoint_once(tmp_path, monkeypatch):
    import neuromark.benchmarks.shd.datasets as binned
    import neuromark.networks.spike_classifiers as recipe

    calls = {"read_shd_file": 0, "load_checkpoint": 0}

    def counting(name):
        original = getattr(recipe, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(recipe, "load_checkpoint", counting("load_checkpoint"))
    original_read = binned.read_shd_file

    def counting_read(*args, **kwargs):
        calls["read_shd_file"] += 1
        return original_read(*args, **kwargs)
    monkeypatch.setattr(binned, "read_shd_file", counting_read)
    make_corpus(tmp_path)
    config = parse_yaml(config_text(tmp_path, "svm"), tmp_path / "c.yaml")
    [first] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)  # trains, saves, loads it back
    assert first.details["trained_now"] is True
    # no file read whole: training and the test split stream (header + chunks)
    assert calls == {"read_shd_file": 0, "load_checkpoint": 1}
    [again] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)  # cached: the recipe check's load
    assert again.details["trained_now"] is False
    assert calls == {"read_shd_file": 0, "load_checkpoint": 2}
    assert again.scores["classification_accuracy"].value == first.scores["classification_accuracy"].value
    assert again.details["test_file"] == str(tmp_path / "test.h5")


def test_recipe_hash_covers_the_recipe_and_the_training_bytes(tmp_path):
    import hashlib

    from neuromark.training.checkpoints import recipe_hash

    make_corpus(tmp_path)
    recipe = {"dataset": {"name": "spike_files"}, "model": {"name": "svm"}, "train": {"seed": 3}}
    expected = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()
                              + (tmp_path / "train.h5").read_bytes()).hexdigest()
    assert recipe_hash(recipe, tmp_path / "train.h5") == expected
    assert recipe_hash({**recipe, "train": {"seed": 4}}, tmp_path / "train.h5") != expected


def test_recipe_change_retrains_and_train_if_missing_false(tmp_path):
    make_corpus(tmp_path)
    config = parse_yaml(config_text(tmp_path, "svm"), tmp_path / "c.yaml")
    plan_and_run(TASK, config, tmp_path / "out", quiet=True)
    changed = parse_yaml(config_text(tmp_path, "svm").replace("seed: 3", "seed: 4"))
    assert plan_and_run(TASK, changed, tmp_path / "out", quiet=True)[0].details["trained_now"] is True
    strict = parse_yaml(config_text(tmp_path, "svm").replace("seed: 3", "seed: 5")
                        + "train_if_missing: false\n")
    with pytest.raises(DataError, match=r"svm\.pt: checkpoint was made from a different recipe"):
        plan_and_run(TASK, strict, tmp_path / "out", quiet=True)


def test_cli_train_then_run(tmp_path, capsys):
    make_corpus(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(config_text(tmp_path, "snn", epochs=2))
    assert main(["train", str(cfg), "--quiet", "--out", str(tmp_path / "x.pt")]) == 0
    out = capsys.readouterr().out
    assert "trained snn on 40 samples" in out and "x.pt" in out
    assert torch.load(tmp_path / "x.pt", weights_only=True)["kind"] == "snn"
    assert main(["run", str(cfg), "--out", str(tmp_path / "res"), "--quiet"]) == 0
    data = json.loads((tmp_path / "res" / "toy-snn--snn.json").read_text())
    assert 0.0 <= data["scores"]["classification_accuracy"]["value"] <= 1.0
    other = tmp_path / "o.yaml"
    other.write_text("task: mackey_glass\n")
    assert main(["train", str(other)]) == 1
    assert "task 'mackey_glass' has no checkpoint for `neuromark train`" in capsys.readouterr().err


def test_shipped_configs_validate():
    from neuromark.config import load_config

    root = Path(__file__).resolve().parents[1] / "configs" / "shd"
    kinds = {}
    for path in sorted(root.glob("spoken_digits_*.yaml")):
        kinds[path.stem] = TASK.plan(load_config(path), RunContext.build()).settings.model.name
    assert kinds == {"spoken_digits_lstm": "lstm", "spoken_digits_rsnn": "rsnn",
                     "spoken_digits_rsnn_suite": "rsnn", "spoken_digits_snn": "snn",
                     "spoken_digits_svm": "svm"}
    if not Path("data/shd/shd_train.h5").exists():  # the real SHD files are not shipped
        with pytest.raises(ConfigError, match=r"shd_rsnn\.yaml:\d+: dataset 'shd' "
                                              r"\(test\): .*shd_test\.h5: no such file"):
            TASK.plan(load_config(root / "shd_rsnn.yaml"), RunContext.build())


def test_training_is_deterministic_for_a_seed(tmp_path):
    from neuromark.benchmarks.shd.entries import BinnedSpikes
    from neuromark.networks.spike_classifiers import RSNN, SpikeModelOptions, TrainSettings

    make_corpus(tmp_path)
    train = BinnedSpikes(tmp_path / "train.h5", dt_us=20_000, t_max_us=200_000, pool=10)
    options = SpikeModelOptions(hidden=16)
    settings = TrainSettings(epochs=2, batch_size=10, lr=0.02, seed=3, jitter_sigma=20)
    first, info = RSNN.fit(options, settings, train, 2)
    second, _ = RSNN.fit(options, settings, train, 2)
    for key, value in first.state_dict().items():
        torch.testing.assert_close(value, second.state_dict()[key], rtol=0, atol=0)
    assert len(info["loss"]) == 2 and info["train_samples"] == 40
    assert first.fc1.in_features == 70  # 700 channels pooled by 10


def test_a_saved_checkpoint_alone_is_evaluated_as_saved(tmp_path):
    make_corpus(tmp_path)
    [trained] = plan_and_run(TASK, parse_yaml(config_text(tmp_path, "svm"), tmp_path / "c.yaml"),
                             tmp_path / "out", quiet=True)
    text = """task: classification
benchmark: {id: toy-saved, version: "1.0"}
dataset: {name: spike_files, options: {test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}
model: {checkpoint: svm.pt}
eval: {metrics: [classification_accuracy, synaptic_operations]}
"""
    [saved] = plan_and_run(TASK, parse_yaml(text, tmp_path / "saved.yaml"), tmp_path / "out", quiet=True)
    assert saved.details["trained_now"] is False and saved.details["model"] == "svm"
    assert saved.details["checkpoint"] == str(tmp_path / "svm.pt")  # beside the config
    assert saved.scores["classification_accuracy"].value == trained.scores["classification_accuracy"].value
    with pytest.raises(ConfigError, match=r"train: model 'svm.pt' has no training recipe"):
        TASK.plan(parse_yaml(text + "train: {epochs: 1}\n", tmp_path / "saved.yaml"), RunContext.build())
