"""Decoding a classifier's output into classes, with the rule and its ties recorded: the
one argmax decoder of neuromark (the classification task's, and the API's postprocessors
:class:`ChooseMaxCount` and :class:`Argmax`).

Rules (``eval.postprocessor`` of a classification config):

- ``spike_count``: output spikes (B, T, K) -> the class with the most spikes (neurobench's
  ``ChooseMaxCount``); the default for spiking outputs of models without a training recipe.
- ``max_over_time`` / ``mean_over_time``: a readout (B, T, K) -> the class whose maximum /
  mean over time is largest (how the recipes' readouts are trained, ``train.readout``).
- ``argmax``: logits (B, K) -> the largest.

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

#: Decoding rules by name.
RULES = ("spike_count", "max_over_time", "mean_over_time", "argmax")
#: Above this fraction of tied samples, the result is flagged.
TIE_FLAG_FRACTION = 0.05


def _scores(rule: str, output: Any) -> Any:
    """Per-class scores (B, K) of ``output`` under ``rule``."""
    if rule == "argmax":
        return output if output.dim() == 2 else output.reshape(output.shape[0], -1)
    if output.dim() != 3:
        raise ValueError(f"decoding {rule!r} needs an output of shape (batch, time, classes), "
                         f"got {tuple(output.shape)}; use eval.postprocessor: argmax for "
                         "(batch, classes) logits")
    if rule == "spike_count":
        return output.sum(dim=1)
    if rule == "max_over_time":
        return output.max(dim=1).values
    return output.mean(dim=1)


class Decoder:
    """Postprocessor ``output -> classes (B,)`` by ``rule`` (:data:`RULES`), counting the
    samples seen and those whose top score is tied."""

    def __init__(self, rule: str) -> None:
        if rule not in RULES:
            raise ValueError(f"unknown decoding {rule!r}; one of {', '.join(RULES)}")
        self.rule = rule
        self.samples = 0
        self.tied = 0

    def __call__(self, output: Any) -> Any:
        scores = _scores(self.rule, output)
        top = scores.max(dim=-1, keepdim=True).values
        self.tied += int(((scores == top).sum(dim=-1) > 1).sum())
        self.samples += int(scores.shape[0])
        return scores.argmax(dim=-1)

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

    def __init__(self) -> None:
        super().__init__("spike_count")
        self.chosen = False

    def __call__(self, output: Any) -> Any:
        if not self.chosen:
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
