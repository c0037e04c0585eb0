"""Accuracy rules of the system track: the accuracy log's parse, scoring, quality targets,
and a hidden SUT that degrades its outputs below the target (INVALID; check fails)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.errors import DataError
from neuromark.registry import suts
from neuromark.system.loadgen_log import read_accuracy_log
from neuromark.system.quality import AccuracyRule, judge
from neuromark.system.sut import BuiltSUT, InMemoryLibrary
from neuromark.system.track.accuracy import score_outputs

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "system"


def test_judge_hand_computed():
    # higher is better: threshold = 0.99 * 0.95 = 0.9405
    ok = judge(0.95, 0.95, 0.99, True)
    assert ok["verdict"] == "VALID" and ok["threshold"] == pytest.approx(0.9405)
    bad = judge(0.94, 0.95, 0.99, True)
    assert bad["verdict"] == "INVALID"
    assert "0.94 is below the quality target" in bad["reason"] and "0.95" in bad["reason"]
    assert judge(0.9405, 0.95, 0.99, True)["verdict"] == "VALID"  # at the target passes
    # lower is better (sMAPE): threshold = 10 / 0.99 = 10.10101
    low = judge(10.1, 10.0, 0.99, False)
    assert low["verdict"] == "VALID" and low["threshold"] == pytest.approx(10.101010101)
    assert low["relative"] == pytest.approx(10.0 / 10.1)
    high = judge(10.2, 10.0, 0.99, False)
    assert high["verdict"] == "INVALID" and "above the quality target" in high["reason"]
    # the high-accuracy tier is stricter
    assert judge(0.945, 0.95, 0.999, True)["verdict"] == "INVALID"
    # a relative target needs a positive reference; NaN fails
    assert "positive" in judge(0.5, 0.0, 0.99, True)["reason"]
    assert judge(float("nan"), 0.9, 0.99, True)["verdict"] == "INVALID"


def test_rule_validation():
    with pytest.raises(ValueError, match="needs both reference and target"):
        AccuracyRule(reference=0.9)
    with pytest.raises(ValueError, match="needs both reference and target"):
        AccuracyRule(target=0.99)
    with pytest.raises(ValueError, match="remove target"):
        AccuracyRule(exempt="timing only", target=0.99)
    with pytest.raises(ValueError):
        AccuracyRule(reference=0.9, target=1.5)
    assert AccuracyRule(reference="float_model", target=0.999).judged


def write_log(path: Path, entries: dict[int, np.ndarray]) -> Path:
    """An mlperf_log_accuracy.json as LoadGen writes it: seq_id, qsl_idx, hex data."""
    path.write_text(json.dumps([{"seq_id": k, "qsl_idx": i, "data": a.tobytes().hex().upper()}
                                for k, (i, a) in enumerate(entries.items())]))
    return path


def test_accuracy_log_parse_and_scores_hand_computed(tmp_path):
    scores = {2: np.array([0.1, 0.9, 0.0], "<f4"), 0: np.array([0.8, 0.1, 0.1], "<f4"),
              1: np.array([0.2, 0.3, 0.5], "<f4"), 3: np.array([0.0, 0.0, 1.0], "<f4")}
    outs = read_accuracy_log(write_log(tmp_path / "a.json", scores), "<f4")
    assert sorted(outs) == [0, 1, 2, 3] and np.array_equal(outs[2], scores[2])
    labels = np.array([0, 1, 1, 2])  # sample 1 is wrong (argmax 2): 3 of 4
    acc = score_outputs(outs, labels, "classification_accuracy", "argmax")
    assert acc.value == pytest.approx(0.75)
    # identity: the response is the class itself
    cls = score_outputs({0: np.array([0], "<i8"), 1: np.array([2], "<i8")}, np.array([0, 1]),
                        "classification_accuracy", "identity")
    assert cls.value == pytest.approx(0.5)
    # regression: sMAPE terms 200|y-p|/(|y|+|p|): sample 0 exact, sample 1 200*2/6
    reg = read_accuracy_log(write_log(tmp_path / "r.json", {0: np.array([1.0]), 1: np.array([2.0])}),
                            "<f8")
    smape = score_outputs(reg, np.array([1.0, 4.0]), "sMAPE", "identity")
    assert smape.value == pytest.approx(100 / 3)
    with pytest.raises(DataError, match="outside the 2 labelled samples"):
        score_outputs({5: np.array([1.0])}, np.array([1.0, 4.0]), "sMAPE", "identity")
    with pytest.raises(DataError, match="a response holds 3 value"):
        score_outputs(outs, np.zeros(4), "sMAPE", "identity")
    with pytest.raises(DataError, match="not a multiple"):
        (tmp_path / "bad.json").write_text('[{"seq_id": 0, "qsl_idx": 0, "data": "ABCDEF"}]')
        read_accuracy_log(tmp_path / "bad.json", "<f4")


def noisy_classifier(*, samples: int = 64, flip: float = 0.0, seed: int = 0) -> BuiltSUT:
    """A hidden SUT: one-hot class scores of the right class, except a ``flip`` share of the
    samples (chosen with ``seed``), answered with the next class; its float reference is
    the exact one-hot model."""
    labels = np.arange(samples) % 4
    wrong = np.random.default_rng(seed).permutation(samples)[:round(flip * samples)]
    answer = labels.copy()
    answer[wrong] = (answer[wrong] + 1) % 4

    class Noisy:
        name, response_dtype = "noisy-classifier", "<f4"

        def issue(self, indices):
            return [np.eye(4, dtype="<f4")[answer[i]] for i in indices]

    library = InMemoryLibrary("indices", lambda i: i, samples)
    return BuiltSUT(Noisy(), library, labels, {"stages": []},
                    reference=lambda idx: [np.eye(4, dtype="<f4")[labels[i]] for i in idx])


@pytest.fixture
def hidden_sut():
    suts.register("noisy_classifier", noisy_classifier)
    yield
    suts._entries.pop("noisy_classifier", None)


def run_config(tmp_path, name, options, accuracy, capsys):
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"task: system\nbenchmark: {{id: {name}}}\n"
                      f"sut: {{name: noisy_classifier, options: {options}}}\n"
                      f"accuracy: {accuracy}\ntiming: {{warmup: 0}}\n"
                      "loadgen: {min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.0001}\n")
    out = tmp_path / name
    code = main(["system", "run", str(config), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    results = json.loads(next(out.glob(f"{name}--*.json")).read_text())
    return code, captured.out + captured.err, results, out


def test_degraded_sut_is_invalid_and_fails_check(tmp_path, capsys, hidden_sut):
    rule = "{metric: classification_accuracy, reference: float_model, target: 0.99}"
    code, text, results, out = run_config(tmp_path, "flipped", "{flip: 0.25}", rule, capsys)
    acc = results["details"]["accuracy"]
    assert acc["value"] == pytest.approx(0.75) and acc["reference"] == pytest.approx(1.0)
    assert acc["samples"] == 64 and acc["verdict"] == "INVALID"
    assert results["scores"]["classification_accuracy"]["value"] == pytest.approx(0.75)
    assert code == 1  # INVALID exits 1 after writing everything
    assert "INVALID: flipped: accuracy below its quality target" in text
    assert "classification_accuracy 0.75 >= 0.99 needed" in text
    manifest = json.loads((out / "submission.json").read_text())
    assert manifest["benchmarks"][0]["accuracy"]["verdict"] == "INVALID"
    assert main(["check", str(out)]) == 1
    found = capsys.readouterr().out
    assert "accuracy/target: accuracy INVALID: classification_accuracy 0.75 is below the quality " \
           "target: needs >= 0.99" in found
    assert "float reference 1" in found and "reference from float_model" in found


def test_sut_at_its_target_is_valid_and_passes_check(tmp_path, capsys, hidden_sut):
    # 63 of 64 right = 0.984 against 0.98 x 1.0 (a number as the reference)
    rule = "{reference: 1.0, target: 0.98}"
    code, text, results, out = run_config(tmp_path, "good", "{flip: 0.015625}", rule, capsys)
    acc = results["details"]["accuracy"]
    assert acc["value"] == pytest.approx(63 / 64) and acc["verdict"] == "VALID"
    assert acc["reference_source"] == "config" and acc["metric"] == "classification_accuracy"
    assert code == 0 and "accuracy [good]: classification_accuracy 0.984375 >= 0.98 needed" in text
    assert main(["check", str(out)]) == 0, capsys.readouterr().out
    # a results file whose verdict was edited to VALID below its target is caught
    file = next(out.glob("good--*.json"))
    data = json.loads(file.read_text())
    data["details"]["accuracy"]["value"] = 0.5
    file.write_text(json.dumps(data))
    assert main(["check", str(out)]) == 1
    found = capsys.readouterr().out
    assert "accuracy/target" in found and "accuracy/verdict: the results say 'VALID'" in found
    assert "details.accuracy judged classification_accuracy 0.5, the scores say 0.984375" in found
    # no target at all: the test profile lets it pass, the submission profile does not
    data["details"].pop("accuracy")
    file.write_text(json.dumps(data))
    assert "accuracy/" not in (main(["check", str(out)]), capsys.readouterr().out)[1]
    manifest = json.loads((out / "submission.json").read_text())
    (out / "submission.json").write_text(json.dumps({**manifest, "profile": "submission"}))
    assert main(["check", str(out)]) == 1
    assert "accuracy/target: no quality target declared" in capsys.readouterr().out


def test_rules_that_do_not_fit_the_sut(tmp_path, capsys, hidden_sut):
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: system\nsut: {name: \"null\"}\naccuracy: {reference: 0.9, target: 0.99}\n")
    assert main(["system", "run", str(bad), "--out", str(tmp_path / "o1"), "--quiet"]) == 1
    assert "has no labels to score; declare accuracy: {exempt" in capsys.readouterr().err
    bad.write_text("task: system\nsut: {name: noisy_classifier}\naccuracy: {exempt: timing}\n")
    assert main(["system", "run", str(bad), "--out", str(tmp_path / "o2"), "--quiet"]) == 1
    assert "gives labels, so its accuracy can be scored" in capsys.readouterr().err
    bad.write_text("task: system\nsut: {name: noisy_classifier}\n"
                   "accuracy: {metric: footprint, reference: 0.9, target: 0.99}\n")
    assert main(["system", "run", str(bad), "--out", str(tmp_path / "o3"), "--quiet"]) == 1
    assert "does not score predictions against targets" in capsys.readouterr().err


def test_every_shipped_system_config_declares_its_accuracy_rule():
    import yaml

    for path in sorted(CONFIGS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        rule = AccuracyRule(**data["accuracy"]) if isinstance(data.get("accuracy"), dict) else None
        assert rule is not None, f"{path.name}: no accuracy: rule"
        assert rule.judged or rule.exempt, f"{path.name}: neither a quality target nor an exemption"
        if rule.judged:
            assert rule.target in (0.99, 0.999), path.name  # MLPerf's two tiers


def test_esn_sut_is_scored_with_smape_against_its_float_forecast():
    from neuromark.benchmarks.mackey_glass.sut import esn

    built = esn(samples=40, reservoir_size=50, context=60)
    try:
        idx = list(range(40))
        built.library.load(idx)
        outs = dict(zip(idx, built.sut.issue(idx)))
        ref = dict(zip(idx, built.reference(idx)))
        assert built.metric == "sMAPE" and built.labels.shape == (40,)
        mine = score_outputs(outs, built.labels, "sMAPE", "identity").value
        float_ref = score_outputs(ref, built.labels, "sMAPE", "identity").value
        assert judge(mine, float_ref, 0.99, False)["verdict"] == "VALID", (mine, float_ref)
    finally:
        built.close()


def test_asc_float_reference_reads_the_tau_files_and_matches_the_float_sut(tmp_path):
    from test_system_asc import write_tau_fixture

    from neuromark.benchmarks.acoustic_scenes.sut import asc_cnn

    write_tau_fixture(tmp_path / "tau")
    built = asc_cnn(data=str(tmp_path / "tau"), samples=100)
    try:
        idx = list(range(built.library.total_count))
        built.library.load(idx)
        outs = built.sut.issue(idx)
        refs = built.reference(idx)  # read again through the data set, in chunks
        assert built.metric == "classification_accuracy" and len(refs) == len(idx)
        for mine, ref in zip(outs, refs):
            np.testing.assert_allclose(mine, ref, rtol=1e-5, atol=1e-6)
    finally:
        built.close()


def biased_forecast(*, samples: int = 64, bias: float = 0.0) -> BuiltSUT:
    """A hidden regression SUT: answers f(t + dt) of a sine series scaled by ``1 + bias``,
    so its sMAPE is ``200 bias / (2 + bias)`` per sample (%)."""
    targets = np.sin(0.1 * np.arange(1, samples + 1)) + 2.0

    class Biased:
        name, response_dtype = "biased-forecast", "<f8"

        def issue(self, indices):
            return [np.array([targets[i] * (1.0 + bias)]) for i in indices]

    return BuiltSUT(Biased(), InMemoryLibrary("steps", lambda i: i, samples), targets,
                    {"stages": []}, metric="sMAPE")


@pytest.mark.parametrize("bias, verdict", [(0.005, "VALID"), (0.02, "INVALID")])
def test_regression_sut_judged_with_its_metric_lower_is_better(tmp_path, capsys, bias, verdict):
    suts.register("biased_forecast", biased_forecast)
    try:
        config = tmp_path / "f.yaml"
        config.write_text("task: system\nbenchmark: {id: forecast}\n"
                          f"sut: {{name: biased_forecast, options: {{bias: {bias}}}}}\n"
                          "accuracy: {reference: 1.0, target: 0.99}\ntiming: {warmup: 0}\n"
                          "loadgen: {min_query_count: 64, min_duration_s: 0, "
                          "expected_latency_s: 0.0001}\n")
        code = main(["system", "run", str(config), "--out", str(tmp_path / "out"), "--quiet"])
        capsys.readouterr()
        acc = json.loads(next((tmp_path / "out").glob("forecast--*.json")).read_text())["details"]["accuracy"]
        # sMAPE = 200 b / (2 + b); passes when <= 1.0 / 0.99
        assert acc["metric"] == "sMAPE" and acc["higher_is_better"] is False
        assert acc["value"] == pytest.approx(200 * bias / (2 + bias))
        assert acc["threshold"] == pytest.approx(1 / 0.99) and acc["verdict"] == verdict
        assert code == (0 if verdict == "VALID" else 1)
        assert main(["check", str(tmp_path / "out")]) == code
        found = capsys.readouterr().out
        assert ("accuracy/target" in found) == (verdict == "INVALID")
        if verdict == "INVALID":
            assert "sMAPE 1.9802 is above the quality target: needs <= 1.0101" in found
    finally:
        suts._entries.pop("biased_forecast", None)
