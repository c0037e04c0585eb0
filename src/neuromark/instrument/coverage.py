"""Which parameters the counters cover, found once per run before the first batch.

Every parameter tensor of a model is, for the synaptic-operation count, one of:
- **wrapped**: it belongs (at any depth, parametrisations included) to a connection layer
  that a forward wrapper counts (Linear, Conv, RNN/LSTM/GRU and cells);
- **exempt**: it applies no synapses (norm layers, ``Embedding``, ``PReLU``, spiking-neuron
  time constants and thresholds, modules with ``neuromark_no_synapses = True``) or its
  name is listed in ``exempt_params``; a neuron's own recurrent weights that it lists in
  ``neuromark_synaptic_params`` are not exempt but intercepted;
- **intercepted**: anything else. Operations on it are found by
  :class:`~neuromark.instrument.intercept.OpCounter`, active only inside the modules that
  own such parameters.

A parameter is *consumed* when a counted operation used it during the run. After the run,
every parameter that is neither consumed nor exempt is reported as uncovered. For the
message, the plan notes which parameters an ancestor's ``forward`` names directly (say
``F.linear(x, self.fc.weight)`` in the parent of ``fc``): their operations run outside the
owner, where neither its wrapper nor interception sees them, and exempting them would drop
those operations (:func:`neuromark.metrics.functional.coverage.coverage_message`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from torch import nn

from neuromark.models.base import NON_SYNAPTIC_TYPES, is_connection, is_spiking_neuron


@dataclass(frozen=True)
class ParamInfo:
    """One parameter tensor: dotted name, owning module path and type, shape, elements;
    ``parent_use``: an ancestor module whose ``forward`` names it directly, as
    ``"'path' (Type) uses `self.fc.weight`"`` (empty when none does)."""

    name: str
    module: str
    module_type: str
    shape: tuple[int, ...]
    numel: int
    parent_use: str = ""


@dataclass
class CoveragePlan:
    """The model's parameters sorted into wrapped, exempt and intercepted (see module doc).

    Attributes:
        params: every parameter tensor, by dotted name (shared tensors once, first name).
        ids: ``id(parameter)`` -> dotted name.
        exempt: dotted name -> why it is exempt.
        wrapped: connection-layer name -> the dotted names of its parameters.
        owners: modules (dotted name, module) that own intercepted parameters directly.
    """

    params: dict[str, ParamInfo] = field(default_factory=dict)
    ids: dict[int, str] = field(default_factory=dict)
    exempt: dict[str, str] = field(default_factory=dict)
    wrapped: dict[str, list[str]] = field(default_factory=dict)
    owners: list[tuple[str, nn.Module]] = field(default_factory=list)


def _exempt_reason(module: nn.Module) -> str | None:
    if getattr(module, "neuromark_no_synapses", False):
        return "neuromark_no_synapses"
    if is_spiking_neuron(module):
        return "neuron parameter"
    if isinstance(module, NON_SYNAPTIC_TYPES):
        return f"non-synaptic {type(module).__name__}"
    return None


def _declared_synaptic(owner: nn.Module, name: str) -> bool:
    """Whether ``owner`` (a neuron, say) declares its parameter ``name`` synaptic in
    ``neuromark_synaptic_params``: recurrent weights a neuron applies itself (Rockpool's
    ``LIFTorch.w_rec``), counted by interception rather than exempt as a neuron parameter."""
    return name.rpartition(".")[2] in getattr(owner, "neuromark_synaptic_params", ())


@lru_cache(maxsize=256)
def _forward_source(cls: type) -> tuple[str, str]:
    """(name of ``self``, source) of ``cls.forward`` when the class defines its own (not
    torch's); ``("", "")`` when it does not or its source cannot be read."""
    forward = getattr(cls, "forward", None)
    if forward is None or getattr(forward, "__module__", "").startswith("torch."):
        return "", ""
    try:
        first = next(iter(inspect.signature(forward).parameters), "self")
        return first, inspect.getsource(forward)
    except (OSError, TypeError, ValueError):
        return "", ""


def _parent_use(name: str, modules: dict[str, nn.Module]) -> str:
    """The nearest strict ancestor of parameter ``name`` whose forward names it as
    ``self.<relative name>``, described for the message; empty when none does."""
    parts = name.split(".")
    for depth in range(len(parts) - 2, -1, -1):
        path = ".".join(parts[:depth])
        module = modules.get(path)
        if module is None:
            continue
        me, source = _forward_source(type(module))
        relative = ".".join(parts[depth:])
        if source and re.search(rf"\b{re.escape(me)}\.{re.escape(relative)}\b", source):
            return f"{path or '<root>'!r} ({type(module).__name__}) uses `{me}.{relative}`"
    return ""


def _listed(name: str, exempt_params: Iterable[str]) -> bool:
    """``name`` is listed, or lies under a listed module path."""
    return any(name == e or name.startswith(e + ".") for e in exempt_params)


def plan_coverage(root: nn.Module, connection_layers: list[tuple[str, nn.Module]],
                  exempt_params: Iterable[str] = ()) -> CoveragePlan:
    """Sort ``root``'s parameters; ``connection_layers`` are the wrapped layers (unique
    dotted names, as the adapter reports them). Unknown ``exempt_params`` raise."""
    exempt_params = list(exempt_params)
    plan = CoveragePlan()
    layer_of = {id(module): name for name, module in connection_layers}
    modules = dict(root.named_modules(remove_duplicate=False))
    names = set()
    def enclosing(path: str) -> tuple[str | None, str | None]:
        """(wrapped layer, exempt reason) of the innermost deciding module around ``path``."""
        parts = path.split(".") if path else []
        for depth in range(len(parts), -1, -1):
            module = modules[".".join(parts[:depth])]
            if id(module) in layer_of and is_connection(module):
                return layer_of[id(module)], None
            reason = _exempt_reason(module)
            if reason:
                return None, reason
        return None, None

    for name, param in root.named_parameters(remove_duplicate=False):
        names.add(name)
        path, _, _ = name.rpartition(".")
        wrapped, reason = enclosing(path)
        first = plan.ids.get(id(param))
        if first is not None:  # a shared parameter: any layer using it covers it
            if wrapped is not None and first not in plan.wrapped.get(wrapped, []):
                plan.wrapped.setdefault(wrapped, []).append(first)
            continue
        owner = modules[path]
        plan.ids[id(param)] = name
        plan.params[name] = ParamInfo(name, path or "<root>", type(owner).__name__,
                                      tuple(param.shape), param.numel(),
                                      _parent_use(name, modules) if path else "")
        if _listed(name, exempt_params):
            plan.exempt[name] = "exempt_params"
        elif wrapped is not None:
            plan.wrapped.setdefault(wrapped, []).append(name)
        elif reason is not None and not _declared_synaptic(owner, name):
            plan.exempt[name] = reason
        elif not any(m is owner for _, m in plan.owners):
            plan.owners.append((path or "<root>", owner))
    unknown = [e for e in exempt_params
               if not any(n == e or n.startswith(e + ".") for n in names)]
    if unknown:
        raise ValueError(f"exempt_params {unknown} name no parameter or module of the model; "
                         f"parameters: {sorted(names)[:20]}")
    return plan
