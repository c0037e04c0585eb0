"""Ten runs in a row of every shipped system config and of the default suite's system
entry: how many LoadGen found VALID and how many submissions ``neuromark check`` passed.

Each run is ``neuromark system run CONFIG --out <tmp>/<stem>/<i> --allow-invalid`` (its own
submission folder), then ``neuromark check`` on it. Configs whose data is not on this
machine (``asc_tau2020_singlestream.yaml`` needs the TAU 2020 download) are listed as
skipped with the reason. Not a test: the verdicts depend on the machine and its load.

Run: ``python bench/system_valid.py [--runs 10] [--only esn_mackey_glass_singlestream]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import yaml

from neuromark.cli import main
from neuromark.system.checker import check_submission

ROOT = Path(__file__).resolve().parents[1]
#: Configs that need data this machine does not hold, and why.
NEEDS_DATA = {"asc_tau2020_singlestream": "needs the TAU Urban Acoustic Scenes 2020 download"}


def default_suite_entries() -> list[Path]:
    suite = ROOT / "configs/suite/default.yaml"
    entries = yaml.safe_load(suite.read_text())["entries"]
    out = []
    for entry in entries:
        path = (suite.parent / entry).resolve()
        if yaml.safe_load(path.read_text()).get("task") == "system":
            out.append(path)
    return out


def one(config: Path, out: Path) -> tuple[str, str, list[str], float]:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["system", "run", str(config), "--out", str(out), "--quiet", "--allow-invalid"])
    wall = time.perf_counter() - start
    assert code == 0, f"{config}: exit {code}"
    result = next(p for p in out.glob("*.json") if p.name != "submission.json")
    perf = json.loads(result.read_text())["details"]["loadgen"]["PerformanceOnly"]
    _, findings = check_submission(out)
    return perf["validity"], "; ".join(perf["invalid_reasons"]), [str(f) for f in findings], wall


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", nargs="*", default=None, help="config stems to run")
    args = parser.parse_args()
    suite = default_suite_entries()
    # every shipped config of the system task: the kernel's (configs/system/) and the families'
    configs = sorted(p for p in (ROOT / "configs").rglob("*.yaml")
                     if "suite" not in p.parts and "\ntask: system" in "\n" + p.read_text())
    print(f"default suite's system entries: {', '.join(p.name for p in suite)}")
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            if args.only and config.stem not in args.only:
                continue
            if config.stem in NEEDS_DATA:
                print(f"{config.name}: skipped ({NEEDS_DATA[config.stem]})")
                continue
            valid = passed = 0
            walls, problems = [], []
            for i in range(args.runs):
                verdict, reasons, findings, wall = one(config, Path(tmp) / config.stem / str(i))
                valid += verdict == "VALID"
                passed += not findings
                walls.append(wall)
                if verdict != "VALID":
                    problems.append(f"run {i + 1}: {verdict}: {reasons}")
                problems += [f"run {i + 1}: check: {f}" for f in findings]
            tag = " (default suite)" if config in suite else ""
            print(f"{config.name}{tag}: VALID {valid}/{args.runs}, check passed {passed}/{args.runs}, "
                  f"{sum(walls) / len(walls):.1f} s per run", flush=True)
            for line in problems[:6]:
                print(f"  {line}")


if __name__ == "__main__":
    main_()
