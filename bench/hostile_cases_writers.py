"""Cases of ``bench/hostile_sweep.py`` (issue 41, part b): writers that must not replace a
user's file (export, train, data generators, report), the writer's own non-finite strings
read by ``compare``, user model files that exit, interrupt, return lazy layers or change the
default dtype, moved run folders and ill-typed results fields."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hostile_common import case, cli
from test_user_files_and_portability import DOUBLES, _config, _rows, _run, _with_plot

T = "test_user_files_and_portability.py::"


def _toy(tmp: Path, **options: Any) -> Path:
    """A python-model config on the toy rows (registered here, as the tests' fixture does)."""
    from neuromark.registry import datasets

    datasets._entries["toy_rows"] = _rows
    return _config(tmp / "project", **options)


def _export(tmp: Path, target: str, *extra: str) -> Any:
    config = _toy(tmp)
    return lambda: cli("export", "onnx", config, config.parent / target, "--quiet", *extra)


@case("export-onto-its-config", "never write over the config, even with --overwrite",
      T + "test_export_refuses_to_replace_its_own_config", needs=("is the config", "run.yaml"))
def _(tmp: Path) -> Any:
    return _export(tmp, "run.yaml", "--overwrite")


@case("export-onto-its-checkpoint", "never write over the checkpoint, even with --overwrite",
      T + "test_export_refuses_to_replace_its_own_config",
      needs=("is the config's model.checkpoint", "weights.pt"))
def _(tmp: Path) -> Any:
    return _export(tmp, "weights.pt", "--overwrite")


@case("export-onto-a-users-file", "refuse an existing file unless --overwrite",
      T + "test_export_refuses_an_existing_file_unless_overwrite",
      needs=("notes.onnx", "exists", "--overwrite"))
def _(tmp: Path) -> Any:
    config = _toy(tmp)
    (tmp / "notes.onnx").write_text("mine")
    return lambda: cli("export", "onnx", config, tmp / "notes.onnx", "--quiet")


@case("export-into-a-missing-folder", "the output folder named, not 'cannot be traced'",
      T + "test_export_output_folder_missing_or_unwritable_is_named",
      needs=("nope", "does not exist"))
def _(tmp: Path) -> Any:
    config = _toy(tmp)
    return lambda: cli("export", "onnx", config, tmp / "out" / "nope" / "m.onnx", "--quiet")


@case("export-a-python-model", "export exports the model run evaluates",
      T + "test_export_of_a_python_model_uses_its_own_checkpoint", expect="result",
      check=lambda v: v["max_abs_diff"] <= 1e-5 or f"max_abs_diff {v['max_abs_diff']}")
def _(tmp: Path) -> Any:
    config = _toy(tmp)
    (tmp / "out").mkdir()
    return lambda: json.loads(cli("export", "onnx", config, tmp / "out" / "m.onnx",
                                  "--quiet").out)


@case("train-out-is-the-config", "never write over the config",
      T + "test_train_refuses_an_existing_out_file_and_never_the_config",
      needs=("is the config", "run.yaml"))
def _(tmp: Path) -> Any:
    config = _toy(tmp)
    return lambda: cli("train", config, "--out", config, "--overwrite", "--quiet")


@case("generator-beside-a-users-partial-folder", "delete only the folder it created",
      T + "test_generator_never_deletes_a_folder_it_did_not_create", expect="result",
      check=lambda v: v == "years of work" or f"the user's file reads {v!r}")
def _(tmp: Path) -> Any:
    from neuromark.data.entry import synthesize_into

    users = tmp / "out" / ".corpus.partial"
    users.mkdir(parents=True)
    (users / "thesis.tex").write_text("years of work")

    def act() -> str:
        synthesize_into(tmp / "out" / "corpus", {"seed": 1},
                        lambda f: (f / "a.txt").write_text("x"), what="toy")
        return (users / "thesis.tex").read_text() if (users / "thesis.tex").exists() else "gone"
    return act


@case("primate-surrogate-over-a-users-mat", "never replace a file it did not write",
      T + "test_data_writers_never_replace_a_users_file",
      needs=("loco_20170210_03.mat", "not written by this generator"))
def _(tmp: Path) -> Any:
    (tmp / "mine").mkdir()
    (tmp / "mine" / "loco_20170210_03.mat").write_bytes(b"a user's recording")
    return lambda: cli("data", "primate-surrogate", tmp / "mine", "--duration", "1", "--force")


@case("report-out-over-a-users-submission", "never replace a file it did not write",
      T + "test_report_out_never_replaces_a_users_submission_or_plots",
      needs=("submission.md", "was not written by neuromark report"))
def _(tmp: Path) -> Any:
    results = _run(tmp / "out", "r", 0.8)
    (tmp / "mine").mkdir()
    (tmp / "mine" / "submission.md").write_text("# my notes\n")
    return lambda: cli("report", results, "--out", tmp / "mine")


@case("compare-stored-nan-string", "the writer's NaN is a number, flagged",
      T + "test_compare_reads_stored_nan_strings_as_numbers", expect="result",
      check=lambda v: ("IMPOSSIBLE in A: nan" in v and "differs (text)" not in v) or v)
def _(tmp: Path) -> Any:
    a, b = _run(tmp / "runs", "a", float("nan")), _run(tmp / "runs", "b", 0.5)
    return lambda: cli("compare", a, b).out


def _factory_case(id: str, factory: str, needs: tuple[str, ...], test: str) -> Any:
    @case(id, "user code that ends the program is an error, exit 1", T + test, needs=needs)
    def _(tmp: Path) -> Any:
        config = _toy(tmp, factory=factory, checkpoint=False)
        return lambda: cli("run", config, "--out", tmp / "out", "--quiet")


_factory_case("factory-sys-exit-0", "my_net.py:leaves", ("my_net.py:leaves", "sys.exit(0)"),
              "test_factory_sys_exit_is_reported_non_zero")
_factory_case("factory-keyboard-interrupt", "my_net.py:interrupted",
              ("my_net.py:interrupted", "KeyboardInterrupt"),
              "test_factory_sys_exit_is_reported_non_zero")
_factory_case("forward-sys-exit-0", "my_net.py:quits_in_forward", ("sys.exit(0)", "stopped"),
              "test_sys_exit_in_a_models_forward_is_an_error_not_exit_0")
_factory_case("factory-lazy-linear", "my_net.py:lazy", ("lazy parameters", "0.weight"),
              "test_lazy_parameters_are_a_clear_error")


@case("factory-sets-default-dtype", "the entry that changed the dtype is named",
      T + "test_one_entrys_default_dtype_change_is_blamed_on_that_entry",
      needs=("doubles.py:build", "default dtype"))
def _(tmp: Path) -> Any:
    config = _toy(tmp, factory="doubles.py:build", checkpoint=False)
    (config.parent / "doubles.py").write_text(DOUBLES)
    return lambda: cli("run", config, "--out", tmp / "out", "--quiet")


@case("seed-key-unknown-in-config", "the suite line that set the key is named",
      T + "test_seed_key_error_names_the_suite_entry_that_set_it",
      needs=("suite.yaml:3", "eval.seed"))
def _(tmp: Path) -> Any:
    config = _toy(tmp)
    (config.parent / "suite.yaml").write_text(
        "suite: seeds\nentries:\n  - {config: run.yaml, seeds: [0, 1], key: eval.seed}\n")
    return lambda: cli("run", config.parent / "suite.yaml", "--out", tmp / "out", "--quiet")


@case("moved-run-folder-old-absolute-plot", "a moved run folder shows its own plots",
      T + "test_old_absolute_artefact_paths_resolve_in_the_moved_folder", expect="result",
      check=lambda v: v == b"run" or f"read {v!r}")
def _(tmp: Path) -> Any:
    from neuromark.results import Results

    path = _with_plot(tmp / "out" / "run")
    data = json.loads(path.read_text())
    data["artefacts"] = [str(tmp / "out" / "run" / "entry" / "plot.png")]
    path.write_text(json.dumps(data))
    shutil.move(tmp / "out" / "run", tmp / "out" / "moved")
    _with_plot(tmp / "out" / "run")  # another run where the old one was
    (tmp / "out" / "run" / "entry" / "plot.png").write_bytes(b"another run")
    return lambda: Results.load(tmp / "out" / "moved" / "toy.json").artefact_files()[0].read_bytes()


def _field_case(id: str, change: Any, needs: tuple[str, ...], test: str) -> Any:
    @case(id, "results fields type-checked on read", T + test, needs=needs)
    def _(tmp: Path) -> Any:
        good, bad = _run(tmp / "runs", "good", 0.8), _run(tmp / "runs", "bad", 0.7, label="b")
        data = json.loads((bad / "toy.json").read_text())
        change(data)
        (bad / "toy.json").write_text(json.dumps(data))
        return lambda: cli("compare", good / "toy.json", bad / "toy.json")


_field_case("results-flags-a-string", lambda d: d.update(flags="diverged"),
            ("toy.json", "flags: must be a list of texts"), "test_flags_as_string_refused_on_read")
_field_case("results-width-33-bits-float32",
            lambda d: d["scores"].update(footprint={"value": 8, "raw": {"precision": {
                "0.weight": {"bits": 33, "source": "declared", "dtype_bits": 32}}}}),
            ("toy.json", "33 bits is wider"), "test_declared_width_above_the_dtype_refused")
_field_case("results-score-value-a-list", lambda d: d["scores"].update(MSE={"value": [1, 2]}),
            ("toy.json", "scores.MSE.value"), "test_flags_as_string_refused_on_read")
