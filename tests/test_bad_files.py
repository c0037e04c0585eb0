"""Every bad file gets a clear message naming the file (issue 22, section 2): binary and
non-UTF-8 configs, directories, suites that include themselves, alias bombs, nested-key
hints, missing plugin modules, data tables without a column, BOMs, truncated results."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from neuromark.cli import main
from neuromark.config import StrictModel, load_config, parse_yaml, validate
from neuromark.errors import ConfigError, DataError

SYSTEM = """\
task: system
benchmark: {id: s}
sut: {name: sleep, options: {sleep_s: 0.0001, samples: 8}}
loadgen:
  scenario: SingleStream
  min_duration_s: 0.1
"""


def fails(capsys, argv: list[str], *needles: str) -> str:
    """``neuromark argv`` exits 1 with one message (no traceback) holding every needle."""
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# --- configs that are not YAML text ------------------------------------------------------

def test_binary_config_names_file_line_and_offset(tmp_path, capsys):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"task: system\nsut:\x00\x01\x02\n")
    fails(capsys, ["validate", str(path)], "bin.yaml:2", "binary file", "NUL byte at offset 17")


def test_non_utf8_config_names_the_byte(tmp_path, capsys):
    path = tmp_path / "latin.yaml"
    path.write_bytes("task: system\ndescription: caf\xe9\n".encode("latin-1"))
    fails(capsys, ["validate", str(path)], "latin.yaml:2", "not UTF-8", "0xe9")


def test_config_is_read_as_utf8_whatever_the_locale(tmp_path, monkeypatch):
    import locale

    path = tmp_path / "u.yaml"
    path.write_bytes("task: system\ndescription: Größe – µs\n".encode())
    monkeypatch.setattr(locale, "getpreferredencoding", lambda *a, **k: "ascii")
    monkeypatch.setattr(locale, "getencoding", lambda: "ascii", raising=False)
    assert load_config(path).data["description"] == "Größe – µs"


def test_utf8_bom_in_a_config_is_dropped(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbftask: system\n")
    assert load_config(path).data == {"task": "system"}


def test_config_that_is_a_directory_says_so(tmp_path, capsys):
    (tmp_path / "d.yaml").mkdir()
    err = fails(capsys, ["validate", str(tmp_path / "d.yaml")], "d.yaml", "is a directory")
    assert "not found" not in err


def test_invalid_yaml_names_the_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("task: system\nsut: [unclosed\n")
    fails(capsys, ["validate", str(path)], "bad.yaml", "invalid YAML", "line")


def test_top_level_list_is_refused(tmp_path, capsys):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    fails(capsys, ["validate", str(path)], "list.yaml", "top level must be a mapping, got list")


def test_duplicate_key_names_its_line(tmp_path, capsys):
    path = tmp_path / "dup.yaml"
    path.write_text("task: system\nbenchmark: {id: a}\ntask: qubo\n")
    fails(capsys, ["validate", str(path)], "dup.yaml:3", "duplicate key 'task'")


# --- suites ------------------------------------------------------------------------------

def test_suite_that_includes_itself(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text("suite: loop\nentries:\n  - s.yaml\n")
    fails(capsys, ["validate", str(path)], "s.yaml:3", "entries[0]", "includes itself")


def test_suite_cycle_through_another_suite(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("suite: a\nentries:\n  - b.yaml\n")
    (tmp_path / "b.yaml").write_text("suite: b\nentries:\n  - sub/../a.yaml\n")
    (tmp_path / "sub").mkdir()
    err = fails(capsys, ["validate", str(tmp_path / "a.yaml")], "b.yaml:3", "includes itself")
    assert "a.yaml -> " in err and "b.yaml -> " in err


def test_a_suite_may_list_one_config_twice_in_sibling_suites(tmp_path):
    from neuromark.suite import expand

    (tmp_path / "c.yaml").write_text(SYSTEM)
    (tmp_path / "x.yaml").write_text("suite: x\nentries: [c.yaml]\n")
    (tmp_path / "y.yaml").write_text("suite: y\nentries: [x.yaml, x.yaml]\n")
    assert len(expand([tmp_path / "y.yaml"])) == 2  # a diamond, not a cycle


# --- YAML aliases --------------------------------------------------------------------------

BOMB = "task: system\n" + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
    f"*a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 12))


def test_alias_bomb_is_refused_at_once(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    start = time.perf_counter()
    fails(capsys, ["validate", str(path)], "bomb.yaml", "aliases expand to more than")
    assert time.perf_counter() - start < 30  # refused before expanding (unbounded: hours)


def test_ordinary_aliases_still_work_with_lines(tmp_path):
    text = ("common: &opts {sleep_s: 0.0001, samples: 8}\n"
            "sut: {name: sleep, options: *opts}\n"
            "other: {options: *opts}\n")
    config = parse_yaml(text, tmp_path / "al.yaml")
    assert config.data["sut"]["options"] == {"sleep_s": 0.0001, "samples": 8}
    assert config.where(("sut", "options", "samples")).endswith("al.yaml:2")


# --- nested keys: their own allowed list and close matches -------------------------------

def test_nested_unknown_key_suggests_the_close_match(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(SYSTEM.replace("min_duration_s", "min_duraton_s"))
    fails(capsys, ["validate", str(path)], "c.yaml:6", "loadgen.min_duraton_s",
          "did you mean min_duration_s")


def test_nested_unknown_key_lists_the_sections_keys(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(SYSTEM + "  zzz: 1\n")
    err = fails(capsys, ["validate", str(path)], "c.yaml:7", "loadgen.zzz", "unknown key",
                "scenario", "expected_latency_s")
    allowed = err.split("allowed:")[1]
    assert "sut" not in allowed and "task" not in allowed  # not the top-level keys


def test_unknown_key_in_a_list_item_lists_the_items_keys():
    class Item(StrictModel):
        name: str
        weight: float = 1.0

    class Top(StrictModel):
        items: list[Item]
        title: str = ""

    with pytest.raises(ConfigError) as info:
        validate(Top, {"items": [{"name": "a"}, {"name": "b", "wieght": 2}]})
    message = str(info.value)
    assert "items.1.wieght: unknown key; did you mean weight?" in message


def test_unknown_key_in_an_optional_section():
    class Inner(StrictModel):
        alpha: int = 0
        beta: int = 0

    class Top(StrictModel):
        inner: Inner | None = None
        gamma: int = 0

    with pytest.raises(ConfigError, match=r"inner\.qqq: unknown key \(allowed: alpha, beta\)"):
        validate(Top, {"inner": {"qqq": 1}})


# --- plugin entries are imported by validate -----------------------------------------------

def test_plugin_dataset_with_a_missing_module_fails_validate(tmp_path, capsys, monkeypatch):
    from neuromark.registry import datasets

    monkeypatch.setitem(datasets._entries, "ghost_data", "no_such_module_xyz:Data")
    path = tmp_path / "c.yaml"
    path.write_text("task: classification\nbenchmark: {id: g}\ndataset: {name: ghost_data}\n"
                    "model: {name: ghost_model}\n")
    fails(capsys, ["validate", str(path)], "c.yaml:3", "dataset.name", "'ghost_data' cannot be "
          "loaded", "No module named 'no_such_module_xyz'")


def test_plugin_model_with_a_missing_module_fails_validate(tmp_path, capsys, monkeypatch):
    from neuromark.registry import datasets, models

    def tiny(split: str = "test"):
        import torch

        return [(torch.zeros(3), 0), (torch.zeros(3), 1)]

    monkeypatch.setitem(datasets._entries, "tiny_data", tiny)
    monkeypatch.setitem(models._entries, "ghost_model", "no_such_module_xyz.models:build")
    path = tmp_path / "c.yaml"
    path.write_text("task: classification\nbenchmark: {id: g}\ndataset: {name: tiny_data}\n"
                    "model: {name: ghost_model}\n")
    fails(capsys, ["validate", str(path)], "c.yaml:4", "model.name", "'ghost_model' cannot be loaded")


def test_plugin_model_options_are_checked_by_validate(tmp_path, capsys, monkeypatch):
    from neuromark.registry import datasets, models

    def tiny(split: str = "test"):
        import torch

        return [(torch.zeros(3), 0), (torch.zeros(3), 1)]

    def build(*, hidden: int = 4):
        import torch

        return torch.nn.Linear(3, hidden)

    monkeypatch.setitem(datasets._entries, "tiny_data", tiny)
    monkeypatch.setitem(models._entries, "tiny_model", build)
    path = tmp_path / "c.yaml"
    path.write_text("task: classification\nbenchmark: {id: g}\ndataset: {name: tiny_data}\n"
                    "model: {name: tiny_model, options: {hiden: 3}}\n")
    fails(capsys, ["validate", str(path)], "c.yaml:4", "model.options.hiden", "did you mean hidden")


def test_missing_solver_module_fails_validate(tmp_path, capsys, monkeypatch):
    from neuromark.registry import solvers

    monkeypatch.setitem(solvers._entries, "ghost-solver", "no_such_module_xyz:Solver")
    path = tmp_path / "q.yaml"
    path.write_text("task: qubo\nbenchmark: {id: q}\nworkloads: {sizes: [20], densities: [0.1], "
                    "seeds: [0]}\nsolvers:\n  - name: ghost-solver\nseeds: [0]\n"
                    "fixed_timeout: {timeouts: [0.01]}\n")
    fails(capsys, ["validate", str(path)], "q.yaml:5", "'ghost-solver' cannot be loaded")


# --- data files ----------------------------------------------------------------------------

def _data_root(tmp_path: Path, edit) -> Path:
    from neuromark.benchmarks.mackey_glass.series import DATA_DIR, SUMS_FILE, TABLE_FILE

    root = tmp_path / "data"
    shutil.copytree(DATA_DIR, root)
    table = root / TABLE_FILE
    table.write_bytes(edit(table.read_bytes()))
    digest = hashlib.sha256(table.read_bytes()).hexdigest()
    sums = root / SUMS_FILE
    lines = [f"{digest}  {TABLE_FILE}" if line.endswith(TABLE_FILE) else line
             for line in sums.read_text().splitlines()]
    sums.write_text("\n".join(lines) + "\n")
    return root


def _drop_column(raw: bytes, column: str) -> bytes:
    rows = [line.split(",") for line in raw.decode().splitlines()]
    index = rows[0].index(column)
    return ("\n".join(",".join(r[:index] + r[index + 1:]) for r in rows) + "\n").encode()


def test_data_root_table_lacking_a_column(tmp_path, capsys):
    root = _data_root(tmp_path, lambda raw: _drop_column(raw, "file"))
    path = tmp_path / "mg.yaml"
    path.write_text(f"task: mackey_glass\ndata: {{instances: 2, root: {root}}}\nmodels: [{{name: esn}}]\n")
    err = fails(capsys, ["validate", str(path)], "lyapunov.csv:1", "lacks column(s) file")
    assert "KeyError" not in err


def test_data_root_table_with_a_bom_reads(tmp_path):
    from neuromark.benchmarks.mackey_glass.series import _table, lyapunov_table

    root = _data_root(tmp_path, lambda raw: b"\xef\xbb\xbf" + raw)
    _table.cache_clear()
    assert 17 in lyapunov_table(root)


def test_asc_setup_csv_with_a_bom_reads(tmp_path):
    from neuromark.benchmarks.acoustic_scenes.dcase import read_setup_csv

    path = tmp_path / "fold1_train.csv"
    path.write_bytes(b"\xef\xbb\xbffilename\tscene_label\naudio/a.wav\tpark\n")
    assert read_setup_csv(path) == [("audio/a.wav", "park")]


def test_asc_setup_csv_with_a_wrong_header_says_what_it_got(tmp_path):
    from neuromark.benchmarks.acoustic_scenes.dcase import read_setup_csv

    path = tmp_path / "fold1_train.csv"
    path.write_text("file\tscene\n")
    with pytest.raises(DataError, match=r"fold1_train\.csv:1: expected the header"):
        read_setup_csv(path)


def test_power_trace_with_a_bom_header_reads(tmp_path):
    from neuromark.system.power.csv_trace import read_trace

    trace = tmp_path / "p.csv"
    trace.write_bytes(b"\xef\xbb\xbft_s,power_w\n0.0,1.0\n1.0,2.0\n")
    t, p, _ = read_trace(trace)
    assert t.tolist() == [0.0, 1.0] and p.tolist() == [1.0, 2.0]


# --- results files given to `neuromark report` -------------------------------------------

def _system_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "system.yaml"
    path.write_text("name: x\narchitecture: y\nhardware:\n  processor: z\nalgorithm: a\n")
    return path


def test_truncated_results_json_names_the_file(tmp_path, capsys):
    results = tmp_path / "r.json"
    results.write_text('{"schema_version": "1", "scores": {"a": ')
    fails(capsys, ["report", str(results), "--system", str(_system_yaml(tmp_path)),
                   "--out", str(tmp_path / "o")], "r.json:1:", "truncated")


def test_results_json_that_is_not_a_results_file(tmp_path, capsys):
    results = tmp_path / "r.json"
    results.write_text(json.dumps([1, 2, 3]))
    fails(capsys, ["report", str(results), "--system", str(_system_yaml(tmp_path)),
                   "--out", str(tmp_path / "o")], "r.json")
