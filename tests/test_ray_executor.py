"""Local executor vs a local Ray instance (2 CPUs, started once for the module): the same
deterministic results (issue 16; CLARIFICATIONS 16.1: Mackey-Glass scores; QUBO
workloads, BKS, entry keys, solved status at generous timeouts), failures naming their
unit, cancellation, and the CLI path. Skipped when the extra is absent."""

from __future__ import annotations

import json
import time

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'neuromark[ray]' "
                                        "(scripts/bootstrap.sh installs it)")

from neuromark.commands.run import run_and_report  # noqa: E402
from neuromark.errors import ConfigError  # noqa: E402
from neuromark.executors import Unit, UnitFailed  # noqa: E402
from neuromark.executors.ray_executor import RayExecutor  # noqa: E402

MG = """task: mackey_glass
benchmark: {id: mg-eq, version: "1.0"}
data: {taus: [17, 18], instances: 2, length: 4, shift: 0.5}
models: [{name: esn, seed: 3, params: {reservoir_size: 40, warmup: 40}}]
metrics: [footprint, synaptic_operations]
"""
QUBO = """task: qubo
benchmark: {id: qubo-eq, version: "1.0"}
workloads: {sizes: [10, 25], densities: [0.1], seeds: [1]}
solvers: [{name: dwave-tabu}, {name: neuromark-tabu}]
seeds: [0]
fixed_timeout: {timeouts: [0.03]}
plots: false
"""
#: Entry fields that do not depend on where or how fast an entry ran.
DETERMINISTIC = ("key", "solver", "n", "density", "graph_seed", "seed", "scenario", "bks",
                 "timeout_s")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def both(local_ray, tmp_path_factory):
    """The two configs run into one folder per executor (the Ray one through the CLI's
    function, the way ``neuromark run --executor ray`` runs it)."""
    root = tmp_path_factory.mktemp("eq")
    (root / "mg.yaml").write_text(MG)
    (root / "qubo.yaml").write_text(QUBO)
    configs = [root / "mg.yaml", root / "qubo.yaml"]
    for name in ("local", "ray"):
        assert run_and_report(configs, root / name, quiet=True, executor=name) == 0
    return root


def _json(path):
    return json.loads(path.read_text())


def test_mackey_glass_scores_are_identical(both):
    local, remote = _json(both / "local/mg-eq--esn.json"), _json(both / "ray/mg-eq--esn.json")
    assert local["scores"] == remote["scores"]
    for a, b in zip(local["details"]["entries"], remote["details"]["entries"]):
        assert a["per_instance_sMAPE"] == b["per_instance_sMAPE"]
        assert a["per_instance_complexity"] == b["per_instance_complexity"]
    assert len(remote["details"]["entries"][0]["nodes"]) == 2  # the node of every instance
    assert remote["provenance"]["executor"]["name"] == "ray"
    assert remote["provenance"]["executor"]["cpus"] == 2
    assert local["provenance"]["executor"]["name"] == "local"


@pytest.mark.parametrize("solver", ["dwave-tabu", "neuromark-tabu"])
def test_qubo_deterministic_fields_are_identical(both, solver):
    local = _json(both / f"local/qubo-eq--{solver}.json")["details"]["entries"]
    remote = _json(both / f"ray/qubo-eq--{solver}.json")["details"]["entries"]
    assert len(local) == len(remote) == 2
    for a, b in zip(local, remote):
        assert {k: a.get(k) for k in DETERMINISTIC} == {k: b.get(k) for k in DETERMINISTIC}
        assert a["gap"] == b["gap"] == 0  # solved both ways at a generous timeout
        assert b["executor"] == "ray" and b["num_cpus"] == 1 and b["node"]
    if solver == "neuromark-tabu":  # workers follow the reservation, never more
        assert {e["info"]["workers"] for e in remote} == {1}
    keys = [json.loads(line)["key"] for line in
            (both / "ray/qubo/entries.jsonl").read_text().splitlines()]
    assert sorted(keys) == sorted(json.loads(line)["key"] for line in
                                  (both / "local/qubo/entries.jsonl").read_text().splitlines())


FSCIL = """task: fscil
benchmark: {id: fscil-eq, version: "1.0"}
data: {root: data, languages: [fa]}
model: {name: keyword_m5, options: {n_input: 20, n_output: 200, stride: 2, n_channel: 8,
        input_kernel: 4, pool_kernel: 2}, checkpoint: m5.pt}
train: {epochs: 2, batch_size: 4, lr: 0.01}
fscil: {shots: 2, support_pool: 2, query_pool: 2, query_shots: 2, repeats: 4, seed: 1}
eval: {complexity: [footprint]}
"""


def test_fscil_orders_are_units_with_identical_scores(local_ray, tmp_path):
    """The backbone trains once on the driver (the second run reuses its checkpoint); each
    of the 4 session orders is a unit; every per-order accuracy is identical both ways."""
    from test_fscil import _tiny_corpus

    from neuromark.benchmarks.keywords.fscil import TASK
    from neuromark.benchmarks.keywords.fscil_sessions import score_order

    _tiny_corpus(tmp_path / "data")
    (tmp_path / "f.yaml").write_text(FSCIL)
    out = {}
    for name in ("local", "ray"):
        assert run_and_report([tmp_path / "f.yaml"], tmp_path / name, quiet=True, executor=name) == 0
        out[name] = _json(tmp_path / name / "fscil-eq--keyword_m5.json")
    local, remote = out["local"], out["ray"]
    assert TASK.placement == "units"
    assert local["scores"] == remote["scores"]
    for key in ("accuracy_mean", "session_average_per_repeat", "new_class_accuracy_mean",
                "frozen_reference", "complexity_per_session", "language_order_repeat0"):
        assert local["details"][key] == remote["details"][key], key
    assert len(remote["details"]["session_average_per_repeat"]) == 4
    assert remote["details"]["backbone"]["trained_now"] is False  # checkpoint from the first run
    assert remote["provenance"]["executor"]["name"] == "ray"
    assert score_order.__module__ == "neuromark.benchmarks.keywords.fscil_sessions"  # picklable by reference


def test_training_seeds_of_a_suite_entry_are_units_with_identical_scores(local_ray, tmp_path):
    """``{config: ..., seeds: [...]}``: one copy per seed, the same scores both ways."""
    (tmp_path / "mg.yaml").write_text(MG.replace("mg-eq", "mg-seeds"))
    (tmp_path / "s.yaml").write_text("suite: seeds\nentries:\n"
                                     "  - {config: mg.yaml, seeds: [4, 5], key: models.0.seed}\n")
    for name in ("local", "ray"):
        assert run_and_report([tmp_path / "s.yaml"], tmp_path / name, quiet=True, executor=name) == 0
    for seed in (4, 5):
        local = _json(tmp_path / f"local/mg-seeds--esn-seed{seed}.json")
        remote = _json(tmp_path / f"ray/mg-seeds--esn-seed{seed}.json")
        assert local["scores"] == remote["scores"]
        models = [run["config"]["effective"]["models"][0] for run in (local, remote)]
        assert models[0]["seed"] == models[1]["seed"] == seed


def test_shared_values_are_stored_once_and_arrive_whole(local_ray):
    import numpy as np

    from neuromark.executors import LocalExecutor, SharedRef, share

    big = np.arange(1_000_000)
    assert share(LocalExecutor(), big) is big  # nothing to share in one process
    ex = RayExecutor()
    handle = share(ex, big)
    assert isinstance(handle, SharedRef)
    units = [Unit(f"sum {i}", "cfg.yaml", np.sum, (handle,)) for i in range(3)]
    units.append(Unit("sum kw", "cfg.yaml", np.sum, kwargs={"a": handle}))
    assert [o.value for o in ex.run(units)] == [big.sum()] * 4


def test_a_failed_unit_names_itself_and_its_config(local_ray):
    ex = RayExecutor()
    with pytest.raises(UnitFailed, match=r"cfg.yaml:4: unit parse x failed on the Ray executor: "
                                         r"ValueError: invalid literal"):
        list(ex.run([Unit("abs", "cfg.yaml:3", abs, (-1,)), Unit("parse x", "cfg.yaml:4", int, ("x",))]))


def test_close_cancels_the_units_not_finished(local_ray):
    """Units of 10 minutes end within 2 minutes of close() (a loaded machine is slow to
    start and stop workers), cancelled rather than finished."""
    ex = RayExecutor()
    batch = ex.run([Unit(f"sleep {i}", "cfg.yaml", time.sleep, (600,)) for i in range(3)])
    refs = list(batch.refs)
    start = time.perf_counter()
    batch.close()
    assert batch.pending == []
    for ref in refs:
        with pytest.raises((ray.exceptions.TaskCancelledError, ray.exceptions.WorkerCrashedError)):
            ray.get(ref, timeout=120)
    assert time.perf_counter() - start < 300


class _LosingRay:
    """A stand-in for the ``ray`` module whose first ``lost`` cancellations of each task are
    lost (Ray's cancel race: a task being handed to a worker runs on); ``wait`` reports a
    task ended once a cancellation took."""

    def __init__(self, lost: int) -> None:
        self.lost, self.sent, self.ended = lost, {}, set()

    def cancel(self, ref, force=False):
        self.sent[ref] = self.sent.get(ref, 0) + 1
        if self.sent[ref] > self.lost:
            self.ended.add(ref)

    def wait(self, refs, num_returns=1, timeout=None):
        return [r for r in refs if r in self.ended], [r for r in refs if r not in self.ended]


def test_close_resends_a_lost_cancellation_until_the_unit_ends():
    from neuromark.executors.ray_executor import RayBatch

    fake = _LosingRay(lost=2)
    batch = RayBatch(fake, {i: Unit(f"u{i}", "cfg.yaml", abs, (1,)) for i in range(3)})
    batch.close(timeout_s=30)
    assert fake.ended == {0, 1, 2} and set(fake.sent.values()) == {3}
    assert batch.pending == []


def test_close_names_the_units_a_cancellation_never_reached():
    from neuromark.executors.ray_executor import RayBatch

    fake = _LosingRay(lost=10**9)
    batch = RayBatch(fake, {0: Unit("stuck", "cfg.yaml", abs, (1,))})
    with pytest.warns(RuntimeWarning, match=r"1 unit\(s\) still running .*cfg.yaml: stuck"):
        batch.close(timeout_s=0)


def test_a_unit_larger_than_any_node_is_refused(local_ray):
    with pytest.raises(ConfigError, match=r"cfg.yaml: unit big needs 64 CPUs; no node"):
        RayExecutor().run([Unit("big", "cfg.yaml", abs, (1,), num_cpus=64)])


def test_info_records_the_nodes(local_ray):
    info = RayExecutor().info()
    assert info["name"] == "ray" and info["cpus"] == 2 and len(info["nodes"]) == 1
