"""Quality targets of the system track: the accuracy rule a config declares and its verdict.

MLPerf Inference judges every run's accuracy pass against a target relative to the
reference (FP32) model: at least 99 % of its figure, or 99.9 % in a benchmark's
high-accuracy tier (MLCommons inference_policies, ``inference_rules.adoc``, "Benchmarks":
"99% of FP32 (76.46%)", "99% of FP32 and 99.9% of FP32"). A run below the target is not a
valid result, whatever its latency.
We apply the same rule to every system-track run, with the task's own metric:

- a higher-is-better figure (``classification_accuracy``, ``r2``) passes when
  ``figure >= target * reference``;
- a lower-is-better figure (``sMAPE``, ``MSE``: errors) passes when
  ``figure <= reference / target``; so ``target: 0.99`` allows an error about 1 % larger
  than the reference's (reference 10 % sMAPE: at most 10.101 %), the same relative
  slack as 99 % of an accuracy. (MLPerf's RNN-T takes 99 % of ``1 - WER`` instead; on the
  ESN's reference sMAPE of ~0.024 % that complement rule would pass ~80 times the
  reference's error, so we do not follow it: docs/system_track.md, "Accuracy rules".)

Config (``accuracy:`` of a ``task: system`` config)::

    accuracy: {metric: classification_accuracy, reference: float_model, target: 0.99}
    accuracy: {metric: sMAPE, reference: 0.42, target: 0.999}   # the float model's figure
    accuracy: {exempt: "pure timing: the SUT answers empty arrays"}

This module is pure (no metrics, no models): the system task and ``neuromark check`` both
judge with :func:`judge`.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from neuromark.config import StrictModel

#: MLPerf Inference's quality target (fraction of the reference model's figure).
MLPERF_TARGET = 0.99
#: ``reference: float_model``: the SUT's float reference model (``BuiltSUT.reference``) is
#: run on the same samples, untimed, and scored with the same metric.
FLOAT_MODEL = "float_model"
#: ``reference: quantized_model``: the SUT's validated quantized reference
#: (``BuiltSUT.quantized_reference``: for a chip, the SDK's own quantized model run in its
#: simulation or software engine), run and scored the same way. MLPerf Inference v5.1 judges
#: a quantized edge deployment this way (99 % ... of a quantized reference; "97 % of a
#: Q4_K_M reference", a 3 % one-sided band: ``target: 0.97``).
QUANTIZED_MODEL = "quantized_model"


class AccuracyRule(StrictModel):
    """``accuracy:``: how the accuracy pass is scored and the quality target it must meet.

    ``metric``: a correctness metric of :data:`neuromark.registry.metrics` scored on the
    SUT's outputs against the library's ground truth (default: the SUT's own, e.g.
    ``classification_accuracy`` for class labels, ``sMAPE`` for the ESN forecast);
    ``postprocess``: ``argmax`` (class scores -> class) or ``identity`` (the output is the
    prediction; default: argmax for ``classification_accuracy``, identity otherwise);
    ``reference``: the float model's figure (a number), ``float_model`` (computed) or
    ``quantized_model`` (the SUT's quantized reference, computed);
    ``target``: the fraction of the reference to reach (0.99; 0.999 high-accuracy tier;
    0.97 for MLPerf's 3 % one-sided band around a quantized reference);
    ``exempt``: why no target applies (a pure-timing SUT), instead of all the above.
    """

    metric: str | None = None
    postprocess: Literal["argmax", "identity"] | None = None
    reference: float | Literal["float_model", "quantized_model"] | None = None
    target: float | None = Field(None, gt=0, le=1)
    exempt: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_rule(self) -> AccuracyRule:
        if self.exempt is not None:
            given = [k for k in ("metric", "postprocess", "reference", "target")
                     if getattr(self, k) is not None]
            if given:
                raise ValueError(f"exempt says no quality target applies; remove {', '.join(given)}")
            return self
        if (self.reference is None) != (self.target is None):
            missing = "target (e.g. 0.99)" if self.target is None else \
                f"reference (the float model's figure, or {FLOAT_MODEL})"
            raise ValueError(f"a quality target needs both reference and target; give {missing}")
        if isinstance(self.reference, float) and not math.isfinite(self.reference):
            raise ValueError(f"reference {self.reference} is not a finite number")
        return self

    @property
    def judged(self) -> bool:
        """Whether this rule sets a quality target."""
        return self.target is not None


def threshold(reference: float, target: float, higher_is_better: bool) -> float:
    """The figure a run must reach: ``target * reference`` (higher is better) or
    ``reference / target`` (lower is better)."""
    return target * reference if higher_is_better else reference / target


def judge(value: float, reference: float, target: float, higher_is_better: bool) -> dict[str, Any]:
    """The verdict of one accuracy figure against its quality target.

    Returns ``{"value", "reference", "target", "threshold", "higher_is_better",
    "relative", "verdict", "reason"}``: ``relative`` is value / reference (a higher-is-better
    figure) or reference / value (lower is better), so it is comparable with ``target``;
    ``verdict`` is "VALID" or "INVALID"; ``reason`` names the figure, the target and the
    reference when INVALID (None otherwise). A higher-is-better target needs a positive
    reference, a lower-is-better one a non-negative reference: otherwise INVALID with that
    reason. NaN figures are INVALID.
    """
    out: dict[str, Any] = {"value": value, "reference": reference, "target": target,
                           "higher_is_better": higher_is_better, "threshold": None,
                           "relative": None}
    if not (math.isfinite(value) and math.isfinite(reference)):
        return {**out, "verdict": "INVALID", "reason": f"figure {value} or reference "
                f"{reference} is not finite"}
    if reference < 0 or (higher_is_better and reference == 0):
        return {**out, "verdict": "INVALID", "reason": f"reference {reference:.6g} cannot carry a "
                "relative quality target (it must be positive)"}
    limit = threshold(reference, target, higher_is_better)
    passed = value >= limit if higher_is_better else value <= limit
    relative = (value / reference if higher_is_better
                else (reference / value if value > 0 else math.inf))
    out.update(threshold=limit, relative=relative if math.isfinite(relative) else None,
               verdict="VALID" if passed else "INVALID")
    word = "below" if higher_is_better else "above"
    bound = ">=" if higher_is_better else "<="
    rule = (f"{target:g} x reference" if higher_is_better else f"reference / {target:g}")
    out["reason"] = None if passed else (
        f"{value:.6g} is {word} the quality target: needs {bound} {limit:.6g} ({rule}; "
        f"{target * 100:g} % of the float reference {reference:.6g})")
    return out


def describe(record: dict[str, Any]) -> str:
    """One line for a results file's ``details.accuracy`` (the terminal, the report, the
    checker): the figure, the target, the reference and the verdict, e.g.
    ``sMAPE 0.0244 <= 0.0246 (reference 0.0244 / 0.99; float_model): VALID``."""
    if record.get("exempt"):
        return f"no quality target: {record['exempt']}"
    metric, value = record.get("metric", "accuracy"), record.get("value")
    if record.get("threshold") is None and record.get("verdict") is None:
        shown = f"{metric} {value:.6g}: " if isinstance(value, (int, float)) else ""
        return shown + str(record.get("note") or "no quality target declared")
    if record.get("threshold") is None:
        return f"{metric} {value}: {record.get('verdict')} ({record.get('reason')})"
    higher = record.get("higher_is_better", True)
    target, reference = record["target"], record["reference"]
    rule = f"{target:g} x reference {reference:.6g}" if higher else \
        f"reference {reference:.6g} / {target:g}"
    source = record.get("reference_source", "config")
    return (f"{metric} {value:.6g} {'>=' if higher else '<='} {record['threshold']:.6g} needed "
            f"({rule}; reference from {source}): {record['verdict']}" + gaps_text(record))


def gaps_text(record: dict[str, Any]) -> str:
    """``"; float 0.75 (gap +0.0208), quantized reference 0.77 (gap 0)"``: the accuracy
    pass's two references and the mapped figure's gap to each (``""`` when neither is
    recorded)."""
    parts = []
    for key, name in (("float_reference", "float"), ("quantized_reference", "quantized reference")):
        ref = record.get(key)
        if isinstance(ref, dict) and isinstance(ref.get("value"), (int, float)):
            parts.append(f"{name} {ref['value']:.4g} (gap {ref['gap']:+.4g})")
        elif isinstance(ref, dict) and ref.get("reason"):
            parts.append(f"{name}: {ref['reason']}")
    return ("; " + ", ".join(parts)) if parts else ""
