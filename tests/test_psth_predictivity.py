"""Reach-direction PSTHs: sectors, equalised repetitions, alignment, cross-validated
predictivity and the reliability implied by generating rates."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.benchmarks.primate_reaching.psth import align, sector_of, select_reaches
from neuromark.benchmarks.primate_reaching.psth_task import cv_predictivity, generating_reliability
from neuromark.ceilings import internal_consistency, pearson_columns
from neuromark.tasks.base import plan_and_run


def test_sectors_are_centred_on_multiples_of_45_degrees():
    assert [sector_of(np.cos(a), np.sin(a)) for a in np.deg2rad([0, 44, 46, 90, 180, 337.6, 359])] \
        == [0, 1, 1, 2, 4, 0, 0]


def reach_layout(per_sector: list[int], length: int = 200):
    """Targets jumping in the given numbers of reaches per sector (sector s: direction s*45°)."""
    target, segments, pos, start = [], [(0, length)], np.zeros(2), length
    target.append(np.zeros((length, 2)))
    for s, n in enumerate(per_sector):
        for _ in range(n):
            pos = pos + 50 * np.array([np.cos(s * np.pi / 4), np.sin(s * np.pi / 4)])
            target.append(np.repeat(pos[None], length, 0))
            segments.append((start - 1, start + length - 1))
            start += length
    return np.concatenate(target), segments


def test_smallest_count_per_sector_with_a_seeded_subset():
    target, segments = reach_layout([5, 3, 4, 6, 3, 3, 7, 3])
    a = select_reaches(target, segments, seed=0)
    assert a.repetitions == 3 and a.counts == [5, 3, 4, 6, 3, 3, 7, 3]
    assert a.onsets.shape == (8, 3) and a.dropped["first"] == 1
    assert select_reaches(target, segments, seed=0).onsets.tolist() == a.onsets.tolist()
    assert select_reaches(target, segments, seed=3).onsets.tolist() != a.onsets.tolist()
    with pytest.raises(ValueError, match="only 1 reaches"):
        select_reaches(*reach_layout([2, 1, 2, 2, 2, 2, 2, 2]))
    activity = np.arange(len(target), dtype=float)[:, None]
    psth = align(activity, a, bins=30, bin_steps=5, offset=2)
    first = a.onsets[0, 0]
    assert psth.shape == (3, 240, 1) and psth[0, 0, 0] == first + 2 + 2  # mean of onset+2 .. +6


def test_predictivity_of_a_noisy_copy_and_the_analytic_reliability():
    rng = np.random.default_rng(0)
    m, points, channels = 40, 240, 30
    rates = 0.2 + 0.1 * rng.random((points, channels))
    samples = rng.random((m, 5, points, channels)) < rates  # Bernoulli per 4-ms sample
    neural = samples.mean(1)
    ceiling = internal_consistency(neural)
    expected = generating_reliability(np.broadcast_to(rates, (m, points, channels)),
                                      np.broadcast_to(rates * (1 - rates) / 5, (m, points, channels)))
    assert ceiling.value == pytest.approx(np.median(expected), abs=0.05)
    units = np.broadcast_to(rates, (m, points, channels)).copy()
    # a perfect model correlates with the observed mean as sqrt(reliability of the mean)
    direct = pearson_columns(rates, neural.mean(0))
    assert np.median(direct) == pytest.approx(np.sqrt(np.median(expected)), abs=0.05)
    # through the mapping fitted on the other sectors it gets at most that (the fitted map is
    # noisy); version 2.1's folds over reaches got more than the truth itself (the leak)
    r = cv_predictivity(units, neural, folds=8, alpha=1e-3)
    assert np.median(direct) - 0.1 < np.median(r) < np.median(direct) + 0.01
    leaky = cv_predictivity(units, neural, folds=5, alpha=1e-3, hold_out="reaches")
    assert np.median(leaky) > np.median(direct) + 0.01
    noise = cv_predictivity(rng.normal(size=units.shape), neural, folds=8, alpha=1e-3)
    assert np.median(noise) < 0.2


def test_folds_over_reaches_leak_the_noise_folds_over_sectors_do_not():
    # features fixed per condition (the same in every reach) that carry no signal at all, and
    # neural responses that are pure noise: holding out reaches, the ridge fits the training
    # reaches' noise at the same conditions, and that noise is in the observed mean PSTH, so
    # r > 0 (version <= 2.1); holding out sectors, the held-out points share no reach with the fit
    rng = np.random.default_rng(3)
    m, points, features, channels = 10, 240, 100, 40
    units = np.broadcast_to(rng.normal(size=(points, features)), (m, points, features)).copy()
    neural = rng.normal(size=(m, points, channels))
    leaky = np.median(cv_predictivity(units, neural, folds=5, alpha=1e-3, hold_out="reaches"))
    clean = cv_predictivity(units, neural, folds=8, alpha=1e-3, hold_out="sectors")
    assert leaky > 0.3
    assert abs(np.median(clean)) < 0.06 and abs(clean.mean()) < 0.04  # SE of r over 240 points ~0.065


def test_sector_folds_hold_out_every_reach_of_the_sector():
    # a channel that only sector 3 drives, a unit that flags sector 3: the fit never sees sector
    # 3, so the flag gets no weight and the held-out prediction is flat there
    m, bins = 4, 5
    units = np.zeros((m, 8 * bins, 2))
    units[:, 3 * bins:4 * bins, 0] = 1.0
    units[..., 1] = np.arange(8 * bins)[None] % 7  # something to fit elsewhere
    neural = np.zeros((m, 8 * bins, 1))
    neural[:, 3 * bins:4 * bins, 0] = 5.0
    neural[..., 0] += np.arange(8 * bins)[None] % 7
    r_sector = cv_predictivity(units, neural, folds=8, alpha=1e-6)
    r_reach = cv_predictivity(units, neural, folds=2, alpha=1e-6, hold_out="reaches")
    assert r_reach[0] == pytest.approx(1.0)       # seen in training: predicted exactly
    assert r_sector[0] < 0.9                       # sector 3's bump cannot be predicted
    with pytest.raises(ValueError, match="at most|divisible"):
        cv_predictivity(units, neural, folds=9, alpha=0.0)
    with pytest.raises(ValueError, match="hold_out"):
        cv_predictivity(units, neural, folds=2, alpha=0.0, hold_out="trials")


def test_task_end_to_end_on_a_small_surrogate(tmp_path):
    from neuromark.config import ConfigFile
    from neuromark.registry import tasks

    data = {"task": "psth_predictivity", "benchmark": {"id": "psth-test"},
            "data": {"root": str(tmp_path / "data"), "surrogate": {"duration_s": 60, "seed": 2},
                     "sessions": ["loco_20170215_02"]},
            "ceiling": {"n_bootstrap": 50, "min_reliability": 0.0},
            "controller": {"iterations": 5}}
    (res,) = plan_and_run(tasks.get("psth_predictivity"), ConfigFile(data=data), tmp_path / "out", quiet=True)
    session = res.details["per_session"]["loco_20170215_02"]
    assert session["repetitions"] == min(session["reaches_per_sector"]) >= 2
    ceiling, generating = res.scores["ceiling"], res.scores["ceiling_generating"]
    assert ceiling.raw["per_neuroid"].shape[1] == session["channels_kept"]
    assert abs(ceiling.value - generating.value) < 0.15
    floor = res.scores["psth_predictivity[shuffled_floor]"]
    linear = res.scores["psth_predictivity[lagged_linear]"]
    assert floor.value < linear.value and floor.ceiling_rule == "explained_variance"
    blind = res.scores["psth_predictivity[sector_averaged]"]
    assert blind.raw < res.scores["psth_predictivity[generating_rates]"].raw
    assert linear.ceiled_error is not None and linear.ceiled == min(1.0, linear.ceiled_unclipped)
    assert linear.ceiled_unclipped == pytest.approx(linear.raw ** 2 / ceiling.value)
    old = res.details["ceiled_by_rule"]["explained_variance_squared_ceiling"]["lagged_linear"]
    assert old["unclipped"] == pytest.approx((linear.raw / ceiling.value) ** 2)
    assert res.details["ceiled_by_rule"]["explained_variance"]["lagged_linear"]["unclipped"] == \
        linear.ceiled_unclipped


def test_a_sector_rotation_is_undone_by_the_mapping_the_sector_average_is_not():
    # cosine-tuned units (preferred directions spread over the circle) x a time course: a
    # roll of the 8 sectors is a rotation of directions, which a linear map of the units
    # undoes (the version-2.0 control scored like the truth); the sectors' mean is
    # direction-blind and cannot be mapped back
    from neuromark.benchmarks.primate_reaching.psth_task import SECTORS
    rng = np.random.default_rng(0)
    m, bins, units_n, channels = 12, 10, 16, 20
    theta = np.arange(SECTORS) * 2 * np.pi / SECTORS
    pref = rng.uniform(0, 2 * np.pi, units_n)
    course = np.sin(np.linspace(0, np.pi, bins))
    tuning = 1 + np.cos(theta[:, None] - pref[None, :])               # (8, U)
    clean = (tuning[:, None, :] * course[None, :, None]).reshape(SECTORS * bins, units_n)
    mix = rng.normal(size=(units_n, channels))
    neural = clean @ mix + rng.normal(scale=2.0, size=(m, SECTORS * bins, channels))
    units = np.broadcast_to(clean, (m, *clean.shape)).copy()
    by_sector = units.reshape(m, SECTORS, bins, units_n)
    rolled = np.roll(by_sector, 3, axis=1).reshape(units.shape)
    averaged = np.broadcast_to(by_sector.mean(1, keepdims=True), by_sector.shape).reshape(units.shape)
    r = {name: np.median(cv_predictivity(u, neural, folds=4, alpha=1e-3))
         for name, u in (("truth", units), ("rolled", rolled), ("averaged", averaged))}
    assert r["rolled"] > r["truth"] - 0.05      # the rotation: nearly the truth's score
    assert r["averaged"] < r["truth"] - 0.3     # direction-blind: far below


def small_session(seed: int, m: int = 24, channels: int = 60, bins: int = 30):
    """Cosine-tuned occupancy probabilities per reach (m, 8 * bins, channels), with
    reach-to-reach jitter of gain and timing, and Bernoulli occupancy of 5 samples per bin."""
    rng = np.random.default_rng(seed)
    theta = np.arange(8) * np.pi / 4
    pref = rng.uniform(0, 2 * np.pi, channels)
    base, gain = rng.uniform(0.1, 0.3, channels), rng.uniform(0.02, 0.12, channels)
    t = np.arange(bins) / bins
    shift = rng.normal(0, 0.03, (m, 8, 1))                            # reach timing jitter
    course = np.exp(-0.5 * ((t[None, None] - 0.4 - shift) / 0.15) ** 2)  # (m, 8, bins)
    scale = 1 + rng.normal(0, 0.1, (m, 8, 1, 1))                       # reach gain jitter
    tuning = np.cos(theta[:, None] - pref[None])                        # (8, C)
    p = base + scale * gain * course[..., None] * (0.5 + tuning[None, :, None, :])
    p = np.clip(p, 0.01, 0.99).reshape(m, 8 * bins, channels)
    neural = (rng.random((5, *p.shape)) < p).mean(0)
    return p, neural


def test_generating_rates_score_about_1_and_the_controls_far_below():
    # version 2.2 on a small synthetic session: the truth is not clipped (its unclipped ceiled
    # value within 2 SE of 1 and below 1 + 2 SE), every control more than 5 SE below it;
    # version 2.1's folds over reaches put the truth above 1
    from neuromark.ceilings import ceiled_explained_variance
    p, neural = small_session(0)
    ceiling = internal_consistency(neural)
    m = p.shape[0]
    by_sector = p.reshape(m, 8, 30, -1)
    controls = {"sector_averaged": np.broadcast_to(by_sector.mean(1, keepdims=True),
                                                   by_sector.shape).reshape(p.shape).copy(),
                "shuffled_floor": p[:, np.random.default_rng(1).permutation(p.shape[1])]}
    score = {name: ceiled_explained_variance(cv_predictivity(u, neural, 8, 0.1), ceiling,
                                             n_bootstrap=200)
             for name, u in {"generating_rates": p, **controls}.items()}
    truth = score["generating_rates"]
    assert abs(truth.ceiled_unclipped - 1) < 2 * truth.ceiled_error
    assert truth.ceiled == truth.ceiled_unclipped < 1 + 2 * truth.ceiled_error
    for name in controls:
        gap = truth.ceiled_unclipped - score[name].ceiled_unclipped
        assert gap > 5 * np.hypot(truth.ceiled_error, score[name].ceiled_error), name
    old = ceiled_explained_variance(cv_predictivity(p, neural, 5, 0.01, "reaches"), ceiling, n_bootstrap=200)
    assert old.ceiled_unclipped > truth.ceiled_unclipped
