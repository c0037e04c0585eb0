"""CLI verbs: list, validate, errors with exit codes."""

from __future__ import annotations

import subprocess
import sys

from neuromark.cli import main


def test_list_shows_registries(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "metrics:" in out and "synaptic_operations" in out


def test_validate_unknown_task(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: mackey_glas\n")
    assert main(["validate", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "c.yaml:1" in err and "did you mean 'mackey_glass'" in err


def test_missing_config_file(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 1
    assert "config file not found" in capsys.readouterr().err


def test_import_is_light():
    code = ("import sys, neuromark; bad = [m for m in ('torch', 'snntorch', 'tonic', "
            "'mlperf_loadgen', 'dimod', 'numba') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_default_suite_validates(capsys):
    from neuromark.suite import default_suite_path

    assert main(["validate", str(default_suite_path())]) == 0
    out = capsys.readouterr().out
    assert out.count("ok: ") >= 4


def test_suite_with_missing_entry_names_the_line(tmp_path, capsys):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: mine\nentries:\n  - nope.yaml\n")
    assert main(["validate", str(suite)]) == 1
    err = capsys.readouterr().err
    assert "s.yaml:3: entries[0]: no such config" in err


def test_python_dash_m_equals_the_command():
    """``python -m neuromark`` is the ``neuromark`` command: same listing, same exit codes."""
    listing = subprocess.run([sys.executable, "-m", "neuromark", "list"], capture_output=True,
                             text=True, check=True).stdout
    for section in ("tasks:", "datasets:", "models:", "suts:", "meters:", "solvers:"):
        assert section in listing
    from neuromark.registry import tasks

    # every registered task, sorted, each with the family that declared it
    assert ", ".join(f"{t} ({tasks.family_of(t)})" for t in tasks.names()) in listing
    assert "qubo (qubo)" in listing and "classification (neuromark)" in listing
    bad = subprocess.run([sys.executable, "-m", "neuromark", "run", "no-such.yaml"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "config file not found: no-such.yaml" in bad.stderr
