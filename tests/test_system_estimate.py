"""System track: the energy ESTIMATE (operation counts x a profile) beside the measured
energy per inference, never in its place, in the scores and in the submission report."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.system.timing import now_s
from neuromark.system.track.submission import describe, write_submission
from neuromark.system.track.task import TASK
from neuromark.tasks.base import plan_and_run

pytest.importorskip("mlperf_loadgen")

ESN = ("task: system\nsut:\n  name: esn\n  options: {samples: 40, threads: 1}\n"
       "timing:\n  warmup: 2\nloadgen:\n  min_query_count: 16\n  min_duration_s: 0\n"
       "  expected_latency_s: 0.001\n")
ESTIMATE = "estimate:\n  profiles: [horowitz45-fp32, horowitz45-int8]\n"
#: Horowitz ISSCC 2014, 45 nm: (E_MAC, E_AC = E_update) in J
FIGURES = {"horowitz45-fp32": (4.6e-12, 0.9e-12), "horowitz45-int8": (0.23e-12, 0.03e-12)}


def by_hand(counts: dict[str, float], profile: str) -> float:
    mac, add = FIGURES[profile]
    return (counts["Effective_MACs"] * mac + counts["Effective_ACs"] * add
            + counts["Effective_Neuron_Ops"] * add)


def test_estimate_beside_measured_energy(tmp_path):
    t = np.arange(now_s() - 1.0, now_s() + 120.0, 0.001)
    (tmp_path / "trace.csv").write_text("t_s,power_w\n" + "\n".join(f"{v:.6f},3.0" for v in t))
    text = (ESN + ESTIMATE + "meter:\n  name: csv\n  options: {path: trace.csv, offset_s: 0}\n"
            "power:\n  floor_s: 0.2\n  active_s: 0.2\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "e.yaml"), tmp_path / "out")[0]
    estimate, details = res.scores["energy_estimate"], res.details["energy_estimate"]
    assert estimate.unit == "J/sample (estimate)"
    counts = details["counts"]
    assert counts["Effective_MACs"] > 0 and details["samples"] == 40  # one step per inference
    for profile in FIGURES:
        assert estimate.value[profile] == pytest.approx(by_hand(counts, profile), rel=1e-12)
    measured = res["inference_total_energy_per_inference"]  # still there, still measured
    assert measured == pytest.approx(3.0 * res.details["timing"]["inference"]["mean_s"])
    report = write_submission([res], describe([res]), tmp_path / "sub").read_text()
    table = report[report.index("Energy per inference, measured and estimated"):]
    assert "| measured: inference total | " in table and "| csv meter |" in table
    assert (f"| estimate: horowitz45-fp32 | {estimate.value['horowitz45-fp32']:.4g} | "
            "horowitz45-fp32 v1 (fp32, 45 nm) |") in table
    assert table.index("measured: inference total") < table.index("estimate: horowitz45-int8")


def test_estimate_beside_not_measured(tmp_path):
    res = plan_and_run(TASK, parse_yaml(ESN + "estimate: {}\n", tmp_path / "e.yaml"), tmp_path / "out")[0]
    assert res["energy_per_inference"] == "not measured"  # the estimate never takes its place
    assert len(res["energy_estimate"]) == 4  # the four shipped profiles by default
    report = write_submission([res], describe([res]), tmp_path / "sub").read_text()
    assert "| measured | not measured | no power meter configured" in report


def test_estimate_needs_a_countable_sut_and_known_profiles(tmp_path):
    sleep = "task: system\nsut:\n  name: sleep\nestimate: {}\n"
    with pytest.raises(ConfigError, match=r"s\.yaml:4: estimate: SUT 'sleep' .* no workload"):
        plan_and_run(TASK, parse_yaml(sleep, tmp_path / "s.yaml"), tmp_path / "out")
    unknown = ESN + "estimate:\n  profiles: [horowitz45-fp64]\n"
    with pytest.raises(ConfigError, match=r"u\.yaml:12: estimate\.profiles\[0\]: .*fp64"):
        TASK.plan(parse_yaml(unknown, tmp_path / "u.yaml"), RunContext.build())
