"""The qubo task: sweeps, results, resume after an interruption, bad configs, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.benchmarks.qubo import energy, mis_workload
from neuromark.benchmarks.qubo.bks import BKSRow, BKSTable, encode_solution
from neuromark.benchmarks.qubo.exact import exact_mis
from neuromark.benchmarks.qubo.solvers import SolveResult
from neuromark.benchmarks.qubo.solvers.base import allowed_overrun
from neuromark.benchmarks.qubo.store import EntryStore
from neuromark.benchmarks.qubo.task import TASK
from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.registry import solvers
from neuromark.tasks.base import plan_and_run

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def bks_file(tmp_path_factory):
    rows = []
    for n in (10, 25):
        for s in (0, 1):
            w = mis_workload(n, 0.1, s)
            x = exact_mis(n, w.edges)
            rows.append(BKSRow(n, 0.1, s, energy(w.Q, x), "exact", "test", "", "", "",
                               "2026-01-01", encode_solution(x)))
    return BKSTable(rows).save(tmp_path_factory.mktemp("bks") / "bks.csv")


class Greedy:
    """Test solver: picks vertices greedily in index order (a valid general heuristic for
    MIS QUBOs only; enough to exercise the harness). Counts its calls."""

    name = "test-greedy"
    calls = 0
    fail_after: int | None = None

    def solve(self, Q, timeout_s, seed, *, target=None):
        cls = type(self)
        if cls.fail_after is not None and cls.calls >= cls.fail_after:
            raise RuntimeError("simulated crash")
        cls.calls += 1
        q = Q.toarray()
        x = np.zeros(q.shape[0], dtype=np.int8)
        for i in range(len(x)):
            x[i] = 1
            if q[i] @ x * 2 - q[i, i] > 0:  # would add a conflict
                x[i] = 0
        cost = float(x @ q @ x)
        return SolveResult(x=x, cost=cost, trace=[(1e-4, cost)])


class Empty:
    name = "test-empty"

    def solve(self, Q, timeout_s, seed, *, target=None):
        return SolveResult(x=np.zeros(Q.shape[0], dtype=np.int8), cost=0.0, trace=[(0.0, 0.0)])


@pytest.fixture(autouse=True)
def _register():
    solvers.register("test-greedy", Greedy)
    solvers.register("test-empty", Empty)
    Greedy.calls, Greedy.fail_after = 0, None
    yield
    solvers._entries.pop("test-greedy", None)
    solvers._entries.pop("test-empty", None)


def config(bks_file, solver_names=("neuromark-sa", "test-greedy")):
    names = "".join(f"  - name: {s}\n" for s in solver_names)
    text = _yaml(bks_file).replace("  - name: neuromark-sa\n  - name: test-greedy\n", names)
    return parse_yaml(text)


def test_sweep_results_and_files(bks_file, tmp_path):
    # a cap a loaded machine cannot make the annealer miss on 10/25 nodes (it stops on
    # reaching the target; 0.5 s could be cut short by stalls)
    cfg = parse_yaml(_yaml(bks_file).replace("cap_s: 0.5", "cap_s: 10.0"))
    results = plan_and_run(TASK, cfg, tmp_path, quiet=True)
    assert [r.benchmark.id for r in results] == ["t", "t"]  # one benchmark; solvers are models
    assert [(r.model.name, r.model.label) for r in results] == [
        ("neuromark-sa", "neuromark-sa"), ("test-greedy", "test-greedy")]
    sa = results[0]
    assert 0.0 <= sa["bks_gap@0.01s"] <= 0.1  # 10/25 nodes: at or near the exact optimum
    assert sa["independent@0.01s"] == 1.0
    assert sa["avg_power_w@0.01s"] == "not measured"
    assert sa["tts_gap0_reached"] == 1.0
    assert any("power: not measured" in f for f in sa.flags)
    assert sa.scores["max_overrun_s"].value < 1.0
    entries = [json.loads(line) for line in (tmp_path / "entries.jsonl").read_text().splitlines()]
    # the timing scores agree with the entries and the allowed overrun, max(5%, 2 ms)
    fixed = [e for e in entries if e["solver"] == "neuromark-sa" and e["scenario"] == "fixed_timeout"]
    assert all(e["within_limit"] == (e["overrun_s"] <= allowed_overrun(e["timeout_s"])) for e in fixed)
    assert sa["within_time_limit"] == pytest.approx(np.mean([e["within_limit"] for e in fixed]))
    assert sa.scores["max_overrun_s"].value == max(e["overrun_s"] for e in fixed)
    assert len(entries) == 4 * 2 * 3  # workloads x solvers x (2 timeouts + TTS)
    gaps = {e["gap"] for e in entries if e["solver"] == "test-greedy"}
    assert all(g >= 0 for g in gaps)
    assert {p.split("/")[-1] for p in sa.artefacts} == {"qubo_gap_vs_timeout.png",
                                                              "qubo_time_to_solution.png"}
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 1000 for p in sa.artefacts)


def test_unreached_threshold_is_never_a_number(bks_file, tmp_path):
    res = plan_and_run(TASK, config(bks_file, ("test-empty",)), tmp_path, quiet=True)[0]
    assert res["tts_gap0.1_median_s"] == "not reached within the cap"
    assert res["tts_gap0.1_reached"] == 0.0
    assert res["bks_gap@0.01s"] == 1.0  # cost 0 vs negative BKS


def test_interrupted_sweep_resumes_without_losing_or_repeating(bks_file, tmp_path):
    cfg = config(bks_file, ("test-greedy",))
    Greedy.fail_after = 5
    with pytest.raises(RuntimeError, match="simulated crash"):
        plan_and_run(TASK, cfg, tmp_path, quiet=True)
    assert len(EntryStore(tmp_path / "entries.jsonl")) == 5
    Greedy.fail_after = None
    plan_and_run(TASK, cfg, tmp_path, quiet=True)
    assert Greedy.calls == 12  # 5 before the crash + the 7 missing, none repeated
    lines = (tmp_path / "entries.jsonl").read_text().splitlines()
    assert len(lines) == 12 and len({json.loads(x)["key"] for x in lines}) == 12
    plan_and_run(TASK, cfg, tmp_path, quiet=True)  # complete: nothing runs again
    assert Greedy.calls == 12


def test_torn_last_line_is_dropped(tmp_path):
    path = tmp_path / "entries.jsonl"
    path.write_text('{"key": "a", "v": 1}\n{"key": "b", "v"')
    store = EntryStore(path)
    assert "a" in store and "b" not in store
    assert path.read_text() == '{"key": "a", "v": 1}\n'
    path.write_text('{"key": "a"}\nnot json\n{"key": "c"}\n')
    with pytest.raises(Exception, match=r"entries.jsonl:2: corrupt"):
        EntryStore(path)


@pytest.mark.parametrize(("old", "new", "match"), [
    ("densities: [0.1]", "densities: [1.5]", r"workloads.densities: .*\(0, 1\]"),
    ("sizes: [10, 25]", "sizes: [0, 25]", r"workloads.sizes: .*>= 1"),
    ("timeouts: [0.002, 0.01]", "timeouts: [-1, 0.01]", r"fixed_timeout.timeouts: .*positive"),
    ("timeouts: [0.002, 0.01]", "timeouts: [0, 0.01]", r"fixed_timeout.timeouts"),
    ("cap_s: 0.5", "cap_s: 0", r"time_to_solution.cap_s"),
    ("  - name: test-greedy", "  - name: nosuch", r"solvers.1.name: unknown solver 'nosuch'"),
    ("seeds: [0, 1]", "seeds: [0, 3]", r"no best-known solution for n=10, density=0.1, seed=3"),
    ("bks:", "timeout: 1\nbks:", "timeout: unknown key"),
    ("benchmark: {id: t}", "id: t", r"<config>:2: id: unknown key \(allowed: task, "),
    ("benchmark: {id: t}", "benchmark: {id: t}\nversion: '2'", r"version: unknown key"),
    ("benchmark: {id: t}", "benchmark: {name: t}", r"benchmark.id: Field required"),
])
def test_bad_configs_name_the_key(bks_file, old, new, match):
    yaml_text = _yaml(bks_file).replace(old, new)
    with pytest.raises(ConfigError, match=match):
        TASK.plan(parse_yaml(yaml_text), RunContext.build())


def _yaml(bks_file):
    return f"""task: qubo
benchmark: {{id: t}}
bks: {bks_file}
workloads:
  sizes: [10, 25]
  densities: [0.1]
  seeds: [0, 1]
solvers:
  - name: neuromark-sa
  - name: test-greedy
fixed_timeout:
  timeouts: [0.002, 0.01]
time_to_solution:
  gaps: [0.1, 0.0]
  cap_s: 0.5
"""


def test_bks_file_contradicting_workload_fails_the_run(tmp_path):
    bad = BKSTable([BKSRow(10, 0.1, 0, -9.0, "exact", "hand", "", "", "", "2026-01-01")])
    path = bad.save(tmp_path / "bad.csv")
    text = _yaml(path).replace("sizes: [10, 25]", "sizes: [10]").replace("seeds: [0, 1]",
                                                                        "seeds: [0]")
    from neuromark.errors import DataError

    with pytest.raises(DataError, match="below the exact optimum -7"):
        plan_and_run(TASK, parse_yaml(text), tmp_path / "out", quiet=True)


def test_cli_qubo_run_and_compare(bks_file, tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(_yaml(bks_file).replace("  - name: neuromark-sa\n", ""))
    assert main(["qubo", "run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert (tmp_path / "o" / "t--test-greedy.json").is_file()
    assert (tmp_path / "o" / "report.md").is_file()
    # the one run path: the task's artefacts in <out>/<config stem>/
    assert len(EntryStore(tmp_path / "o" / "c" / "entries.jsonl")) == 12
    assert (tmp_path / "o" / "c" / "qubo_gap_vs_timeout.png").is_file()
    assert Greedy.calls == 12
    assert main(["qubo", "run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert Greedy.calls == 12  # resumed: every entry was complete
    assert main(["qubo", "compare", str(bks_file), "--table", str(bks_file)]) == 0
    assert "4 equal" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(_yaml(bks_file).replace("cap_s: 0.5", "cap_s: -2"))
    assert main(["qubo", "run", str(bad), "--out", str(tmp_path / "b")]) == 1
    assert "cap_s" in capsys.readouterr().err
    other = tmp_path / "other.yaml"
    other.write_text("task: mackey_glass\n")
    assert main(["qubo", "run", str(other), "--out", str(tmp_path / "b")]) == 1
    assert "this command runs task: qubo" in capsys.readouterr().err


def test_neuromark_run_twice_resumes(bks_file, tmp_path, monkeypatch):
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(_yaml(bks_file).replace("  - name: neuromark-sa\n", ""))
    Greedy.fail_after = 5
    with pytest.raises(RuntimeError, match="simulated crash"):
        main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    assert len(EntryStore(tmp_path / "o" / "sweep" / "entries.jsonl")) == 5
    Greedy.fail_after = None
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert Greedy.calls == 12  # 5 + the 7 missing
    saved = json.loads((tmp_path / "o" / "t--test-greedy.json").read_text())
    assert saved["benchmark"]["id"] == "t" and saved["model"]["label"] == "test-greedy"
    # the default folder of `qubo run` is fixed per config, so a plain rerun resumes too
    monkeypatch.chdir(tmp_path)
    assert main(["qubo", "run", str(cfg), "--quiet"]) == 0
    assert main(["qubo", "run", str(cfg), "--quiet"]) == 0
    assert Greedy.calls == 24
    assert (tmp_path / "results" / "qubo-sweep" / "sweep" / "entries.jsonl").is_file()


def test_qubo_run_refuses_a_folder_of_the_old_layout(bks_file, tmp_path, capsys):
    # a folder without a run manifest (the layout before the one run path) is not
    # rewritten: refused with a clear message, files untouched, until --overwrite
    cfg = tmp_path / "c.yaml"
    cfg.write_text(_yaml(bks_file).replace("  - name: neuromark-sa\n", ""))
    plan_and_run(TASK, parse_yaml(cfg.read_text()), tmp_path / "o", quiet=True)  # entries in o/
    assert Greedy.calls == 12
    before = (tmp_path / "o" / "entries.jsonl").read_bytes()
    assert main(["qubo", "run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]) == 1
    assert "--overwrite" in capsys.readouterr().err and Greedy.calls == 12
    assert (tmp_path / "o" / "entries.jsonl").read_bytes() == before
    assert main(["qubo", "run", str(cfg), "--out", str(tmp_path / "o"), "--quiet",
                 "--overwrite"]) == 0
    assert (tmp_path / "o" / "c" / "entries.jsonl").is_file()


def test_identity_from_the_benchmark_section(bks_file, tmp_path):
    text = _yaml(bks_file).replace("  - name: neuromark-sa\n", "").replace(
        "benchmark: {id: t}", "benchmark: {id: u, version: '2.1', citation: '@misc{x}'}")
    res = plan_and_run(TASK, parse_yaml(text), tmp_path, quiet=True)[0]
    assert res.benchmark.id == "u" and res.benchmark.version == "2.1"
    assert res.benchmark.parent == "neurobench-qubo-mis" and res.benchmark.citation == "@misc{x}"
    text = text.replace("version: '2.1'", "parent: p")
    res = plan_and_run(TASK, parse_yaml(text), tmp_path, quiet=True)[0]
    assert res.benchmark.parent == "p" and res.benchmark.version == "1.0"
    res = plan_and_run(TASK, parse_yaml(_yaml(bks_file).replace("  - name: neuromark-sa\n", "").replace(
        "benchmark: {id: t}\n", "")), tmp_path / "d", quiet=True)[0]
    assert res.benchmark.id == "qubo-mis"  # the default id
    assert "yik2025neurobench" in res.benchmark.citation


def test_solver_and_meter_options_are_checked_at_validate_time(bks_file, tmp_path):
    from neuromark.config import load_config

    def check(old, new, match):
        path = tmp_path / "bad.yaml"
        path.write_text(_yaml(bks_file).replace(old, new))
        with pytest.raises(ConfigError, match=match):
            TASK.plan(load_config(path), RunContext.build())

    check("  - name: neuromark-sa\n", "  - name: neuromark-sa\n    options: {sweeps: 3}\n",
          r"bad.yaml:10: solvers.0.options.sweeps: unknown key; did you mean first_sweeps\?")
    check("  - name: neuromark-sa\n", "  - name: neuromark-sa\n    options: {first_sweeps: many}\n",
          r"bad.yaml:10: solvers.0.options.first_sweeps: Input should be a valid integer")
    check("  - name: test-greedy\n", "  - name: test-greedy\n    options: {x: 1}\n",
          r"bad.yaml:11: solvers.1.options.x: unknown key")
    check("  - name: test-greedy", "  - name: test-greddy",
          r"bad.yaml:10: solvers.1.name: unknown solver 'test-greddy'; did you mean 'test-greedy'")
    check("bks:", "meter: {name: csv, options: {path: t.csv, offset: 0}}\nbks:",
          r"bad.yaml:3: meter.options.offset: unknown key; did you mean offset_s\?")
    check("bks:", "meter: {name: csv}\nbks:",
          r"bad.yaml:3: meter.options.path: Field required")
    check("bks:", "meter: {name: rapll}\nbks:", r"bad.yaml:3: meter.name: unknown meter 'rapll'")
    check("bks:", "meter: rapl\nbks:", r"bad.yaml:3: meter: Input should be a valid dictionary")


def test_default_config_validates_against_shipped_table():
    from neuromark.config import load_config
    from neuromark.suite import project_root

    cfg = TASK.plan(load_config(project_root() / "configs/qubo/mis_default.yaml"), RunContext.build())
    assert cfg.workloads.sizes == [100, 250] and [s.name for s in cfg.solvers] == [
        "neuromark-sa", "dwave-tabu"]


def test_resume_recomputes_entries_when_the_bks_improves(tmp_path):
    tables = {}
    for name, cost in (("old", -19), ("new", -20)):
        tables[name] = tmp_path / f"{name}.csv"
        tables[name].write_text(f"num_vertices,density,random_seed,c_optimal\n50,0.1,0,{cost}\n")

    def cfg(name):
        text = _yaml(tables[name]).replace("sizes: [10, 25]", "sizes: [50]").replace(
            "seeds: [0, 1]", "seeds: [0]").replace("  - name: neuromark-sa\n", "")
        return parse_yaml(text)

    out = tmp_path / "out"
    old = plan_and_run(TASK, cfg("old"), out, quiet=True)[0]
    assert Greedy.calls == 3
    new = plan_and_run(TASK, cfg("new"), out, quiet=True)[0]
    assert Greedy.calls == 6  # every entry rerun against the better target
    assert new["bks_gap@0.01s"] > old["bks_gap@0.01s"]
    plan_and_run(TASK, cfg("new"), out, quiet=True)
    assert Greedy.calls == 6
