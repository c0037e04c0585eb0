"""Synaptic operations of element-wise connections, ``y = x * w`` with one weight per neuron
(or one weight broadcast over all): snnTorch's ``RecurrentOneToOne``, the one-to-one
recurrence of ``RLeaky``/``RSynaptic`` with ``all_to_all=False``
(:func:`~neuromark.models.base.elementwise_weight`).

What a chip applies: one synapse per neuron and step, from the neuron's own last spike. So
per call, dense = the elements of ``y`` (per sample: the neurons, not neurons squared as a
dense recurrent matrix would be); effective = the elements where both ``x`` and the weight
are non-zero; ACs when the sample's ``x`` holds only -1, 0 and 1, else MACs (the same rule
as every connection layer, :mod:`~neuromark.instrument.call_totals`).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError
from neuromark.instrument.call_totals import CallTotals
from neuromark.metrics.functional.synops import masked_counts


class ElementwiseCounter(CallTotals):
    """Counts the calls of one element-wise connection ``module`` whose weight is the
    attribute ``attribute`` (a tensor, or a number).

    Inputs are batch-first, ``x`` (B, *features) with B samples; a 1-d ``x`` is one sample.
    The weight must broadcast over the features (scalar, or per neuron)."""

    def __init__(self, name: str, module: nn.Module, attribute: str) -> None:
        super().__init__(name)
        self.module, self.attribute = module, attribute

    def weight(self) -> Tensor | None:
        """The weight tensor (None when it is a plain number)."""
        value = getattr(self.module, self.attribute, None)
        return value if isinstance(value, Tensor) else None

    def add(self, x: Tensor, output: object) -> None:
        """One call on ``x``, whose result is ``output`` (the shape of ``x * weight``)."""
        if not isinstance(x, Tensor):
            return
        shape = output.shape if isinstance(output, Tensor) else x.shape
        if x.numel() == 0:
            self.empty_seen = True
            return
        batched = x.dim() >= 2
        samples = shape[0] if batched else 1
        features = tuple(shape[1:]) if batched else tuple(shape)
        weight = self.weight()
        mask = (weight != 0).to(device=x.device, dtype=torch.float64) if weight is not None \
            else torch.tensor(float(getattr(self.module, self.attribute) != 0),
                              dtype=torch.float64, device=x.device)
        try:
            per_element = mask.expand(features).reshape(-1)
        except RuntimeError as exc:
            raise UnsupportedLayerError(
                f"element-wise connection {self.name!r} ({type(self.module).__name__}): its "
                f"weight {self.attribute!r} of shape {tuple(mask.shape)} does not broadcast "
                f"over the features {features} of one sample") from exc
        rows = x.expand(shape).reshape(samples, -1)
        effective, residual = masked_counts(rows, per_element, 1)
        self.dense += rows.numel()
        self.pending.append((effective, residual))
