#!/usr/bin/env python3
"""Generate (or check) the shipped Mackey-Glass series and their Lyapunov-time table.

The Mackey-Glass delay differential equation (Mackey & Glass 1977, Science 197:287)::

    dx/dt = beta * x(t - tau) / (1 + x(t - tau)**n) - gamma * x(t),  n=10, beta=0.2, gamma=0.1

is integrated with jitcdde (Ansmann 2018, Chaos 28:043116, https://jitcdde.readthedocs.io)
for tau = 17..30, as in the NeuroBench chaotic-function-prediction task (Yik et al. 2025,
Nature Communications 16:1545, Methods).

For each tau:

1. The largest Lyapunov exponent is estimated with ``jitcdde_lyap`` from several constant
   initial pasts drawn from a seeded generator (the separation function is seeded too, so the
   estimate is deterministic): the local exponents of each ``integrate`` step are averaged,
   weighted by the integration time, after a discarded transient (jitcdde docs, "Lyapunov
   exponents" example). The Lyapunov time is L = 1 / mean exponent. Where the mean
   exponent is not positive by 3 standard errors (a periodic window, e.g. tau = 19), L is
   undefined and the geometric mean of the nearest chaotic neighbours' L is used instead
   (column ``lyapunov_time_source`` = "interpolated").
2. One series is integrated from its own constant initial past; after a transient it is
   sampled at dt = L / 75 for 50 L (3750 points) and saved as ``mackey_glass_tau<tau>.npy``.

The C code is compiled with portable flags (no ``-march=native`` / ``-Ofast``, which jitcdde
uses by default) so that the same machine type reproduces the files bit for bit.

Usage::

    python scripts/generate_mackey_glass.py            # regenerate in a temp dir, compare hashes
    python scripts/generate_mackey_glass.py --write    # overwrite the shipped files + SHA256SUMS
    python scripts/generate_mackey_glass.py --taus 17 --out /tmp/mg

Exit status: 0 when every regenerated file matches ``SHA256SUMS``, 1 when any differs.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).resolve().parents[1] / "src/neuromark/benchmarks/mackey_glass/files/mackey_glass"
TAUS = tuple(range(17, 31))
N_EXP, BETA, GAMMA = 10, 0.2, 0.1
POINTS_PER_LYAPUNOV_TIME = 75
SERIES_LYAPUNOV_TIMES = 50
N_INITIAL_CONDITIONS = 8
LYAP_DURATION = 50_000.0  # time units of integration per initial condition
LYAP_TRANSIENT = 2_000.0  # time units discarded before averaging
LYAP_SAMPLING = 10.0  # orthonormalisation interval (time units)
LYAP_MAX_STEP = 1.0
SERIES_TRANSIENT = 2_000.0  # time units discarded before the series starts
ATOL, RTOL = 1e-10, 1e-8
COMPILE_ARGS = ["-std=c11", "-O2", "-fno-fast-math", "-ffp-contract=off", "-g0",
                "-Wno-unknown-pragmas"]
SEED = 20240101  # base seed; tau is mixed in

TABLE_COLUMNS = ("tau", "lyapunov_exponent", "lyapunov_exponent_std", "lyapunov_time",
                 "lyapunov_time_std", "lyapunov_time_source", "n_initial_conditions",
                 "lyapunov_initial_conditions", "series_initial_condition",
                 "series_transient", "dt", "n_points", "file")


def _equation(tau: float):
    from jitcdde import t, y

    return [BETA * y(0, t - tau) / (1 + y(0, t - tau) ** N_EXP) - GAMMA * y(0)]


def estimate_lyapunov(tau: int, rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """Largest Lyapunov exponent (1/time unit) from N_INITIAL_CONDITIONS constant pasts.

    Returns (initial conditions, exponents), one per initial condition.
    """
    from jitcdde import jitcdde_lyap

    dde = jitcdde_lyap(_equation(tau), n_lyap=1, verbose=False)
    dde.compile_C(extra_compile_args=COMPILE_ARGS, verbose=False)
    dde.set_integration_parameters(atol=ATOL, rtol=RTOL, max_step=LYAP_MAX_STEP)
    ics, exps = [], []
    for _ in range(N_INITIAL_CONDITIONS):
        x0 = float(rng.uniform(0.5, 1.5))
        direction = float(rng.choice([-1.0, 1.0]))
        dde.purge_past()
        dde.constant_past(np.array([x0, direction]), time=0.0)  # state + separation function
        dde.step_on_discontinuities(max_step=LYAP_MAX_STEP)
        start = dde.t
        local, weights = [], []
        for target in np.arange(start + LYAP_SAMPLING, start + LYAP_DURATION, LYAP_SAMPLING):
            _, lyap, weight = dde.integrate(target)
            if target - start > LYAP_TRANSIENT:
                local.append(lyap[0])
                weights.append(weight)
        ics.append(x0)
        exps.append(float(np.average(local, weights=weights)))
    return ics, exps


def integrate_series(tau: int, lyapunov_time: float, x0: float) -> np.ndarray:
    """The series: 50 L sampled at L/75 after SERIES_TRANSIENT; float64, shape (3750,)."""
    from jitcdde import jitcdde

    dde = jitcdde(_equation(tau), verbose=False)
    dde.compile_C(extra_compile_args=COMPILE_ARGS, verbose=False)
    dde.set_integration_parameters(atol=ATOL, rtol=RTOL)
    dde.constant_past([x0], time=0.0)
    dde.step_on_discontinuities()
    dt = lyapunov_time / POINTS_PER_LYAPUNOV_TIME
    n_points = SERIES_LYAPUNOV_TIMES * POINTS_PER_LYAPUNOV_TIME
    times = dde.t + SERIES_TRANSIENT + dt * np.arange(n_points)
    return np.array([dde.integrate(t)[0] for t in times], dtype=np.float64)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lyapunov_times(exponents: dict[int, list[float]]) -> dict[int, tuple[float, str]]:
    """L per tau and its source: "estimate" (1 / mean exponent) when the mean exponent is
    positive by more than 3 standard errors, else "interpolated": the geometric mean of the
    nearest chaotic neighbours' L (the attractor is periodic there, e.g. tau = 19, so L is
    undefined; the sampling still needs a time scale)."""
    chaotic = {tau: 1.0 / float(np.mean(e)) for tau, e in exponents.items()
               if np.mean(e) > 3 * np.std(e, ddof=1) / np.sqrt(len(e))}
    if not chaotic:
        raise RuntimeError(f"no chaotic tau among {sorted(exponents)}: a periodic tau takes its L "
                           f"from chaotic neighbours, so include them (e.g. --taus 18 19 20)")
    out = {}
    for tau in exponents:
        if tau in chaotic:
            out[tau] = (chaotic[tau], "estimate")
            continue
        lower = [t for t in chaotic if t < tau]
        upper = [t for t in chaotic if t > tau]
        near = ([max(lower)] if lower else []) + ([min(upper)] if upper else [])
        out[tau] = (float(np.exp(np.mean([np.log(chaotic[t]) for t in near]))), "interpolated")
    return out


def generate(taus: tuple[int, ...], out: Path) -> list[dict[str, object]]:
    """Write the series and lyapunov.csv under ``out``; returns the table rows."""
    out.mkdir(parents=True, exist_ok=True)
    rngs = {tau: np.random.default_rng([SEED, tau]) for tau in taus}
    ics, exps = {}, {}
    for tau in taus:
        start = time.perf_counter()
        ics[tau], exps[tau] = estimate_lyapunov(tau, rngs[tau])
        print(f"tau={tau}: largest Lyapunov exponent {np.mean(exps[tau]):.6f} "
              f"+- {np.std(exps[tau], ddof=1):.6f} ({time.perf_counter() - start:.1f} s)", flush=True)
    times = lyapunov_times(exps)
    rows = []
    for tau in taus:
        lyapunov_time, source = times[tau]
        x0 = float(rngs[tau].uniform(0.5, 1.5))
        series = integrate_series(tau, lyapunov_time, x0)
        name = f"mackey_glass_tau{tau}.npy"
        np.save(out / name, series)
        exponent = float(np.mean(exps[tau]))
        rows.append({
            "tau": tau, "lyapunov_exponent": exponent,
            "lyapunov_exponent_std": float(np.std(exps[tau], ddof=1)),
            "lyapunov_time": lyapunov_time,
            "lyapunov_time_std": (float(np.std(1.0 / np.asarray(exps[tau]), ddof=1))
                                  if source == "estimate" else float("nan")),
            "lyapunov_time_source": source,
            "n_initial_conditions": len(ics[tau]),
            "lyapunov_initial_conditions": ";".join(repr(v) for v in ics[tau]),
            "series_initial_condition": x0, "series_transient": SERIES_TRANSIENT,
            "dt": lyapunov_time / POINTS_PER_LYAPUNOV_TIME, "n_points": len(series),
            "file": name,
        })
        print(f"tau={tau}: L = {lyapunov_time:.2f} ({source}), series written", flush=True)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    (out / "lyapunov.csv").write_text(buffer.getvalue())
    return rows


def read_sums(path: Path) -> dict[str, str]:
    """Parse a ``sha256sum``-format file: ``<hex>  <name>`` per line."""
    sums = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.lstrip("*")] = digest
    return sums


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taus", type=int, nargs="+", default=list(TAUS))
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: temp dir)")
    parser.add_argument("--write", action="store_true",
                        help=f"write into the shipped folder {SHIPPED} and rewrite SHA256SUMS")
    args = parser.parse_args(argv)
    try:
        import jitcdde  # noqa: F401
    except ImportError:
        print("jitcdde is not installed: pip install 'neuromark[mackey_glass]' "
              "(the shipped data files need no regeneration to be used)", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", module="jitcdde")
    warnings.filterwarnings("ignore", category=UserWarning)
    if args.write:
        out = SHIPPED
    else:
        out = args.out or Path(tempfile.mkdtemp(prefix="mackey_glass_"))
    taus = tuple(args.taus)
    if args.write and taus != TAUS:
        parser.error("--write regenerates every tau; do not combine it with --taus")
    generate(taus, out)
    names = [f"mackey_glass_tau{tau}.npy" for tau in taus] + ["lyapunov.csv"]
    if args.write:
        lines = [f"{sha256(out / n)}  {n}" for n in sorted(names)]
        (out / "SHA256SUMS").write_text("\n".join(lines) + "\n")
        print(f"wrote {len(names)} files and SHA256SUMS to {out}")
        return 0
    expected = read_sums(SHIPPED / "SHA256SUMS")
    differ, compared = [], 0
    for name in names:
        got = sha256(out / name)
        if name == "lyapunov.csv" and taus != TAUS:
            continue  # a partial table cannot match the shipped one
        compared += 1
        status = "match" if expected.get(name) == got else "DIFFERS"
        if status != "match":
            differ.append(name)
        print(f"{status:8s} {name}  {got}")
    if differ:
        print(f"\nREGENERATED FILES DIFFER from the shipped SHA256SUMS on this platform: "
              f"{', '.join(differ)}.\nThe shipped files in {SHIPPED} remain the reference data; "
              f"the regenerated ones are in {out}.", file=sys.stderr)
        return 1
    print(f"\nall {compared} regenerated files match the shipped SHA256SUMS (output in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
