"""Front-end cost (issue 47.4): hand counts per encoder kind, the block in results, the
model-only headline figures untouched."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.dvs_gesture.encoder_cost import dvs_frames_cost
from neuromark.benchmarks.event_detection.encoder_cost import event_tensor_cost
from neuromark.benchmarks.keywords.encoder_cost import keyword_features_cost
from neuromark.benchmarks.keywords.features import KeywordFeatures
from neuromark.benchmarks.shd.encoder_cost import binned_spikes_cost
from neuromark.metrics.functional.energy_profiles import HOROWITZ45_FP32
from neuromark.processors.cochlea.model import Cochlea
from neuromark.processors.cochlea.params import BasilarMembraneParams, CochleaParams
from neuromark.processors.encoder_cost import (
    EncoderCost,
    Stage,
    cochlea_cost,
    fft_ops,
    mel_energies_cost,
    ops,
    resample_cost,
    summary_line,
)
from neuromark.processors.event_frames import EventTensor
from neuromark.processors.mel import MelFilterbankEnergies, mel_filterbank
from neuromark.tasks.base import plan_and_run


def stage(cost: EncoderCost, name: str) -> dict[str, float]:
    found = [s for s in cost.stages + cost.per_unit_stages if s.name == name]
    assert len(found) == 1, [s.name for s in cost.stages]
    return found[0].ops


def test_fft_is_the_nominal_five_n_log_n():
    # complex N = 8: N/2 log2 N = 12 butterflies of 4 mul + 6 add: 48 mul, 72 add = 5 N log2 N = 120
    assert fft_ops(8, real=False)["mul"] == 48 and fft_ops(8, real=False)["add"] == 72
    assert fft_ops(8, real=True)["mul"] + fft_ops(8, real=True)["add"] == 2.5 * 8 * 3
    assert fft_ops(1, real=True)["add"] == 0
    with pytest.raises(ValueError, match="FFT size"):
        fft_ops(0, real=True)


def test_delta_mel_hand_count():
    """Speech Commands' delta_mel recipe: 1 s at 16 kHz, n_fft 512, hop 80, 20 HTK mels."""
    f = KeywordFeatures("delta_mel", 16000, None, 512, 80, 20)
    cost = keyword_features_cost(f, 16000)
    frames, steps, bins = 1 + 16000 // 80, 16000 // 80, 257
    assert cost.options["frames"] == frames == 201
    assert stage(cost, "window")["mul"] == frames * 512
    assert stage(cost, "fft")["mul"] == frames * 512 * 9  # real data: N log2 N mul
    assert stage(cost, "fft")["add"] == frames * 1.5 * 512 * 9
    assert stage(cost, "power") == ops(mul=frames * bins, mac=frames * bins)
    nonzero = int((mel_filterbank(16000, 512, 20, 20.0, 4000.0, htk=True, norm=None) != 0).sum())
    assert 0 < nonzero < 20 * bins
    assert stage(cost, "mel filterbank")["mac"] == frames * nonzero
    assert stage(cost, "log") == ops(add=frames * 20, transcendental=frames * 20)
    # per channel per step: 1 subtract, 2 compares, 1 add (up - down), 1 MAC (reference update)
    assert stage(cost, "delta modulator") == ops(add=2 * steps * 20, cmp=2 * steps * 20, mac=steps * 20)
    total = cost.ops_per_sample
    assert total["mac"] == frames * bins + frames * nonzero + steps * 20
    assert cost.ops_per_unit["mac"] == pytest.approx(total["mac"] / 16000)


def test_delta_mel_follows_its_configuration():
    """Counts are derived from the options, not constants: half the hop, twice the frames."""
    a = keyword_features_cost(KeywordFeatures("delta_mel", 16000, None, 512, 160, 20), 16000)
    b = keyword_features_cost(KeywordFeatures("delta_mel", 16000, None, 512, 80, 40), 16000)
    assert stage(b, "delta modulator")["cmp"] == 2 * 200 * 40
    assert stage(a, "delta modulator")["cmp"] == 2 * 100 * 20
    assert stage(a, "fft")["mul"] * 201 == stage(b, "fft")["mul"] * 101


def test_mfcc_hand_count():
    f = KeywordFeatures("mfcc", 48000, None, 512, 240, 20, n_mfcc=13)
    cost = keyword_features_cost(f, 48000)
    frames = 1 + 48000 // 240
    assert stage(cost, "DCT-II")["mac"] == frames * 13 * 20
    assert stage(cost, "dB") == ops(cmp=frames * 20, transcendental=frames * 20, mul=frames * 20)
    assert stage(cost, "top_db floor") == ops(cmp=2 * frames * 20, add=1)
    assert cost.parameters_bytes["DCT matrix (float32)"] == 4 * 13 * 20


def test_waveform_resampling_hand_count():
    """scipy's resample_poly 16 -> 8 kHz: up 1, down 2, 2 * 10 * 2 + 1 = 41 taps, 41 MACs per output."""
    cost = keyword_features_cost(KeywordFeatures("waveform", 16000, 8000), 16000)
    assert cost.options["taps"] == 41 and cost.ops_per_sample["mac"] == 8000 * 41
    assert cost.parameters_bytes["FIR taps (float64)"] == 41 * 8
    up = resample_cost(8000, 12000, 8000)  # up 3, down 2: 61 taps, ceil(61 / 3) = 21 per output
    assert (up.options["up"], up.options["down"], up.options["taps"]) == (3, 2, 61)
    assert up.ops_per_sample["mac"] == 12000 * 21
    raw = keyword_features_cost(KeywordFeatures("waveform", 8000), 8000)
    assert sum(raw.ops_per_sample.values()) == 0
    assert raw.energy()["value"] == "not estimated"  # no work: said so, never 0 J


def test_mel_filterbank_energies_hand_count():
    """The ASC reference's MFE: 1 s at 8 kHz, n_fft 256, hop 128, 40 Slaney mels."""
    mfe = MelFilterbankEnergies(sample_rate=8000, n_mels=40)
    cost = mel_energies_cost(mfe, 8000)
    frames = mfe.frames(8000)
    assert frames == 63 and cost.options["frames"] == frames
    nonzero = int(np.count_nonzero(mel_filterbank(8000, 256, 40)))
    assert stage(cost, "mel filterbank")["mac"] == frames * nonzero
    assert stage(cost, "fft")["mul"] == frames * 256 * 8
    assert stage(cost, "log")["transcendental"] == frames * 40
    assert cost.parameters_bytes["window (float32)"] == 256 * 4
    no_log = mel_energies_cost(MelFilterbankEnergies(log=False), 8000)
    assert no_log.ops_per_sample["transcendental"] == 0


def test_cochlea_hand_count():
    p = CochleaParams(basilar_membrane=BasilarMembraneParams(channels=10))
    cost = cochlea_cost(Cochlea(p), 1000, 48000)
    c, n, bins, half = 10, 1000, 501, 251
    assert stage(cost, "conditioning") == ops(mac=n, mul=2 * n, div=1, transcendental=1)
    assert stage(cost, "spectrum") == fft_ops(n, real=True)
    assert stage(cost, "transfer") == ops(mac=2 * c * bins, mul=2 * c * bins)  # complex multiplies
    assert stage(cost, "hermitian") == ops(add=2 * c * half, mul=2 * c * half)
    assert stage(cost, "inverse FFT")["mul"] == pytest.approx(c * bins * math.log2(bins))
    steps = c * bins
    assert stage(cost, "hair cell") == ops(mac=3 * steps, mul=4 * steps, add=7 * steps, div=steps,
                                           cmp=5 * steps)
    assert stage(cost, "bushy cells")["random"] == steps  # one uniform per channel and model sample
    assert cost.parameters_bytes["transfer matrix (complex128)"] == 16 * c * bins
    more = cochlea_cost(Cochlea(CochleaParams(basilar_membrane=BasilarMembraneParams(channels=20))),
                        1000, 48000)
    assert stage(more, "hair cell")["div"] == 2 * steps


def test_event_tensor_counts_per_event_and_per_window():
    histo = EventTensor("histo", 50_000, 2, 4, 6, 0)
    cost = event_tensor_cost(histo, 100.0)
    cells = 2 * 2 * 4 * 6
    assert stage(cost, "normalise") == ops(div=cells, cmp=cells)
    assert cost.ops_per_unit == ops(add=4, div=1, cmp=6)
    assert cost.ops_per_sample == ops(add=400, div=100 + cells, cmp=600 + cells)
    surface = event_tensor_cost(EventTensor("multi_channel_timesurface", 50_000, 1, 4, 6, 0), None)
    assert surface.ops_per_sample is None and surface.energy()["value"] == "not estimated"
    assert surface.ops_per_unit == ops(add=4, div=2, cmp=8, mac=2, mul=1)


def test_binning_and_dvs_frames():
    b = binned_spikes_cost(700, 10_000, 1_000_000, 10, 50.0)
    assert b.ops_per_sample == ops(add=50, cmp=100, div=100)  # bin (1 div) + pool (1 div) per spike
    d = dvs_frames_cost((32, 32, 2), 150, 10_000, 0.25, 1000.0, 0.5)
    per = d.ops_per_unit
    assert per["cmp"] == 8 and per["mul"] == 1.0 and per["mac"] == 1.5  # 2 mul, 3 MAC per kept event
    lg = math.ceil(math.log2(500))
    assert d.ops_per_sample["cmp"] == 8 * 1000 + 2 * 150 * lg


def test_energy_prices_the_counted_kinds_only():
    cost = EncoderCost("x", {}, "audio sample", 1.0, [Stage("s", ops(mac=10, mul=2, add=5, cmp=1), "")])
    e = cost.energy(HOROWITZ45_FP32)
    assert e["value"] == pytest.approx(12 * HOROWITZ45_FP32.mac_j + 6 * HOROWITZ45_FP32.ac_j)
    assert "lower bound" not in e["scope"]
    partial = EncoderCost("y", {}, "audio sample", 1.0, [Stage("s", ops(add=1, transcendental=3), "")])
    assert "lower bound" in partial.energy()["scope"] and "3 transcendental" in partial.energy()["scope"]
    only = EncoderCost("z", {}, "audio sample", 1.0, [Stage("s", ops(div=3), "")])
    assert only.energy()["value"] == "not estimated"
    assert "not estimated" in summary_line(only.to_json())
    with pytest.raises(ValueError, match="unknown operation kind"):
        ops(flops=1)


# ---- the block in the results of a tiny run, the headline figures untouched -------------------


def _issue_net():
    import snntorch as snn
    import torch
    from torch import nn

    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(70, 32), snn.Leaky(beta=0.9, init_hidden=True),
                         nn.Linear(32, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True))


def test_spoken_digits_run_carries_the_cochlea_and_binning_block(monkeypatch):
    """The shipped corpus' input passed the cochlea then binning: both in details.front_end;
    without the block (hook removed) every score is the same value."""
    from neuromark.benchmarks.shd.entries import BinnedSpikes
    from neuromark.report.markdown import format_summary
    from neuromark.runner import Benchmark

    config = "configs/shd/spoken_digits_snn.yaml"
    with_block = Benchmark.from_config(config, model=_issue_net(), label="tiny").run()
    block = with_block.details["front_end"]
    assert block["encoder"] == "cochlea + bin_spikes"
    cochlea, binning = block["parts"]
    assert cochlea["options"]["channels"] == 700 and cochlea["options"]["sample_rate"] == 48_000
    assert cochlea["options"]["clip_samples"] == 48_000 * 850_000 // 1_000_000  # t_max_us of the config
    assert binning["options"]["pool"] == 10 and binning["units_per_sample"] > 0
    assert block["ops_per_sample"]["mac"] == cochlea["ops_per_sample"]["mac"] > 0
    assert isinstance(block["energy"]["value"], float) and block["energy"]["value"] > 0
    assert "front end cochlea + bin_spikes" in format_summary([with_block])

    monkeypatch.delattr(BinnedSpikes, "front_end_cost")
    without = Benchmark.from_config(config, model=_issue_net(), label="tiny").run()
    assert "front_end" not in without.details
    assert set(without.scores) == set(with_block.scores)
    for name, score in without.scores.items():  # NeuroBench's model-only figures, unchanged
        assert with_block.scores[name].value == score.value, name


def test_a_benchmark_without_an_encoder_has_no_block(tmp_path):
    """Mackey-Glass feeds the series itself: no front-end block."""
    from neuromark.cli import main

    config = "configs/mackey_glass/esn.yaml"
    assert main(["run", config, "--out", str(tmp_path), "--quiet"]) == 0
    import json

    for path in tmp_path.glob("*.json"):
        assert "front_end" not in json.loads(path.read_text()).get("details", {})


DET_TINY = """task: detection
benchmark: {id: det-tiny, version: "1.0"}
data:
  root: cache:det_tiny
  synthesize: {files: {train: 1, test: 1}, duration_s: 1.2, height: 36, width: 64, seed: 3}
  network: [32, 18]
  box_filter: {resolution: [640, 360]}
model: {name: event_detector, options: {width: 4}, checkpoint: cache:det_tiny.pt}
train: {epochs: 1, batch_size: 1}
eval: {metrics: [coco_map, synaptic_operations], time_tol_us: 50000}
"""


def test_detection_run_carries_the_event_tensor_block(tmp_path, monkeypatch):
    """The tiny detection config (tests/test_detection_task.py's): the event tensor's cost per
    event and per window, with the events per window measured in the pass."""
    import json

    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "det.yaml").write_text(DET_TINY)
    assert main(["run", str(tmp_path / "det.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "det-tiny--event_detector.json").read_text())
    block = res["details"]["front_end"]
    assert block["encoder"] == "multi_channel_timesurface" and block["per"] == "event"
    assert block["options"]["height"] == 18 and block["options"]["width"] == 32
    events = block["units_per_sample"]
    assert events > 0
    assert block["ops_per_sample"]["div"] == pytest.approx(2 * events)  # 1 in locate, 1 in the surface
    assert "front_end" not in res["scores"] and res["scores"]["synaptic_operations"]["value"]["Dense"] > 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Front end (the input encoder" in report


def test_asc_system_run_carries_the_mfe_block(tmp_path):
    """The ASC SUT's MFE (1 s at 8 kHz, 40 mels) beside the system figures."""
    import json

    from neuromark.cli import main

    text = Path("configs/acoustic_scenes/asc_cpu_singlestream.yaml").read_text()
    text = text.replace("samples: 64", "samples: 8").replace("train_epochs: 3", "train_epochs: 0")
    text = text.replace("min_query_count: 256", "min_query_count: 16")
    (tmp_path / "asc.yaml").write_text(text)
    main(["run", str(tmp_path / "asc.yaml"), "--out", str(tmp_path / "out"), "--quiet"])
    (path,) = (tmp_path / "out").glob("asc_synthetic*.json")
    block = json.loads(path.read_text())["details"]["front_end"]
    mfe = MelFilterbankEnergies(sample_rate=8000, n_mels=40)
    assert block["encoder"] == "mel_filterbank_energies"
    cells = 63 * 40  # and the SUT's standardisation, (x - mean) / std per value
    expected = mel_energies_cost(mfe, 8000).ops_per_sample
    assert block["ops_per_sample"] == {**expected, "add": expected["add"] + cells,
                                       "div": expected["div"] + cells}
    submission = (tmp_path / "out" / "submission" / "submission.md").read_text()
    assert "| mel_filterbank_energies |" in submission and "not in the model's figures" in submission


GESTURE_TINY = """task: classification
benchmark: {id: gesture-tiny, version: "1.0"}
dataset:
  name: dvs_gesture
  options:
    root: cache:gestures
    synthesize: {train_users: 1, test_users: 1, duration_s: 0.15, seed: 0}
    n_time_bins: 4
    train_time_bins: 3
model: {name: dvs_gesture_snn, checkpoint: cache:gesture.pt}
train: {epochs: 1, batch_size: 11, lr: 0.008, optimizer: adam, schedule: cosine}
eval: {postprocessor: spike_count, metrics: [classification_accuracy, synaptic_operations]}
"""


def test_dvs_gesture_run_carries_the_frames_block(tmp_path, monkeypatch):
    import json

    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "g.yaml").write_text(GESTURE_TINY)
    assert main(["run", str(tmp_path / "g.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "gesture-tiny--dvs_gesture_snn.json").read_text())
    block = res["details"]["front_end"]
    assert block["encoder"] == "dvs_frames" and block["options"]["n_time_bins"] == 4
    assert block["units_per_sample"] > 0 and 0 < block["options"]["kept_fraction"] <= 1
    assert block["ops_per_sample"]["cmp"] >= 8 * block["units_per_sample"]  # the denoise tests


GSC_TINY = """task: classification
benchmark: {id: gsc-tiny}
dataset:
  name: speech_commands
  options:
    root: corpus
    features: delta_mel
    synthesize: {speakers: 3, repeats: 1, words: ["yes", "zero"]}
model: {name: gsc_snn, checkpoint: ckpt/gsc_snn.pt}
train: {epochs: 1, batch_size: 2}
eval: {postprocessor: spike_count, metrics: [classification_accuracy, synaptic_operations]}
"""


def test_keyword_run_carries_the_delta_mel_block(tmp_path):
    """Speech Commands' delta_mel recipe on the espeak-ng corpus (tests/test_gsc_first_use.py's)."""
    import json
    import shutil

    pytest.importorskip("soundfile")
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    from neuromark.cli import main

    (tmp_path / "gsc.yaml").write_text(GSC_TINY)
    assert main(["run", str(tmp_path / "gsc.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "gsc-tiny--gsc_snn.json").read_text())
    block = res["details"]["front_end"]
    expected = keyword_features_cost(KeywordFeatures("delta_mel", 16000, None, 512, 80, 20),
                                     block["options"]["clip_samples"])
    assert block["encoder"] == "delta_mel" and block["options"]["hop_length"] == 80
    assert block["ops_per_sample"] == expected.ops_per_sample
    assert res["scores"]["synaptic_operations"]["value"]["Effective_ACs"] >= 0


def test_fscil_run_carries_the_mfcc_block(tmp_path):
    """MSWC FSCIL on tests/test_fscil.py's tiny corpus (MFCC at 48 kHz, 1-s clips)."""
    import importlib.util
    import json

    from neuromark.cli import main

    spec = importlib.util.spec_from_file_location("fscil_tests", Path(__file__).with_name("test_fscil.py"))
    fscil_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fscil_tests)
    fscil_tests._tiny_corpus(tmp_path / "data")
    (tmp_path / "c.yaml").write_text(fscil_tests.FSCIL_TINY + """train: {epochs: 1, batch_size: 4, lr: 0.01}
fscil: {shots: 2, support_pool: 2, query_pool: 2, query_shots: 2, repeats: 1, seed: 1}
eval: {complexity: [footprint, synaptic_operations]}
""")
    assert main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "fscil-tiny--keyword_m5.json").read_text())
    block = res["details"]["front_end"]
    assert block["encoder"] == "mfcc" and block["options"]["sample_rate"] == 48_000
    expected = keyword_features_cost(KeywordFeatures("mfcc", 48_000), block["options"]["clip_samples"])
    assert block["ops_per_sample"] == expected.ops_per_sample
    assert "front_end" not in res["scores"]


def test_window_counts_hand_count():
    from neuromark.benchmarks.primate_reaching.encoder_cost import window_counts_cost
    from neuromark.processors.encoder_cost import mean_block

    cost = window_counts_cost(96, 1, 2.5)
    assert cost.ops_per_sample == ops(add=2 * 96 + 2.5, div=2.5, cmp=5.0)  # per step, 2.5 spikes
    other = window_counts_cost(100, 1, 0.5).to_json()
    mean = mean_block([cost.to_json(), other], [3, 1], keep_parts=False)
    assert mean["ops_per_sample"]["add"] == pytest.approx((3 * (192 + 2.5) + (200 + 0.5)) / 4)
    assert "channels" not in mean["options"] and mean["options"]["window_bins"] == 1


@pytest.mark.parametrize("parallel", [False, True])
def test_primate_reaching_run_carries_the_binning_block(tmp_path, parallel):
    """The tiny two-session surrogate (tests/test_primate_reaching_task.py's): the input
    binning per session and its mean, weighted by test samples."""
    import json

    from neuromark.benchmarks.primate_reaching.reader import PrimateReaching
    from neuromark.config import ConfigFile
    from neuromark.registry import tasks

    # one shared decoder (parallel streams) needs one array: two indy sessions then
    sessions = ["indy_20160622_01", "indy_20160630_01" if parallel else "loco_20170210_03"]
    data = {"task": "primate_reaching", "benchmark": {"id": "pr-test"},
            "data": {"root": str(tmp_path / "data"), "surrogate": {"duration_s": 16, "seed": 1},
                     "sessions": sessions, "chunk": 100, "parallel_sessions": parallel,
                     "shared_decoder": parallel},
            "model": {"name": "ridge_decoder"},
            "checkpoint_dir": str(tmp_path / "ckpt")}
    (tmp_path / "pr.yaml").write_text(json.dumps(data))
    (res,) = plan_and_run(tasks.get("primate_reaching"), ConfigFile(data=data, path=tmp_path / "pr.yaml"),
                          tmp_path / "out", quiet=True)
    per = res.details["per_session"]
    blocks = [per[s]["front_end"] for s in sessions]
    for s, block in zip(sessions, blocks):
        test = PrimateReaching(tmp_path / "data", s, "test")
        assert block["options"]["channels"] == test.channels
        assert block["ops_per_sample"]["add"] == pytest.approx(2 * test.channels + block["units_per_sample"])
    weights = [per[s]["samples"] for s in sessions]
    top = res.details["front_end"]
    assert top["encoder"] == "spike_window_counts"
    assert top["ops_per_sample"]["add"] == pytest.approx(
        sum(w * b["ops_per_sample"]["add"] for w, b in zip(weights, blocks)) / sum(weights))


def test_kinematic_features_and_controller_inputs_hand_count():
    from neuromark.benchmarks.primate_reaching.encoder_cost import (
        controller_inputs_cost,
        kinematic_features_cost,
    )

    kin = kinematic_features_cost((0, 10, 20, 30, 40))
    # velocity 2 add + 2 div, speed 1 mul + 1 MAC + 1 sqrt, position 2 div, 5 leads: 5 add + 5 cmp
    assert kin.ops_per_sample == ops(add=7, div=4, mul=1, mac=1, transcendental=1, cmp=5)
    assert kin.options["features"] == 25 and kin.state_bytes["lead buffer (float64)"] == 8 * 5 * 41
    assert controller_inputs_cost().ops_per_sample == ops(div=4)
    assert controller_inputs_cost().energy()["value"] == "not estimated"  # divisions only


def test_psth_run_carries_the_candidates_encoders(tmp_path):
    """tests/test_psth_predictivity.py's small surrogate (shorter)."""
    from neuromark.benchmarks.primate_reaching.encoder_cost import kinematic_features_cost
    from neuromark.benchmarks.primate_reaching.encoders import LEADS
    from neuromark.config import ConfigFile
    from neuromark.registry import tasks

    data = {"task": "psth_predictivity", "benchmark": {"id": "psth-test"},
            "data": {"root": str(tmp_path / "data"), "surrogate": {"duration_s": 60, "seed": 2},
                     "sessions": ["loco_20170215_02"]},
            "ceiling": {"n_bootstrap": 20, "min_reliability": 0.0},
            "controller": {"iterations": 2}}
    (res,) = plan_and_run(tasks.get("psth_predictivity"), ConfigFile(data=data), tmp_path / "out", quiet=True)
    block = res.details["front_end"]
    assert block["encoder"] == "controller_inputs" and block["ops_per_sample"]["div"] == 4
    linear = block["candidates"]["lagged_linear"]
    assert linear["ops_per_sample"] == kinematic_features_cost(LEADS).ops_per_sample


def test_band_pass_resample_hand_count():
    """Lee2019 at 1000 Hz: 2.5-s window = 2500 samples x 62 channels; Butterworth order 4:
    4 sections of 4 MAC + 1 mul, twice; resample 1000 -> 100 Hz: 201 taps, 250 outputs."""
    from neuromark.benchmarks.eeg_mi.encoder_cost import band_pass_resample_cost

    cost = band_pass_resample_cost(1000.0, band_hz=(8.0, 30.0), filter="butter", order=4, fs_out=100.0,
                                   window_s=(1.0, 3.5), channels_in=62, channels_out=20)
    cells = 2500 * 62
    assert stage(cost, "band-pass") == ops(mac=2 * 4 * 4 * cells, mul=2 * 4 * cells)
    assert stage(cost, "resample") == ops(mac=250 * 62 * 201)
    assert stage(cost, "unit") == ops(mul=250 * 20)
    fir = band_pass_resample_cost(250.0, band_hz=(8.0, 30.0), filter="fir", order=50, fs_out=100.0,
                                  window_s=(1.0, 3.5), channels_in=62, channels_out=62)
    # 250 -> 100 Hz: up 2, down 5, 2 * 10 * 5 + 1 = 101 taps, ceil(101 / 2) = 51 MACs per output
    assert stage(fir, "band-pass") == ops(mac=2 * 51 * 625 * 62)
    assert stage(fir, "resample") == ops(mac=250 * 62 * 51)


def test_eeg_mat_run_carries_the_preprocessing_block(tmp_path):
    """The Lee2019-layout surrogate at 125 Hz (tests/test_eeg_mi.py's), CSP + LDA."""
    import json

    pytest.importorskip("mne")
    from neuromark.cli import main

    (tmp_path / "eeg.yaml").write_text("""task: classification
benchmark: {id: eeg-tiny}
dataset:
  name: eeg_mi
  options:
    root: surrogate
    synthesize: {subjects: 4, sessions: 1, trials: 32, fs: 125, fixation_s: 1, rest_s: 1,
                 rest_jitter_s: 0.2, test_run: false, layout: mat, seed: 0}
    source: mat
    sessions: [1]
model: {name: csp_lda, checkpoint: ckpt/csp.pt}
eval: {postprocessor: argmax, metrics: [classification_accuracy, synaptic_operations]}
""")
    assert main(["run", str(tmp_path / "eeg.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "eeg-tiny--csp_lda.json").read_text())
    block = res["details"]["front_end"]
    assert block["encoder"] == "band_pass_resample" and block["options"]["fs"] == 125.0
    assert block["units_per_sample"] == 2.5 * 125 * 62


def test_spike_count_frames_hand_count():
    from neuromark.processors.encoder_cost import spike_count_frames_cost

    cost = spike_count_frames_cost(700, 425_000, 850_000, 10, 127, 1000.0)
    # per spike: 2 mul, 1 cmp, 2 div, 2 MAC, 1 add; per sample: min(count, 127) on 2 x 10 cells
    assert cost.ops_per_sample == ops(mul=2000, cmp=1000 + 20, div=2000, mac=2000, add=1000)


CHIPS = {"akida_spoken_digits_singlestream": ("akida", dict(hidden=16, groups=10, time_bins=2, epochs=5,
                                                            train_samples=40, samples=8)),
         "xylo_spoken_digits_singlestream": ("rockpool", dict(hidden=16, classes=4, dt_us=20_000,
                                                              epochs=5, train_samples=60, samples=20))}


@pytest.mark.parametrize("name", sorted(CHIPS))
def test_chip_system_run_carries_the_cochlea_and_counts_block(name, tmp_path):
    """tests/test_chip_system_run.py's shrunk chip configs: the chip's input made by the
    cochlea and counted into its integer frames."""
    import json

    import yaml

    from neuromark.cli import main

    pytest.importorskip("mlperf_loadgen")
    sdk, options = CHIPS[name]
    pytest.importorskip(sdk)
    if sdk == "rockpool":
        pytest.importorskip("xylosim")
    config = yaml.safe_load(Path(f"configs/system/{name}.yaml").read_text())
    config["sut"]["options"].update(options)
    config["loadgen"].update(min_query_count=16, min_duration_s=0)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    main(["system", "run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"), "--allow-invalid"])
    [result] = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json")
                if p.name != "submission.json"]
    block = result["details"]["front_end"]
    assert block["encoder"] == "cochlea + spike_counts"
    counts = block["parts"][1]
    assert counts["options"]["groups"] == options.get("groups", 16) and counts["units_per_sample"] > 0


def test_tau_audio_resampled_to_8k_is_a_front_end(tmp_path):
    """TAU files at 44.1 kHz: each 1-s slice is resampled to 8 kHz (441 -> 80: 2 * 10 * 441 + 1
    taps, ceil(8821 / 80) = 111 MACs per output); the ASC SUT chains it before the MFE."""
    pytest.importorskip("soundfile")
    from test_system_asc import write_tau_fixture

    from neuromark.benchmarks.acoustic_scenes.dcase import DcaseASC
    from neuromark.benchmarks.acoustic_scenes.sut import build_pipeline

    root = write_tau_fixture(tmp_path / "tau")
    block = DcaseASC(root, "test").front_end_cost()
    assert block["options"]["up"] == 80 and block["options"]["down"] == 441
    assert block["ops_per_sample"]["mac"] == 8000 * 111
    pipe = build_pipeline(data=str(root), samples=2, seed=0, train_epochs=0, int8=False, threads=1,
                          weights=None)
    assert pipe.front_end["encoder"] == "resample_poly + mel_filterbank_energies"
    mfe = mel_energies_cost(MelFilterbankEnergies(sample_rate=8000, n_mels=40), 8000).ops_per_sample
    assert pipe.front_end["ops_per_sample"]["mac"] == 8000 * 111 + mfe["mac"]
    at_rate = write_tau_fixture(tmp_path / "tau8k", rate=8000)
    assert DcaseASC(at_rate, "test").front_end_cost() is None


def test_spike_file_counts_come_from_the_stream_not_a_whole_read():
    """The binning's spikes per sample: those the split's loader binned (the whole file is
    not read for it); unmeasured before any pass; the same mean as the file's offsets."""
    from neuromark.registry import datasets

    data = datasets.get("spoken_digits")("test", dt_us=10_000, t_max_us=850_000, pool=10)
    before = data.front_end_cost()
    assert before["parts"][1]["units_per_sample"] is None and before["ops_per_sample"] is None
    assert data._samples is None  # not read for the cost
    for _ in data.loader(64):
        pass
    streamed = data.front_end_cost()["parts"][1]["units_per_sample"]
    offsets = data.samples.offsets
    assert streamed == pytest.approx(offsets[-1] / (len(offsets) - 1))


def test_front_end_priced_with_the_models_energy_profiles():
    """Where the model's energy is estimated, the front end is priced with the same profiles."""
    from neuromark.metrics.functional.energy_profiles import HOROWITZ45_INT8
    from neuromark.processors.encoder_cost import attach_front_end
    from neuromark.results import Results, Score

    class Source:
        def front_end_cost(self):
            return EncoderCost("x", {}, "audio sample", 1.0, [Stage("s", ops(mac=10, add=4, div=1), "")])

    res = Results(scores={"energy_estimate": Score({"horowitz45-int8": 1e-9, "mine": 2e-9})})
    attach_front_end(res, Source())
    by = res.details["front_end"]["energy_by_profile"]
    int8 = HOROWITZ45_INT8
    assert by["horowitz45-int8"]["value"] == pytest.approx(10 * int8.mac_j + 4 * int8.ac_j)
    assert "1 div not priced" in by["horowitz45-int8"]["scope"]
    assert by["mine"]["value"] == "not estimated"
    assert res.scores["energy_estimate"].value == {"horowitz45-int8": 1e-9, "mine": 2e-9}  # untouched
    plain = Results(scores={})
    attach_front_end(plain, object())  # no encoder: no block
    assert "front_end" not in plain.details


@pytest.mark.parametrize("kind", ["delta_mel", "mfcc"])
def test_counted_frames_are_the_features_frames(kind):
    """The counts' frames and steps are those the encoder outputs on a clip of that length."""
    f = KeywordFeatures(kind, 16000, None, 512, 80, 20, n_mfcc=13)
    clip = np.random.default_rng(0).normal(size=(1, 12_345)).astype(np.float32)
    out = f(clip)
    cost = keyword_features_cost(f, 12_345)
    if kind == "delta_mel":
        steps, mels = out.shape[-2:]  # (B, T, n_mels)
        assert mels == 20 and stage(cost, "delta modulator")["mac"] == steps * mels
    else:
        coeffs, frames = out.shape[-2:]  # (B, n_mfcc, frames)
        assert stage(cost, "DCT-II")["mac"] == frames * coeffs * 20
    assert cost.options["frames"] == 1 + 12_345 // 80


def test_counted_mfe_frames_are_the_features_frames():
    mfe = MelFilterbankEnergies(sample_rate=8000, n_mels=32, hop_length=100)
    out = mfe.features(np.zeros((2, 7_000), np.float32) + 0.1)
    cost = mel_energies_cost(mfe, 7_000)
    assert stage(cost, "log")["transcendental"] == out.shape[-1] * out.shape[-2]


def test_keyword_clips_at_their_own_rate_have_no_block():
    from neuromark.benchmarks.keywords.models import KeywordClips

    clips, labels = np.zeros((2, 8000), np.float32), np.array([0, 1])
    raw = KeywordClips(clips, labels, KeywordFeatures("waveform", 8000), num_classes=2)
    assert raw.front_end_cost() is None
    resampled = KeywordClips(clips, labels, KeywordFeatures("waveform", 16000, 8000), num_classes=2)
    assert resampled.front_end_cost().ops_per_sample["mac"] == 4000 * 41
    assert KeywordClips(clips, labels, lambda x: x, num_classes=2).front_end_cost() is None
