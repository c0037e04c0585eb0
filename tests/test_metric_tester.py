"""One shared metric tester (torchmetrics' ``MetricTester``): every registered metric, from
one case table of inputs and references.

For each workload metric: (a) updates batch by batch equal one update with everything;
(b) the batches split over two instances whose ``state()`` (pickled, as an executor unit
returns it) is merged equal the single run; (c) the value equals a reference: numpy /
sklearn formulas for the correctness metrics, hand counts on a tiny spiking network for
the complexity metrics, a hand-computed COCO AP for ``coco_map``; (d) ``reset()``
restores the declared defaults. Static metrics are checked against hand counts. A
registered metric missing from the table fails :func:`test_every_registered_metric_has_a_case`.
"""

from __future__ import annotations

import functools
import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.benchmarks.event_detection.coco_map import CocoMap
from neuromark.data.prophesee import make_boxes
from neuromark.errors import MetricError
from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.metrics.correctness import MSE, R2, SMAPE, ClassificationAccuracy
from neuromark.metrics.energy import EnergyEstimate
from neuromark.metrics.functional.energy_profiles import get_profile
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.metrics.speakers import SpeakerAccuracy
from neuromark.metrics.static import ConnectionSparsity, Footprint, FootprintNeurobench, ParameterCount
from neuromark.models import as_adapter
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.registry import metrics as metric_registry

snn = pytest.importorskip("snntorch")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

SPLIT = (3, 1, 4, 2)  # uneven batch sizes over the 10 samples of the prediction cases


def _se(values: np.ndarray) -> float:
    """Standard error over samples, numpy's ddof=1 (the independent reference)."""
    return float(np.std(values, ddof=1) / math.sqrt(len(values)))


def _steps(predictions: Any, targets: Any, sizes: tuple[int, ...]) -> list[Step]:
    out, start = [], 0
    for i, n in enumerate(sizes):
        out.append(Step(i, predictions[start:start + n], targets[start:start + n], n))
        start += n
    return out


@dataclass
class Case:
    """``make``: a fresh metric; ``batches(whole)``: the workload as Steps, batch by batch
    (``whole``: one Step with everything); ``reference``: score name -> (value, error)."""

    make: Callable[[], WorkloadMetric]
    batches: Callable[[bool], list[Step]]
    reference: Callable[[], dict[str, tuple[Any, Any]]]


# --- correctness metrics: predictions and targets -----------------------------------------

CLS_P = torch.tensor([0, 1, 2, 1, 0, 2, 1, 1, 0, 2])
CLS_Y = torch.tensor([0, 1, 1, 1, 0, 2, 0, 1, 2, 2])
_g = torch.Generator().manual_seed(7)
REG_P = torch.randn(10, 2, generator=_g, dtype=torch.float64)
REG_Y = torch.randn(10, 2, generator=_g, dtype=torch.float64)
SM_P = REG_P.clone()
SM_P[2, 1] = float("nan")  # counts 200
SM_P[4] = 0.0
SM_Y = REG_Y.clone()
SM_Y[4, 0] = 0.0  # 0/0 counts 0
SPEAKERS = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0])
SEEN = (0, 1)  # speaker 2 held out


def _pairs(p: Any, y: Any) -> Callable[[bool], list[Step]]:
    return lambda whole: _steps(p, y, (len(y),) if whole else SPLIT)


def _accuracy_ref() -> dict:
    hits = (CLS_P.numpy() == CLS_Y.numpy()).astype(float)
    acc = sklearn_metrics.accuracy_score(CLS_Y.numpy(), CLS_P.numpy())
    return {"classification_accuracy": (acc, _se(hits))}


def _mse_ref() -> dict:
    p, y = REG_P.numpy(), REG_Y.numpy()
    return {"MSE": (sklearn_metrics.mean_squared_error(y, p), _se(((p - y) ** 2).mean(1)))}


def _smape_ref() -> dict:
    p, y = SM_P.numpy(), SM_Y.numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = 200.0 * np.abs(y - p) / (np.abs(y) + np.abs(p))
    terms[(y == 0) & (p == 0)] = 0.0
    terms[~np.isfinite(p)] = 200.0
    per_sample = terms.mean(1)
    return {"sMAPE": (per_sample.mean(), _se(per_sample))}


def _r2_ref() -> dict:
    return {"r2": (sklearn_metrics.r2_score(REG_Y.numpy(), REG_P.numpy()), None)}


def _speaker_ref() -> dict:
    hits = (CLS_P.numpy() == CLS_Y.numpy()).astype(float)
    per = {str(s): (hits[SPEAKERS == s].mean(), _se(hits[SPEAKERS == s])) for s in (0, 1, 2)}
    acc = np.array([v for v, _ in per.values()])
    seen = hits[np.isin(SPEAKERS, SEEN)]
    held = hits[SPEAKERS == 2]
    return {"accuracy_per_speaker": ({k: v for k, (v, _) in per.items()},
                                     {k: e for k, (_, e) in per.items()}),
            "speaker_accuracy_spread": ({"mean": acc.mean(), "std": acc.std(ddof=1),
                                         "min": acc.min(), "max": acc.max(), "speakers": 3}, None),
            "held_out_speaker_accuracy": (held.mean(), _se(held)),
            "seen_speaker_accuracy": (seen.mean(), _se(seen))}


# --- complexity metrics: a tiny spiking network, counted by hand --------------------------

def tiny_snn() -> nn.Module:
    """Linear(2, 2) W = [[1, 1], [0, 2]] (column non-zeros 1, 2) -> Leaky(beta 0.5,
    threshold 1.1, subtract reset: cost 4 per update)."""
    lin = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 2.0]]))
    return nn.Sequential(lin, snn.Leaky(beta=0.5, threshold=1.1, init_hidden=True))


# (B, T=3, 2). A (binary): x = [1,0],[0,0],[0,1] -> 1 + 0 + 2 = 3 ACs; W x = [1,0],[0,0],
#   [1,2]: mem [1,0], [.5,0], [1.25,2]: updates 2 (first step) + 1 + 2 = 5; spikes at t=2
#   on both neurons (1.25, 2 > 1.1): 4 zeros of 6.
# B (analog): x = [.5,0],[0,0],[0,0] -> 1 MAC; mem [.5,0],[.25,0],[.125,0]: 2 + 1 + 1 = 4
#   updates, 6 zeros. C (silent): 0 ops; 2 updates (first step); 6 zeros.
A = [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
B = [[0.5, 0.0], [0.0, 0.0], [0.0, 0.0]]
C = [[0.0, 0.0]] * 3
SNN_X = torch.tensor([A, B, C, A, B, C])
N = 6
MACS, ACS, DENSE = 2 * 1 / N, 2 * 3 / N, 3 * 2 * 2  # Dense: 3 steps x 2 x 2 per sample
UPDATES = 2 * (5 + 4 + 2) / N
ZEROS, TOTAL = 2 * (4 + 6 + 6), N * 3 * 2


class _Recorder(WorkloadMetric):
    """Keeps every Step the runner hands out (all probes on), to replay into metrics."""

    name = "recorder"
    requires = frozenset({"synops", "activations", "membrane"})

    def __init__(self) -> None:
        super().__init__()
        self.add_state("steps", [], merge="cat")

    def update(self, step: Step) -> None:
        self.steps.append(step)

    def compute(self) -> dict:
        return {}


@functools.cache
def recorded(batch: int) -> tuple[Step, ...]:
    rec = _Recorder()
    loader = [(SNN_X[i:i + batch], torch.zeros(len(SNN_X[i:i + batch])))
              for i in range(0, N, batch)]
    Benchmark(SNNTorchModel(tiny_snn()), loader, metrics=[rec], quiet=True).run()
    return tuple(rec.steps)


def _activity(whole: bool) -> list[Step]:
    return list(recorded(N if whole else 2))


def _energy_ref() -> dict:
    p = get_profile("horowitz45-fp32")
    return {"energy_estimate": ({p.name: MACS * p.mac_j + ACS * p.ac_j
                                 + 4 * UPDATES * p.neuron_update_j}, None)}


# --- coco_map: two streams, hand-computed AP ---------------------------------------------
# classes (pedestrian, two wheeler, car). Stream "a", t=0: a car and a pedestrian, both
# found exactly (scores .9, .7); stream "b", t=0: a car, missed, and a false car elsewhere
# (.8); stream "a", t=50 ms: an empty frame. car: precision 1 up to recall 1/2, then 0:
# 101-point AP = 51/101 at every IoU threshold; pedestrian: AP 1; two wheeler: no ground
# truth (left out of the mean). mAP = (1 + 51/101) / 2.
CLASSES = ("pedestrian", "two wheeler", "car")
GT_A = make_boxes([0, 0], [10, 200], [10, 50], [40, 20], [30, 60], [2, 0])
DT_A = make_boxes([0, 0], [10, 200], [10, 50], [40, 20], [30, 60], [2, 0], [0.9, 0.7])
GT_B = make_boxes([0], [300], [100], [50], [40], [2])
DT_B = make_boxes([0], [20], [250], [50], [40], [2], [0.8])
EMPTY = GT_A[:0]
COCO_ENTRIES = [(("a", GT_A), DT_A), (("b", GT_B), DT_B), (("a", EMPTY), EMPTY)]


def _coco(whole: bool) -> list[Step]:
    groups = [COCO_ENTRIES] if whole else [[e] for e in COCO_ENTRIES]
    return [Step(i, [d for _, d in g], [t for t, _ in g], len(g)) for i, g in enumerate(groups)]


CASES: dict[str, Case] = {
    "classification_accuracy": Case(ClassificationAccuracy, _pairs(CLS_P, CLS_Y), _accuracy_ref),
    "MSE": Case(MSE, _pairs(REG_P, REG_Y), _mse_ref),
    "sMAPE": Case(SMAPE, _pairs(SM_P, SM_Y), _smape_ref),
    "r2": Case(R2, _pairs(REG_P, REG_Y), _r2_ref),
    "speaker_accuracy": Case(lambda: SpeakerAccuracy(SPEAKERS, SEEN), _pairs(CLS_P, CLS_Y),
                             _speaker_ref),
    "activation_sparsity": Case(ActivationSparsity, _activity, lambda: {
        "activation_sparsity": (ZEROS / TOTAL, None),
        "activation_sparsity_by_layer": ({"1": ZEROS / TOTAL}, None)}),
    "synaptic_operations": Case(SynapticOperations, _activity, lambda: {
        "synaptic_operations": ({"Effective_MACs": MACS, "Effective_ACs": ACS,
                                 "Dense": DENSE}, None)}),
    "membrane_updates": Case(MembraneUpdates, _activity,
                             lambda: {"membrane_updates": (UPDATES, None)}),
    "neuron_operations": Case(NeuronOperations, _activity, lambda: {
        "neuron_operations": ({"Effective_Neuron_Ops": 4 * UPDATES,
                               "Dense_Neuron_Ops": 4 * 3 * 2}, None)}),
    "energy_estimate": Case(lambda: EnergyEstimate(profiles=["horowitz45-fp32"]), _activity,
                            _energy_ref),
    "coco_map": Case(lambda: CocoMap(CLASSES), _coco,
                     lambda: {"coco_map": ((1 + 51 / 101) / 2, None)}),
}


# --- static metrics: hand counts -----------------------------------------------------------

def tiny_mlp() -> nn.Module:
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
        net[0].bias.zero_()
        net[2].weight.copy_(torch.tensor([[0.0, 1.0]]))
    net.register_buffer("scale", torch.ones(5, dtype=torch.float64))
    return net


# parameters 6 + 2 + 2 = 10 float32 (40 bytes), buffer 5 float64 (40 bytes), no neuron
# state (so NeuroBench's rule, parameters and buffers before any data, gives the same 80);
# weights (biases excluded) 3 zeros of 6 + 1 of 2 = 4 of 8
STATIC = {"footprint": (Footprint, 40 + 40), "footprint_neurobench": (FootprintNeurobench, 40 + 40),
          "parameter_count": (ParameterCount, 10),
          "connection_sparsity": (ConnectionSparsity, 4 / 8)}


# --- the tester ----------------------------------------------------------------------------

def figures(out: Any, name: str) -> dict[str, tuple[Any, Any]]:
    scores = out if isinstance(out, dict) else {name: out}
    return {k: (s.value, s.error) for k, s in scores.items()}


def close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(close(a[k], b[k]) for k in a))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is None and b is None
    return float(a) == pytest.approx(float(b), rel=1e-12, abs=1e-18)


def same_state(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor | np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return a == b


def run(metric: WorkloadMetric, steps: list[Step]) -> dict[str, tuple[Any, Any]]:
    for step in steps:
        metric.update(step)
    return figures(metric.compute(), metric.name)


def test_every_registered_metric_has_a_case():
    missing = sorted(set(metric_registry.names()) - set(CASES) - set(STATIC))
    assert not missing, f"registered metrics without a case in the shared tester: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_accumulated_equals_whole(name):
    case = CASES[name]
    assert close(run(case.make(), case.batches(False)), run(case.make(), case.batches(True)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_merged_units_equal_one_run(name):
    case = CASES[name]
    steps = case.batches(False)
    assert len(steps) >= 2
    single = run(case.make(), steps)
    first, second = case.make(), case.make()
    for step in steps[:len(steps) // 2]:
        first.update(step)
    for step in steps[len(steps) // 2:]:
        second.update(step)
    first.merge_state(pickle.loads(pickle.dumps(second.state())))  # as a unit returns it
    assert close(figures(first.compute(), first.name), single)
    # merging into a fresh instance in unit order: the same
    fresh = case.make()
    for unit in (first.state(), case.make().state()):
        fresh.merge_state(unit)
    assert close(figures(fresh.compute(), fresh.name), single)


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_equals_reference(name):
    case = CASES[name]
    assert close(run(case.make(), case.batches(False)), case.reference())


@pytest.mark.parametrize("name", sorted(CASES))
def test_reset_restores_the_defaults(name):
    case = CASES[name]
    metric = case.make()
    before = run(metric, case.batches(False))
    assert not same_state(metric.state(), case.make().state())  # the state moved
    metric.reset()
    assert same_state(metric.state(), case.make().state())
    assert close(run(metric, case.batches(False)), before)  # defaults were not mutated


@pytest.mark.parametrize("name", sorted(STATIC))
def test_static_metric_hand_counted_on_every_batch(name):
    cls, expected = STATIC[name]
    assert cls().compute(as_adapter(tiny_mlp())).value == pytest.approx(expected)
    x = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [3.0, 1.0, 1.0]])
    for batch in (1, 3):  # after a run, at any batch size: the same figure
        loader = [(x[i:i + batch], torch.zeros(len(x[i:i + batch]))) for i in range(0, 3, batch)]
        res = Benchmark(tiny_mlp(), loader, metrics=[cls()], quiet=True).run()
        assert res[name] == pytest.approx(expected)


def test_replayed_steps_are_what_the_runner_computes():
    """The replayed activity (what the cases feed) gives the runner's own figures."""
    metrics = [CASES[n].make() for n in ("activation_sparsity", "synaptic_operations",
                                         "membrane_updates", "neuron_operations")]
    loader = [(SNN_X[i:i + 2], torch.zeros(2)) for i in range(0, N, 2)]
    res = Benchmark(SNNTorchModel(tiny_snn()), loader, metrics=metrics, quiet=True).run()
    for metric in metrics:
        replayed = run(type(metric)(), _activity(False))
        assert close({k: (res.scores[k].value, res.scores[k].error) for k in replayed}, replayed)


def test_benchmark_metric_states_merge_across_units():
    """Two units each run a Benchmark on half the data; the driver merges their states."""
    def make() -> list[WorkloadMetric]:
        return [SynapticOperations(), MembraneUpdates(), ActivationSparsity(),
                ClassificationAccuracy()]

    y = torch.tensor([0, 1, 0, 1, 1, 0])

    def bench(rows: slice) -> Benchmark:
        x, t = SNN_X[rows], y[rows]
        loader = [(x[i:i + 2], t[i:i + 2]) for i in range(0, len(x), 2)]
        return Benchmark(SNNTorchModel(tiny_snn()), loader, metrics=make(), quiet=True,
                         postprocessors=[lambda out: out.sum(1).argmax(-1)])

    whole = bench(slice(0, N)).run()
    units = []
    for rows in (slice(0, 4), slice(4, N)):  # what each unit returns: plain values
        unit = bench(rows)
        unit.run()
        units.append(pickle.loads(pickle.dumps(unit.metric_states())))
    driver = make()
    for states in units:
        for metric, state in zip(driver, states):
            metric.merge_state(state)
    for metric in driver:
        got = figures(metric.compute(), metric.name)
        assert close(got, {k: (whole.scores[k].value, whole.scores[k].error) for k in got})


class _Unmergeable(WorkloadMetric):
    name = "unmergeable"

    def __init__(self) -> None:
        super().__init__()
        self.add_state("count", 0, merge="sum")
        self.add_state("handle", None, merge=None)

    def update(self, step: Step) -> None:
        self.count += step.num_samples


class _Legacy(WorkloadMetric):
    name = "legacy"

    def reset(self) -> None:
        self.total = 0


def test_unmergeable_metrics_say_so():
    metric = _Unmergeable()
    with pytest.raises(MetricError, match="'unmergeable' keeps 'handle', which cannot be merged"):
        metric.merge_state(_Unmergeable().state())
    with pytest.raises(MetricError, match="'legacy' declares no state"):
        _Legacy().merge_state({})
    with pytest.raises(MetricError, match=r"expected \['count', 'handle'\]"):
        metric.merge_state({"count": 1})
    with pytest.raises(ValueError, match="merge must be one of"):
        metric.add_state("x", 0, merge="average")
    with pytest.raises(ValueError, match="merge='nested'"):
        metric.add_state("x", 0, merge="nested")
