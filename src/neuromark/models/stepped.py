"""A bare ``nn.Module`` that holds stepped neurons: wrapped with its framework's adapter, or
refused with a message naming the adapter (issue 45).

Spiking neurons of snnTorch, SpikingJelly, Norse, Sinabs and Rockpool keep state between
calls and must see one time step per call for the probes to count every step. A plain
:class:`~neuromark.models.torch_model.TorchModel` calls the network once per batch: an
snnTorch net then takes all T steps of a (B, T, C) batch as ONE step (a wrong accuracy, and
synaptic operations of one step, with no error). :func:`stepped_adapter` decides instead:

- snnTorch neurons in a network whose ``forward`` has no loop (``nn.Sequential``, or a
  forward that calls each layer once): one time step per call, so it is wrapped in
  :class:`~neuromark.models.snntorch_model.SNNTorchModel` (the figures are those of
  ``SNNTorchModel(net)``, and the results say so in ``details["adapter"]``);
- snnTorch neurons in a network whose ``forward`` loops (over time, or over its layers: the
  two cannot be told apart): refused, naming both adapters;
- snnTorch's whole-sequence neurons (``StateLeaky`` and the others of
  :data:`~neuromark.metrics.functional.snntorch_costs.WHOLE_SEQUENCE`): they take the whole
  ``(T, B, ...)`` sequence in one call, so a plain ``TorchModel`` is right (None);
- neurons of the other frameworks: refused, naming that framework's adapter (their calling
  conventions, state threading or whole-sequence layers, need it).

Neurons are recognised by their class's module and base-class names, without importing any
framework (the same classes the adapters count: snnTorch ``SpikingNeuron``, SpikingJelly
``BaseNode``, Norse cells, Sinabs ``StatefulLayer``, Rockpool ``LIFBaseTorch`` /
``LIFNeuronTorch``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from torch import nn

from neuromark.errors import UnsupportedLayerError
from neuromark.metrics.functional.snntorch_costs import WHOLE_SEQUENCE
from neuromark.models.snntorch_model import SNNTorchModel


@dataclass(frozen=True)
class SteppedFramework:
    """A framework whose neurons keep state between calls, and its adapter."""

    name: str
    module_prefix: str  # the top-level package of its neuron classes
    base_names: tuple[str, ...]  # class names in a neuron's MRO (any one matches)
    adapter: str  # the adapter's class name
    import_line: str  # how a user imports it


FRAMEWORKS: tuple[SteppedFramework, ...] = (
    SteppedFramework("snnTorch", "snntorch", ("SpikingNeuron",), "SNNTorchModel",
                     "from neuromark.models import SNNTorchModel"),
    SteppedFramework("SpikingJelly", "spikingjelly", ("BaseNode",), "SpikingJellyModel",
                     "from neuromark.models.spikingjelly_model import SpikingJellyModel"),
    SteppedFramework("Norse", "norse", ("LIFBoxCell", "LIFCell", "LICell", "LIBoxCell", "LIF",
                                        "LIFBox", "LI", "SNNCell", "SNN", "SNNRecurrentCell",
                                        "SNNRecurrent"),
                     "NorseModel", "from neuromark.models.norse_model import NorseModel"),
    SteppedFramework("Sinabs", "sinabs", ("StatefulLayer", "LIF", "IAF"), "SinabsModel",
                     "from neuromark.models.sinabs_model import SinabsModel"),
    SteppedFramework("Rockpool", "rockpool", ("LIFBaseTorch", "LIFNeuronTorch"), "RockpoolModel",
                     "from neuromark.models.rockpool_model import RockpoolModel"),
)


def _framework_of(module: nn.Module) -> SteppedFramework | None:
    """The framework whose stepped neuron ``module`` is, or None."""
    mro = type(module).__mro__
    for framework in FRAMEWORKS:
        ours = [cls for cls in mro if cls.__module__.split(".")[0] == framework.module_prefix]
        if any(cls.__name__ in framework.base_names for cls in ours):
            return framework
    return None


def stepped_neurons(root: nn.Module) -> list[tuple[str, nn.Module, SteppedFramework]]:
    """``[(dotted name, neuron, framework)]`` of every stepped neuron in ``root``."""
    found = []
    for name, module in root.named_modules():
        framework = _framework_of(module)
        if framework is not None and not any(name.startswith(n + ".") for n, _, _ in found):
            found.append((name or type(module).__name__, module, framework))
    return found


def forward_loops(root: nn.Module) -> bool:
    """Whether ``type(root).forward`` holds a ``for`` or ``while`` loop (or a comprehension);
    ``nn.Sequential``'s own forward counts as one call per layer (no loop). Source that
    cannot be read counts as a loop (undecidable)."""
    forward = type(root).forward
    if forward is nn.Sequential.forward:
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(forward)))
    except (OSError, TypeError, SyntaxError):
        return True
    loops = (ast.For, ast.While, ast.AsyncFor, ast.comprehension)
    return any(isinstance(node, loops) for node in ast.walk(tree))


def stepped_adapter(module: nn.Module) -> nn.Module | None:
    """The adapter a bare ``module`` needs when it holds stepped neurons (see the module
    docstring): an ``SNNTorchModel`` for a loop-free snnTorch network; None when it holds
    none (a plain ``TorchModel`` is right); else :class:`UnsupportedLayerError` naming the
    adapter to use."""
    neurons = stepped_neurons(module)
    if not neurons:
        return None
    name, neuron, framework = neurons[0]
    what = (f"model {type(module).__name__} holds {framework.name} neurons ({name!r}: "
            f"{type(neuron).__name__}, {len(neurons)} in all)")
    others = sorted({f.name for _, _, f in neurons} - {framework.name})
    if others:
        raise UnsupportedLayerError(f"{what} and {', '.join(others)} neurons: one adapter "
                                    "steps one framework; convert the network to one")
    if framework.name == "snnTorch":
        whole = [n for n, m, _ in neurons if type(m).__name__ in WHOLE_SEQUENCE]
        if whole:  # they take the whole (T, B, ...) sequence in one call: a plain call is right
            return None
        if not forward_loops(module):
            return SNNTorchModel(module)
        raise UnsupportedLayerError(
            f"{what}, and its forward loops, so neuromark cannot tell whether it takes one "
            "time step per call or loops over the time steps itself. Wrap it yourself: "
            "SNNTorchModel(net) when forward takes one step (B, features) and neuromark "
            "steps it over the batch's time dimension; TorchModel(net) when forward loops "
            "over the time dimension of (B, T, features) itself "
            "(from neuromark.models import SNNTorchModel, TorchModel)")
    raise UnsupportedLayerError(
        f"{what}: a plain call per batch would take all time steps as one step, or hide "
        f"them from the probes. Wrap it: {framework.adapter}(net) ({framework.import_line})")
