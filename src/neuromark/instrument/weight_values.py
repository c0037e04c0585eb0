"""Which values a layer's weights take, so that synaptic operations can count a
multiplication by a restricted weight as an accumulate (issue 31.2).

- ``"ternary"``: every weight value of the layer is -1, 0 or 1 (as stored): ``w x`` is
  ``x``, ``-x`` or nothing, an add or a subtract;
- ``"power_of_two"``: every value is 0 or +-2^k (integer k, e.g. 0.25, 2): ``w x`` is a
  shift of ``x`` (the metric counts these as accumulates only when asked,
  ``shift_as_ac``);
- a symmetric ``torch.ao`` fake-quant module whose levels lie in [-1, 1] declares ``"ternary"``;
- None: anything else (quantised-dtype tensors included: their stored integers are not the
  values multiplied).

A layer with several weight matrices (recurrent cells: ``weight_ih``, ``weight_hh``) is
ternary only when all are. Values are read once per weight version (in-place updates and
new storage are seen), so a learning rule that moves a weight off {-1, 0, 1} is seen at
the next collect.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from neuromark.instrument.weight_memo import WeightMemo


def value_kind(weight: Tensor) -> str | None:
    """``"ternary"``, ``"power_of_two"`` or None for one tensor (see the module)."""
    if weight.is_quantized or weight.is_complex() or weight.dtype == torch.bool:
        return None
    w = weight.detach()
    if not w.is_floating_point():
        w = w.double()
    # -1, 0 and 1 are 0 or +-2^k too: one of the first values that is neither rules out
    # both kinds without reading the rest (a trained float weight, ~1 ms per 100k values)
    if not _zero_or_power_of_two(w.reshape(-1)[:64]):
        return None
    if bool(((w == 0) | (w.abs() == 1)).all()):
        return "ternary"
    return "power_of_two" if _zero_or_power_of_two(w) else None


def _zero_or_power_of_two(w: Tensor) -> bool:
    """Whether every value of the floating-point ``w`` is 0 or +-2^k (integer k)."""
    mantissa, _ = torch.frexp(w)
    return bool(((w == 0) | (mantissa.abs() == 0.5)).all())


def combine(kinds: Sequence[str | None]) -> str | None:
    """The kind of a layer whose matrices have ``kinds``: the widest of them."""
    if not kinds or None in kinds:
        return None
    return "power_of_two" if "power_of_two" in kinds else "ternary"


def layer_weights(module: nn.Module) -> list[Tensor] | str:
    """The weight matrices of a connection layer (its parameters named ``weight*``), or
    ``"ternary"`` when a symmetric ``torch.ao`` fake-quant module declares its weight's
    levels within {-1, 0, 1} (an affine one shifts them by its zero point). QAT: the values
    multiplied are ``scale`` x {-1, 0, 1}; the one product by the scale per output is not
    counted."""
    fq = getattr(module, "weight_fake_quant", None)
    lo, hi = getattr(fq, "quant_min", None), getattr(fq, "quant_max", None)
    symmetric = "symmetric" in str(getattr(fq, "qscheme", ""))  # zero point 0
    if lo is not None and hi is not None and symmetric and -1 <= int(lo) and int(hi) <= 1:
        return "ternary"
    return [p for n, p in module.named_parameters(recurse=False) if n.startswith("weight")]


class WeightKinds:
    """:func:`value_kind` of weights, read again only when a weight changes (its version or
    its storage moves), for one run (see :mod:`~neuromark.instrument.weight_memo`)."""

    def __init__(self) -> None:
        #: (looked up by name at each call, so that a test can count the reads)
        self._memo: WeightMemo[str | None] = WeightMemo(lambda weight: value_kind(weight))

    def kind(self, weights: Sequence[Tensor] | str) -> str | None:
        """The layer kind of ``weights`` (:func:`combine`; a declared kind as it is)."""
        if isinstance(weights, str):
            return weights
        return combine([self._memo.get(w) for w in weights])
