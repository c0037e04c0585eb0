"""Why the version-2.0 PSTH control scored like the truth: per session of
``configs/primate_reaching/psth_ceiled_short.yaml`` (surrogate), the share of the generating
PSTH's variance that depends on the direction (the sectors' deviation from their common time
course), and the median cross-validated r (the task's ridge mapping) of the generating rates,
the lagged-linear units, those units with the sectors rolled (2.0's ``sector_deranged``, a
rotation of directions), with the sectors permuted (not a rotation) and averaged over the
sectors (2.1's ``sector_averaged``); and the ceiling's split-half reliability of the
noiseless generating rates (1 if reaches of one sector repeated exactly). No controller (the
task's slow part) is trained.

Run: ``python bench/psth_controls.py [--data DIR]`` (DIR: where the surrogate is written;
default a temporary folder).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from neuromark.benchmarks.primate_reaching.encoders import kinematic_features
from neuromark.benchmarks.primate_reaching.entry import PRIMATE_REACHING
from neuromark.benchmarks.primate_reaching.psth import align, select_reaches
from neuromark.benchmarks.primate_reaching.psth_task import SECTORS, PSTHConfig, cv_predictivity
from neuromark.benchmarks.primate_reaching.reader import bin_session, reach_segments, read_session
from neuromark.ceilings import internal_consistency
from neuromark.config import load_config, validate

CONFIG = Path(__file__).resolve().parents[1] / "configs/primate_reaching/psth_ceiled_short.yaml"


def session_figures(cfg: PSTHConfig, root: Path, session: str) -> dict[str, float]:
    ps = cfg.psth
    rec = read_session(root / f"{session}.mat", "error")
    reaches = select_reaches(rec.target, reach_segments(rec.target), bins=ps.bins,
                             bin_steps=ps.bin_steps, max_reach_s=ps.max_reach_s, seed=ps.seed)
    kw = {"bins": ps.bins, "bin_steps": ps.bin_steps}
    neural = align(bin_session(rec).astype(np.float32), reaches, offset=2, **kw)
    per = internal_consistency(neural, n_splits=cfg.ceiling.n_splits,
                               seed=cfg.ceiling.seed).raw["per_neuroid"]
    keep = ~np.isnan(per).any(0) & (np.nan_to_num(per.mean(0), nan=-1) >= cfg.ceiling.min_reliability)
    neural = neural[..., keep]
    m = neural.shape[0]
    prob = PRIMATE_REACHING.generating_occupancy(root, session, rec.cursor, len(rec.t))[:, keep]
    gen = align(prob, reaches, offset=0, **kw)
    kin = align(kinematic_features(rec.cursor), reaches, offset=0, **kw)
    mean = gen.mean(0).reshape(SECTORS, ps.bins, -1)
    total = ((mean - mean.mean((0, 1), keepdims=True)) ** 2).sum((0, 1))
    direction = ((mean - mean.mean(0, keepdims=True)) ** 2).sum((0, 1))
    by_sector = kin.reshape(m, SECTORS, ps.bins, -1)
    units = {
        "generating_rates": gen, "lagged_linear": kin,
        "sectors_rolled (2.0)": np.roll(by_sector, 3, axis=1).reshape(kin.shape),
        "sectors_permuted": by_sector[:, [2, 0, 1, 4, 3, 7, 5, 6]].reshape(kin.shape),
        "sector_averaged (2.1)": np.broadcast_to(by_sector.mean(1, keepdims=True),
                                                 by_sector.shape).reshape(kin.shape),
    }
    out = {"direction share of PSTH variance": float(np.median(direction / total))}
    # the ceiling's split-half rule applied to the noiseless rates: below 1 because reaches of
    # one sector differ in their kinematics, which the ceiling counts as noise although a
    # candidate that sees each reach's kinematics predicts it (why r²/c exceeds 1)
    noiseless = internal_consistency(gen.astype(np.float32), n_splits=cfg.ceiling.n_splits,
                                     seed=cfg.ceiling.seed).raw["per_neuroid"]
    out["split-half ceiling of the noiseless rates"] = float(np.nanmedian(noiseless.mean(0)))
    for name, u in units.items():
        out[name] = float(np.nanmedian(cv_predictivity(u, neural, cfg.mapping.folds,
                                                       cfg.mapping.alpha, cfg.mapping.hold_out)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()
    config = load_config(CONFIG)
    cfg = validate(PSTHConfig, config.data, config)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data or Path(tmp)
        PRIMATE_REACHING.synthesize(root, **cfg.data.surrogate.model_dump(),
                                    sessions=cfg.data.sessions)
        for session in cfg.data.sessions:
            print(session)
            for name, value in session_figures(cfg, root, session).items():
                print(f"  {name:36s} {value:.3f}")


if __name__ == "__main__":
    main()
