"""The executor interface without Ray: the local executor, failures naming their unit, the
suite's placement of entries, and a stand-in remote executor (units pickled both ways,
another node name) that drives the distributed code paths in-process."""

from __future__ import annotations

import contextlib
import json
import pickle
from pathlib import Path

import pytest

from neuromark.config import IdentitySettings, StrictModel, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import (
    LocalExecutor,
    Outcome,
    Unit,
    UnitFailed,
    call_unit,
    make_executor,
)
from neuromark.registry import executors, tasks
from neuromark.results import Results, Score
from neuromark.suite import placement, run_configs
from neuromark.tasks.base import TaskBase, out_dir_of, plan_and_run


class Pickled:
    """A stand-in for a remote executor: every unit and value crosses pickle, as to a Ray
    worker, and the node is another name. Counts the units it ran."""

    name = "pickled"

    def __init__(self) -> None:
        self.ran: list[str] = []

    def cpus(self) -> int:
        return 2

    def info(self) -> dict:
        return {"name": self.name}

    def close(self) -> None:
        pass

    def run(self, units):
        for unit in units:
            fn, args, kwargs = pickle.loads(pickle.dumps((unit.fn, unit.args, dict(unit.kwargs))))
            value, _, wall = call_unit(fn, args, kwargs)
            self.ran.append(unit.name)
            yield Outcome(unit, pickle.loads(pickle.dumps(value)), "node-b", wall)


def test_local_runs_in_order_and_records_the_node():
    out = list(LocalExecutor().run([Unit("a", "c.yaml", pow, (2, 3)), Unit("b", "c.yaml", abs, (-4,))]))
    assert [o.value for o in out] == [8, 4] and [o.unit.name for o in out] == ["a", "b"]
    assert all(o.node and o.wall_s >= 0 for o in out)
    assert isinstance(RunContext.build().executor, LocalExecutor)  # a run's default


def test_local_failure_keeps_its_type_and_names_the_unit():
    with pytest.raises(ValueError) as info:
        list(LocalExecutor().run([Unit("parse x", "cfg.yaml", int, ("x",))]))
    assert "in unit parse x of cfg.yaml" in "".join(getattr(info.value, "__notes__", []))


def test_process_pool_runs_every_unit_and_a_neuromark_failure_names_it():
    ok = [Unit(f"abs {i}", "cfg.yaml", abs, (-i,)) for i in range(4)]
    assert sorted(o.value for o in LocalExecutor(processes=2).run(ok)) == [0, 1, 2, 3]
    with pytest.raises(UnitFailed, match=r"cfg.yaml:3: unit validate x failed: invalid config"):
        list(LocalExecutor(processes=2).run([*ok, Unit("validate x", "cfg.yaml:3", validate,
                                                       (ToySettings, {"x": 1}))]))


def test_unit_checks_its_cpus():
    with pytest.raises(ConfigError, match=r"cfg.yaml: unit u: num_cpus must be an integer >= 1"):
        Unit("u", "cfg.yaml", abs, (1,), num_cpus=0)


def test_make_executor_names_the_known_ones():
    assert "ray" in executors.names() and "local" in executors.names()
    with pytest.raises(ConfigError, match=r"--executor: unknown executor 'rey'; did you mean 'ray'"):
        make_executor("rey")
    with pytest.raises(ConfigError, match="--address: only with --executor ray"):
        make_executor("local", "auto")


def test_placement():
    from neuromark.benchmarks.mackey_glass.task import TASK as MG
    from neuromark.benchmarks.qubo.task import TASK as QUBO

    assert placement(QUBO) == placement(MG) == "units"
    assert placement(tasks.get("system")) == "driver"
    assert placement(tasks.get("classification")) == "unit"


class ToySettings(StrictModel):
    task: str
    benchmark: IdentitySettings
    value: float = 1.0


class ToyTask(TaskBase):
    """Writes an artefact and returns one score (a whole suite entry as one unit)."""

    name = "t-executor-toy"
    settings_model = ToySettings

    def execute(self, plan, ctx):
        cfg, config, out_dir = plan.settings, plan.config, out_dir_of(ctx)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "sub").mkdir(exist_ok=True)
        (out_dir / "sub" / "artefact.txt").write_text(f"value {cfg.value}")
        return [Results({"score": Score(cfg.value)}, cfg.benchmark.info(), config=config.data)]


TOY = ToyTask()


@pytest.fixture
def toy_task():
    tasks.register(TOY.name, TOY)
    yield
    tasks._entries.pop(TOY.name, None)


def test_whole_entries_run_as_units_and_the_driver_writes(tmp_path, toy_task):
    a = tmp_path / "a.yaml"
    a.write_text(f"task: {TOY.name}\nbenchmark: {{id: toy-a}}\nvalue: 2\n")
    b = tmp_path / "b.yaml"
    b.write_text(f"task: {TOY.name}\nbenchmark: {{id: toy-b}}\nvalue: 3\n")
    ex = Pickled()
    reports: list = []
    written = run_configs([a, b], tmp_path / "out", ctx=RunContext.build(executor=ex, quiet=True),
                          finish=reports.append)
    assert ex.ran == ["suite entry a", "suite entry b"]
    assert [r.benchmark.id for _, r in reports[0]] == ["toy-a", "toy-b"]  # config order
    assert (tmp_path / "out/a/sub/artefact.txt").read_text() == "value 2.0"
    saved = json.loads((tmp_path / "out/toy-b.json").read_text())
    assert saved["details"]["executor"]["node"] == "node-b"
    assert saved["provenance"]["executor"] == {"name": "pickled"}  # its info()
    assert "machine" in saved["provenance"]
    assert [p for p, _ in written] == [tmp_path / "out/toy-a.json", tmp_path / "out/toy-b.json"]


QUBO_YAML = """task: qubo
benchmark: {id: qubo-exec, version: "1.0"}
workloads: {sizes: [10], densities: [0.1], seeds: [0, 1]}
solvers: [{name: dwave-tabu}]
seeds: [0]
fixed_timeout: {timeouts: [0.02]}
plots: false
"""


def test_qubo_meter_is_refused_off_the_local_executor(tmp_path):
    from neuromark.benchmarks.qubo.task import TASK
    from neuromark.config import load_config

    path = tmp_path / "q.yaml"
    path.write_text(QUBO_YAML + "meter: {name: 'null'}\n")
    TASK.plan(load_config(path), RunContext.build())  # the local executor measures power
    with pytest.raises(ConfigError, match=r"q.yaml:\d+: meter: power is "
                                          r"measured for one process at a time"):
        TASK.plan(load_config(path), RunContext.build(executor=Pickled()))


def test_qubo_resumes_across_executors_and_records_where(tmp_path):
    """Two entries on the stand-in remote executor, then the same sweep locally: the local
    run reuses them and computes only the rest; workers come from the reservation."""
    from neuromark.benchmarks.qubo.task import TASK
    from neuromark.config import load_config

    path = tmp_path / "q.yaml"
    path.write_text(QUBO_YAML.replace("dwave-tabu}]", "dwave-tabu}, {name: neuromark-tabu}]"))
    out = tmp_path / "out"
    ex = Pickled()
    plan_and_run(TASK, load_config(path), ctx=RunContext.build(executor=ex, quiet=True, out_dir=out))
    assert len(ex.ran) == 4
    lines = (out / "entries.jsonl").read_text().splitlines()
    first = [json.loads(line) for line in lines]
    assert {(e["executor"], e["node"], e["num_cpus"]) for e in first} == {("pickled", "node-b", 1)}
    assert {e["info"]["workers"] for e in first if e["solver"] == "neuromark-tabu"} == {1}
    (out / "entries.jsonl").write_text("\n".join(lines[:2]) + "\n")  # two entries lost
    results = plan_and_run(TASK, load_config(path), out, quiet=True)  # local now
    entries = [e for r in results for e in r.details["entries"]]
    assert sorted(e["executor"] for e in entries) == ["local", "local", "pickled", "pickled"]
    assert all(e["gap"] == 0 for e in entries)  # 10 nodes: solved at any timeout here


def test_mackey_glass_instances_are_units(tmp_path):
    from neuromark.benchmarks.mackey_glass.task import TASK
    from neuromark.config import load_config

    path = tmp_path / "mg.yaml"
    path.write_text("task: mackey_glass\ndata: {taus: [17], instances: 2, length: 4}\n"
                    "models: [{name: esn, params: {reservoir_size: 20, warmup: 20}}]\n"
                    "metrics: [footprint]\n")
    local = plan_and_run(TASK, load_config(path), tmp_path / "l", quiet=True)[0]
    ex = Pickled()
    remote = plan_and_run(TASK, load_config(path), ctx=RunContext.build(executor=ex, quiet=True,
                                                                        out_dir=tmp_path / "r"))[0]
    assert ex.ran == ["esn tau=17 instance 0", "esn tau=17 instance 1"]
    assert dict(local) == dict(remote)
    assert remote.details["nodes"] == ["node-b", "node-b"] and "nodes" not in local.details


def test_unit_failed_is_a_neuromark_error():
    from neuromark.errors import NeuromarkError

    assert issubclass(UnitFailed, NeuromarkError)
    with contextlib.suppress(UnitFailed):
        raise UnitFailed("x")


def test_shipped_artefacts_stay_in_their_folder(tmp_path):
    from neuromark.errors import DataError
    from neuromark.run_folder import write_files

    write_files(tmp_path / "e", {"a/b.txt": b"ok"})
    assert (tmp_path / "e/a/b.txt").read_bytes() == b"ok"
    with pytest.raises(DataError, match="outside its folder"):
        write_files(tmp_path / "e", {"../x.txt": b"no"})
    assert not (tmp_path / "x.txt").exists()
    assert Path(tmp_path / "e").is_dir()


def test_cli_executor_flags(tmp_path, toy_task, capsys, monkeypatch):
    from neuromark.cli import main

    cfg = tmp_path / "a.yaml"
    cfg.write_text(f"task: {TOY.name}\nbenchmark: {{id: toy-a}}\n")
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--executor", "rey"]) == 1
    assert "--executor: unknown executor 'rey'; did you mean 'ray'" in capsys.readouterr().err
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--address", "auto"]) == 1
    assert "--address: only with --executor ray" in capsys.readouterr().err
    assert main(["qubo", "run", str(cfg), "--executor", "local", "--out", str(tmp_path / "q")]) == 1
    assert "this command runs task: qubo" in capsys.readouterr().err
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # `import ray` fails
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--executor", "ray"]) == 1
    assert "pip install 'neuromark[ray]'" in capsys.readouterr().err
    monkeypatch.undo()
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--executor", "local"]) == 0
    assert json.loads((tmp_path / "o/toy-a.json").read_text())["scores"]["score"]["value"] == 1.0
