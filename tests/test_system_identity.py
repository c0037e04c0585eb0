"""System identity like model identity (issue 57.1, 57.6, 57.7): a system benchmark's id names
the task, the system is ``details.system`` and the file's label; two systems on one benchmark
share one leaderboard table and ``compare`` pairs them; every run records the machine's load
and says how its energy was obtained; the quantized reference stands beside the float one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.registry import suts
from neuromark.system.sut import BuiltSUT, InMemoryLibrary
from neuromark.system.track.load import BUSY_SHARE, LoadMonitor

pytest.importorskip("mlperf_loadgen")

LOADGEN = "loadgen: {min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.0001}\n"


def two_references(*, samples: int = 40, wrong: int = 4, quantized_wrong: int = 2,
                   quantized: bool = True) -> BuiltSUT:
    """A hidden SUT: one-hot class scores, ``wrong`` samples answered with the next class;
    its float reference is exact, its quantized reference has ``quantized_wrong`` errors."""
    labels = np.arange(samples) % 4
    answer, q_answer = labels.copy(), labels.copy()
    answer[:wrong] = (answer[:wrong] + 1) % 4
    q_answer[:quantized_wrong] = (q_answer[:quantized_wrong] + 1) % 4
    eye = np.eye(4, dtype="<f4")

    class TwoRefs:
        name, response_dtype = "two-refs", "<f4"

        def issue(self, indices):
            return [eye[answer[i]] for i in indices]

    library = InMemoryLibrary("indices", lambda i: i, samples)
    return BuiltSUT(TwoRefs(), library, labels, {"label": "two-refs-own", "sdk": {
        "name": "fake-sdk", "version": "0.1"}, "target": {"kind": "simulator", "name": "fake"}},
                    reference=lambda idx: [eye[labels[i]] for i in idx],
                    quantized_reference=(lambda idx: [eye[q_answer[i]] for i in idx])
                    if quantized else None)


@pytest.fixture
def hidden_sut():
    suts.register("two_references", two_references)
    yield
    suts._entries.pop("two_references", None)


def write(tmp_path, label, options="{}", reference="quantized_model"):
    config = tmp_path / f"{label or 'default'}.yaml"
    config.write_text("task: system\nbenchmark: {id: toy_task-acc99q-singlestream, version: '1.0'}\n"
                      f"sut: {{name: two_references, options: {options}"
                      + (f", label: {label}" if label else "") + "}\n"
                      f"accuracy: {{metric: classification_accuracy, reference: {reference}, "
                      "target: 0.9}\ntiming: {warmup: 0}\n" + LOADGEN)
    return str(config)


def run(tmp_path, out, label, options="{}", reference="quantized_model", capsys=None):
    config = write(tmp_path, label, options, reference)
    code = main(["system", "run", config, "--out", str(out), "--quiet"])
    text = capsys.readouterr() if capsys else None
    return code, text


def test_two_systems_share_one_benchmark_table_and_compare(tmp_path, capsys, hidden_sut):
    out = tmp_path / "results"
    configs = [write(tmp_path, label, options)  # label None: the SUT's own label
               for label, options in (("board-a", "{}"), ("board-b", "{wrong: 2}"), (None, "{}"))]
    assert main(["system", "run", *configs, "--out", str(out), "--quiet"]) == 0, \
        capsys.readouterr().err
    names = sorted(p.name for p in out.glob("toy_task*.json"))
    assert names == ["toy_task-acc99q-singlestream--board-a.json",
                     "toy_task-acc99q-singlestream--board-b.json",
                     "toy_task-acc99q-singlestream--two-refs-own.json"]
    res = json.loads((out / names[0]).read_text())
    system = res["details"]["system"]
    assert system["label"] == "board-a" and res["model"]["label"] == "board-a"
    assert system["sut"]["entry"] == "two_references" and len(system["sut"]["options_digest"]) == 64
    assert system["sdk"] == {"name": "fake-sdk", "version": "0.1"}
    assert system["target"]["kind"] == "simulator" and system["host"]["cores"] >= 1
    # the quantized reference beside the float one, both gaps named; judged against quantized
    acc = res["details"]["accuracy"]
    assert acc["value"] == pytest.approx(0.9)
    assert acc["float_reference"]["value"] == pytest.approx(1.0)
    assert acc["float_reference"]["gap"] == pytest.approx(-0.1)
    assert acc["quantized_reference"]["value"] == pytest.approx(0.95)
    assert acc["quantized_reference"]["gap"] == pytest.approx(-0.05)
    assert acc["reference_source"] == "quantized_model" and acc["reference"] == pytest.approx(0.95)
    assert res["scores"]["quantized_reference_accuracy"]["value"] == pytest.approx(0.95)
    # load recorded; energy says how it was (not) obtained
    load = res["details"]["load"]
    assert load["wall_s"] > 0 and load["cpu_time_s"] >= 0 and load["logical_cores"] >= 1
    assert len(load["load_average_before"]) == 3 and "busy" in load
    assert res["details"]["energy_source"].startswith("not measured")
    # compare pairs two systems of the benchmark; the leaderboard puts all three in one table
    assert main(["compare", str(out / names[0]), str(out / names[1])]) == 0
    printed = capsys.readouterr().out
    assert "board-a" in printed and "board-b" in printed
    site = tmp_path / "site"
    assert main(["leaderboard", str(out), "--out", str(site)]) == 0
    page = (site / "index.html").read_text()
    assert page.count("<section") == 1 and "3 model(s)" in page
    assert all(label in page for label in ("board-a", "board-b", "two-refs-own"))


def test_a_run_below_its_quantized_target_is_invalid_and_says_so(tmp_path, capsys, hidden_sut):
    # 32 of 40 right (0.8) against 0.9 x the quantized reference's 1.0
    out = tmp_path / "r"
    code, _ = run(tmp_path, out, "x", "{wrong: 8, quantized_wrong: 0}", capsys=capsys)
    res = json.loads(next(out.glob("*--x.json")).read_text())
    acc = res["details"]["accuracy"]
    assert acc["verdict"] == "INVALID" and code == 1
    assert "quantized reference" in acc["reason"] and "float reference" not in acc["reason"]


def test_bad_label_and_missing_quantized_reference_are_config_errors(tmp_path, capsys, hidden_sut):
    config = tmp_path / "bad.yaml"
    config.write_text("task: system\nbenchmark: {id: t, version: '1'}\n"
                      "sut: {name: two_references, label: ../escape}\n" + LOADGEN)
    assert main(["system", "run", str(config), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml:3" in err and "not a valid model label" in err
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").glob("*.json"))
    config.write_text("task: system\nbenchmark: {id: t, version: '1'}\nsut: {name: "
                      "two_references, options: {quantized: false}}\naccuracy: {reference: "
                      "quantized_model, target: 0.99}\n" + LOADGEN)
    assert main(["system", "run", str(config), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml:4" in err and "has no quantized reference model" in err


def test_load_monitor_flags_a_busy_machine(monkeypatch):
    import os

    from neuromark.system.track import load as load_module

    cores = os.cpu_count() or 1
    busy = [float(2 * cores)] * 3
    monkeypatch.setattr(load_module, "_loadavg", lambda: list(busy))
    with LoadMonitor(interval_s=0.01) as monitor:
        sum(range(10_000))
    record = monitor.record()
    assert record["busy"] is True and record["other_load"] > BUSY_SHARE * cores
    assert "busy machine" in monitor.flag()
    monkeypatch.setattr(load_module, "_loadavg", lambda: [0.0, 0.0, 0.0])
    with LoadMonitor(interval_s=0.01) as quiet:
        pass
    assert quiet.record()["busy"] is False and quiet.flag() is None
