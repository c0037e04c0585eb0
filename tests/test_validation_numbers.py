"""Impossible numbers are refused at validation, before any work, naming file:line and key
(issue 22, section 1): infinite/NaN floats, settings that would exhaust memory, labels and
targets, power readings, solver options."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import numpy as np
import pytest
import torch
from pydantic import Field
from torch import nn

from neuromark.cli import main
from neuromark.components import ComponentSpec, check_options
from neuromark.config import StrictModel, validate
from neuromark.errors import ConfigError, DataError, ModelOutputError
from neuromark.registry import solvers, suts
from neuromark.system.loadgen import LoadGenSettings

SYSTEM = """\
task: system
benchmark: {id: s}
sut: {name: sleep, options: {sleep_s: 0.0001, samples: 8}}
loadgen:
  scenario: SingleStream
  min_duration_s: 0.1
"""

MACKEY = """\
task: mackey_glass
data: {taus: [17], instances: 2}
models:
  - {name: esn, seed: 0}
"""

QUBO = """\
task: qubo
benchmark: {id: q}
workloads: {sizes: [20], densities: [0.1], seeds: [0]}
solvers:
  - name: neuromark-sa
seeds: [0]
fixed_timeout: {timeouts: [0.01]}
"""


def refused(tmp_path: Path, capsys, text: str, *needles: str) -> str:
    """Validate ``text`` through the CLI: exit 1, no traceback, every needle in the message."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    start = time.perf_counter()
    assert main(["validate", str(path)]) == 1
    assert time.perf_counter() - start < 30  # refused before any work
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# --- infinite and NaN floats -------------------------------------------------------------

@pytest.mark.parametrize("key,line", [("min_duration_s", 6), ("max_duration_s", 6),
                                      ("expected_latency_s", 6)])
def test_infinite_loadgen_durations_are_refused(tmp_path, capsys, key, line):
    text = SYSTEM.replace("  min_duration_s: 0.1\n", f"  {key}: .inf\n")
    refused(tmp_path, capsys, text, f"c.yaml:{line}", f"loadgen.{key}", "finite")


def test_infinite_latency_bound_is_refused(tmp_path, capsys):
    text = SYSTEM.replace("scenario: SingleStream", "scenario: Server\n  target_qps: 10") + \
        "  latency_bound_s: .inf\n"
    refused(tmp_path, capsys, text, "c.yaml:8", "loadgen.latency_bound_s", "finite")


def test_nan_target_qps_is_refused(tmp_path, capsys):
    text = SYSTEM.replace("scenario: SingleStream", "scenario: Offline\n  target_qps: .nan")
    refused(tmp_path, capsys, text, "c.yaml:6", "loadgen.target_qps", "finite")


def test_infinite_sut_option_is_refused(tmp_path, capsys):
    text = SYSTEM.replace("sleep_s: 0.0001", "sleep_s: .inf")
    refused(tmp_path, capsys, text, "c.yaml:3", "sut.options.sleep_s", "finite")


def test_infinite_execution_rate_is_refused(tmp_path, capsys):
    refused(tmp_path, capsys, MACKEY + "execution_rate_hz: .inf\n", "c.yaml:5",
            "execution_rate_hz", "finite")


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_non_finite_mackey_glass_shift_is_refused(tmp_path, capsys, value):
    text = MACKEY.replace("instances: 2}", f"instances: 2, shift: {value}}}")
    refused(tmp_path, capsys, text, "c.yaml:2", "data.shift")


def test_infinite_qubo_timeout_is_refused(tmp_path, capsys):
    refused(tmp_path, capsys, QUBO.replace("[0.01]", "[.inf]"), "c.yaml:7",
            "fixed_timeout.timeouts", "finite")


def test_nan_qubo_gap_is_refused(tmp_path, capsys):
    text = QUBO + "time_to_solution: {gaps: [.nan], cap_s: 0.1}\n"
    refused(tmp_path, capsys, text, "c.yaml:8", "time_to_solution.gaps", "finite")


def test_strict_models_refuse_infinity_everywhere():
    class Section(StrictModel):
        rate: float = Field(1.0, gt=0)
        offset: float = 0.0  # unbounded: was open to NaN and inf

    for data in ({"rate": float("inf")}, {"offset": float("nan")}, {"offset": float("-inf")}):
        with pytest.raises(ConfigError, match="finite number"):
            validate(Section, data)
    assert validate(Section, {"rate": 2.5, "offset": -1.0}).rate == 2.5


# --- sanity bounds where a value can exhaust the machine ---------------------------------

def test_tiny_expected_latency_is_refused_before_loadgen_allocates(tmp_path, capsys):
    text = SYSTEM + "  expected_latency_s: 1e-9\n"
    err = refused(tmp_path, capsys, text, "c.yaml:4", "loadgen", "queries", "expected_latency_s")
    assert "2e+08 queries" in err  # 2 x 0.1 s / 1 ns


def test_huge_server_rate_is_refused():
    with pytest.raises(ValueError, match="queries"):
        LoadGenSettings(scenario="Server", target_qps=1e6, min_duration_s=600)


def test_query_estimate_follows_loadgen_and_is_capped_by_max_query_count():
    assert LoadGenSettings().planned_queries() == (2000.0, 2000.0)  # 2 x 1 s / 1 ms
    settings = LoadGenSettings(expected_latency_s=1e-6, min_duration_s=10, max_query_count=5000)
    assert settings.planned_queries() == (5000.0, 5000.0)  # capped, so accepted
    offline = LoadGenSettings(scenario="Offline", target_qps=100, min_duration_s=2)
    assert offline.planned_queries() == (1.0, pytest.approx(400.0))  # 2 x 2 s x 100/s


def test_absurd_duration_is_refused():
    with pytest.raises(ValueError, match="less than or equal to 1000000"):
        LoadGenSettings(min_duration_s=1e300)


def test_reservoir_too_large_for_memory_is_refused(tmp_path, capsys):
    text = MACKEY.replace("{name: esn, seed: 0}",
                          "{name: esn, seed: 0, params: {reservoir_size: 100000000}}")
    refused(tmp_path, capsys, text, "c.yaml:4", "models.0.params", "reservoir_size 100000000",
            "GiB")


def test_lstm_too_large_for_memory_is_refused(tmp_path, capsys):
    text = MACKEY.replace("{name: esn, seed: 0}", "{name: lstm, params: {hidden_size: 10000000}}")
    refused(tmp_path, capsys, text, "c.yaml:4", "hidden_size 10000000", "GiB")


def test_performance_sample_count_larger_than_the_library_is_an_error(tmp_path):
    from neuromark.system.loadgen import run_test

    built = suts.get("null")(samples=8)
    settings = LoadGenSettings(performance_sample_count=100, min_query_count=1, min_duration_s=0)
    with pytest.raises(ConfigError, match=r"performance_sample_count: 100 is larger than the "
                                          r"sample library 'null-indices' \(8 samples\)"):
        run_test(built.sut, built.library, settings, tmp_path / "logs")


# --- solver options: the signature is the schema -----------------------------------------

@pytest.mark.parametrize("options,needle", [
    ("{workers: -5}", "greater than or equal to 1"),
    ("{workers: many}", "'auto'"),
    ("{workers: 0}", "greater than or equal to 1"),
    ("{chunk_s: .inf}", "finite"),
    ("{chunk_s: 0}", "greater than 0"),
    ("{first_sweeps: 0}", "greater than or equal to 1"),
    ("{beta_range: [0.1, -1]}", "greater than 0"),
])
def test_bad_solver_options_are_refused_with_the_line(tmp_path, capsys, options, needle):
    text = QUBO.replace("  - name: neuromark-sa\n", f"  - name: neuromark-sa\n    options: {options}\n")
    refused(tmp_path, capsys, text, "c.yaml:6", "solvers.0.options", needle)


def test_tabu_options_have_bounds_too():
    spec = ComponentSpec(name="neuromark-tabu", options={"stall": 0})
    with pytest.raises(ConfigError, match=r"options\.stall: Input should be greater than or equal to 1"):
        check_options(solvers, spec)
    good = check_options(solvers, ComponentSpec(name="neuromark-tabu", options={"workers": 2}))
    assert good["workers"] == 2 and good["tenure"] is None


def test_an_entry_declares_bounds_through_its_annotations():
    def factory(*, count: Annotated[int, Field(ge=1)] = 1, rate: float = 1.0) -> None:
        return None

    from neuromark.registry import Registry

    registry = Registry("things")
    registry.register("f", factory)
    with pytest.raises(ConfigError, match=r"options\.count: Input should be greater than or equal to 1"):
        check_options(registry, ComponentSpec(name="f", options={"count": 0}))
    with pytest.raises(ConfigError, match=r"options\.rate: Input should be a finite number"):
        check_options(registry, ComponentSpec(name="f", options={"rate": float("nan")}))
    assert check_options(registry, ComponentSpec(name="f", options={"count": 3})) == \
        {"count": 3, "rate": 1.0}


# --- power traces ------------------------------------------------------------------------

def test_negative_power_reading_names_the_line(tmp_path):
    from neuromark.system.power.csv_trace import read_trace

    trace = tmp_path / "p.csv"
    trace.write_text("t_s,power_w\n0.0,5.0\n0.1,5.1\n0.2,-3.0\n0.3,5.0\n")
    with pytest.raises(DataError, match=r"p\.csv:4: negative power -3\.0 W.*signed: true"):
        read_trace(trace)


def test_negative_voltage_times_current_names_the_line(tmp_path):
    from neuromark.system.power.csv_trace import read_trace

    trace = tmp_path / "vi.csv"
    trace.write_text("t_s,voltage_v,current_a\n0.0,5.0,1.0\n0.1,5.0,-0.2\n")
    with pytest.raises(DataError, match=r"vi\.csv:3: negative power"):
        read_trace(trace)


def test_a_signed_meter_may_read_below_zero(tmp_path):
    from neuromark.system.power.csv_trace import CsvTraceMeter

    trace = tmp_path / "p.csv"
    trace.write_text("t_s,power_w\n0.0,2.0\n1.0,-2.0\n2.0,2.0\n")
    meter = CsvTraceMeter(trace, offset_s=0.0, signed=True)
    meter.stop()
    assert meter.energy(0.0, 2.0) == pytest.approx(0.0)
    assert meter.energy(0.0, 1.0) == pytest.approx(0.0)


def test_signed_is_a_meter_option(tmp_path):
    from neuromark.registry import meters

    spec = ComponentSpec(name="csv", options={"path": "p.csv", "signed": True})
    assert check_options(meters, spec)["signed"] is True


# --- labels and targets ------------------------------------------------------------------

class _Split:
    """The slice of BinnedSpikes that the label check reads."""

    def __init__(self, path: str, labels: list[int], classes: int | None = None) -> None:
        self.path = Path(path)
        self.samples = type("S", (), {"labels": np.asarray(labels, dtype=np.int64)})()
        self.num_classes = classes if classes is not None else max(labels, default=-1) + 1
        self.targets = self.samples.labels  # the header's labels (the label check reads only them)

    def __len__(self) -> int:
        return len(self.samples.labels)


def test_test_label_outside_the_training_classes_names_file_and_sample():
    from neuromark.networks.spike_classifiers import check_labels

    train = _Split("train.h5", [0, 1, 2, 3])
    test = _Split("test.h5", [0, 3, 65535, 1])
    with pytest.raises(DataError, match=r"test\.h5: sample 2: label 65535 is outside the training "
                                        r"classes 0\.\.3 \(from train\.h5\)"):
        check_labels(train, test)
    assert check_labels(train, _Split("test.h5", [3, 0])) == 4


def test_classes_come_from_the_training_data_not_the_test_file(tmp_path):
    from neuromark.networks.spike_classifiers import prepare_checkpoint

    class Family:
        def fit(self, *args, **kwargs):  # pragma: no cover - must not be reached
            raise AssertionError("trained despite a bad test label")

    data = {"train": _Split("train.h5", [0, 1, 1, 0]), "test": _Split("test.h5", [0, 7])}
    data["train"].path = tmp_path / "train.h5"
    data["train"].path.write_bytes(b"x")
    with pytest.raises(DataError, match=r"sample 1: label 7"):
        prepare_checkpoint(Family(), None, None, data, {}, tmp_path / "ck.pt")


def test_empty_test_file_is_refused_before_training(tmp_path):
    from neuromark.networks.spike_classifiers import prepare_checkpoint

    class Family:
        def fit(self, *args, **kwargs):  # pragma: no cover - must not be reached
            raise AssertionError("trained although the test file is empty")

    train = _Split(str(tmp_path / "train.h5"), [0, 1])
    train.path.write_bytes(b"x")
    with pytest.raises(DataError, match=r"empty_test\.h5: no samples; a test split"):
        prepare_checkpoint(Family(), None, None, {"train": train, "test": _Split("empty_test.h5", [])},
                           {}, tmp_path / "ck.pt")


def _write_h5(path: Path, labels: np.ndarray) -> Path:
    import h5py

    with h5py.File(path, "w") as handle:
        vlen_f = h5py.vlen_dtype(np.float16)
        vlen_u = h5py.vlen_dtype(np.uint16)
        times = handle.create_dataset("spikes/times", (len(labels),), dtype=vlen_f)
        units = handle.create_dataset("spikes/units", (len(labels),), dtype=vlen_u)
        for i in range(len(labels)):
            times[i] = np.asarray([0.1, 0.2], dtype=np.float16)
            units[i] = np.asarray([1, 2], dtype=np.uint16)
        handle.create_dataset("labels", data=labels)
    return path


def test_float_labels_are_refused_not_truncated(tmp_path):
    from neuromark.data.hdf5_spikes import read_shd_file

    path = _write_h5(tmp_path / "f.h5", np.asarray([0.0, 1.0, 2.5], dtype=np.float32))
    with pytest.raises(DataError, match=r"f\.h5: sample 2: label 2\.5 is not an integer class index"):
        read_shd_file(path)


def test_whole_float_labels_are_read_as_classes(tmp_path):
    from neuromark.data.hdf5_spikes import read_shd_file

    path = _write_h5(tmp_path / "w.h5", np.asarray([0.0, 1.0, 3.0], dtype=np.float64))
    assert read_shd_file(path).labels.tolist() == [0, 1, 3]


def _bench(outputs, targets, metrics, preprocessors=()):
    from neuromark.identity import BenchmarkIdentity
    from neuromark.runner import Benchmark

    class Replay(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1)
            self.outputs = list(outputs)

        def forward(self, x):
            return self.outputs.pop(0)

    loader = [(torch.zeros(len(t), 1), t) for t in targets]
    return Benchmark(Replay(), loader, list(preprocessors), [], metrics, quiet=True,
                     info=BenchmarkIdentity("bench-x"))


def test_nan_regression_targets_name_the_batch():
    from neuromark.metrics.correctness import MSE

    bench = _bench([torch.zeros(2), torch.zeros(2)],
                   [torch.tensor([1.0, 2.0]), torch.tensor([1.0, float("nan")])], [MSE()])
    with pytest.raises(DataError, match=r"benchmark bench-x: batch 1: targets contain NaN"):
        bench.run()


def test_infinite_logits_name_the_batch():
    from neuromark.metrics.correctness import ClassificationAccuracy

    bench = _bench([torch.tensor([0, 1]), torch.tensor([float("inf"), 0.0])],
                   [torch.tensor([0, 1]), torch.tensor([0, 1])], [ClassificationAccuracy()])
    with pytest.raises(ModelOutputError, match=r"batch 1: model output contains inf"):
        bench.run()


def test_smape_keeps_its_nan_rule():
    from neuromark.metrics.correctness import SMAPE

    bench = _bench([torch.tensor([1.0, float("nan")])], [torch.tensor([1.0, 1.0])], [SMAPE()])
    result = bench.run()
    assert result["sMAPE"] == pytest.approx(100.0)  # the NaN step counts 200, the other 0


def test_float_class_targets_name_the_batch_and_sample():
    from neuromark.metrics.correctness import ClassificationAccuracy
    from neuromark.tasks.classification import class_targets

    bench = _bench([torch.tensor([0, 1]), torch.tensor([0, 1])],
                   [torch.tensor([0.0, 1.0]), torch.tensor([0.0, 1.5])], [ClassificationAccuracy()],
                   [class_targets])
    with pytest.raises(DataError, match=r"batch 1: sample 1 of the batch: class target 1\.5 is not "
                                        r"an integer class index"):
        bench.run()


def test_whole_float_class_targets_score_as_classes():
    from neuromark.metrics.correctness import ClassificationAccuracy
    from neuromark.tasks.classification import class_targets

    bench = _bench([torch.tensor([0, 1])], [torch.tensor([0.0, 1.0])], [ClassificationAccuracy()],
                   [class_targets])
    assert bench.run()["classification_accuracy"] == 1.0


def test_shipped_configs_still_validate(capsys):
    root = Path(__file__).resolve().parents[1] / "configs"
    for path in sorted(root.rglob("*.yaml")):
        if path.stem in ("shd_rsnn", "ssc_rsnn"):  # need the downloaded SHD/SSC files
            continue
        assert main(["validate", str(path)]) == 0, (path, capsys.readouterr().err)


def test_performance_sample_count_is_checked_against_the_sut_at_validation(tmp_path, capsys):
    text = SYSTEM + "  performance_sample_count: 100\n"
    refused(tmp_path, capsys, text, "c.yaml:7", "loadgen.performance_sample_count: 100 is larger "
            "than the sample library (sut.options.samples: 8)")


def test_esn_sut_reservoir_too_large_for_memory_is_refused(tmp_path, capsys):
    text = SYSTEM.replace("sut: {name: sleep, options: {sleep_s: 0.0001, samples: 8}}",
                          "sut: {name: esn, options: {reservoir_size: 100000000}}")
    refused(tmp_path, capsys, text, "c.yaml:3", "sut.options.reservoir_size",
            "reservoir_size 100000000 needs about")
    ok = check_options(suts, ComponentSpec(name="esn", options={"reservoir_size": 50}),
                       run_arguments={"seed": "the run"})
    assert ok["reservoir_size"] == 50
