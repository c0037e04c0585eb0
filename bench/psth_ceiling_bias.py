"""Why the ceiled PSTH score of the generating rates exceeded 1 (versions <= 2.1), measured on
the surrogate of ``configs/primate_reaching/psth_ceiled_short.yaml``, where the true
occupancy probabilities are known.

The reaches (and so the generating probabilities per reach and 4-ms sample) are those the task
selects; realization 0 is the written data set, realizations 1.. draw fresh Bernoulli occupancy
from the same probabilities (the generator's own noise model: a 4-ms sample holds a spike with
probability ``1 - exp(-rate dt)``). Per realization, the ratio ``median r² / c`` of the
generating rates (``c`` = the task's split-half ceiling: per split the median over the kept
channels, mean over splits) for each candidate cause, everything else as the task does it:

- ``mapping: reaches (2.1)``: the ridge fitted per fold over reaches (versions <= 2.1); the
  units are the kept channels' generating probabilities, as in the task.
- ``mapping: sectors (2.2)``: the ridge fitted on the other sectors (version 2.2).
- ``no mapping``: the generating PSTH itself (mean over the selected reaches) correlated with
  the observed PSTH (what any mapping can at best give back).
- ``no mapping, channels selected on the truth``: channels kept by their analytic
  reliability instead of the noisy split-half estimate (selection bias).
- ``no mapping, median of per-channel ratios``: ``median(r_i² / c_i)`` instead of the
  ratio of the medians (pooling, Jensen bias of dividing by a noisy per-channel ceiling).
- ``ceiling / analytic reliability``: the split-half estimate over the reliability implied
  by the generating rates (:func:`~neuromark.benchmarks.primate_reaching.psth_task.generating_reliability`,
  reach-to-reach variability counted as noise).
- ``oracle reliability / analytic``: the expected r² of the generating PSTH of the selected
  reaches (only the Bernoulli noise left) over the analytic reliability: how much a candidate
  that sees each reach's kinematics gains over a model of the condition (the reach term).

Also the other seeds of the per-sector subset (``psth.seed``) on the written data (no mapping
and version 2.2's mapping). No controller is trained.

Run: ``python bench/psth_ceiling_bias.py [--data DIR] [--realizations N]`` (DIR: where the
surrogate is written; default a temporary folder). Prints mean ± SE over the realizations.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.primate_reaching.entry import PRIMATE_REACHING
from neuromark.benchmarks.primate_reaching.psth import SECTORS, align, select_reaches
from neuromark.benchmarks.primate_reaching.psth_task import (
    PSTHConfig,
    cv_predictivity,
    generating_reliability,
)
from neuromark.benchmarks.primate_reaching.reader import bin_session, reach_segments, read_session
from neuromark.ceilings import pearson_columns, split_half_reliability
from neuromark.config import load_config, validate

CONFIG = Path(__file__).resolve().parents[1] / "configs/primate_reaching/psth_ceiled_short.yaml"


def session_arrays(cfg: PSTHConfig, root: Path, session: str, seed: int) -> dict[str, Any]:
    """Observed aligned occupancy (m, P, C), generating probabilities per reach and 4-ms sample
    (m, P, bin_steps, C), and the analytic per-channel reliabilities."""
    ps = cfg.psth
    rec = read_session(root / f"{session}.mat", "error")
    reaches = select_reaches(rec.target, reach_segments(rec.target), bins=ps.bins,
                             bin_steps=ps.bin_steps, max_reach_s=ps.max_reach_s, seed=seed)
    kw = {"bins": ps.bins, "bin_steps": ps.bin_steps}
    neural = align(bin_session(rec).astype(np.float32), reaches, offset=2, **kw)
    prob = PRIMATE_REACHING.generating_occupancy(root, session, rec.cursor, len(rec.t))
    steps = np.arange(ps.bins * ps.bin_steps)
    index = np.stack([np.concatenate([reaches.onsets[s, r] + steps for s in range(SECTORS)])
                      for r in range(reaches.repetitions)])
    m = reaches.repetitions
    samples = prob[index].reshape(m, SECTORS * ps.bins, ps.bin_steps, -1)
    p_al = samples.mean(2)
    v_al = (samples * (1 - samples)).mean(2) / ps.bin_steps
    mean = p_al.mean(0)
    signal = mean.var(0)
    bernoulli = v_al.mean((0, 1)) / m
    return {"neural": neural.astype(np.float64), "samples": samples, "p_al": p_al,
            "analytic": generating_reliability(p_al, v_al), "oracle": signal / (signal + bernoulli)}


def _scatter(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``values`` of the kept channels back in place (NaN elsewhere)."""
    out = np.full(keep.shape, np.nan)
    out[keep] = values
    return out


def figures(data: list[dict[str, Any]], neural: list[np.ndarray], cfg: PSTHConfig,
            mappings: bool = True) -> dict[str, float]:
    """The ratios of the module docstring for one realization (``neural`` per session)."""
    cs = cfg.ceiling
    per = np.concatenate([split_half_reliability(n, n_splits=cs.n_splits, seed=cs.seed) for n in neural], 1)
    analytic = np.concatenate([d["analytic"] for d in data])
    oracle = np.concatenate([d["oracle"] for d in data])
    keep = per.mean(0) >= cs.min_reliability
    splits = np.cumsum([n.shape[2] for n in neural])[:-1]  # channel ranges of the sessions
    true_keep = analytic >= cs.min_reliability
    ceiling = np.median(per[:, keep], 1).mean()
    direct = np.concatenate([pearson_columns(d["p_al"].mean(0), n.mean(0)) for d, n in zip(data, neural)])
    out = {}
    if mappings:
        for label, hold_out, folds, alpha in (("mapping: reaches (2.1)", "reaches", 5, 0.01),
                                              ("mapping: sectors (2.2)", "sectors", cfg.mapping.folds,
                                               cfg.mapping.alpha)):
            r = np.concatenate([cv_predictivity(d["p_al"][..., k], n[..., k], folds, alpha, hold_out)
                                for d, n, k in zip(data, neural, np.split(keep, splits))])
            r = np.concatenate([np.full(len(k), np.nan) if not k.any() else _scatter(rk, k)
                                for rk, k in zip(np.split(r, np.cumsum([k.sum() for k in
                                                                         np.split(keep, splits)])[:-1]),
                                                 np.split(keep, splits))])
            out[label] = np.median(r[keep]) ** 2 / ceiling
    out["no mapping"] = np.median(direct[keep]) ** 2 / ceiling
    out["no mapping, channels selected on the truth"] = (
        np.median(direct[true_keep]) ** 2 / np.median(per[:, true_keep], 1).mean())
    out["no mapping, median of per-channel ratios"] = float(np.median(direct[keep] ** 2
                                                                      / per[:, keep].mean(0)))
    out["ceiling / analytic reliability"] = ceiling / np.median(analytic[keep])
    out["oracle reliability / analytic"] = np.median(oracle[keep]) / np.median(analytic[keep])
    out["channels kept (on the truth)"] = float(true_keep.sum())
    out["channels kept"] = float(keep.sum())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--realizations", type=int, default=8, help="noise draws (0 = the written data only)")
    parser.add_argument("--seeds", type=int, default=3, help="other per-sector subsets (psth.seed 1..N)")
    args = parser.parse_args()
    config = load_config(CONFIG)
    cfg = validate(PSTHConfig, config.data, config)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data or Path(tmp)
        PRIMATE_REACHING.synthesize(root, **cfg.data.surrogate.model_dump(), sessions=cfg.data.sessions)
        data = [session_arrays(cfg, root, s, cfg.psth.seed) for s in cfg.data.sessions]
        rng = np.random.default_rng(12345)
        rows = []
        for k in range(args.realizations + 1):
            neural = [d["neural"] if k == 0 else
                      (rng.random(d["samples"].shape) < d["samples"]).mean(2) for d in data]
            rows.append(figures(data, neural, cfg))
            if k == 0:
                print("written data (realization 0):")
                for key, value in rows[0].items():
                    print(f"  {key:46s} {value:.4f}")
        if args.realizations:
            print(f"fresh noise draws (realizations 1-{args.realizations}): mean ± SE (sd)")
            for key in rows[0]:
                v = np.array([row[key] for row in rows[1:]])
                se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
                print(f"  {key:46s} {v.mean():.4f} ± {se:.4f} ({v.std(ddof=1) if len(v) > 1 else 0:.4f})")
        for seed in range(1, args.seeds + 1):
            other = [session_arrays(cfg, root, s, seed) for s in cfg.data.sessions]
            f = figures(other, [d["neural"] for d in other], cfg)
            print(f"psth.seed {seed} (written data): " + ", ".join(
                f"{key} {f[key]:.4f}" for key in ("mapping: reaches (2.1)", "mapping: sectors (2.2)",
                                                  "no mapping")))


if __name__ == "__main__":
    main()
