"""The chip SUTs through ``neuromark system run`` and ``neuromark check`` (issue 44): the
shipped configs shrunk to tiny models and few samples, each a VALID run with the SDK named,
the mapping, the mapped accuracy beside the float one and energy "not measured"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from neuromark.cli import main

pytest.importorskip("mlperf_loadgen")
CONFIGS = Path(__file__).resolve().parents[1] / "configs/system"
SHRINK = {
    "akida_spoken_digits_singlestream": ("akida", dict(hidden=16, groups=10, time_bins=2, epochs=40,
                                                       train_samples=120, samples=24)),
    "xylo_spoken_digits_singlestream": ("rockpool", dict(hidden=16, classes=4, dt_us=20_000, epochs=60,
                                                         train_samples=120, samples=60)),
}


@pytest.mark.parametrize("name", sorted(SHRINK))
def test_shipped_chip_config_runs_valid_and_checks(name, tmp_path, capsys):
    sdk, options = SHRINK[name]
    pytest.importorskip(sdk, reason=f"the {sdk} SDK is absent (docs/chips.md: installing)")
    if sdk == "rockpool":
        pytest.importorskip("xylosim", reason="xylosim is absent: bash scripts/chip_sdks.sh builds it")
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    config["sut"]["options"].update(options)
    config["loadgen"].update(min_query_count=64, min_duration_s=0)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert main(["system", "run", str(path), "--out", str(out)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    [result] = [json.loads(p.read_text()) for p in out.glob("*.json") if p.name != "submission.json"]
    sut = result["details"]["sut"]
    assert sut["sdk"]["name"] in ("akida", "rockpool") and sut["sdk"]["version"]
    assert sut["mapping"] and sut["target"]["kind"] in ("virtual", "simulator")
    scores = result["scores"]
    assert 0 <= scores["classification_accuracy"]["value"] <= 1
    assert scores["float_accuracy"]["value"] == pytest.approx(sut["float_accuracy"])
    assert scores["energy_per_inference"]["value"] == "not measured"
    assert "energy not measured: " in printed and ": VALID" in printed
    assert main(["check", str(out)]) == 0, capsys.readouterr().out
