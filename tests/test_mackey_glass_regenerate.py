"""Regenerating a shipped Mackey-Glass series with jitcdde reproduces its sha256 (slow)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "generate_mackey_glass.py"


@pytest.mark.slow
def test_regenerated_tau17_matches_the_shipped_hash(tmp_path, capsys):
    pytest.importorskip("jitcdde")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: jitcdde cannot compile")
    spec = importlib.util.spec_from_file_location("generate_mackey_glass", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    status = module.main(["--taus", "17", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "match    mackey_glass_tau17.npy" in out
    assert status == 0
