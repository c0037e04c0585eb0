"""Speaker analysis (per-speaker, held-out vs seen accuracy), the spoken-digit validation
split by speaker, and the spiking baselines' training options (learned time constants,
mean-over-time readout, dropout, log input, time stretch, cosine schedule)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.benchmarks.shd.spoken_digits import VALID_SPEAKERS, shipped_corpus, speaker_split
from neuromark.config import parse_yaml
from neuromark.data.hdf5_spikes import SpikeSamples, read_shd_file, write_shd_file
from neuromark.errors import DataError
from neuromark.metrics.base import Step
from neuromark.metrics.functional.speakers import binomial_error, speaker_accuracy
from neuromark.metrics.functional.stats import standard_error
from neuromark.metrics.speakers import SpeakerAccuracy
from neuromark.networks.lif import SNNConfig, SpikingClassifier, mean_over_time
from neuromark.networks.spike_classifiers import load_checkpoint
from neuromark.networks.spike_training import SampleSplit, stretch_samples
from neuromark.tasks.base import plan_and_run
from neuromark.tasks.classification import TASK
from neuromark.training.checkpoints import save_checkpoint


def test_speaker_accuracy_hand_computed():
    # speakers 5: 2 of 3 right; 6: 0 of 1; 8: 2 of 2. Training speakers {6, 8}.
    correct = [1, 0, 1, 0, 1, 1]
    speakers = [5, 5, 5, 6, 8, 8]
    r = speaker_accuracy(correct, speakers, seen=[6, 8, 99])
    assert r.per_speaker == {5: (2, 3), 6: (0, 1), 8: (2, 2)}
    assert r.held_out == (2, 3) and r.seen == (2, 3)
    assert r.accuracies() == {5: 2 / 3, 6: 0.0, 8: 1.0}
    spread = r.spread()
    assert spread["mean"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    m = (2 / 3 + 1) / 3
    assert spread["std"] == pytest.approx(math.sqrt(((2 / 3 - m) ** 2 + m ** 2 + (1 - m) ** 2) / 2))
    assert (spread["min"], spread["max"], spread["speakers"]) == (0.0, 1.0, 3)
    unknown = speaker_accuracy(correct, speakers)
    assert unknown.held_out is None and unknown.seen is None
    everyone_new = speaker_accuracy(correct, speakers, seen=[])
    assert everyone_new.held_out == (4, 6) and everyone_new.seen == (0, 0)


def test_binomial_error_is_the_sample_standard_error():
    assert binomial_error(3, 5) == pytest.approx(standard_error([1, 1, 1, 0, 0]))
    assert binomial_error(1, 1) is None


def test_speaker_accuracy_rejects_bad_input():
    with pytest.raises(ValueError, match="3 per-sample results but 2 speaker ids"):
        speaker_accuracy([1, 0, 1], [1, 2])
    with pytest.raises(ValueError, match="must be integers"):
        speaker_accuracy([1, 0], [1.5, 2.0])
    with pytest.raises(ValueError, match="0/1"):
        speaker_accuracy([2, 0], [1, 2])
    with pytest.raises(ValueError, match="no samples"):
        speaker_accuracy([], [])


def test_speaker_metric_over_batches():
    metric = SpeakerAccuracy(speakers=[4, 4, 7, 7, 9], seen=[7])
    metric.update(Step(0, torch.tensor([1, 0, 2]), torch.tensor([1, 1, 2]), 3))
    metric.update(Step(1, torch.tensor([0, 3]), torch.tensor([1, 3]), 2))
    scores = metric.compute()
    assert scores["accuracy_per_speaker"].value == {"4": 0.5, "7": 0.5, "9": 1.0}
    assert scores["held_out_speaker_accuracy"].value == pytest.approx(2 / 3)  # speakers 4, 9
    assert scores["held_out_speaker_accuracy"].error == pytest.approx(standard_error([1, 0, 1]))
    assert scores["seen_speaker_accuracy"].value == 0.5
    assert scores["speaker_accuracy_spread"].value["min"] == 0.5
    metric.reset()
    metric.update(Step(0, torch.tensor([1]), torch.tensor([1]), 1))
    with pytest.raises(ValueError, match="saw 1 samples but the test file has 5 speaker ids"):
        metric.compute()


def _toy_corpus(folder: Path) -> None:
    """Two separable classes; train speakers {1, 2}, test speakers {2, 3}."""
    rng = np.random.default_rng(1)
    for split, n, ids in (("train", 40, (1, 2)), ("test", 20, (2, 3))):
        times, units, labels, speakers = [], [], [], []
        for i in range(n):
            c = i % 2
            k = int(rng.integers(80, 120))
            times.append(rng.uniform(0.0, 0.1, k) + 0.1 * c)
            units.append(rng.integers(350 * c, 350 * c + 350, k))
            labels.append(c)
            speakers.append(ids[(i // 2) % 2])
        write_shd_file(folder / f"{split}.h5", times, units, labels, speakers=speakers,
                       keys=["early-low", "late-high"])


def _config(folder: Path, model: str, train: str) -> str:
    return f"""task: classification
benchmark: {{id: toy-speakers, version: "1.0"}}
dataset:
  name: spike_files
  options: {{train: {folder}/train.h5, test: {folder}/test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}
model: {model}
train: {train}
eval: {{batch_size: 8}}
"""


def test_classification_reports_held_out_and_seen_speakers(tmp_path):
    _toy_corpus(tmp_path)
    text = _config(tmp_path, f"{{name: svm, checkpoint: {tmp_path}/svm.pt}}", "{seed: 0}")
    [results] = plan_and_run(TASK, parse_yaml(text, tmp_path / "c.yaml"), tmp_path / "out", quiet=True)
    scores = results.scores
    per = scores["accuracy_per_speaker"].value
    assert set(per) == {"2", "3"}
    seen, held = scores["seen_speaker_accuracy"], scores["held_out_speaker_accuracy"]
    assert seen.value == per["2"] and held.value == per["3"]  # one speaker in each group
    overall = scores["classification_accuracy"].value
    assert (seen.value * 10 + held.value * 10) / 20 == pytest.approx(overall)


def test_learned_time_constants_and_training_options_end_to_end(tmp_path):
    _toy_corpus(tmp_path)
    model = (f"{{name: rsnn, checkpoint: {tmp_path}/rsnn.pt, options: {{hidden: 16, beta: 10, "
             "learn_tau: true, dropout: 0.2, input_log: true}}")
    train = ("{epochs: 12, batch_size: 10, lr: 0.03, optimizer: adam, seed: 3, readout: mean, "
             "schedule: cosine, weight_decay: 0.0001, time_stretch: 0.1, jitter_sigma: 5}")
    [results] = plan_and_run(TASK, parse_yaml(_config(tmp_path, model, train), tmp_path / "c.yaml"),
                             tmp_path / "out", quiet=True)
    assert results.scores["classification_accuracy"].value >= 0.9
    assert "synaptic_operations" in results.scores  # coverage: the time constants are exempt
    net, _ = load_checkpoint(tmp_path / "rsnn.pt")
    assert net.lif1.log_tau_mem.shape == (16,) and net.readout.log_tau_syn.shape == (2,)
    init = SpikingClassifier(SNNConfig(inputs=70, classes=2, hidden=16, dt_ms=20, learn_tau=True))
    assert not torch.equal(net.lif1.log_tau_mem, init.lif1.log_tau_mem), "time constants were not trained"
    # footprint: weights + 2 x (16 + 2) time constants, state (mem, syn) x (16 + 2), float32
    assert results.scores["footprint"].value == (70 * 16 + 16 * 16 + 16 * 2 + 2 * 18) * 4 + 2 * 18 * 4


def test_learned_decays_start_at_the_configured_time_constants_and_get_gradients():
    fixed = SpikingClassifier(SNNConfig(inputs=4, classes=2, hidden=3, dt_ms=10, tau_mem_ms=20))
    net = SpikingClassifier(SNNConfig(inputs=4, classes=2, hidden=3, dt_ms=10, tau_mem_ms=20,
                                      learn_tau=True))
    assert torch.allclose(net.lif1.lam, torch.full((3,), math.exp(-0.5)))
    assert torch.allclose(net.lif1.kappa, torch.full((3,), math.exp(-1.0)))
    net.load_state_dict({**fixed.state_dict(), **{k: v for k, v in net.state_dict().items()
                                                   if "log_tau" in k}})
    x = torch.rand(2, 6, 4) * 3
    assert torch.allclose(net(x), fixed(x))  # same dynamics at the initial values
    mean_over_time(net(x)).sum().backward()
    assert net.lif1.log_tau_mem.grad is not None and net.lif1.log_tau_mem.grad.abs().sum() > 0


def test_checkpoint_with_new_options_roundtrips(tmp_path):
    net = SpikingClassifier(SNNConfig(inputs=4, classes=2, hidden=3, learn_tau=True, dropout=0.3,
                                      input_log=True))
    save_checkpoint(tmp_path / "m.pt", net, {})
    back, meta = load_checkpoint(tmp_path / "m.pt")
    assert back.config == net.config and meta["kind"] == "snn"
    x = torch.rand(1, 5, 4)
    net.eval()
    assert torch.equal(back(x), net(x))


def _samples() -> SpikeSamples:
    return SpikeSamples(times=np.array([0.1, 0.5, 0.9, 0.2, 0.4]), units=np.array([1, 2, 3, 4, 5], np.uint16),
                        offsets=np.array([0, 3, 5]), labels=np.array([0, 1]), speakers=np.array([7, 8]))


def test_time_stretch_hand_checked():
    class Fixed:  # uniform() returns these factors
        def uniform(self, lo, hi, n):
            assert (lo, hi, n) == (0.8, 1.2, 2)
            return np.array([1.2, 0.8])

    out = stretch_samples(_samples(), Fixed(), 0.2, t_max_s=1.0)  # type: ignore[arg-type]
    # sample 0: 0.12, 0.6, 1.08 (dropped: past t_max); sample 1: 0.16, 0.32
    assert np.allclose(out.times, [0.12, 0.6, 0.16, 0.32])
    assert out.units.tolist() == [1, 2, 4, 5] and out.offsets.tolist() == [0, 2, 4]
    a = stretch_samples(_samples(), np.random.default_rng(4), 0.1, 1.0)
    b = stretch_samples(_samples(), np.random.default_rng(4), 0.1, 1.0)
    assert np.array_equal(a.times, b.times)
    with pytest.raises(ValueError, match="stretch"):
        stretch_samples(_samples(), np.random.default_rng(0), 1.0, 1.0)


def test_sample_split_bins_like_its_file(tmp_path):
    _toy_corpus(tmp_path)
    from neuromark.benchmarks.shd.entries import BinnedSpikes

    data = BinnedSpikes(tmp_path / "train.h5", dt_us=20_000, t_max_us=200_000, pool=10)
    part = SampleSplit.of(data, [3, 0])
    assert len(part) == 2 and part.input_shape == data.input_shape == (10, 70)
    assert np.array_equal(part.frames(), data.frames()[[3, 0]])


def test_validation_speakers_come_from_the_training_file_only():
    paths = shipped_corpus()
    train = read_shd_file(paths["train"])
    test = read_shd_file(paths["test"])
    fit, valid = speaker_split(train.speakers)
    assert set(train.speakers[valid]) == set(VALID_SPEAKERS)
    assert not set(VALID_SPEAKERS) & set(test.speakers)
    assert len(fit) + len(valid) == len(train) and not set(train.speakers[fit]) & set(VALID_SPEAKERS)
    assert np.bincount(train.labels[valid]).tolist() == [len(VALID_SPEAKERS)] * 20  # every word
    with pytest.raises(DataError, match="no extra/speaker"):
        speaker_split(None, name="f.h5")
    with pytest.raises(DataError, match=r"f\.h5: speakers \[99\] hold 0 of 3 samples"):
        speaker_split(np.array([1, 2, 3]), [99], name="f.h5")
