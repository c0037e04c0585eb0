"""Decoding a classifier's output into classes, with the rule and its ties recorded: the
one argmax decoder of neuromark (the classification task's, and the API's postprocessors
:class:`ChooseMaxCount` and :class:`Argmax`).

Rules (``eval.postprocessor`` of a classification config):

- ``spike_count``: output spikes (B, T, K) -> the class with the most spikes (neurobench's
  ``ChooseMaxCount``); the default for spiking outputs of models without a training recipe.
- ``max_over_time`` / ``mean_over_time``: a readout (B, T, K) -> the class whose maximum /
  mean over time is largest (how the recipes' readouts are trained, ``train.readout``).
- ``argmax``: logits (B, K) -> the largest.

What a rule cannot decode is an error (:class:`~neuromark.errors.ModelOutputError`), never
a silent accuracy of 0: an output that is not a tensor (a tuple from a net's forward: say
which element is the output), of the wrong rank for the rule (``argmax`` on spike trains
(B, T, K) would read T x K "classes"), or with another number of class scores than the task
has classes (``num_classes``: the labels are ``0 .. num_classes - 1``). Each message names
the range and the rule to use.

A sample is *tied* when two or more classes share its top score: ``argmax`` then picks the
lowest index, which says nothing about the model. :class:`Decoder` counts such samples;
when more than :data:`TIE_FLAG_FRACTION` of them tie, the result carries a flag. Binary
spikes decoded by ``max_over_time`` tie on every class that ever spiked.

For the API (:class:`neuromark.runner.Benchmark`'s ``postprocessors``), NeuroBench's names:
:class:`ChooseMaxCount` is ``Decoder("spike_count")``, :class:`Argmax` ``Decoder("argmax")``.

Example:
    >>> import torch
    >>> d = Decoder("spike_count")
    >>> d(torch.tensor([[[1., 0.], [1., 1.]]])).tolist()
    [0]
    >>> d.tied, d.samples
    (0, 1)
"""

from __future__ import annotations

from typing import Any

from neuromark.errors import ModelOutputError

#: Decoding rules by name.
RULES = ("spike_count", "max_over_time", "mean_over_time", "argmax")
#: What each rule reads, for the messages.
RULE_SHAPES = ("spike_count, mean_over_time, max_over_time: (batch, time, classes); "
               "argmax: (batch, classes)")
#: Above this fraction of tied samples, the result is flagged.
TIE_FLAG_FRACTION = 0.05


def _scores(rule: str, output: Any) -> Any:
    """Per-class scores (B, K) of ``output`` under ``rule``; an output the rule cannot
    decode raises :class:`ModelOutputError` naming the rule to use."""
    if not hasattr(output, "dim") or not hasattr(output, "shape"):
        kind = type(output).__name__
        extra = (f" of {len(output)} items ({', '.join(type(o).__name__ for o in output[:4])})"
                 if isinstance(output, (tuple, list)) else "")
        raise ModelOutputError(
            f"decoding {rule!r} needs the model's output as one tensor, got a {kind}{extra}; "
            "a network whose forward returns several things (e.g. spikes and membrane) needs "
            "an adapter that picks the output: wrap it yourself (neuromark.models.adapter)")
    if output.dim() < 2 or output.is_complex():
        raise ModelOutputError(
            f"decoding {rule!r} needs per-class scores, (batch, classes) or (batch, time, "
            f"classes), got shape {tuple(output.shape)} ({output.dtype}); a model that already "
            "gives class indices needs no postprocessor")
    if rule == "argmax":
        extra = [size for size in output.shape[1:] if size != 1]
        if len(extra) > 1:  # (B, T, K) spike trains: flattening would read T x K "classes"
            raise ModelOutputError(
                f"decoding 'argmax' takes (batch, classes) logits, got shape "
                f"{tuple(output.shape)}: a time axis (batch, time, classes) would give "
                f"{output[0].numel()} 'classes'; use eval.postprocessor: spike_count for "
                "output spikes, mean_over_time or max_over_time for a readout over time")
        return output.reshape(output.shape[0], -1)
    if output.dim() != 3:
        raise ModelOutputError(
            f"decoding {rule!r} needs an output of shape (batch, time, classes), got "
            f"{tuple(output.shape)}; use eval.postprocessor: argmax for (batch, classes) logits")
    if rule == "spike_count":
        return output.sum(dim=1)
    if rule == "max_over_time":
        return output.max(dim=1).values
    return output.mean(dim=1)


class Decoder:
    """Postprocessor ``output -> classes (B,)`` by ``rule`` (:data:`RULES`), counting the
    samples seen and those whose top score is tied. ``num_classes`` (None: not checked):
    the task's classes; an output with another number of class scores is an error naming
    the label range."""

    def __init__(self, rule: str, num_classes: int | None = None) -> None:
        if rule not in RULES:
            raise ValueError(f"unknown decoding {rule!r}; one of {', '.join(RULES)}")
        self.rule = rule
        self.num_classes = num_classes
        self.samples = 0
        self.tied = 0

    def __call__(self, output: Any) -> Any:
        scores = _scores(self.rule, output)
        classes = scores.argmax(dim=-1)
        if self.num_classes is not None:
            self._check_range(output, scores, classes)
        top = scores.max(dim=-1, keepdim=True).values
        self.tied += int(((scores == top).sum(dim=-1) > 1).sum())
        self.samples += int(scores.shape[0])
        return classes

    def _check_range(self, output: Any, scores: Any, classes: Any) -> None:
        """Refuse class scores that cannot cover the labels ``0 .. num_classes - 1`` (fewer
        scores than classes) or predictions outside that range."""
        n, width = int(self.num_classes or 0), int(scores.shape[-1])
        top = int(classes.max()) if classes.numel() else -1
        if width >= n and top < n:
            return
        found = (f"gives {width} class scores per sample" if width < n else
                 f"predicts class {top} (of {width} scores per sample)")
        raise ModelOutputError(
            f"decoding {self.rule!r} of an output of shape {tuple(output.shape)} {found}, but "
            f"the task's labels are 0 .. {n - 1} ({n} classes): predictions outside that range "
            f"cannot be right. The last axis must hold one score per class ({RULE_SHAPES}); "
            f"choose the rule with eval.postprocessor (or the postprocessor argument)")

    def details(self) -> dict[str, Any]:
        """``{"rule", "samples", "tied_samples", "tied_fraction"}`` for the results."""
        fraction = self.tied / self.samples if self.samples else 0.0
        return {"rule": self.rule, "samples": self.samples, "tied_samples": self.tied,
                "tied_fraction": fraction}

    def flag(self) -> str | None:
        """A warning for the results when more than 5 % of samples tied, else None."""
        d = self.details()
        if d["tied_fraction"] <= TIE_FLAG_FRACTION:
            return None
        hint = ("" if self.rule == "spike_count" else
                " (binary spikes: try eval.postprocessor: spike_count)")
        return (f"decoding {self.rule}: {self.tied} of {self.samples} samples "
                f"({100 * d['tied_fraction']:.1f} %) have a tied top class, decided by the "
                f"lowest class index; the accuracy says little about the model{hint}")


def default_rule(output_shape: tuple[int, ...] | None, trained_readout: str | None) -> str:
    """The decoding used when a config names none: the model family's trained readout
    (``max`` / ``mean``) when it has one; else ``argmax`` for (B, K) outputs and
    ``spike_count`` for (B, T, K) outputs."""
    if trained_readout is not None:
        return "mean_over_time" if trained_readout == "mean" else "max_over_time"
    if output_shape is not None and len(output_shape) == 2:
        return "argmax"
    return "spike_count"


class AutoDecoder(Decoder):
    """A :class:`Decoder` whose rule is chosen on the first batch by :func:`default_rule`
    (no trained readout): ``argmax`` for (B, K) outputs, else ``spike_count``."""

    def __init__(self, num_classes: int | None = None) -> None:
        super().__init__("spike_count", num_classes)
        self.chosen = False

    def __call__(self, output: Any) -> Any:
        if not self.chosen and hasattr(output, "shape"):
            self.rule = default_rule(tuple(output.shape), None)
            self.chosen = True
        return super().__call__(output)


class ChooseMaxCount(Decoder):
    """NeuroBench's postprocessor for spiking outputs: spikes (B, T, K) -> the class with the
    most spikes (B,), the ``spike_count`` rule (ties counted, :meth:`Decoder.details`)."""

    def __init__(self) -> None:
        super().__init__("spike_count")


class Argmax(Decoder):
    """Postprocessor for logits: (B, K) -> the class with the largest logit (B,), the
    ``argmax`` rule (ties counted, :meth:`Decoder.details`)."""

    def __init__(self) -> None:
        super().__init__("argmax")
