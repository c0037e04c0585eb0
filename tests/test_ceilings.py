"""Brain-Score ceilings on synthetic data whose split-half reliability is known analytically,
ceiled explained variance with its error, and the Score schema (rule, errors, sidecar)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from neuromark.ceilings import (
    ceil_explained_variance,
    ceiled_explained_variance,
    delta_method_error,
    internal_consistency,
    spearman_brown,
)
from neuromark.results import Results, Score


def signal_plus_noise(reps: int, conds: int, neuroids: int, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=(conds, neuroids))  # unit variance across conditions
    return signal, signal + noise * rng.normal(size=(reps, conds, neuroids))


@pytest.mark.parametrize("reps,noise", [(20, 2.0), (10, 1.0), (7, 3.0)])
def test_internal_consistency_matches_the_analytic_reliability(reps, noise):
    # halves of h and R-h repetitions: r_half = 1 / sqrt((1 + s²/h)(1 + s²/(R-h)));
    # Spearman-Brown of it; for even R it is the reliability of all R: 1 / (1 + s²/R)
    _, responses = signal_plus_noise(reps, 400, 60, noise)
    h = reps // 2
    r_half = 1 / math.sqrt((1 + noise**2 / h) * (1 + noise**2 / (reps - h)))
    expected = float(spearman_brown(r_half))
    if reps % 2 == 0:
        assert expected == pytest.approx(1 / (1 + noise**2 / reps))
    score = internal_consistency(responses, n_splits=10, seed=1)
    assert score.value == pytest.approx(expected, abs=0.03)
    per_split = score.raw["per_split"]
    assert per_split.shape == (10,) and score.raw["per_neuroid"].shape == (10, 60)
    assert score.error == pytest.approx(per_split.std() / math.sqrt(10))
    assert 0 < score.error < 0.02
    again = internal_consistency(responses, n_splits=10, seed=1)
    assert again.value == score.value
    assert internal_consistency(responses, n_splits=10, seed=2).value != score.value


def test_pure_noise_has_no_ceiling_and_bad_input_is_refused():
    rng = np.random.default_rng(1)
    assert abs(internal_consistency(rng.normal(size=(10, 300, 40))).value) < 0.08
    with pytest.raises(ValueError, match="repetitions, conditions, neuroids"):
        internal_consistency(np.zeros((4, 5)))
    with pytest.raises(ValueError, match=">= 2 repetitions"):
        internal_consistency(np.zeros((1, 5, 3)))
    bad = rng.normal(size=(4, 5, 3))
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        internal_consistency(bad)


def test_ceiled_explained_variance_and_its_error():
    signal, responses = signal_plus_noise(20, 300, 80, 2.0)
    ceiling = internal_consistency(responses)
    mean = responses.mean(0)
    rng = np.random.default_rng(5)
    # a model that predicts the signal plus its own noise of variance 0.5
    model = signal + math.sqrt(0.5) * rng.normal(size=signal.shape)
    r = np.array([np.corrcoef(model[:, i], mean[:, i])[0, 1] for i in range(80)])
    score = ceiled_explained_variance(r, ceiling, n_bootstrap=400)
    old = ceiled_explained_variance(r, ceiling, n_bootstrap=400,
                                    rule="explained_variance_squared_ceiling")
    # r = sqrt(rel_data * rel_model) with rel_model = 1/1.5 and c ~ rel_data:
    # r²/c ~ rel_model (PR #2169's rule), (r/c)² ~ rel_model / rel_data (the old one)
    assert score.value == old.value == pytest.approx(np.median(r))
    assert score.ceiling_rule == "explained_variance"
    assert score.ceiled == pytest.approx(np.median(r) ** 2 / ceiling.value)
    assert score.ceiled == pytest.approx(1 / 1.5, abs=0.06)
    assert old.ceiled == pytest.approx((np.median(r) / ceiling.value) ** 2)
    assert old.ceiled == pytest.approx((1 / 1.5) / ceiling.value, abs=0.06)
    for s in (score, old):
        delta = delta_method_error(s.raw, s.error, ceiling.value, ceiling.error, s.ceiling_rule)
        assert 0.3 * delta < s.ceiled_error < 3 * delta
        assert s.ceiled_error != s.error  # propagated, not copied
    over = ceiled_explained_variance(np.full(80, 0.99), ceiling, n_bootstrap=50)
    assert over.ceiled == 1.0 and over.ceiled_unclipped > 1.0
    under = Score(-0.2, ceiling=0.8, ceiling_rule="explained_variance")
    assert under.ceiled == 0.0 and under.ceiled_unclipped == pytest.approx(-0.05)
    under_old = Score(-0.2, ceiling=0.8, ceiling_rule="explained_variance_squared_ceiling")
    assert under_old.ceiled == 0.0 and under_old.ceiled_unclipped == pytest.approx(-0.0625)
    with pytest.raises(ValueError, match="rule='ratio'"):
        ceiled_explained_variance(r, ceiling, rule="ratio")


def test_hand_computed_rules_and_delta_method():
    # r = 0.5 ± 0.01, c = 0.8 ± 0.02: r²/c = 0.25/0.8 = 0.3125,
    # error 0.3125 sqrt(0.04² + 0.025²) = 0.014741; (r/c)² = 0.390625,
    # error 0.390625 sqrt(0.04² + 0.05²) = 0.025012
    assert ceil_explained_variance(0.5, 0.8) == pytest.approx(0.3125)
    assert ceil_explained_variance(0.5, 0.8, "explained_variance_squared_ceiling") == \
        pytest.approx(0.390625)
    assert delta_method_error(0.5, 0.01, 0.8, 0.02) == pytest.approx(0.014741, abs=1e-6)
    assert delta_method_error(0.5, 0.01, 0.8, 0.02, "explained_variance_squared_ceiling") == \
        pytest.approx(0.025012, abs=1e-6)
    # a noiseless model of data with ceiling c reaches r = sqrt(c): r²/c = 1, (r/c)² = 1/c
    assert Score(0.6, ceiling=0.36, ceiling_rule="explained_variance").ceiled_unclipped == \
        pytest.approx(1.0)
    high = Score(0.6, ceiling=0.36, ceiling_rule="explained_variance_squared_ceiling")
    assert high.ceiled_unclipped == pytest.approx(1 / 0.36) and high.ceiled == 1.0


def test_score_schema_roundtrip_with_sidecar(tmp_path):
    _, responses = signal_plus_noise(6, 50, 30, 1.0)
    ceiling = internal_consistency(responses)
    res = Results({"ceiling": ceiling,
                   "psth": Score(0.5, 0.01, raw=0.5, ceiling=0.8, ceiling_rule="explained_variance",
                                 ceiling_error=0.02, ceiled_error=0.05),
                   "old": Score(0.5, ceiling=0.8)})
    path = res.save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == "1.3" and data["raw_sidecar"] == "r.raw.npz"
    raw = data["scores"]["ceiling"]["raw"]
    assert raw["per_split"] == pytest.approx(ceiling.raw["per_split"].tolist())  # 10 numbers inline
    assert raw["per_neuroid"]["npz"] == "ceiling/per_neuroid" and raw["per_neuroid"]["shape"] == [10, 30]
    psth = data["scores"]["psth"]
    assert psth["ceiled"] == pytest.approx(0.3125) and psth["ceiled_error"] == 0.05
    assert psth["ceiling_rule"] == "explained_variance" and psth["ceiled_unclipped"] == psth["ceiled"]
    assert psth["ceiling_formula"] == "sign(r) r^2 / c"
    assert data["scores"]["old"]["ceiled"] == pytest.approx(0.625)
    back = Results.load(path)
    assert np.array_equal(back.scores["ceiling"].raw["per_neuroid"], ceiling.raw["per_neuroid"])
    assert back.scores["psth"].ceiled == pytest.approx(0.3125)
    assert back.scores["psth"].ceiling_rule == "explained_variance"
    # a file written before PR #2169's rule: "explained_variance" without a formula
    # meant (r/c)² and loads under the old rule's name, its figures unchanged
    before = json.loads(path.read_text())
    before["scores"]["psth"].pop("ceiling_formula")
    before["scores"]["psth"]["ceiled"] = before["scores"]["psth"]["ceiled_unclipped"] = 0.390625
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "before.raw.npz").write_bytes((tmp_path / "r.raw.npz").read_bytes())
    before_psth = Results.load(tmp_path / "before.json").scores["psth"]
    assert before_psth.ceiling_rule == "explained_variance_squared_ceiling"
    assert before_psth.ceiled == pytest.approx(0.390625)
    # a schema 1.0 file (no rule, no sidecar) still loads
    data.pop("raw_sidecar")
    data["schema_version"] = "1.0"
    data["scores"] = {"old": {"value": 0.5, "error": None, "unit": "", "higher_is_better": True,
                              "raw": 0.5, "ceiling": 0.8, "ceiled": 0.625}}
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert Results.load(tmp_path / "old.json").scores["old"].ceiled == pytest.approx(0.625)
    with pytest.raises(ValueError, match="ceiling_rule"):
        Score(1.0, ceiling_rule="squared")
