"""Whether a model's weights are still as its factory built them (issue 45).

A config that leaves out ``checkpoint:`` scores randomly initialised weights, and a network
passed to :class:`~neuromark.runner.Benchmark` before training does too: figures that look
like any other. Such results carry :data:`UNTRAINED_FLAG`, on screen, in the results and on
the leaderboard, unless the model is declared untrained on purpose (``model.trained: false``
in a config, ``Benchmark(..., trained=False)``: timing-only entries) or trained (a loaded
checkpoint, a recipe or a fit in the run, ``trained: true``).

Where nothing is declared and no checkpoint is known (a network handed over in Python),
:func:`as_built` tests the weights against PyTorch's default initialisation: every weight
and bias of every ``Linear``, ``Conv*d`` and recurrent layer within the default bound
(``1/sqrt(fan_in)``; ``1/sqrt(hidden)`` for recurrent layers, the bounds of
``reset_parameters``) and spread as the uniform draw it came from (the Kolmogorov-Smirnov
distance under its 0.1 % critical value). Training moves weights off both within a few
optimiser steps. A network initialised otherwise (Xavier, a custom draw) is not recognised:
declare it.

A model whose weights were read from a file (a NIR graph, an ONNX file, a checkpoint) is
never flagged: its loader records the file in a ``weights_file`` attribute on the adapter
or its module (:func:`weights_file`), and the flag is only for a factory's own weights.
"""

from __future__ import annotations

import math

import torch
from torch import nn

#: The flag an untrained result carries.
UNTRAINED_FLAG = "untrained: weights as the factory built them"

_DEFAULT_INIT = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.RNN, nn.LSTM, nn.GRU,
                 nn.RNNCell, nn.LSTMCell, nn.GRUCell)
#: Kolmogorov-Smirnov critical value factor at the 0.1 % level (large-sample, Smirnov 1948).
_KS_CRITICAL = 1.95


def _bound(layer: nn.Module) -> float:
    """The default initialisation bound of ``layer``'s parameters."""
    if isinstance(layer, (nn.RNNBase, nn.RNNCellBase)):
        return 1.0 / math.sqrt(layer.hidden_size)
    weight = layer.weight
    fan_in = weight.shape[1] * math.prod(weight.shape[2:])
    return 1.0 / math.sqrt(fan_in)


def _uniform_draw(values: torch.Tensor, bound: float) -> bool:
    """Whether ``values`` lie in [-bound, bound] and spread as a uniform draw there."""
    flat = values.detach().reshape(-1).double().cpu()
    if flat.numel() == 0 or bool((flat.abs() > bound * (1 + 1e-6)).any()):
        return False
    n = flat.numel()
    if n < 16:
        return True  # too few to test the spread; within the bound
    ordered = (torch.sort(flat).values / bound + 1) / 2  # U(0, 1) under the hypothesis
    steps = torch.arange(1, n + 1, dtype=torch.float64) / n
    distance = max(float((steps - ordered).max()), float((ordered - (steps - 1 / n)).max()))
    return distance < _KS_CRITICAL / math.sqrt(n)


def as_built(module: nn.Module) -> bool:
    """Whether every default-initialised layer of ``module`` (at least one) still holds
    weights as PyTorch's default initialisation draws them (see the module docstring)."""
    layers = [m for m in module.modules() if isinstance(m, _DEFAULT_INIT)]
    if not layers:
        return False
    return all(_uniform_draw(p, _bound(layer)) for layer in layers
               for _, p in layer.named_parameters(recurse=False))


def weights_file(model: object) -> str | None:
    """The file ``model``'s weights were read from (its or its ``module``'s
    ``weights_file`` attribute, set by loaders such as the NIR import), or None."""
    for owner in (model, getattr(model, "module", None)):
        path = getattr(owner, "weights_file", None)
        if isinstance(path, str) and path:
            return path
    return None


def untrained_flag(module: object, trained: bool | None) -> str | None:
    """:data:`UNTRAINED_FLAG` when the model is not declared (``trained`` None), holds no
    weights read from a file (:func:`weights_file`) and its weights are as built
    (:func:`as_built`); None otherwise (declared either way, weights from a file, or a
    model that is not a torch module)."""
    if trained is not None or not isinstance(module, nn.Module) or weights_file(module):
        return None
    return UNTRAINED_FLAG if as_built(module) else None
