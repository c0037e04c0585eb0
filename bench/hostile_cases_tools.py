"""Cases of ``bench/hostile_sweep.py``: configs (worker counts, seeds, suite entries, energy
profiles, QUBO BKS tables), Ray addresses, checkpoints, the submission checker, the
leaderboard and compare."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

from hostile_common import CliError, case, cli
from test_check_hostile import CONFIG, DETAIL, PERF, edit_json, edit_log
from test_energy_profile_limits import PROFILE
from test_leaderboard_hostile import edit, write_run
from test_resource_limits import _qubo_yaml
from test_seed_range import MG

ESN = CONFIG  # one SingleStream ESN run, as the checker's tests write it
def _validate(tmp: Path, name: str, text: str) -> Any:
    (tmp / name).write_text(text)
    return lambda: cli("validate", tmp / name)


# ---- configs: worker counts, seeds, suites ----------------------------------------------------


@case("qubo-jobs-100000", "jobs within the CPUs",
      "test_resource_limits.py::test_jobs_above_the_cpus_is_refused_at_load_naming_key_value_and_limit",
      needs=("q.yaml:6", "jobs", "100000", "CPUs"))
def _(tmp: Path) -> Any:
    return _validate(tmp, "q.yaml", _qubo_yaml("jobs: 100000"))


@case("qubo-solver-workers-above-cpus", "workers within the CPUs",
      "test_resource_limits.py::test_solver_workers_above_the_cpus_is_refused_at_load",
      needs=("q.yaml:4", "solvers.0.options.workers", "CPUs"))
def _(tmp: Path) -> Any:
    from neuromark.config import cpu_limit

    over = cpu_limit() + 1
    solver = f"{{name: neuromark-sa, options: {{workers: {over}}}}}"
    return _validate(tmp, "q.yaml", _qubo_yaml(solver=solver))


@case("pool-failed-unit-kills-workers", "no worker outlives the run",
      "test_resource_limits.py::test_a_failing_unit_leaves_no_worker_process_alive", expect="result",
      check=lambda v: v == ("ZeroDivisionError", []) or f"left {v}")
def _(tmp: Path) -> Any:
    import operator
    import time

    from test_resource_limits import _children_after

    from neuromark.executors import LocalExecutor, Unit

    units = [Unit("sleeper", "<sweep>", time.sleep, (60,)),
             Unit("divides by zero", "<sweep>", operator.truediv, (1, 0))]

    def act() -> Any:
        try:
            list(LocalExecutor(processes=2).run(units))
        except ZeroDivisionError as exc:
            return type(exc).__name__, _children_after(5.0)
        return "no error", _children_after(5.0)
    return act


@case("seed-minus-1", "seed in [0, 2^32)",
      "test_seed_range.py::test_seed_outside_0_to_2_32_is_refused_at_load_with_file_line",
      needs=("mg.yaml:7", "models.0.seed", "-1"))
def _(tmp: Path) -> Any:
    return _validate(tmp, "mg.yaml", MG.format(seed=-1))


@case("seed-2^70", "seed in [0, 2^32)",
      "test_seed_range.py::test_seed_outside_0_to_2_32_is_refused_at_load_with_file_line",
      needs=("mg.yaml:7", "models.0.seed", str(2 ** 70)))
def _(tmp: Path) -> Any:
    return _validate(tmp, "mg.yaml", MG.format(seed=2 ** 70))


@case("suite-seed-key-line", "seed in [0, 2^32), file:line of the entry",
      "test_seed_range.py::test_suite_seeds_outside_the_range_are_refused_with_the_suite_line",
      needs=("s.yaml:3", "entries.0.seeds.1"))
def _(tmp: Path) -> Any:
    (tmp / "mg.yaml").write_text(MG.format(seed=0))
    return _validate(tmp, "s.yaml", "suite: s\nentries:\n  - {config: mg.yaml, seeds: [0, 4294967296], "
                                    "key: models.0.seed}\n")


@case("suite-seeded-entry-one-line", "one error line per seeded entry",
      "test_suite_seeds.py::test_seed_entry_error_is_one_line_about_the_entry",
      needs=("s.yaml:3", "entries.0.seeds.1"))
def _(tmp: Path) -> Any:
    (tmp / "mg.yaml").write_text(MG.format(seed=0))
    (tmp / "s.yaml").write_text("suite: s\nentries:\n  - {config: mg.yaml, seeds: [0, -1], "
                                "key: models.0.seed}\n")

    def act() -> Any:
        try:
            cli("validate", tmp / "s.yaml")
        except CliError as exc:
            lines = str(exc).splitlines()
            if len(lines) != 2 or "valid string" in str(exc):
                return f"{len(lines)} lines: {lines}"  # a confusing second line
            raise
        return "accepted"
    return act


@case("seeds-10^6-not-alias-bomb", "config size, not an alias bomb",
      "test_seed_range.py::test_config_size_limit_refuses_10_to_the_6_seeds_before_parsing",
      needs=("big.yaml", "characters, more than the 2,000,000 a config may hold"))
def _(tmp: Path) -> Any:
    def act() -> Any:
        try:
            return cli("validate", tmp / "big.yaml")
        except CliError as exc:
            if "alias bomb" in str(exc):
                return "called an alias bomb"
            raise
    (tmp / "big.yaml").write_text("suite: s\nentries:\n  - {config: x.yaml, seeds: ["
                                  + ",".join(str(i) for i in range(10 ** 6)) + "]}\n")
    return act


# ---- energy profiles ----------------------------------------------------------------------


def _profile_case(id: str, rule: str, test: str, name: str, mac: str, *needs: str) -> None:
    def build(tmp: Path) -> Any:
        from neuromark.metrics.functional.energy_profiles import load_profile

        path = tmp / f"{name}.yaml"
        path.write_text(PROFILE.format(name=name, mac=mac))
        return lambda: load_profile(path).mac_j
    case(id, rule, f"test_energy_profile_limits.py::{test}", needs=needs)(build)


_profile_case("energy-profile-builtin-name", "a user profile may not take a built-in's name",
              "test_user_profile_may_not_take_a_builtin_name", "horowitz45-fp32", "4.6e-9",
              "horowitz45-fp32.yaml:1", "built-in energy profile")
_profile_case("energy-profile-1e308", "figures per op in [1e-21, 1e-6] J",
              "test_profile_figure_outside_the_physical_range_is_refused", "chip", "1.0e+308",
              "chip.yaml:4", "mac_j")


@case("energy-profile-twice", "a profile listed once, at load",
      "test_energy_profile_limits.py::test_profile_listed_twice_is_refused_at_config_load",
      needs=("d.yaml:7", "estimate.profiles[2]", "already"))
def _(tmp: Path) -> Any:
    text = ESN + "estimate:\n  profiles: [horowitz45-fp32, horowitz45-int8, horowitz45-fp32]\n"
    (tmp / "d.yaml").write_text(text)
    return lambda: cli("system", "run", tmp / "d.yaml", "--out", tmp / "out", "--quiet")


# ---- executors and checkpoints ------------------------------------------------------------------


@case("ray-address-dead-port", "Ray address answers within 5 s",
      "test_resource_limits.py::test_ray_address_that_does_not_answer_is_refused_quickly",
      needs=("no Ray cluster answers",))
def _(tmp: Path) -> Any:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp / "mg.yaml").write_text(MG.format(seed=0))
    return lambda: cli("run", tmp / "mg.yaml", "--out", tmp / "out", "--quiet", "--executor", "ray",
                       "--address", f"127.0.0.1:{port}")


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        import os

        return (os.system, (f"echo ran > {self.marker}",))


@case("checkpoint-pickle-payload", "no pickled objects in checkpoints",
      "test_checkpoint_pickle.py::test_pickled_code_is_refused_naming_the_object_and_never_runs",
      needs=("evil.pt", "refused: it holds pickled Python objects"))
def _(tmp: Path) -> Any:
    import torch

    from neuromark.models.checkpoint import read_weights

    torch.save({"state_dict": _Payload(str(tmp / "out" / "ran.txt"))}, tmp / "evil.pt")
    (tmp / "out").mkdir()

    def act() -> Any:
        weights = read_weights(tmp / "evil.pt")
        return "code ran" if (tmp / "out" / "ran.txt").exists() else weights
    return act


# ---- QUBO BKS tables ------------------------------------------------------------------------


@case("bks-nan-density", "BKS values in range",
      "test_qubo_bks.py::test_bks_value_types_named_by_file_line_and_column", needs=("bks.csv:3", "density"))
def _(tmp: Path) -> Any:
    (tmp / "bks.csv").write_text("num_vertices,density,random_seed,c_optimal\n10,0.1,0,-9\n"
                                 "10,nan,1,-9\n")
    return _validate(tmp, "q.yaml", _qubo_yaml("bks: bks.csv"))


# ---- the submission checker ---------------------------------------------------------------


_SUBMISSION: list[Path] = []


def _submission(tmp: Path) -> Path:
    """A copy of one submission written by ``neuromark system run`` (made once)."""
    if not _SUBMISSION:
        home = tmp.parent / "_submission"
        home.mkdir()
        (home / "good.yaml").write_text(ESN)
        cli("system", "run", home / "good.yaml", "--out", home / "sub", "--quiet")
        _SUBMISSION.append(home / "sub")
    return Path(shutil.copytree(_SUBMISSION[0], tmp / "out" / "sub"))


def _checked(sub: Path) -> Any:
    return lambda: cli("check", sub)


def _symlinked(tmp: Path, rel: str) -> Any:
    """A submission whose file ``rel`` is a symlink to a copy outside it."""
    sub = _submission(tmp)
    inside = sub / rel
    outside = tmp / f"elsewhere-{inside.name}"
    outside.write_bytes(inside.read_bytes())
    inside.unlink()
    inside.symlink_to(outside)
    return _checked(sub)


def _check_case(id: str, rule: str, test: str, *needs: str) -> Any:
    return case(id, rule, f"test_check_hostile.py::{test}", needs=needs)


@_check_case("check-report-symlink", "layout/outside", "test_layout_outside_symlinked_report",
             "layout/outside", "symlink")
def _(tmp: Path) -> Any:
    return _symlinked(tmp, "submission/submission.md")


@_check_case("check-log-symlink", "layout/outside", "test_layout_outside_symlinked_log",
             "layout/outside", "symlink")
def _(tmp: Path) -> Any:
    return _symlinked(tmp, DETAIL)


@_check_case("check-absolute-log-folder", "layout/outside", "test_layout_outside_absolute_log_folder",
             "layout/outside", "lies outside the submission folder")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    outside = shutil.copytree(sub / PERF, tmp / "perf-elsewhere")
    edit_json(sub / "submission.json", lambda m: m["benchmarks"][0]["loadgen_logs"].update(
        PerformanceOnly=str(outside)))
    return _checked(sub)


@_check_case("check-negative-p90", "loadgen/figures", "test_loadgen_figures_negative_p90",
             "loadgen/figures", "result_90.00_percentile_latency_ns = -196101")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    edit_log(sub / DETAIL, **{"result_90.00_percentile_latency_ns": -196101})
    return _checked(sub)


@_check_case("check-min-above-max", "loadgen/figures", "test_loadgen_figures_min_above_max",
             "loadgen/figures", "min latency 1000000000 ns > max latency")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    edit_log(sub / DETAIL, result_min_latency_ns=10 ** 9)
    return _checked(sub)


@_check_case("check-qps-1e30", "loadgen/figures", "test_loadgen_figures_qps_against_duration_and_count",
             "loadgen/figures", "1e+30 QPS")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    edit_log(sub / DETAIL, result_qps_with_loadgen_overhead=1e30)
    return _checked(sub)


@_check_case("check-negative-latency", "results/figures",
             "test_results_figures_negative_latency_and_throughput", "results/figures", "-0.0001")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    edit_json(sub / "good--esn.json", lambda d: d["details"]["timing"]["inference"].update(mean_s=-1e-4))
    return _checked(sub)


@_check_case("check-negative-throughput", "results/figures",
             "test_results_figures_negative_latency_and_throughput", "results/figures", "throughput")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)

    def change(d: dict) -> None:
        key = next(k for k in d["scores"] if "throughput" in k)
        d["scores"][key]["value"] = -5.0
    edit_json(sub / "good--esn.json", change)
    return _checked(sub)


@_check_case("check-manifest-entry-string", "layout/schema", "test_layout_schema_manifest_entry_string",
             "submission.json", "layout/schema", "benchmarks[0] is str")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    edit_json(sub / "submission.json", lambda m: m.update(benchmarks=["good--esn.json"]))
    return _checked(sub)


@_check_case("check-json-200000-deep", "layout/json", "test_layout_json_too_deep",
             "submission.json", "JSON nested too deep")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)
    (sub / "submission.json").write_text('{"a": ' * 200_000 + "1" + "}" * 200_000)
    return _checked(sub)


@_check_case("check-string-timeouts", "layout/schema", "test_layout_schema_qubo_string_timeouts",
             "maxcut.json", "fixed_timeout.timeouts is ['1', '10']")
def _(tmp: Path) -> Any:
    folder = tmp / "out" / "qubo"
    folder.mkdir(parents=True)
    (folder / "maxcut.json").write_text(json.dumps({
        "config": {"task": "qubo", "fixed_timeout": {"timeouts": ["1", "10"]},
                   "workloads": {"sizes": [10], "densities": [0.5], "seeds": [1, 2, 3, 4, 5]}},
        "details": {"entries": [], "over_deadline": {}}}))
    return _checked(folder)


@_check_case("check-compliance-verdict-string", "layout/schema",
             "test_layout_schema_compliance_verdict_string", "good--esn.json",
             "details.compliance.TEST04 is str 'PASS'")
def _(tmp: Path) -> Any:
    sub = _submission(tmp)

    def change(data: dict) -> None:
        data["config"]["effective"]["compliance"] = ["TEST04"]
        data["details"]["compliance"] = {"TEST04": "PASS"}
    edit_json(sub / "good--esn.json", change)
    return _checked(sub)


@_check_case("check-absolute-bks-path", "layout/outside", "test_layout_outside_qubo_bks_table_path",
             "maxcut.json", "layout/outside", "bks table")
def _(tmp: Path) -> Any:
    folder = tmp / "out" / "qubo"
    folder.mkdir(parents=True)
    (tmp / "bks.csv").write_text("num_vertices,density,random_seed,c_optimal\n10,0.5,1,-3\n")
    (folder / "maxcut.json").write_text(json.dumps({
        "config": {"task": "qubo", "bks": str(tmp / "bks.csv"), "fixed_timeout": {"timeouts": []},
                   "workloads": {"sizes": [10], "densities": [0.5], "seeds": [1]}},
        "details": {"entries": [], "over_deadline": {}}}))
    return _checked(folder)


# ---- leaderboard and compare ------------------------------------------------------------------


def _flags(folder: Path) -> list[str]:
    from neuromark.report.runs import read_runs, run_flags

    return run_flags(read_runs([folder])[0].results)


@case("leaderboard-nan-accuracy", "impossible values flagged",
      "test_leaderboard_hostile.py::test_impossible_value_nan_accuracy_is_flagged", expect="result",
      check=lambda v: any("impossible value: nan" in f for f in v) or f"flags {v}")
def _(tmp: Path) -> Any:
    bad = write_run(tmp / "runs", "bad")
    edit(bad / "toy.json", lambda d: d["scores"]["classification_accuracy"].update(value=float("nan")))
    return lambda: _flags(bad)


@case("leaderboard-ops-minus-1e308", "impossible values flagged",
      "test_leaderboard_hostile.py::test_impossible_value_negative_operation_count_is_flagged_not_plotted",
      expect="result", check=lambda v: any("-1e+308 is negative" in f for f in v) or f"flags {v}")
def _(tmp: Path) -> Any:
    bad = write_run(tmp / "runs", "bad", macs=-1e308)
    return lambda: _flags(bad)


@case("compare-negative-error-and-overflow", "impossible values flagged",
      "test_leaderboard_hostile.py::test_impossible_value_compare_negative_error_and_overflow",
      expect="result", check=lambda v: ("IMPOSSIBLE in A" in v and "NOT FINITE: B - A overflows" in v)
      or "not flagged")
def _(tmp: Path) -> Any:
    a = write_run(tmp / "runs", "a", acc=0.2, se=-0.5, r2=-1e308)
    b = write_run(tmp / "runs", "b", acc=0.3, r2=1e308)
    return lambda: cli("compare", a, b).out


@case("leaderboard-out-users-index", "--out follows --overwrite",
      "test_leaderboard_hostile.py::test_out_overwrite_rule_keeps_a_users_index",
      needs=("index.html", "not written by neuromark leaderboard"))
def _(tmp: Path) -> Any:
    run = write_run(tmp / "runs", "good")
    (tmp / "mysite").mkdir()
    (tmp / "mysite" / "index.html").write_text("<html>my own page</html>")
    return lambda: cli("leaderboard", run, "--out", tmp / "mysite")


def _skipped_note(tmp: Path, change: Any, name: str = "toy.json") -> Any:
    good, bad = write_run(tmp / "runs", "good"), write_run(tmp / "runs", "bad")
    change(bad / name)

    def act() -> Any:
        run = cli("leaderboard", good, bad, "--out", tmp / "out" / "site")
        return run.err
    return act


def _note_case(id: str, test: str, note: str) -> Any:
    return case(id, "malformed files skipped with a note", f"test_leaderboard_hostile.py::{test}",
                expect="result", check=lambda v: note in v or f"no note: {v!r}")


@_note_case("leaderboard-list-parent", "test_malformed_files_skipped_with_a_note",
            "benchmark.parent is a list")
def _(tmp: Path) -> Any:
    return _skipped_note(tmp, lambda p: edit_json(p, lambda d: d["benchmark"].update(parent=["a"])))


@_note_case("leaderboard-json-list-beside", "test_malformed_files_skipped_with_a_note",
            "holds a JSON list")
def _(tmp: Path) -> Any:
    return _skipped_note(tmp, lambda p: p.with_name("list.json").write_text("[1, 2]"))


@_note_case("leaderboard-deep-json", "test_malformed_files_skipped_with_a_note",
            "JSON nested too deep")
def _(tmp: Path) -> Any:
    return _skipped_note(tmp, lambda p: p.with_name("deep.json").write_text("[" * 200_000 + "]" * 200_000))


@case("leaderboard-mathtext-id", "strings escaped",
      "test_leaderboard_hostile.py::test_escaping_html_and_mathtext_in_labels", expect="result",
      check=lambda v: v or "id not shown escaped")
def _(tmp: Path) -> Any:
    folders = [write_run(tmp / "runs", "one"), write_run(tmp / "runs", "two")]
    for folder in folders:
        edit_json(folder / "toy.json", lambda d: d["benchmark"].update(id=r"toy$\frac{$<b>"))

    def act() -> Any:
        cli("leaderboard", *folders, "--out", tmp / "out" / "site")
        page = (tmp / "out" / "site" / "index.html").read_text()
        return "<b>" not in page and "toy$\\frac{$&lt;b&gt;" in page
    return act


@case("results-schema-9.0", "supported schema versions named",
      "test_leaderboard_hostile.py::test_unknown_schema_version_names_the_version_and_what_is_supported",
      needs=("toy.json", "schema_version '9.0' is not supported", "1.0 to 1.3"))
def _(tmp: Path) -> Any:
    run = _future_run(tmp)
    return lambda: cli("compare", run / "toy.json", run / "toy.json")


def _future_run(tmp: Path) -> Path:
    """A run folder whose results file says schema_version 9.0."""
    run = write_run(tmp / "runs", "future")
    edit_json(run / "toy.json", lambda d: d.update(schema_version="9.0"))
    return run


@case("report-schema-9.0", "supported schema versions named",
      "test_leaderboard_hostile.py::test_report_unknown_schema_version_same_wording",
      needs=("toy.json", "schema_version '9.0' is not supported", "1.0 to 1.3"))
def _(tmp: Path) -> Any:
    run = _future_run(tmp)
    return lambda: cli("report", run / "toy.json", "--out", tmp / "out" / "sub")


@case("power-trace-latin1", "UTF-8 power traces",
      "test_system_power.py::test_csv_trace_not_utf8_names_file_line_and_byte",
      needs=("trace.csv:3", "not UTF-8", "0xe9"))
def _(tmp: Path) -> Any:
    from neuromark.system.power.csv_trace import read_trace

    (tmp / "trace.csv").write_bytes("t_s,power_w,mark\n0,1,a\n1,1,caf\xe9\n2,1,\n".encode("latin-1"))
    return lambda: read_trace(tmp / "trace.csv")
