"""The accuracy pass of the ``system`` task: check the rule, make the AccuracyOnly run, score
its log, judge its target.

:func:`check_rule` checks the config's rule against the SUT before anything runs;
:func:`accuracy_mode_run` makes the AccuracyOnly run beside the performance run.

A SUT returns its outputs; the track scores them. LoadGen's AccuracyOnly run issues every
library sample once and logs each response (``mlperf_log_accuracy.json``: per query the
sample index ``qsl_idx`` and the response bytes). :func:`score_outputs` decodes them with
the SUT's recorded dtype, postprocesses them (``argmax`` of class scores, or ``identity``)
and scores them with the task's metric from :data:`neuromark.registry.metrics` against the
SUT's ground truth (``BuiltSUT.labels``: class indices, or regression targets).
:func:`accuracy_pass` adds the figure to the scores and, when the config declares a quality
target (:class:`~neuromark.system.quality.AccuracyRule`), its reference (a number, or the
SUT's float model ``BuiltSUT.reference`` run on the same samples) and the verdict to
``details.accuracy``; a run below its target is INVALID.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neuromark.config import ConfigFile
from neuromark.errors import ConfigError, DataError
from neuromark.registry import metrics
from neuromark.results import Score
from neuromark.system.loadgen import LoadGenRun, LoadGenSettings, run_test
from neuromark.system.loadgen_log import ACCURACY, read_accuracy_log
from neuromark.system.quality import FLOAT_MODEL, QUANTIZED_MODEL, AccuracyRule, judge
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, check_labels

if TYPE_CHECKING:  # the schema imports the energy estimate (torch); the checks need none of it
    from neuromark.system.track.config import SystemConfig

#: The default metric of a SUT with integer class labels.
CLASSIFICATION = "classification_accuracy"


def default_metric(labels: np.ndarray | None, declared: str | None) -> str | None:
    """The metric a SUT is scored with: its declared ``BuiltSUT.metric``, else
    ``classification_accuracy`` for integer labels; None when it has no labels."""
    if declared is not None:
        return declared
    if labels is None:
        return None
    return CLASSIFICATION if labels.dtype.kind in "iu" else None


def check_metric(name: str, where: str) -> Any:
    """The metric class ``name`` when it scores predictions against targets (a correctness
    metric with a direction); :class:`ConfigError` naming ``where`` otherwise."""
    cls = metrics.get(name)  # unknown names raise, listing the known ones
    if not getattr(cls, "uses_predictions", False) or getattr(cls, "higher_is_better", None) is None:
        raise ConfigError(f"{where}: metric {name!r} does not score predictions against targets "
                          "(use a correctness metric: classification_accuracy, sMAPE, MSE, r2)")
    return cls


def postprocess_of(rule: AccuracyRule | None, metric: str) -> str:
    """``argmax`` or ``identity``: the rule's, else argmax for classification only."""
    if rule is not None and rule.postprocess is not None:
        return rule.postprocess
    return "argmax" if metric == CLASSIFICATION else "identity"


def score_outputs(outputs: Mapping[int, np.ndarray], labels: np.ndarray, metric: str,
                  postprocess: str, where: str = "accuracy log") -> Score:
    """Score ``outputs`` (sample index -> the SUT's response) against ``labels[index]``.

    ``postprocess``: ``argmax`` takes the index of the largest entry of each response (class
    scores, shape (C,)); ``identity`` uses the response as the prediction, reshaped to the
    label's shape (one value for a scalar target). Samples are scored in index order.
    Raises :class:`DataError` naming ``where`` for no outputs, an index outside the labels,
    or responses that do not fit the labels.
    """
    import torch

    from neuromark.metrics.base import Step

    if not outputs:
        raise DataError(f"{where}: no responses to score")
    order = sorted(outputs)
    if order[0] < 0 or order[-1] >= len(labels):
        raise DataError(f"{where}: sample index {order[-1] if order[-1] >= 0 else order[0]} is "
                        f"outside the {len(labels)} labelled samples")
    shapes = {np.shape(outputs[i]) for i in order}
    if len(shapes) > 1:
        raise DataError(f"{where}: responses have different shapes {sorted(shapes)}")
    stacked = np.stack([np.asarray(outputs[i]) for i in order])
    truth = labels[order]
    if postprocess == "argmax":
        if stacked.ndim != 2 or stacked.shape[1] < 1:
            raise DataError(f"{where}: argmax needs 1-D class scores per response, got shape "
                            f"{stacked.shape[1:]}")
        predictions = stacked.argmax(axis=1)
    else:
        if stacked[0].size != truth[0].size:
            raise DataError(f"{where}: a response holds {stacked[0].size} value(s), the target "
                            f"{truth[0].size}; postprocess identity needs one prediction per "
                            "target value")
        predictions = stacked.reshape(truth.shape)
    cls = metrics.get(metric)
    scorer = cls()
    scorer.update(Step(0, torch.as_tensor(predictions), torch.as_tensor(truth), len(order)))
    return scorer.compute()


def accuracy_pass(run: LoadGenRun, built: Any, rule: AccuracyRule | None, entry: str,
                  details: dict[str, Any], scores: dict[str, Score]) -> None:
    """Score the AccuracyOnly ``run`` of SUT ``entry`` and judge it against ``rule``.

    Adds ``scores[<metric>]`` and ``details.accuracy``: ``metric``, ``postprocess``,
    ``samples`` (responses scored), ``log`` (the accuracy log), and with a target
    ``reference`` (figure), ``reference_source`` ("config" or "float_model"), ``target``,
    ``threshold``, ``relative``, ``higher_is_better``, ``verdict`` and ``reason``. An
    exemption is recorded as ``{"exempt": reason}``; a SUT with nothing to score and no
    rule as ``{"verdict": None, "note": ...}``. INVALID adds a flag naming the figure, the
    target and the reference.
    """
    flags = details["flags"]
    if rule is not None and rule.exempt is not None:
        details["accuracy"] = {"exempt": rule.exempt, "verdict": None}
        return
    metric = (rule.metric if rule is not None and rule.metric else None) or \
        default_metric(built.labels, getattr(built, "metric", None))
    if metric is None or built.labels is None:
        details["accuracy"] = {"verdict": None, "note": f"SUT {entry!r} gives no ground truth to "
                               "score; no quality target declared"}
        flags.append("accuracy not scored: no quality target declared (accuracy: {metric, "
                     "reference, target} or accuracy: {exempt: reason})")
        return
    post = postprocess_of(rule, metric)
    log = run.log_dir / ACCURACY
    outputs = read_accuracy_log(log, run.response_dtype)
    figure = score_outputs(outputs, built.labels, metric, post, where=str(log))
    scores[metric] = figure
    record: dict[str, Any] = {"metric": metric, "postprocess": post, "samples": len(outputs),
                              "log": str(log), "value": figure.value}
    details["accuracy"] = record
    references = _both_references(built, outputs, metric, post, entry, float(figure.value))
    record.update(references)
    quantized = references["quantized_reference"]
    if isinstance(quantized.get("value"), float):
        scores["quantized_reference_accuracy" if metric == CLASSIFICATION
               else f"quantized_reference_{metric}"] = Score(
            quantized["value"], unit=figure.unit, higher_is_better=figure.higher_is_better)
    if rule is None or not rule.judged:
        record.update(verdict=None, note="no quality target declared")
        flags.append(f"accuracy {metric} = {figure.value:.6g}: no quality target declared")
        return
    reference, source = _reference(rule, built, outputs, metric, post, entry)
    higher = bool(metrics.get(metric).higher_is_better)
    verdict = judge(float(figure.value), reference, float(rule.target), higher)
    if source == QUANTIZED_MODEL and verdict.get("reason"):
        verdict["reason"] = verdict["reason"].replace("float reference", "quantized reference")
    record.update(verdict, reference_source=source)
    if verdict["verdict"] == "INVALID":
        flags.append(f"accuracy INVALID: {metric} {verdict['reason']}")


def _both_references(built: Any, outputs: Mapping[int, np.ndarray], metric: str, post: str,
                     entry: str, value: float) -> dict[str, dict[str, Any]]:
    """``float_reference`` and ``quantized_reference`` of the accuracy pass (issue 57.4):
    each ``{value, gap, source}`` (``gap`` = the SUT's figure minus the reference's, in the
    metric's unit) where the SUT has that reference, else ``{value: None, reason}``."""
    out: dict[str, dict[str, Any]] = {}
    for key, attr, what in (("float_reference", "reference", "float model"),
                            ("quantized_reference", "quantized_reference", "quantized model")):
        model = getattr(built, attr, None)
        if model is None:
            out[key] = {"value": None, "reason": f"SUT {entry!r} has no {what} reference"}
            continue
        ref = _score_reference(model, built, outputs, metric, post, entry, what)
        source = (built.info.get(f"{key}_source") if isinstance(built.info, dict) else None)
        out[key] = {"value": ref, "gap": value - ref,
                    "source": source or f"the SUT's {what}, run untimed on the same samples"}
    return out


def _score_reference(model: Any, built: Any, outputs: Mapping[int, np.ndarray], metric: str,
                     post: str, entry: str, what: str) -> float:
    """A reference model's figure on the samples the accuracy log holds (index order)."""
    indices = sorted(outputs)
    responses = model(indices)
    if len(responses) != len(indices):
        raise DataError(f"SUT {entry!r}: its {what} reference returned {len(responses)} outputs "
                        f"for {len(indices)} samples")
    ref = score_outputs(dict(zip(indices, responses)), built.labels, metric, post,
                        where=f"SUT {entry!r} {what} reference")
    return float(ref.value)


def _reference(rule: AccuracyRule, built: Any, outputs: Mapping[int, np.ndarray], metric: str,
               post: str, entry: str) -> tuple[float, str]:
    """The reference figure: the config's number, or the SUT's float model run on the
    samples the accuracy log holds (in index order, untimed) and scored the same way."""
    if rule.reference not in (FLOAT_MODEL, QUANTIZED_MODEL):
        return float(rule.reference), "config"
    quantized = rule.reference == QUANTIZED_MODEL
    model = getattr(built, "quantized_reference" if quantized else "reference", None)
    if model is None:
        raise ConfigError(f"accuracy.reference: {rule.reference}: SUT {entry!r} has no "
                          + ("quantized reference model (BuiltSUT.quantized_reference)" if quantized
                             else "float reference model (BuiltSUT.reference)")
                          + "; give the reference's figure as a number")
    return (_score_reference(model, built, outputs, metric, post, entry,
                             "quantized" if quantized else "float"), str(rule.reference))


def check_rule(cfg: SystemConfig, built: BuiltSUT, config: ConfigFile | None) -> bool:
    """Check, before anything runs, that the config's accuracy rule fits the SUT: a scored
    rule needs labels, an exemption a SUT without them, ``reference: float_model`` a float
    reference model, and the metric must score predictions. Returns whether responses are scored by argmax
    (then checked as class scores)."""
    rule = cfg.accuracy_rule()
    where = (config or ConfigFile(data={})).where(("accuracy",))
    name = cfg.sut.name
    check_labels(built.labels, name, built.library.total_count, classes=False)  # an array at all
    if rule is None:
        return False
    if rule.exempt is not None:
        if built.labels is not None:
            raise ConfigError(f"{where}: accuracy.exempt: SUT {name!r} gives labels, so its "
                              "accuracy can be scored; declare a quality target instead "
                              "(accuracy: {metric, reference, target})")
        return False
    wants_score = cfg.accuracy is True or rule.judged or rule.metric is not None
    if built.labels is None:
        if wants_score:
            raise ConfigError(f"{where}: accuracy: SUT {name!r} has no labels to score; declare "
                              "accuracy: {exempt: <why no quality target applies>}")
        return False
    metric = rule.metric or default_metric(built.labels, built.metric)
    if metric is None:
        raise ConfigError(f"{where}: accuracy.metric: SUT {name!r} gives regression targets and "
                          "names no metric; set accuracy.metric (e.g. sMAPE)")
    check_metric(metric, f"{where}: accuracy.metric")
    if rule.reference == FLOAT_MODEL and built.reference is None:
        raise ConfigError(f"{where}: accuracy.reference: {FLOAT_MODEL}: SUT {name!r} (with these "
                          "options) has no float reference model; give the float model's figure "
                          "as a number")
    if rule.reference == QUANTIZED_MODEL and built.quantized_reference is None:
        raise ConfigError(f"{where}: accuracy.reference: {QUANTIZED_MODEL}: SUT {name!r} (with "
                          "these options) has no quantized reference model; use float_model or "
                          "give the reference's figure as a number")
    return postprocess_of(rule, metric) == "argmax" and built.labels.dtype.kind in "iu"


def accuracy(run: LoadGenRun, labels: np.ndarray) -> Score:
    """Score an AccuracyOnly log with our ``classification_accuracy`` metric: responses
    (1-D class scores) decoded with the recorded dtype, postprocessed by argmax."""
    log = run.log_dir / ACCURACY
    return score_outputs(read_accuracy_log(log, run.response_dtype), labels, CLASSIFICATION, "argmax",
                         where=str(log))


def accuracy_mode_run(run: LoadGenRun, settings: LoadGenSettings, sut: Any,
                      library: InMemoryLibrary, details: dict[str, Any], out_dir: Path) -> LoadGenRun:
    """The AccuracyOnly run a submission holds beside the performance run (every sample
    once, responses logged): ``run`` itself when that was one, else a new run."""
    if settings.mode == "AccuracyOnly":
        return run
    acc_settings = settings.model_copy(update={"mode": "AccuracyOnly"})
    acc_run = run_test(sut, library, acc_settings, out_dir / "loadgen" / "accuracyonly")
    details["loadgen"]["AccuracyOnly"] = {**acc_run.summary, "log_dir": str(acc_run.log_dir),
                                          "response_dtype": acc_run.response_dtype}
    return acc_run
