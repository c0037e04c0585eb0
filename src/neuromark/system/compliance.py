"""MLPerf Inference compliance (audit) tests on any SUT, through LoadGen's own audit hooks.

Re-implemented from the MLPerf compliance READMEs (mlcommons/inference ``compliance/TEST01``,
``compliance/TEST04``; the retired ``TEST05`` from the README it had) and LoadGen 6.0.17's
``TestSettings``; figures come from our parsed LoadGen summaries
(:func:`neuromark.system.loadgen_log.summarize`).

MLPerf Inference requires TEST01 and TEST04 (:data:`TESTS`, what ``compliance: true``
runs). TEST05 was retired in November 2024 (mlcommons/inference commit "Removed TEST05
compliance requirement"): it runs only when asked for by name, and its verdict says it is
retired (:data:`RETIRED`).

- **TEST01, accuracy verification in performance mode.** A performance-mode run logs a
  random subset of its responses (``accuracy_log_sampling_target``, seed
  ``accuracy_log_rng_seed``); each logged response must match the accuracy-mode response to
  the same sample, and the run's performance must be within 10 % of the submission's. A SUT
  whose outputs depend on query order (``sut.stateful`` names why) cannot pass it: TEST01 is
  then "NOT APPLICABLE" with that reason.
- **TEST04, caching detection.** The same sample (index ``performance_issue_same_index``)
  is issued for every query; the run must not be faster than the submission's by more than
  10 % (a SUT that memoises answers is).
- **TEST05, alternate seeds (retired by MLPerf, November 2024; on request only).**
  LoadGen's ``test05`` seeds replace the official ones; the performance may be at most 5 %
  worse than the submission's.

As the compliance scripts (``verify_performance.py`` of each test) do, the figure compared
is LoadGen's early-stopping latency estimate (p90 SingleStream, p99 MultiStream) or the
samples/s (Offline, Server), and every tolerance widens to 20 % for SingleStream latencies
of at most 0.2 ms and MultiStream ones of at most 1.6 ms. One departure: for latency
scenarios the TEST04 script passes any run that is *not slower* than 1.1x the reference,
which a caching SUT always is; we apply the TEST04 README's criterion ("at most 10 %
faster") to every scenario.

The verdict functions (:func:`verdict_test01`, :func:`verdict_test04`, :func:`verdict_test05`)
are pure functions of figures; :func:`run_compliance` runs the tests asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import DataError
from neuromark.system.loadgen import LoadGenRun, LoadGenSettings, run_test
from neuromark.system.loadgen_log import ACCURACY, read_accuracy_log

#: The compliance tests MLPerf Inference requires today (``compliance: true``).
TESTS = ("TEST01", "TEST04")
#: Tests MLPerf no longer requires, with why: run only when named.
RETIRED = {"TEST05": "retired by MLPerf in November 2024 (mlcommons/inference commit "
                     "\"Removed TEST05 compliance requirement\"); run on request only"}
#: Every test neuromark can run.
KNOWN_TESTS = TESTS + tuple(RETIRED)
PASS, FAIL, NOT_APPLICABLE = "PASS", "FAIL", "NOT APPLICABLE"

#: TEST01's audit.config values (MLPerf compliance/TEST01/*/audit.config).
TEST01_LOG_RNG_SEED = 720381539243781796
TEST01_SAMPLING_TARGET = 64
#: Performance tolerances of the compliance scripts' ``verify_performance.py``: TEST01 within
#: +-10 % of the submission, TEST04 at most 10 % faster, TEST05 at most 5 % worse.
TEST01_PERF_TOLERANCE = 0.10
TEST04_SAME_INDEX = 3  # the repeated sample index (TEST04 audit.config)
TEST04_TOLERANCE = 0.10
TEST05_SEEDS = {"test05_qsl_rng_seed": 7975553102935885558,  # LoadGen 6.0.17 mlperf.conf
                "test05_sample_index_rng_seed": 11403566307062068064,
                "test05_schedule_rng_seed": 15816800565822761601}
TEST05_TOLERANCE = 0.05
#: All three relax their tolerance to 20 % for short latencies, where OS noise dominates:
#: SingleStream references of at most 0.2 ms and MultiStream references of at most 1.6 ms.
RELAXED_TOLERANCE = 0.20
RELAXED_BELOW_S = {"SingleStream": 0.2e-3, "MultiStream": 1.6e-3}


def figure_of_merit(summary: dict[str, Any]) -> tuple[float, str, str]:
    """``(value, kind, name)`` of a performance run's MLPerf figure, as the compliance
    scripts read it: LoadGen's early-stopping estimate of the target-percentile latency (s;
    kind "latency"; p90 SingleStream, p99 MultiStream; the plain percentile for logs
    without the estimate), samples/s (kind "throughput") for Server and Offline. Raises
    :class:`DataError` when it is missing."""
    scenario = summary.get("scenario")
    if scenario in ("SingleStream", "MultiStream"):
        pct = "90" if scenario == "SingleStream" else "99"
        value = summary.get("early_stopping_latency_s")
        name = f"early-stopping p{pct} latency estimate (s)"
        if value is None:
            value = summary.get("latency_s", {}).get("percentiles_s", {}).get(pct)
            name = f"p{pct} latency (s)"
        kind = "latency"
    else:
        value = summary.get("samples_per_second")
        kind, name = "throughput", "samples/s"
    if value is None or not value > 0:
        raise DataError(f"LoadGen summary of a {scenario} run has no {name}: is it a "
                        "performance-mode run?")
    return float(value), kind, name


def speedup(reference: float, test: float, kind: str) -> float:
    """How much faster the test run is than the reference (> 1: faster)."""
    return reference / test if kind == "latency" else test / reference


def tolerance(base: float, reference: float, kind: str, scenario: str | None) -> float:
    """``base``, or 20 % for a SingleStream reference latency <= 0.2 ms or a MultiStream one
    <= 1.6 ms."""
    short = kind == "latency" and reference <= RELAXED_BELOW_S.get(str(scenario), -1.0)
    return RELAXED_TOLERANCE if short else base


def verdict_test01(perf_responses: dict[int, np.ndarray], acc_responses: dict[int, np.ndarray],
                   reference: float, test: float, kind: str, scenario: str | None = None, *,
                   rtol: float = 1e-5, atol: float = 1e-6) -> dict[str, Any]:
    """TEST01 from the sampled performance-mode responses and the accuracy-mode ones
    (sample index -> array) and the two runs' figures of merit: every logged response
    matches, and the figure is within +-10 % (+-20 % for short latencies) of the reference."""
    compared = sorted(set(perf_responses) & set(acc_responses))
    mismatched = [i for i in compared
                  if perf_responses[i].shape != acc_responses[i].shape
                  or not np.allclose(perf_responses[i], acc_responses[i], rtol=rtol, atol=atol)]
    ratio = test / reference
    tol = tolerance(TEST01_PERF_TOLERANCE, reference, kind, scenario)
    accuracy_ok = bool(compared) and not mismatched
    perf_ok = abs(ratio - 1.0) < tol
    reasons = []
    if not compared:
        reasons.append("no performance-mode response was logged for a sample of the accuracy run")
    if mismatched:
        reasons.append(f"{len(mismatched)} of {len(compared)} logged responses differ from accuracy "
                       f"mode (samples {mismatched[:5]})")
    if not perf_ok:
        reasons.append(f"performance {ratio:.3f}x the submission's, outside +-{tol:.0%}")
    return {"verdict": PASS if accuracy_ok and perf_ok else FAIL, "reason": "; ".join(reasons),
            "figures": {"responses_compared": len(compared), "responses_mismatched": len(mismatched),
                        "logged": len(perf_responses), "reference": reference, "test": test,
                        "ratio": ratio, "tolerance": tol, "accuracy_check": accuracy_ok,
                        "performance_check": perf_ok}}


def verdict_test04(reference: float, test: float, kind: str, scenario: str | None = None
                   ) -> dict[str, Any]:
    """TEST04: the same-sample run may be at most 10 % (20 % for short latencies) faster
    than the submission run (TEST04 README's pass criterion)."""
    up = speedup(reference, test, kind)
    limit = 1.0 + tolerance(TEST04_TOLERANCE, reference, kind, scenario)
    ok = up < limit
    reason = "" if ok else (f"issuing the same sample is {up:.2f}x faster than unique samples "
                            f"(limit {limit:.2f}x): the SUT caches results")
    return {"verdict": PASS if ok else FAIL, "reason": reason,
            "figures": {"reference": reference, "test": test, "speedup": up, "limit": limit}}


def verdict_test05(reference: float, test: float, kind: str, scenario: str) -> dict[str, Any]:
    """TEST05: with the alternate seeds the performance may be at most 5 % (20 % for short
    latencies) worse than the submission's; better is no failure (as TEST05's script)."""
    tol = tolerance(TEST05_TOLERANCE, reference, kind, scenario)
    worse = 1.0 / speedup(reference, test, kind) - 1.0  # > 0: the alternate seeds do worse
    ok = worse < tol
    reason = "" if ok else (f"performance with the alternate seeds is {worse:.1%} worse than "
                            f"the submission's (tolerance {tol:.0%})")
    return {"verdict": PASS if ok else FAIL, "reason": reason,
            "figures": {"reference": reference, "test": test, "worse_by": worse,
                        "tolerance": tol}}


def _validity(run: LoadGenRun, verdict: dict[str, Any]) -> dict[str, Any]:
    """An INVALID audit run fails its test, naming LoadGen's reasons."""
    verdict["figures"]["validity"] = run.summary.get("validity")
    if run.summary.get("validity") == "INVALID":
        why = "; ".join(run.summary.get("invalid_reasons", [])) or "no reason logged"
        verdict["verdict"] = FAIL
        verdict["reason"] = "; ".join(filter(None, [verdict["reason"], f"audit run INVALID: {why}"]))
    verdict["log_dir"] = str(run.log_dir)
    return verdict


def run_compliance(sut: Any, library: Any, settings: LoadGenSettings, reference: LoadGenRun,
                   accuracy_run: LoadGenRun | None, out_dir: str | Path,
                   tests: tuple[str, ...] = TESTS) -> dict[str, dict[str, Any]]:
    """Run ``tests`` against the submission's performance run ``reference`` and accuracy
    run; each test's LoadGen logs go to ``out_dir/<TEST>``. Returns test -> verdict dict
    (``verdict``, ``reason``, ``figures``, ``log_dir``)."""
    out = Path(out_dir)
    ref, kind, name = figure_of_merit(reference.summary)
    scenario = str(reference.summary.get("scenario"))
    perf = settings.model_copy(update={"mode": "PerformanceOnly"})
    verdicts: dict[str, dict[str, Any]] = {}
    for test in tests:
        if test == "TEST01":
            stateful = getattr(sut, "stateful", None)
            if stateful:
                verdicts[test] = {"verdict": NOT_APPLICABLE, "figures": {},
                                  "reason": f"stateful SUT: {stateful}"}
                continue
            if accuracy_run is None:
                raise DataError("TEST01 needs the accuracy-mode run of the submission")
            run = run_test(sut, library, perf, out / test, overrides={
                "accuracy_log_rng_seed": TEST01_LOG_RNG_SEED,
                "accuracy_log_sampling_target": TEST01_SAMPLING_TARGET})
            logged = read_accuracy_log(run.log_dir / ACCURACY, run.response_dtype)
            expected = read_accuracy_log(accuracy_run.log_dir / ACCURACY, accuracy_run.response_dtype)
            verdict = verdict_test01(logged, expected, ref, figure_of_merit(run.summary)[0], kind,
                                     scenario)
        elif test == "TEST04":
            run = run_test(sut, library, perf, out / test, overrides={
                "performance_issue_same": True,
                "performance_issue_same_index": min(TEST04_SAME_INDEX, library.total_count - 1)})
            verdict = verdict_test04(ref, figure_of_merit(run.summary)[0], kind, scenario)
        elif test == "TEST05":
            run = run_test(sut, library, perf, out / test, overrides={"test05": True, **TEST05_SEEDS})
            verdict = verdict_test05(ref, figure_of_merit(run.summary)[0], kind, scenario)
        else:
            raise DataError(f"unknown compliance test {test!r}; known: {', '.join(KNOWN_TESTS)}")
        verdict["figures"]["figure_of_merit"] = name
        if test in RETIRED:
            verdict["retired"] = RETIRED[test]
        verdicts[test] = _validity(run, verdict)
    return verdicts


def format_verdicts(verdicts: dict[str, dict[str, Any]]) -> list[str]:
    """One line per test: ``TEST04 FAIL: reason (figures)``."""
    lines = []
    for test, v in verdicts.items():
        figs = ", ".join(f"{k} {x:.4g}" if isinstance(x, float) else f"{k} {x}"
                         for k, x in v.get("figures", {}).items())
        name = f"{test} (retired)" if v.get("retired") else test
        lines.append(f"{name} {v['verdict']}" + (f": {v['reason']}" if v.get("reason") else "")
                     + (f" ({figs})" if figs else ""))
    return lines
