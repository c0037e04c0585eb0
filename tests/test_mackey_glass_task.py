"""The mackey_glass task: shortened protocol end to end, sweep + resume, bad configs, NaN."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from neuromark.benchmarks.mackey_glass import instances as instances_module
from neuromark.benchmarks.mackey_glass import task as task_module
from neuromark.benchmarks.mackey_glass.task import TASK
from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.results import Results
from neuromark.tasks.base import plan_and_run

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "mackey_glass"

SHORT = """\
task: mackey_glass
data: {taus: [17], instances: 3}
models:
  - {name: esn, seed: 0}
  - {name: lstm, seed: 0, params: {epochs: 3, hidden_size: 16}}
execution_rate_hz: 0.39
"""


def _config(text: str, tmp_path: Path):
    path = tmp_path / "mg.yaml"
    path.write_text(text)
    return parse_yaml(text, path)


def _se(values):
    n = len(values)
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def test_smape_by_hand():
    from neuromark.metrics.functional.correctness import smape

    y = torch.tensor([[1.0], [2.0], [0.0], [1.0], [1.0]], dtype=torch.float64)
    p = torch.tensor([[1.0], [1.0], [0.0], [float("nan")], [1e308]], dtype=torch.float64)
    # terms: 0, 200*1/3, 0 (0/0), 200 (NaN), 200*(1e308-1)/(1e308+1) ~ 200 (no overflow)
    assert smape(p, y) == pytest.approx((0 + 200 / 3 + 0 + 200 + 200) / 5)
    assert smape(torch.full((3, 1), float("inf")), torch.ones(3, 1)) == 200.0


def test_short_protocol_esn_and_lstm(tmp_path):
    esn, lstm = plan_and_run(TASK, _config(SHORT, tmp_path), tmp_path / "out", quiet=True)
    # one benchmark, two models: the model block tells them apart
    assert esn.benchmark.id == lstm.benchmark.id == "mackey-glass-tau17"
    assert (esn.model.name, esn.model.label, lstm.model.label) == ("esn", "esn", "lstm")
    assert esn.model.checkpoint_sha256 is None and esn.model.options_digest != lstm.model.options_digest
    per = esn.details["per_instance_sMAPE"]
    assert len(per) == 3 and all(0 <= v <= 200 for v in per)
    assert esn.scores["sMAPE"].value == pytest.approx(sum(per) / 3)
    assert esn.scores["sMAPE"].error == pytest.approx(_se(per))
    assert esn["sMAPE"] < 30  # the tuned ESN forecasts tau=17 well even on 3 instances
    assert esn["connection_sparsity"] == pytest.approx(0.876, abs=0.01)
    assert 4000 < esn["synaptic_operations"]["Effective_MACs"] < 4800
    assert esn["activation_sparsity"] == 0.0
    assert esn["model_execution_rate"] == 0.39
    assert lstm["synaptic_operations"]["Dense"] == pytest.approx(4 * 16 * (50 + 16) + 16)
    assert esn.details["seeds"] == [0, 1, 2] and esn.flags == []
    assert esn.config["models"][0]["params"]["reservoir_size"] == 186  # resolved defaults


def test_same_config_and_seed_give_the_same_scores(tmp_path):
    text = SHORT.replace("instances: 3", "instances: 2").replace(
        "  - {name: lstm, seed: 0, params: {epochs: 3, hidden_size: 16}}\n", "")
    first = plan_and_run(TASK, _config(text, tmp_path), tmp_path / "a", quiet=True)[0]
    second = plan_and_run(TASK, _config(text, tmp_path), tmp_path / "b", quiet=True)[0]
    assert first.details["per_instance_sMAPE"] == second.details["per_instance_sMAPE"]


class _Diverging(torch.nn.Module):
    """Forecasts the truth's last value for 10 steps, then NaN."""

    def __init__(self) -> None:
        super().__init__()
        self.readout = torch.nn.Linear(1, 1, dtype=torch.float64)
        self.activation = torch.nn.Tanh()
        self.forecast = False

    def fit(self, inputs, targets):
        self.last = float(targets[-1, 0])
        return targets

    def forward(self, x):
        out = torch.full_like(x, self.last)
        out[10:] = float("nan")
        return out + 0 * self.activation(self.readout(torch.zeros_like(x)))


def test_nan_forecast_counts_200_and_is_flagged(tmp_path, monkeypatch):
    monkeypatch.setattr(instances_module, "build_model", lambda model, params, seed: _Diverging())
    text = SHORT.replace("instances: 3", "instances: 2").replace(
        "  - {name: lstm, seed: 0, params: {epochs: 3, hidden_size: 16}}\n", "")
    res = plan_and_run(TASK, _config(text, tmp_path), tmp_path / "out", quiet=True)[0]
    from neuromark.benchmarks.mackey_glass.series import MackeyGlass

    for k, value in enumerate(res.details["per_instance_sMAPE"]):
        x_test, y_test = MackeyGlass(17, k).test_split()
        y = y_test[:10, 0]
        p = MackeyGlass(17, k).train_split()[1][-1, 0]
        head = float((200 * (y - p).abs() / (y.abs() + p.abs())).sum())
        assert value == pytest.approx((head + 740 * 200) / 750)
    assert res.details["diverged"] == [
        {"instance": 0, "first_nonfinite_step": 10, "complexity_measured": True},
        {"instance": 1, "first_nonfinite_step": 10, "complexity_measured": True}]
    assert "instance 0 diverged" in res.flags[0]
    path = res.save(tmp_path / "r.json")
    assert json.loads(path.read_text())["scores"]["sMAPE"]["value"] < 200


def test_exploding_esn_is_scored_200_per_nonfinite_step_and_flagged(tmp_path, monkeypatch):
    from neuromark.benchmarks.mackey_glass.forecasters import EchoStateNetwork

    class Exploding(EchoStateNetwork):
        """Instance 0 feeds back 1.05 x its input; past 1e6 the value turns NaN inside the
        model, so NaN flows through its own layers (which the probes refuse to count)."""

        def fit(self, inputs, targets):
            out = super().fit(inputs, targets)
            if self.explode:
                with torch.no_grad():
                    self.w_out.weight.zero_()
                    self.w_out.weight[0, 1] = 1.05
            return out

        def _update(self, f):
            if bool(f.abs().max() > 1e6):
                f = f * float("nan")
            return super()._update(f)

    def build(model, params, seed):
        esn = Exploding(params, seed=seed)
        esn.explode = seed == 0
        return esn

    monkeypatch.setattr(instances_module, "build_model", build)
    text = SHORT.replace("instances: 3", "instances: 2").replace(
        "  - {name: lstm, seed: 0, params: {epochs: 3, hidden_size: 16}}\n", "")
    res = plan_and_run(TASK, _config(text, tmp_path), tmp_path / "out", quiet=True)[0]
    (bad,) = res.details["diverged"]
    assert bad["instance"] == 0 and bad["complexity_measured"] is False
    # y = 1.05 f from ~1 passes 1e6 after ln(1e6) / ln(1.05) ~ 283 steps, then NaN
    first = bad["first_nonfinite_step"]
    assert 270 < first < 300
    per = res.details["per_instance_sMAPE"]
    assert per[0] > 200 * (750 - first) / 750  # non-finite steps count 200, the rest ~200
    assert per[1] < 30
    assert len(res.details["per_instance_complexity"]) == 1  # instance 1 only
    assert "left out of the means" in res.flags[0]
    assert res["connection_sparsity"] == res.details["per_instance_complexity"][0]["connection_sparsity"]


def test_sweep_writes_a_plot_and_resumes(tmp_path, monkeypatch):
    text = """\
task: mackey_glass
data: {taus: [17, 18], instances: 2}
models: [{name: esn}]
"""
    out = tmp_path / "sweep"
    (res,) = plan_and_run(TASK, _config(text, tmp_path), out, quiet=True)
    assert res.benchmark.id == "mackey-glass-tau-sweep"
    assert set(res.scores) == {"sMAPE[esn,tau=17]", "sMAPE[esn,tau=18]"}
    plot = out / "smape_vs_tau.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert res.artefacts == ["sweep/smape_vs_tau.png"]
    assert sorted(p.name for p in (out / "entries").iterdir()) == ["esn_tau17.json",
                                                                    "esn_tau18.json"]

    def boom(*args, **kwargs):
        raise AssertionError("completed entries must not be re-run")

    monkeypatch.setattr(task_module, "run_entries", boom)
    monkeypatch.setattr(instances_module, "run_instance", boom)  # the executor's unit
    (again,) = plan_and_run(TASK, _config(text, tmp_path), out, quiet=True)
    assert dict(again) == dict(res)


@pytest.mark.parametrize("data, message", [
    ("{taus: [16]}", r"mg\.yaml:\d+: data\.taus: no Mackey-Glass series for tau=16 \(available: 17, 18"),
    ("{instances: 61}", r"data\.instances: instance 60 of tau=17 ends at sample 3750, past the end"),
    ("{length: 0}", r"data\.length: Input should be greater than 0"),
    ("{length: -2}", r"data\.length: Input should be greater than 0"),
    ("{shift: 0}", r"data\.shift: Input should be greater than 0"),
    ("{dt: -1.0}", r"data\.dt: Input should be greater than 0"),
    ("{dt: 2.0}", r"data\.dt: dt=2\.0 does not match the tau=17 series' dt=2\.5"),
    ("{instances: 0}", r"data\.instances: Input should be greater than 0"),
])
def test_bad_data_settings_are_config_errors(tmp_path, data, message):
    text = f"task: mackey_glass\ndata: {data}\nmodels: [{{name: esn}}]\n"
    with pytest.raises(ConfigError, match=message):
        TASK.plan(_config(text, tmp_path), RunContext.build())


def test_bad_model_settings_name_the_key(tmp_path):
    text = "task: mackey_glass\nmodels:\n  - {name: esn, params: {spectral_radus: 1.0}}\n"
    with pytest.raises(ConfigError, match=r"mg\.yaml:3: models\.0\.params\.spectral_radus: "
                                          r"unknown key; did you mean spectral_radius"):
        TASK.plan(_config(text, tmp_path), RunContext.build())
    text = "task: mackey_glass\nmodels:\n  - {name: gru}\n"
    with pytest.raises(ConfigError, match=r"models\.0\.name"):
        TASK.plan(_config(text, tmp_path), RunContext.build())
    text = "task: mackey_glass\nmodels:\n  - {name: lstm, params: {epochs: 0}}\n"
    with pytest.raises(ConfigError, match=r"models\.0\.params\.epochs: Input should be greater than 0"):
        TASK.plan(_config(text, tmp_path), RunContext.build())


def test_shipped_configs_validate():
    from neuromark.config import load_config

    for name in ("esn", "lstm", "lstm_suite", "tau_sweep"):
        cfg = TASK.plan(load_config(CONFIGS / f"{name}.yaml"), RunContext.build())
        assert cfg.data.taus[0] == 17
    full = TASK.plan(load_config(CONFIGS / "lstm.yaml"), RunContext.build())
    assert full.data.instances == 30 and full.models[0].params.get("epochs", 200) == 200
    sweep = TASK.plan(load_config(CONFIGS / "tau_sweep.yaml"), RunContext.build())
    assert sweep.data.taus == list(range(17, 31))
    assert [m.name for m in sweep.models] == ["esn", "lstm"]


def test_cli_runs_a_config_and_writes_results_and_report(tmp_path, capsys):
    text = SHORT.replace("instances: 3", "instances: 2").replace(
        "  - {name: lstm, seed: 0, params: {epochs: 3, hidden_size: 16}}\n", "")
    config = tmp_path / "mg.yaml"
    config.write_text(text)
    assert main(["run", str(config), "--out", str(tmp_path / "res"), "--quiet"]) == 0
    # 2 instances, not the shipped 30: filed under a derived id (benchmark_settings)
    (path,) = (tmp_path / "res").glob("mackey-glass-tau17-custom-*--esn.json")
    res = Results.load(path)
    assert res.details["benchmark_derived"]["changes"][0]["setting"] == "data.instances"
    assert 0 <= res["sMAPE"] <= 200
    assert "mackey-glass-tau17" in (tmp_path / "res" / "report.md").read_text()
    assert "sMAPE" in capsys.readouterr().out


def test_corrupt_series_in_a_data_root_names_the_file(tmp_path):
    import shutil

    from neuromark.benchmarks.mackey_glass.series import DATA_DIR
    from neuromark.errors import ChecksumError

    root = tmp_path / "data"
    shutil.copytree(DATA_DIR, root)
    path = root / "mackey_glass_tau17.npy"
    path.write_bytes(path.read_bytes()[:-8] + b"\x00" * 8)
    text = f"task: mackey_glass\ndata: {{instances: 2, root: {root}}}\nmodels: [{{name: esn}}]\n"
    config = _config(text, tmp_path)
    with pytest.raises(ChecksumError, match=r"data/mackey_glass_tau17\.npy: sha256 mismatch"):
        TASK.plan(config, RunContext.build())  # checked before anything runs
    with pytest.raises(ChecksumError, match=r"data/mackey_glass_tau17\.npy: sha256 mismatch"):
        plan_and_run(TASK, config, tmp_path / "out", quiet=True)


ESN_ONLY = "task: mackey_glass\ndata: {taus: [17], instances: 2}\nmodels: [{name: esn}]\n"


def test_unknown_metric_name_is_a_config_error_with_the_line(tmp_path):
    text = ESN_ONLY + "metrics: [footprint, synaptic_operatons]\n"
    with pytest.raises(ConfigError, match=r"mg\.yaml:4: metrics\[1\]: unknown metric "
                                          r"'synaptic_operatons'; did you mean 'synaptic_operations'"):
        TASK.plan(_config(text, tmp_path), RunContext.build())
    with pytest.raises(ConfigError, match=r"metrics: Value error, sMAPE is always scored"):
        TASK.plan(_config(ESN_ONLY + "metrics: [sMAPE]\n", tmp_path), RunContext.build())


def test_configured_metrics_and_benchmark_identity(tmp_path):
    text = ESN_ONLY + ("metrics: [parameter_count, MSE]\n"
                       "benchmark: {id: my-esn, version: '2.0', citation: mine}\n")
    (res,) = plan_and_run(TASK, _config(text, tmp_path), tmp_path / "out", quiet=True)
    assert list(res.scores) == ["sMAPE", "parameter_count", "MSE", "model_execution_rate"]
    assert res.scores["MSE"].higher_is_better is False and res.scores["MSE"].error is None
    assert res.details["per_instance_complexity"][0]["parameter_count"] == res["parameter_count"]
    assert (res.benchmark.id, res.benchmark.version, res.benchmark.parent,
            res.benchmark.citation) == ("my-esn", "2.0", "neurobench-mackey_glass", "mine")


def test_default_identity_and_score_metadata(tmp_path):
    (res,) = plan_and_run(TASK, _config(ESN_ONLY, tmp_path), tmp_path / "out", quiet=True)
    assert res.benchmark.id == "mackey-glass-tau17"
    assert res.benchmark.parent == "neurobench-mackey_glass"
    assert res.benchmark.citation == task_module.CITATION and res.benchmark.version == "1.0"
    meta = {k: (s.unit, s.higher_is_better) for k, s in res.scores.items()}
    assert meta == {"sMAPE": ("%", False), "footprint": ("bytes", False),
                    "parameter_count": ("", False), "connection_sparsity": ("", True),
                    "activation_sparsity": ("", True),
                    "synaptic_operations": ("ops/sample", False),
                    "model_execution_rate": ("Hz", None)}  # 1 / the tau=17 series' dt
