"""The ``system`` task end to end: every scenario from the CLI on toy SUTs, the ASC
pipeline (synthetic and TAU fixture data), accuracy mode, power windows, bad configs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.system.timing import now_s
from neuromark.system.track.task import TASK
from neuromark.tasks.base import plan_and_run

pytest.importorskip("mlperf_loadgen")

FAST = ("  min_duration_s: 0\n  expected_latency_s: 0.001\n"  # target_qps, min_query_count: auto
        "  latency_bound_s: 0.1\n")


def write_config(tmp_path, body, name="cfg.yaml"):
    path = tmp_path / name
    path.write_text(body)
    return path


def run_cli(tmp_path, config, capsys):
    out = tmp_path / "out"
    code = main(["system", "run", str(config), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    results = [json.loads(p.read_text()) for p in out.glob("*.json") if p.name != "submission.json"]
    assert (out / "submission.json").is_file() and (out / "submission/submission.md").is_file()
    assert len(results) == 1
    return out, results[0], captured.out


@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_cli_runs_every_scenario_on_sleep_sut(tmp_path, capsys, scenario):
    config = write_config(tmp_path, f"task: system\nbenchmark: {{id: toy}}\nsut:\n  name: sleep\n"
                                    f"  options: {{sleep_s: 0.0005, samples: 8}}\ntiming:\n  warmup: 2\n"
                                    f"loadgen:\n  scenario: {scenario}\n" + FAST + "  samples_per_query: 2\n")
    out, res, stdout = run_cli(tmp_path, config, capsys)
    lg = res["details"]["loadgen"]["PerformanceOnly"]
    assert lg["scenario"] == scenario
    assert lg["requested"]["scenario"] == scenario and "min_query_count" in lg["effective"]
    assert lg["sample_count"] == res["details"]["timing"]["inference"]["n"]
    if scenario == "MultiStream":
        assert lg["samples_per_query"] == 2 and lg["sample_count"] == 2 * lg["query_count"]
    assert (out / "cfg/loadgen/performanceonly/mlperf_log_detail.txt").is_file()
    # the sleeping SUT's own mean is at least its sleep time
    assert res["scores"]["inference_latency"]["value"] >= 0.5
    assert res["scores"]["energy_per_inference"]["value"] == "not measured"
    assert "energy not measured: no power meter configured" in res["flags"]
    assert (out / "report.md").is_file() and "toy" in stdout


def test_asc_synthetic_singlestream_with_accuracy(tmp_path, capsys):
    config = write_config(tmp_path, "task: system\nsut:\n  name: asc_cnn\n"
                                    "  options: {samples: 8, train_epochs: 2}\naccuracy: true\n"
                                    "timing:\n  warmup: 1\nloadgen:\n" + FAST)
    out, res, _ = run_cli(tmp_path, config, capsys)
    scores = res["scores"]
    for stage in ("preprocess", "inference", "total"):
        assert scores[f"{stage}_latency"]["unit"] == "ms" and scores[f"{stage}_latency"]["error"] >= 0
    assert res["details"]["timing"]["preprocess"]["n"] == res["details"]["loadgen"]["PerformanceOnly"][
        "query_count"]
    assert 0 <= scores["classification_accuracy"]["value"] <= 1
    assert res["details"]["loadgen"]["AccuracyOnly"]["response_dtype"] == "<f4"
    assert (out / "cfg/loadgen/accuracyonly/mlperf_log_accuracy.json").is_file()
    assert (out / "cfg/latency.png").is_file()
    assert len(res["details"]["raw_timings_ns"]["inference"]) == res["details"]["timing"]["inference"]["n"]


@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_asc_on_tau_fixture_every_scenario(tmp_path, capsys, scenario):
    from test_system_asc import write_tau_fixture

    write_tau_fixture(tmp_path / "tau")
    config = write_config(tmp_path, f"task: system\nsut:\n  name: asc_cnn\n"
                                    f"  options: {{data: tau, samples: 100}}\naccuracy: true\n"
                                    f"loadgen:\n  scenario: {scenario}\n" + FAST)
    _, res, _ = run_cli(tmp_path, config, capsys)
    assert res["details"]["sut"]["data"] == str((tmp_path / "tau").absolute())  # recorded absolute
    assert res["details"]["loadgen"]["PerformanceOnly"]["scenario"] == scenario
    assert res["details"]["timing"]["preprocess"]["n"] >= 1
    assert res["scores"]["classification_accuracy"]["value"] in (0.0, 0.25, 0.5, 0.75, 1.0)  # 4 test slices
    assert any("untrained" in f for f in res["flags"])


def test_csv_meter_power_windows(tmp_path):
    t = np.arange(now_s() - 1.0, now_s() + 120.0, 0.001)
    lines = "t_s,power_w\n" + "\n".join(f"{v:.6f},3.0" for v in t)
    (tmp_path / "trace.csv").write_text(lines)
    text = ("task: system\nsut:\n  name: asc_cnn\n  options: {samples: 4}\nloadgen:\n" + FAST +
            "meter:\n  name: csv\n  options: {path: trace.csv, offset_s: 0}\n"
            "power:\n  floor_s: 0.2\n  active_s: 0.2\n")
    config = parse_yaml(text, tmp_path / "p.yaml")
    res = plan_and_run(TASK, config, tmp_path / "out")[0]
    inf = res.details["power"]["active"]["inference"]
    assert res["floor_power"] == pytest.approx(3.0) and res["inference_total_power"] == pytest.approx(3.0)
    assert res["inference_dynamic_power"] == pytest.approx(0.0, abs=1e-9)
    mean = res.details["timing"]["inference"]["mean_s"]
    assert inf["total_energy_per_inference_j"] == pytest.approx(3.0 * mean)
    assert res["inference_floor_energy_per_inference"] == pytest.approx(3.0 * mean)
    assert inf["meter_samples"] >= 190
    lg = res.details["power"]["loadgen"]  # the meter also ran during the LoadGen test
    assert lg["samples"] == res.details["timing"]["inference"]["n"]
    assert res["loadgen_window_power"] == pytest.approx(3.0)
    assert res["loadgen_energy_per_sample"] == pytest.approx(3.0 * lg["duration_s"] / lg["samples"])
    assert (tmp_path / "out/power.png").is_file()
    from neuromark.system.track.submission import describe, write_submission

    text = write_submission([res], describe([res]), tmp_path / "sub").read_text()  # the ASC report
    assert ("| window | duration (s) | meter samples | total power (W) | floor power (W) | dynamic (W) "
            "| total J/inference | floor J/inference | dynamic J/inference |") in text
    assert "| floor | 0.2" in text and "| inference | 0.2" in text
    assert "floor window (configured and ready, not asleep) gives floor power" in text
    timeline = res.details["power_timeline"]  # cropped to the windows +- 1 s, thinned to <= 20k points
    assert len(timeline["t_s"]) <= 20000 and timeline["t_s"][-1] - timeline["t_s"][0] < 30


@pytest.mark.parametrize("body, message", [
    ("sut:\n  name: quantum\n", r"c.yaml:3: sut.name: unknown sut 'quantum'"),
    ("sut:\n  name: slep\n", r"did you mean 'sleep'"),
    ("sut:\n  name: sleep\n  options:\n    sleep_s: -1\n",
     r"c.yaml:5: sut.options.sleep_s: Input should be greater than or equal"),
    ("sut:\n  name: sleep\n  options:\n    sleeps: 1\n",
     r"c.yaml:5: sut.options.sleeps: unknown key; did you mean sleep_s"),
    ("sut:\n  name: esn\n  options:\n    data: mg\n",
     r"sut.options.data: Input should be 'synthetic' or 'mackey_glass'"),
    ("sut:\n  name: sleep\n  options:\n    seed: 1\n", r"sut.options.seed: given by the run"),
    ('sut:\n  name: "null"\nmeter:\n  name: csv\n', r"c.yaml:4: meter.options.path: Field required"),
    ('sut:\n  name: "null"\nmeter:\n  name: rapl\n  options: {interval: 1}\n',
     r"c.yaml:6: meter.options.interval: unknown key; did you mean interval_s"),
    ('sut:\n  name: "null"\nmeter:\n  name: wattmeter\n', r"c.yaml:5: meter.name: unknown meter 'wattmeter'"),
    ('sut:\n  name: "null"\nloadgen:\n  min_duration_s: -2\n', r"c.yaml:5: loadgen.min_duration_s"),
    ('sut:\n  name: "null"\npower:\n  floor_s: 0\n',
     r"c.yaml:5: power.floor_s: Input should be greater than 0"),
    ('sut:\n  name: "null"\npower:\n  idle_s: 2\n', r"c.yaml:5: power.idle_s: unknown key"),
    ('sut:\n  name: "null"\npower:\n  amortised: true\n  latency: data_time\n',
     r"c.yaml:4: power: .*two rules; choose one"),
    # configs written before ``benchmark:``, ``sut: {name, options}`` and ``meter:``: unknown keys
    ("name: old\nsut:\n  name: sleep\n", r"c.yaml:2: name: unknown key \(allowed: task, benchmark, "),
    ('version: "2"\nsut:\n  name: sleep\n', r"c.yaml:2: version: unknown key \(allowed: task, "),
    ("sut:\n  kind: sleep\n  sleep_s: 0.001\n",
     r"c.yaml:3: sut.kind: unknown key \(allowed: name, options, label\)"),
    ('sut:\n  name: sleep\npower:\n  meter: csv\n  csv: t.csv\n  floor_s: 1\n',
     r"c.yaml:5: power.meter: unknown key \(allowed: floor_s, active_s, "),
    ('sut:\n  name: sleep\npower:\n  reason: none here\n', r"c.yaml:5: power.reason: unknown key"),
])
def test_bad_system_configs(tmp_path, body, message):
    config = parse_yaml("task: system\n" + body, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=message):
        TASK.plan(config, RunContext.build())


def test_accuracy_needs_a_sut_with_labels(tmp_path):
    config = parse_yaml('task: system\nsut:\n  name: "null"\naccuracy: true\n', tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"c.yaml:4: accuracy: SUT 'null' has no labels to score"):
        plan_and_run(TASK, config, tmp_path / "out")


def test_system_run_refuses_other_tasks(tmp_path, capsys):
    config = write_config(tmp_path, "task: mackey_glass\n")
    assert main(["system", "run", str(config)]) == 1
    assert "this command runs task: system" in capsys.readouterr().err


def test_accuracy_log_scored_with_our_metric(tmp_path):
    from neuromark.system.loadgen import LoadGenRun
    from neuromark.system.track.scores import accuracy

    logits = {0: [0.1, 0.9, 0.0, 0.0], 1: [0.0, 0.1, 0.8, 0.1], 2: [0.0, 0.0, 0.0, 1.0]}
    entries = [{"seq_id": i, "qsl_idx": k, "data": np.asarray(v, dtype="<f4").tobytes().hex().upper()}
               for i, (k, v) in enumerate(logits.items())]
    (tmp_path / "mlperf_log_accuracy.json").write_text(json.dumps(entries))
    run = LoadGenRun(log_dir=tmp_path, summary={}, response_dtype="<f4")
    score = accuracy(run, np.array([1, 0, 3]))  # sample 1 is wrong: 2/3 correct
    assert score.value == pytest.approx(2 / 3)
    assert score.error == pytest.approx(np.std([1, 0, 1], ddof=1) / np.sqrt(3))


def test_shipped_system_configs_validate():
    from pathlib import Path

    from neuromark.config import load_config

    root = Path(__file__).resolve().parents[1] / "configs"  # the kernel's and the families'
    configs = sorted(p for p in root.rglob("*.yaml")
                     if "suite" not in p.parts and "\ntask: system" in "\n" + p.read_text())
    assert len(configs) >= 8
    for path in configs:
        cfg = TASK.plan(load_config(path), RunContext.build())
        assert cfg.task == "system", path


def test_rapl_meter_end_to_end_on_fake_sysfs(tmp_path, monkeypatch):
    """The fake package counter reads as 5 W since ``start`` (computed at each read)."""
    from test_system_power import make_rapl

    import neuromark.system.power.rapl as rapl

    root = tmp_path / "powercap"
    make_rapl(root, max_uj=2**40)
    counter = root / "intel-rapl:0/energy_uj"
    start = now_s()
    real_read = rapl._read
    monkeypatch.setattr(rapl, "_read", lambda f: f"{int((now_s() - start) * 5e6)}\n" if f == counter
                        else real_read(f))
    text = ("task: system\nsut:\n  name: sleep\n  options: {sleep_s: 0.0002}\nloadgen:\n" + FAST +
            f"meter:\n  name: rapl\n  options: {{root: {root}, interval_s: 0.005}}\n"
            "power:\n  floor_s: 0.2\n  active_s: 0.2\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "r.yaml"), tmp_path / "out")[0]
    assert res.details["power_meter"]["components"] == ["package-0", "dram"]  # dram stays at 0 W
    assert res["floor_power"] == pytest.approx(5.0, rel=0.01)
    assert res["stream_total_power"] == pytest.approx(5.0, rel=0.01)
    assert res["stream_dynamic_power"] == pytest.approx(0.0, abs=0.05)
    assert res.details["power"]["floor"]["meter_samples"] >= 10
    assert (tmp_path / "out/power.png").is_file()


def test_esn_forecast_step_run(tmp_path):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    text = ("task: system\nsut:\n  name: esn\n  options: {samples: 50, threads: 1}\ntiming:\n  warmup: 5\n"
            "loadgen:\n" + FAST)
    try:
        res = plan_and_run(TASK, parse_yaml(text, tmp_path / "e.yaml"), tmp_path / "out")[0]
        assert torch.get_num_threads() == 2  # the SUT's 1 thread does not leak into later runs
    finally:
        torch.set_num_threads(before)
    assert res.details["sut"]["threads"] == 1
    assert res.details["sut"]["name"] == "esn-forecast-step"
    assert res.details["loadgen"]["PerformanceOnly"]["response_dtype"] == "<f8"
    assert res["preprocess_latency"] > 0 and res["inference_latency"] > 0


def test_loadgen_errors_become_flags(tmp_path):
    # min_duration 0.5 s but too few pre-generated queries: LoadGen logs "Ending early" as an error
    text = ("task: system\nsut:\n  name: \"null\"\nloadgen:\n  min_query_count: 10\n  min_duration_s: 0.5\n"
            "  expected_latency_s: 0.001\ntiming:\n  warmup: 0\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "n.yaml"), tmp_path / "out")[0]
    flags = res.flags
    assert any(f.startswith("LoadGen result INVALID: min duration not met (500 ms requested)") for f in flags)
    assert any(f.startswith("LoadGen error: error_runtime: Ending early") for f in flags)


def test_a_third_party_sut_runs_from_neuromark_run(tmp_path, capsys):
    """A package adds a SUT with ``suts.register`` and a config naming it; ``neuromark run``
    validates its options against the factory's signature and runs it."""
    from neuromark.registry import suts
    from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT

    made = {}

    def echo(*, scale: float, samples: int = 16, seed: int = 0) -> BuiltSUT:
        library = InMemoryLibrary("echo-values", float, samples)
        sut = StagedSUT("echo", library, lambda x: np.float32(x * scale), lambda f: np.asarray([f], "<f4"))
        made.update(scale=scale, seed=seed)
        return BuiltSUT(sut, library, info={"scale": scale})

    suts.register("echo", echo)
    try:
        config = write_config(tmp_path, "task: system\nbenchmark: {id: echo-ss, version: '2.1'}\n"
                                        "sut:\n  name: echo\n  options: {scale: 3}\nseed: 7\n"
                                        "timing:\n  warmup: 2\nloadgen:\n" + FAST)
        out = tmp_path / "out"
        assert main(["run", str(config), "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
        res = json.loads((out / "echo-ss--echo.json").read_text())
        assert made == {"scale": 3.0, "seed": 7}
        assert res["benchmark"]["version"] == "2.1"
        assert res["benchmark"]["parent"] == "neurobench-system-track"
        assert res["details"]["sut"] == {"name": "echo", "entry": "echo", "scale": 3.0}
        assert res["config"]["effective"]["sut"] == {"name": "echo", "options": {"scale": 3.0, "samples": 16},
                                                        "label": None}
        assert res["scores"]["inference_latency"]["value"] > 0
        bad = write_config(tmp_path, "task: system\nsut:\n  name: echo\n  options: {scale: loud}\n",
                           "bad.yaml")
        assert main(["run", str(bad), "--out", str(out)]) == 1
        assert "bad.yaml:4: sut.options.scale: Input should be a valid number" in capsys.readouterr().err
    finally:
        suts._entries.pop("echo")
