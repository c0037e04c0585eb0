"""Resumed sweeps match their config (issue 21, section 3, and the Mackey-Glass resume):
QUBO entries are keyed on the full resolved solver spec, the store records the config
digest, reused entries are validated (fields, cost vs gap vs BKS), and a resume file that is
garbage, incomplete or a folder is a clear error before any solving."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from neuromark.benchmarks.qubo import energy, mis_workload
from neuromark.benchmarks.qubo.bks import BKSRow, BKSTable, encode_solution
from neuromark.benchmarks.qubo.exact import exact_mis
from neuromark.benchmarks.qubo.solvers import SolveResult
from neuromark.benchmarks.qubo.store import EntryStore, check_entry
from neuromark.benchmarks.qubo.task import plan
from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.errors import DataError
from neuromark.registry import solvers

pytest.importorskip("numba")


class Counting:
    """Greedy MIS in index order (``reverse``: from the last vertex); counts its solves."""

    name = "t-resume"
    calls = 0

    def __init__(self, reverse: bool = False) -> None:
        self.reverse = reverse

    def solve(self, Q, timeout_s, seed, *, target=None):
        type(self).calls += 1
        q = Q.toarray()
        x = np.zeros(q.shape[0], dtype=np.int8)
        order = range(len(x) - 1, -1, -1) if self.reverse else range(len(x))
        for i in order:
            x[i] = 1
            if q[i] @ x * 2 - q[i, i] > 0:
                x[i] = 0
        cost = float(x @ q @ x)
        return SolveResult(x=x, cost=cost, trace=[(1e-4, cost)])


@pytest.fixture(autouse=True)
def _register():
    solvers.register("t-resume", Counting)
    Counting.calls = 0
    yield
    solvers._entries.pop("t-resume", None)


@pytest.fixture(scope="module")
def bks_file(tmp_path_factory):
    rows = []
    for s in (0, 1):
        w = mis_workload(10, 0.1, s)
        x = exact_mis(10, w.edges)
        rows.append(BKSRow(10, 0.1, s, energy(w.Q, x), "exact", "test", "", "", "",
                           "2026-01-01", encode_solution(x)))
    return BKSTable(rows).save(tmp_path_factory.mktemp("bks") / "bks.csv")


def sweep(bks_file, options: str = "") -> str:
    return f"""task: qubo
benchmark: {{id: r}}
bks: {bks_file}
plots: false
workloads: {{sizes: [10], densities: [0.1], seeds: [0, 1]}}
solvers:
  - name: t-resume{options}
fixed_timeout: {{timeouts: [0.01]}}
time_to_solution: {{gaps: [0.1], cap_s: 0.2}}
"""


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(tmp_path, text, capsys, *extra):
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(text)
    code = main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet", *extra])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out


def entries_file(tmp_path):
    return tmp_path / "out" / "sweep" / "entries.jsonl"


def test_resume_reuses_every_entry_of_the_same_config(tmp_path, bks_file, capsys):
    assert cli(tmp_path, sweep(bks_file), capsys)[0] == 0
    assert Counting.calls == 4
    first = json.loads((tmp_path / "out" / "r--t-resume.json").read_text())["scores"]
    assert cli(tmp_path, sweep(bks_file), capsys)[0] == 0
    assert Counting.calls == 4  # nothing solved again
    again = json.loads((tmp_path / "out" / "r--t-resume.json").read_text())["scores"]
    assert again == first


def test_store_records_the_config_digest(tmp_path, bks_file, capsys):
    cli(tmp_path, sweep(bks_file), capsys)
    meta = json.loads((entries_file(tmp_path).with_suffix(".meta.json")).read_text())
    assert meta["neuromark_entries"] == 1 and len(meta["config_digest"]) == 64


def test_changed_solver_options_never_reuse_old_entries(tmp_path, bks_file, capsys):
    cli(tmp_path, sweep(bks_file), capsys)
    code, out = cli(tmp_path, sweep(bks_file, "\n    options: {reverse: true}"), capsys)
    assert code == 1 and "solvers" in out.err  # the folder guard names the changed key
    code, _ = cli(tmp_path, sweep(bks_file, "\n    options: {reverse: true}"), capsys,
                  "--overwrite")
    assert code == 0 and Counting.calls == 8  # every entry re-solved with the new options


def test_keys_hold_the_full_solver_spec(bks_file):
    from neuromark.benchmarks.qubo.config import QuboConfig

    a = QuboConfig.model_validate(parse_yaml(sweep(bks_file)).data)
    b = QuboConfig.model_validate(parse_yaml(sweep(bks_file, "\n    options: {reverse: true}")).data)
    keys_a, keys_b = {s["key"] for s in plan(a)}, {s["key"] for s in plan(b)}
    assert not keys_a & keys_b and all('"reverse":true' in k for k in keys_b)


def _forge(tmp_path, change):
    path = entries_file(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    change(lines[0])
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


@pytest.mark.parametrize("field, value, message", [
    ("gap", 0.0, "field 'gap'"),
    ("cost", -100.0, "field 'gap'"),
    ("bks", -1.0, "field 'bks'"),
    ("wall_s", "fast", "field 'wall_s'"),
    ("independent", "yes", "field 'independent'"),
    ("n", 11, "field 'n'"),
])
def test_forged_entry_is_refused_before_any_solving(tmp_path, bks_file, capsys, field, value,
                                                   message):
    cli(tmp_path, sweep(bks_file), capsys)
    calls = Counting.calls

    def change(entry):
        if entry["scenario"] == "fixed_timeout" and field in ("gap", "cost"):
            entry["gap"] = entry["gap"] + 0.5 if field == "gap" else entry["gap"]
        entry[field] = value if field not in ("gap",) else entry["gap"]

    path = _forge(tmp_path, change)
    before = sha(path)
    code, out = cli(tmp_path, sweep(bks_file), capsys)
    assert code == 1 and f"{path}:1" in out.err and message in out.err
    assert Counting.calls == calls and sha(path) == before


def test_entry_missing_a_field_is_a_clear_error(tmp_path, bks_file, capsys):
    cli(tmp_path, sweep(bks_file), capsys)
    path = _forge(tmp_path, lambda e: e.pop("solver"))
    code, out = cli(tmp_path, sweep(bks_file), capsys)
    assert code == 1 and f"{path}:1" in out.err and "'solver'" in out.err


def test_random_bytes_resume_file(tmp_path, bks_file, capsys):
    cli(tmp_path, sweep(bks_file), capsys)
    path = entries_file(tmp_path)
    path.write_bytes(os.urandom(300))
    before = sha(path)
    calls = Counting.calls
    code, out = cli(tmp_path, sweep(bks_file), capsys)
    assert code == 1 and str(path) in out.err and Counting.calls == calls
    assert sha(path) == before  # never replaced


def test_a_single_garbage_line_without_our_header_is_not_dropped(tmp_path):
    path = tmp_path / "entries.jsonl"
    path.write_text("my notes, no newline")
    with pytest.raises(DataError, match="corrupt line"):
        EntryStore(path)
    assert path.read_text() == "my notes, no newline"


def test_torn_last_line_of_our_store_is_dropped(tmp_path):
    store = EntryStore(tmp_path / "e.jsonl", "d1")
    store.append({"key": "a", "v": 1})
    with (tmp_path / "e.jsonl").open("a") as f:
        f.write('{"key": "b", "v"')
    again = EntryStore(tmp_path / "e.jsonl", "d1")
    assert list(again.entries) == ["a"] and again.stored_digest == "d1"


def test_resume_path_that_is_a_folder_fails_before_the_first_solve(tmp_path, bks_file, capsys):
    (tmp_path / "out" / "sweep" / "entries.jsonl").mkdir(parents=True)
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(sweep(bks_file))
    code = main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet", "--overwrite"])
    out = capsys.readouterr()
    assert code == 1 and "not a regular file" in out.err and Counting.calls == 0
    assert "Traceback" not in out.err


def test_check_entry_accepts_a_real_entry(tmp_path, bks_file, capsys):
    cli(tmp_path, sweep(bks_file), capsys)
    from neuromark.benchmarks.qubo.bks import load_bks
    from neuromark.benchmarks.qubo.config import QuboConfig

    store = EntryStore(entries_file(tmp_path))
    specs = plan(QuboConfig.model_validate(parse_yaml(sweep(bks_file)).data), load_bks(bks_file))
    assert {s["key"] for s in specs} == set(store.entries)
    for spec in specs:
        entry = store.entries[spec["key"]]
        check_entry(entry, {k: v for k, v in spec.items() if k != "key"},
                    f"{store.path}:{store.lines[spec['key']]}")
        with pytest.raises(DataError, match="field 'wall_s'"):
            check_entry({**entry, "wall_s": -1.0}, {k: v for k, v in spec.items() if k != "key"},
                        "here")


def test_mackey_glass_sweep_resume_file_garbage_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("jitcdde", reason="Mackey-Glass series")
    cfg = tmp_path / "mg.yaml"
    cfg.write_text("task: mackey_glass\ndata: {taus: [17, 18], instances: 1, length: 4}\n"
                   "models:\n  - {name: esn, params: {reservoir_size: 20, warmup: 20}}\n")
    entries = tmp_path / "out" / "mg" / "entries"
    entries.mkdir(parents=True)
    (entries / "esn_tau17.json").write_text("{not json")
    code = main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet", "--overwrite"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert code == 1 and "esn_tau17.json" in out.err, out.err
    assert (entries / "esn_tau17.json").read_text() == "{not json"


def test_resume_with_the_store_directly_keeps_the_digest_current(tmp_path):
    store = EntryStore(tmp_path / "e.jsonl", "old")
    store.append({"key": "a"})
    store = EntryStore(tmp_path / "e.jsonl", "new")
    meta = json.loads((tmp_path / "e.meta.json").read_text())
    assert meta["config_digest"] == "new" and "a" in store
