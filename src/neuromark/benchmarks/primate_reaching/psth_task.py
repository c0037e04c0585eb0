"""Reach-direction PSTH predictivity, ceiled (Brain-Score style) on the primate-reaching
sessions (research notes §6; CLARIFICATIONS 12).

Per session: reaches in 8 direction sectors, 0-600 ms after target onset in 20-ms bins
(:mod:`.psth`), the smallest count per sector with a seeded subset;
responses = per-channel threshold-crossing occupancy (hash unit included). Ceiling =
:func:`neuromark.ceilings.internal_consistency` over reaches (split halves within each
sector); channels with split-half r_SB < ``min_reliability`` are left out (counted).
Candidates (they never see neural data): ``controller`` (a task-driven GRU from target and
cursor position to cursor velocity), ``lagged_linear`` (cosine-tuning kinematic encoding),
``sector_averaged`` (lagged-linear units averaged over the 8 sectors per bin: direction-blind,
the time course kept), ``shuffled_floor`` (lagged-linear units with the 8 x bins conditions
permuted); on the surrogate also
``generating_rates`` (the true occupancy probabilities, a reference). Mapping: ridge from a
candidate's units to the channels, fitted per reach and bin on the reaches of 7 sectors and
applied to the 8th (8 folds, ``mapping.hold_out: sectors``, version 2.2: held-out conditions
as Brain-Score's held-out stimuli, a sector held out whole because its bins share reaches);
the held-out predictions are averaged per condition and correlated per channel with the
observed PSTH. (Versions <= 2.1 held out reaches at every condition: the fit absorbed part of
the training reaches' noise, which is in the observed PSTH, so the generating rates scored
r²/c = 1.06 instead of at most 1; ``bench/psth_ceiling_bias.py``.) Score: median r over the
channels of all sessions, ceiled ``r² / c`` (``ceiling.rule``, Brain-Score's rule since
brain-score/vision PR #2169) with a joint bootstrap error
(:func:`neuromark.ceilings.ceiled_explained_variance`). On the surrogate the ceiling is
also computed from the generating rates (``ceiling_generating``) to check the data's.
``details.ceiled_by_rule`` gives, per rule (``explained_variance`` = ``r²/c`` and the old
``explained_variance_squared_ceiling`` = ``(r/c)²``, which reaches ``1/c > 1`` for a
noiseless model) and candidate, the clipped and unclipped ceiled value and its error.
Benchmark version 2.2 (``configs/primate_reaching/psth_ceiled.yaml``): 2.1 held out reaches
in the mapping (``hold_out: reaches``, ``folds: 5``, ``alpha: 0.01``, biased up); 2.0 had a
sector-rolled control instead of ``sector_averaged``; 1.0 ceiled ``(r/c)²``.
``data.on_invalid: drop`` drops and counts non-finite spike times
(``details.per_session[s].invalid_records``, and a flag); a non-finite cursor or target
sample is refused either way (the controller runs over the whole recording as one stream,
so a dropped sample leaves no input for every later step).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from neuromark._progress import progress
from neuromark.benchmarks.primate_reaching.contract import SAMPLE_RULES
from neuromark.benchmarks.primate_reaching.dropped import dropped_flag
from neuromark.benchmarks.primate_reaching.encoder_cost import controller_inputs_cost, kinematic_features_cost
from neuromark.benchmarks.primate_reaching.entry import PRIMATE_REACHING
from neuromark.benchmarks.primate_reaching.psth import SECTORS, align, select_reaches
from neuromark.benchmarks.primate_reaching.reader import (
    bin_session,
    reach_segments,
    read_session,
    split_segments,
)
from neuromark.benchmarks.primate_reaching.task import DataSettings
from neuromark.ceilings import (
    EXPLAINED_VARIANCE_RULES,
    ceiled_explained_variance,
    internal_consistency,
    pearson_columns,
    spearman_brown,
)
from neuromark.config import IdentitySettings, Seed, StrictModel, resolve_path
from neuromark.context import RunContext
from neuromark.devices import DeviceName
from neuromark.errors import DataError
from neuromark.identity import model_identity
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, task_results

CANDIDATES = ("controller", "lagged_linear", "sector_averaged", "shuffled_floor",
              "generating_rates")


class PSTHSettings(StrictModel):
    bins: int = Field(30, ge=3)
    bin_steps: int = Field(5, ge=1, description="4-ms samples per bin (5 = 20 ms)")
    max_reach_s: float = Field(4.0, gt=0)
    seed: Seed = 0


class CeilingSettings(StrictModel):
    n_splits: int = Field(10, ge=2)
    seed: Seed = 1
    min_reliability: float = Field(0.3, ge=-1, le=1)
    n_bootstrap: int = Field(1000, ge=10)
    rule: Literal["explained_variance", "explained_variance_squared_ceiling"] = Field(
        "explained_variance", description="the scores' ceiling rule: r²/c (Brain-Score since "
        "PR #2169) or (r/c)² (before it); details.ceiled_by_rule gives both")


class MappingSettings(StrictModel):
    hold_out: Literal["sectors", "reaches"] = Field(
        "sectors", description="what a fold holds out: 'sectors' (version 2.2: sector s in fold "
        "s % folds, all its reaches; the held-out PSTH points share no reach with the fit) or "
        "'reaches' (versions <= 2.1: the fit saw the other reaches of the same conditions, whose "
        "noise is in the observed PSTH, so the score was biased up)")
    folds: int = Field(8, ge=2)
    alpha: float = Field(0.1, ge=0, description="ridge penalty relative to the mean feature variance x N")

    @model_validator(mode="after")
    def _sector_folds(self) -> MappingSettings:
        if self.hold_out == "sectors" and self.folds > SECTORS:
            raise ValueError(f"folds={self.folds}: holding out sectors allows at most {SECTORS} folds")
        return self


class ControllerSettings(StrictModel):
    hidden: int = Field(64, ge=1)
    iterations: int = Field(200, ge=1)
    seed: Seed = 0


class PSTHConfig(StrictModel):
    task: Literal["psth_predictivity"]
    description: str = ""
    benchmark: IdentitySettings
    data: DataSettings = DataSettings()
    psth: PSTHSettings = PSTHSettings()
    ceiling: CeilingSettings = CeilingSettings()
    mapping: MappingSettings = MappingSettings()
    controller: ControllerSettings = ControllerSettings()
    device: DeviceName = Field("cpu", description="where the controller trains (cpu, cuda, "
                               "cuda:N, auto; --device overrides)")


def ridge_fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                      alpha: float) -> np.ndarray:
    """Ridge (standardised inputs, intercept) fitted on (N, F) -> (N, C), applied to x_test."""
    mu, sd = x_train.mean(0), x_train.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    a, b = (x_train - mu) / sd, (x_test - mu) / sd
    ym = y_train.mean(0)
    gram = a.T @ a
    w = np.linalg.solve(gram + alpha * len(a) * np.eye(gram.shape[0]), a.T @ (y_train - ym))
    return b @ w + ym


def cv_predictivity(units: np.ndarray, neural: np.ndarray, folds: int, alpha: float,
                    hold_out: str = "sectors", sectors: int = SECTORS) -> np.ndarray:
    """Per-channel r of cross-validated predicted PSTHs: ``units`` (m, P, U) and ``neural``
    (m, P, C) aligned reaches, the P conditions sector-major (``sectors`` blocks of P / sectors
    bins).

    ``hold_out="sectors"`` (version 2.2): fold f holds out the conditions of the sectors s with
    s % folds == f; the ridge (per reach and bin) is fitted on every reach of the other
    sectors and predicts the held-out conditions of every reach; the predictions are averaged
    over the reaches. The held-out prediction is ``((u - ū) / σ) W`` with ``ū`` the candidate's
    mean over all reaches and conditions (its own units, no neural data) and σ, W from the
    fold's fit: no per-fold intercept, which would carry the training sectors' mean response
    into the held-out sector and push a model without information below r = 0; a constant
    offset per channel leaves r unchanged. A held-out PSTH point shares no reach, so no noise,
    with the fit (as Brain-Score's held-out stimuli; a sector is held out whole because its
    bins share reaches).
    ``hold_out="reaches"`` (versions <= 2.1): fold f holds the repetitions r with
    r % folds == f at every condition; the mapping fitted on the other reaches of the same
    conditions fits part of their noise, which is in the observed mean PSTH too, so r is biased
    up (``bench/psth_ceiling_bias.py``).
    """
    m, p, n_units = units.shape
    if units.shape[:2] != neural.shape[:2]:
        raise ValueError(f"units {units.shape} and neural {neural.shape} must align (reaches, conditions)")
    if hold_out == "reaches":
        pred = np.empty_like(neural)
        fold = np.arange(m) % folds
        for f in range(min(folds, m)):
            tr, te = fold != f, fold == f
            pred[te] = ridge_fit_predict(units[tr].reshape(-1, n_units),
                                         neural[tr].reshape(-1, neural.shape[2]),
                                         units[te].reshape(-1, n_units), alpha
                                         ).reshape(int(te.sum()), p, -1)
        return pearson_columns(pred.mean(0), neural.mean(0))
    if hold_out != "sectors":
        raise ValueError(f"hold_out={hold_out!r}: 'sectors' or 'reaches'")
    if p % sectors or not 2 <= folds <= sectors:
        raise ValueError(f"{p} conditions in {sectors} sectors with {folds} folds: need P divisible "
                         f"by the sectors and 2 <= folds <= sectors")
    fold = (np.arange(p) // (p // sectors)) % folds
    mean_pred = np.empty((p, neural.shape[2]))
    centre = units.reshape(-1, n_units).mean(0)  # the candidate's own mean, the same in every fold
    for f in range(folds):
        tr, te = fold != f, fold == f
        x, y = units[:, tr].reshape(-1, n_units), neural[:, tr].reshape(-1, neural.shape[2])
        sd = x.std(0)
        sd = np.where(sd > 0, sd, 1.0)
        a = (x - x.mean(0)) / sd
        w = np.linalg.solve(a.T @ a + alpha * len(a) * np.eye(n_units), a.T @ (y - y.mean(0)))
        # no per-fold offset: the training sectors' mean response would enter the held-out
        # sector's prediction and move against its level (a model without information would
        # score r < 0); a constant offset per channel does not change r
        mean_pred[te] = ((units[:, te].mean(0) - centre) / sd) @ w
    return pearson_columns(mean_pred, neural.mean(0))


def generating_reliability(p_aligned: np.ndarray, var_aligned: np.ndarray) -> np.ndarray:
    """Per-channel Spearman-Brown split-half reliability implied by the generating rates:
    ``p_aligned`` (m, P, C) expected responses per reach, ``var_aligned`` (m, P, C) their
    conditional (Bernoulli) variance given the rates."""
    m = p_aligned.shape[0]
    sigma2 = p_aligned.var(0, ddof=1) + var_aligned.mean(0)          # per trial, per point
    mu = p_aligned.mean(0)
    signal = mu.var(0) - p_aligned.var(0, ddof=1).mean(0) / m         # across points, debiased
    noise = sigma2.mean(0)
    h = m // 2
    r_half = signal / np.sqrt((signal + noise / h) * (signal + noise / (m - h)))
    return spearman_brown(r_half)


class PSTHPredictivityTask(TaskBase):
    """The ``psth_predictivity`` task (see the module docstring)."""

    name = "psth_predictivity"
    placement = "unit"

    settings_model = PSTHConfig

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        config, cfg = plan.config, plan.settings
        device = ctx.device_for(cfg.device, config.where(("device",)), label=cfg.benchmark.id,
                                announce=True)
        root = resolve_path(cfg.data.root, config)
        if cfg.data.surrogate is not None:  # the data set entry's generator, not a task step
            PRIMATE_REACHING.synthesize(root, **cfg.data.surrogate.model_dump(), sessions=cfg.data.sessions)
        sessions: dict[str, dict[str, Any]] = {}
        pooled: dict[str, list[np.ndarray]] = {"ceiling": [], "generating": []}
        rs: dict[str, list[np.ndarray]] = {c: [] for c in CANDIDATES}
        for session in progress(cfg.data.sessions, desc=cfg.benchmark.id, unit="session",
                                quiet=ctx.quiet):
            info, per_split, gen, r = self._session(cfg, root, session, device)
            sessions[session] = info
            pooled["ceiling"].append(per_split)
            if gen is not None:
                pooled["generating"].append(gen)
            for name, values in r.items():
                rs[name].append(values)
        per_neuroid = np.concatenate(pooled["ceiling"], axis=1)
        medians = np.median(per_neuroid, axis=1)
        ceiling = Score(float(medians.mean()), float(medians.std() / np.sqrt(len(medians))), "", True,
                        raw={"per_split": medians, "per_neuroid": per_neuroid})
        scores = {"ceiling": ceiling}
        if pooled["generating"]:
            scores["ceiling_generating"] = Score(float(np.median(np.concatenate(pooled["generating"]))),
                                                 None, "", True)
        by_rule: dict[str, dict[str, Any]] = {rule: {} for rule in EXPLAINED_VARIANCE_RULES}
        for name, values in rs.items():
            if not values:
                continue
            for rule in EXPLAINED_VARIANCE_RULES:
                score = ceiled_explained_variance(np.concatenate(values), ceiling, rule=rule,
                                                  n_bootstrap=cfg.ceiling.n_bootstrap)
                by_rule[rule][name] = {"ceiled": score.ceiled, "unclipped": score.ceiled_unclipped,
                                       "error": score.ceiled_error}
                if rule == cfg.ceiling.rule:
                    scores[f"psth_predictivity[{name}]"] = score
        details = {"ceiling_rule": cfg.ceiling.rule, "ceiled_by_rule": by_rule, "per_session": sessions,
                   "channels": int(per_neuroid.shape[1]),
                   "data": "surrogate" if cfg.data.surrogate else "recorded", "data_root": str(root),
                   "front_end": psth_front_end()}  # the candidates' input encoders (issue 47.4)
        if "psth_predictivity[controller]" in scores:  # the model's: the headline
            details["primary_metric"] = "psth_predictivity[controller]"
        res = task_results(scores, benchmark=cfg.benchmark.info(""),
                           model=model_identity("controller", cfg.controller.model_dump()),
                           effective=cfg.model_dump(), device=ctx.device_record(device, cfg.device),
                           seeds={"psth": cfg.psth.seed, "ceiling": cfg.ceiling.seed,
                                  "controller": cfg.controller.seed}, details=details)
        dropped = dropped_flag(sessions)
        if dropped:
            res.flag(dropped)
            print(f"{cfg.benchmark.id}: {dropped}", file=sys.stderr)
        return [res]

    def _session(self, cfg: PSTHConfig, root: Path, session: str, device: Any = "cpu"
                 ) -> tuple[Any, ...]:
        from neuromark.benchmarks.primate_reaching.encoders import (
            controller_units,
            fit_controller,
            kinematic_features,
        )

        ps = cfg.psth
        rec = read_session(root / f"{session}.mat", cfg.data.on_invalid)
        if rec.dropped is not None:
            first = int(np.flatnonzero(rec.dropped)[0])
            raise DataError(f"{root / (session + '.mat')}: session {session!r}: sample {first} "
                            f"({SAMPLE_RULES[rec.dropped[first] - 1]}) would be dropped, but "
                            "psth_predictivity runs its controller over the whole recording as "
                            "one stream: on_invalid: drop drops spike times only here")
        segments = reach_segments(rec.target)
        reaches = select_reaches(rec.target, segments, bins=ps.bins, bin_steps=ps.bin_steps,
                                 max_reach_s=ps.max_reach_s, seed=ps.seed)
        kw = {"bins": ps.bins, "bin_steps": ps.bin_steps}
        neural = align(bin_session(rec).astype(np.float32), reaches, offset=2, **kw)
        ceil = internal_consistency(neural, n_splits=cfg.ceiling.n_splits, seed=cfg.ceiling.seed)
        per = ceil.raw["per_neuroid"]
        keep = ~np.isnan(per).any(0) & (np.nan_to_num(per.mean(0), nan=-1) >= cfg.ceiling.min_reliability)
        info: dict[str, Any] = {"repetitions": reaches.repetitions, "reaches_per_sector": reaches.counts,
                                "dropped_reaches": reaches.dropped, "channels": int(per.shape[1]),
                                "channels_kept": int(keep.sum()), "ceiling_all_channels": ceil.value}
        if cfg.data.on_invalid == "drop":
            info["invalid_records"] = ({"finite spike times": rec.dropped_spikes}
                                       if rec.dropped_spikes else {})
        if not keep.any():
            raise ValueError(f"{session}: no channel reaches split-half r_SB >= "
                             f"{cfg.ceiling.min_reliability}")
        neural = neural[..., keep]
        train = segments[split_segments(len(segments), cfg.data.train_ratio)["train"]]
        ctrl = fit_controller(rec.cursor, rec.target, train, hidden=cfg.controller.hidden,
                              iterations=cfg.controller.iterations, seed=cfg.controller.seed,
                              device=device)
        kin = align(kinematic_features(rec.cursor), reaches, offset=0, **kw)
        units = {"controller": align(controller_units(ctrl, rec.cursor, rec.target), reaches,
                                     offset=0, **kw),
                 "lagged_linear": kin}
        rng = np.random.default_rng(ps.seed + 1)
        rng.integers(1, SECTORS)  # 2.0's sector shift, still drawn: the floor's permutation kept
        # direction-blind, the time course kept: every sector gets the sectors' mean. (Version
        # 2.0's control rolled the sectors, a rotation of directions; on cosine-tuned units a
        # rotation is a change of basis the ridge mapping undoes, so it scored within 2 SE of
        # the generating rates: docs/primate_reaching.md.)
        by_sector = kin.reshape(kin.shape[0], SECTORS, ps.bins, -1)
        units["sector_averaged"] = np.broadcast_to(by_sector.mean(1, keepdims=True),
                                                   by_sector.shape).reshape(kin.shape).copy()
        units["shuffled_floor"] = kin[:, rng.permutation(kin.shape[1])]  # conditions permuted
        gen = None
        if cfg.data.surrogate is not None:
            prob = PRIMATE_REACHING.generating_occupancy(root, session, rec.cursor, len(rec.t))
            prob = prob[:, keep]
            # reader sample k+1 holds the spikes drawn at generator sample k: offset 0 here
            p_al = align(prob, reaches, offset=0, **kw)
            v_al = align(prob * (1 - prob), reaches, offset=0, **kw) / ps.bin_steps
            gen = generating_reliability(p_al, v_al)
            info["ceiling_generating"] = float(np.median(gen))
            units["generating_rates"] = p_al
        per_kept = per[:, keep]
        info["ceiling"] = float(np.median(per_kept, axis=1).mean())
        r = {name: cv_predictivity(u, neural, cfg.mapping.folds, cfg.mapping.alpha, cfg.mapping.hold_out)
             for name, u in units.items()}
        info["median_r"] = {name: float(np.nanmedian(v)) for name, v in r.items()}
        return info, per_kept, gen, r


def psth_front_end() -> dict[str, Any]:
    """The controller's input scaling (the result's model), with the lagged-linear
    candidate's kinematic features beside it (:mod:`neuromark.processors.encoder_cost`)."""
    from neuromark.benchmarks.primate_reaching.encoders import LEADS

    block = controller_inputs_cost().to_json()
    block["candidates"] = {"lagged_linear": kinematic_features_cost(LEADS).to_json()}
    return block


TASK = PSTHPredictivityTask()
