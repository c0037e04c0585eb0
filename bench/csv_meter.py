"""CSV power-trace meter accuracy (issue 5 target): a synthetic 1 kHz trace with known floor
and active levels must give floor, total and dynamic power within 0.1 %.

The trace: 30 s at 1 kHz, floor 1.25 W for t < 10 s, active 4.75 W for 10 <= t < 20 s, floor
again after, plus seeded Gaussian noise (1 % of the level). Window edges fall between
samples, so the edge interpolation is exercised. Also times the analysis of a 1-hour trace.

Run: ``python bench/csv_meter.py``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from neuromark.system.power.csv_trace import CsvTraceMeter
from neuromark.system.power.windows import Window, analyse

FLOOR_W, ACTIVE_W = 1.25, 4.75


def write(path: Path, seconds: float, seed: int = 0) -> Path:
    t = np.arange(0, seconds, 1e-3)
    level = np.where((t >= 10) & (t < 20), ACTIVE_W, FLOOR_W)
    p = level * (1 + 0.01 * np.random.default_rng(seed).standard_normal(t.size))
    np.savetxt(path, np.c_[t, p], delimiter=",", header="t_s,power_w", comments="", fmt="%.6f")
    return path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        meter = CsvTraceMeter(write(Path(tmp) / "trace.csv", 30.0), offset_s=0.0)
        res = analyse(meter, Window("floor", 1.0003, 8.9997), [Window("active", 11.0005, 18.9995)],
                      latency_s={"active": 0.002})
        floor = res["floor"]["mean_power_w"]
        act = res["active"]["active"]
        print("synthetic 1 kHz trace, 1 % noise: measured vs known")
        rows = (("floor power (W)", floor, FLOOR_W), ("total power (W)", act["total_power_w"], ACTIVE_W),
                ("dynamic power (W)", act["dynamic_power_w"], ACTIVE_W - FLOOR_W),
                ("total J/inference", act["total_energy_per_inference_j"], ACTIVE_W * 0.002),
                ("floor J/inference", act["floor_energy_per_inference_j"], FLOOR_W * 0.002))
        for name, got, want in rows:
            print(f"  {name:<22} {got:10.6f} vs {want:10.6f}   ratio {got / want:.5f}   "
                  f"error {abs(got / want - 1) * 100:.4f} %   (target <= 0.1 %)")

        hour = write(Path(tmp) / "hour.csv", 3600.0, seed=1)
        start = time.perf_counter()
        long_meter = CsvTraceMeter(hour, offset_s=0.0)
        analyse(long_meter, Window("floor", 1, 9), [Window("active", 11, 3599)])
        print(f"\n1-hour trace (3.6 M rows): load + analyse {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
