"""Probes that record layer activity ONCE per call, shared by all complexity metrics.

Three probes, switched on only when some metric requires them:
- ``"synops"``: per connection layer, effective ops (AC or MAC) and dense ops;
- ``"activations"``: per neuron layer, zero and total output elements;
- ``"membrane"``: per neuron layer with a membrane, elements whose membrane changed.

On CPU a probed call costs one fused kernel pass (:mod:`~neuromark.instrument.kernels`)
and Python integers; elsewhere (GPU, float16, bfloat16, or ``counting_path="torch"``) the
torch path (:mod:`~neuromark.instrument.deferred`) keeps what each probe needs and reduces
it once per batch, at :meth:`Instrument.collect`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from neuromark.errors import UnsupportedLayerError
from neuromark.instrument.arrays import LastArray
from neuromark.instrument.conv_counter import ConvCounter
from neuromark.instrument.coverage import CoveragePlan, plan_coverage
from neuromark.instrument.deferred import (
    Copies,
    KeepBudget,
    resolve_budget,
    resolve_counting_path,
)
from neuromark.instrument.elementwise_counter import ElementwiseCounter
from neuromark.instrument.intercept import OpCounter
from neuromark.instrument.layer_ops import RecurrentCounter, WeightCache
from neuromark.instrument.linear_counter import CellCounter, LinearCounter
from neuromark.instrument.membrane import NeuronCounter
from neuromark.instrument.steps import StepIndex
from neuromark.instrument.weight_values import WeightKinds, layer_weights
from neuromark.instrument.wrapping import Forward, ForwardWrapper
from neuromark.models.base import (
    CELL_TYPES,
    CONV_TYPES,
    RNN_TYPES,
    NeuronLayer,
    elementwise_weight,
)

PROBES = frozenset({"synops", "activations", "membrane"})


@dataclass
class LayerOps:
    """Operation counts of one connection layer over a batch (all samples summed).

    ``effective_acs``/``effective_macs`` split each sample's ops in each call by that
    sample's input (the per-sample rule); ``call_rule`` is (ACs, MACs) split by the whole
    call's input (neurobench's per-call rule)."""

    effective_acs: float = 0.0
    effective_macs: float = 0.0
    dense: float = 0.0
    #: recurrent cells only: (ACs, MACs) with each sample's ops classified by its input x
    #: alone, and the gate products (see
    #: :class:`~neuromark.instrument.linear_counter.CellCounter`)
    input_rule: tuple[float, float] | None = None
    gates: float = 0.0
    #: the same as ``input_rule`` with each whole call classified by the batch's x
    input_call_rule: tuple[float, float] | None = None
    call_rule: tuple[float, float] = (0.0, 0.0)
    #: the values the layer's weights take: "ternary" ({-1, 0, 1}), "power_of_two" or None
    #: (see :mod:`~neuromark.instrument.weight_values`)
    weight_values: str | None = None


@dataclass
class LayerActivity:
    """Neuron-layer counts over a batch: zero outputs, all outputs, membrane updates."""

    zeros: int = 0
    total: int = 0
    membrane_updates: int = 0


@dataclass
class Activity:
    """What the probes saw during one batch, keyed by unique dotted layer names (weights
    counted by interception: by the weight's dotted name).

    ``consumed`` names the parameters a counted operation used in this batch,
    ``activation_products`` counts activation x activation multiplications (not synaptic),
    ``coverage`` is the run's :class:`~neuromark.instrument.coverage.CoveragePlan` and
    ``uses`` the uncounted uses of intercepted parameters (op names), for messages;
    ``neuron_layers`` the probed :class:`~neuromark.models.base.NeuronLayer` by name (what
    neuron operations read their cost from)."""

    ops: dict[str, LayerOps] = field(default_factory=dict)
    neurons: dict[str, LayerActivity] = field(default_factory=dict)
    consumed: set[str] = field(default_factory=set)
    activation_products: float = 0.0
    coverage: CoveragePlan | None = None
    uses: dict[str, list[str]] = field(default_factory=dict)
    neuron_layers: dict[str, NeuronLayer] = field(default_factory=dict)


class _StateUpdate:
    """The connection layers already counted in the state update in progress (None: none
    in progress)."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: set[int] | None = None

    def first(self, key: int) -> bool:
        """Whether the layer ``key`` is called for the first time in this update."""
        if key in self.seen:  # type: ignore[operator]
            return False
        self.seen.add(key)  # type: ignore[union-attr]
        return True


def _connection_layers(adapter: Any) -> list[tuple[str, nn.Module]]:
    """The adapter's connection layers, unknown weight layers left to interception."""
    try:
        return adapter.connection_layers(strict=False)
    except TypeError:  # an adapter without the ``strict`` argument
        return adapter.connection_layers()


class Instrument:
    """Attach probes to an adapter's layers; use as a context manager.

    Each probed layer gets one forward wrapper (see :mod:`~neuromark.instrument.wrapping`)
    that records the probes' counts for the call; the adapter announces time steps so that
    Linear layers read them straight from the batch.

    Args:
        adapter: the model adapter whose layers are probed.
        probes: names from :data:`PROBES`.
        counting_path: ``"auto"`` (numba kernels for CPU float32/float64 tensors, the torch
            path for others) or ``"torch"`` (the torch path for all, e.g. to study it on
            CPU); None: the class attribute, else ``$NEUROMARK_COUNTING_PATH``, else auto.
        memory_budget: bytes the torch path may keep per batch (all layers); None: the
            class attribute, else ``$NEUROMARK_COUNT_BUDGET_MB``, else 2 GiB.

    Example:
        >>> with Instrument(adapter, {"synops"}) as probe:  # doctest: +SKIP
        ...     adapter(batch)
        ...     activity = probe.collect()
    """

    #: Whether ``"synops"`` sorts the parameters for coverage (and intercepts where some
    #: are not wrapped). Only ``bench/overhead.py`` turns it off, to time its cost.
    coverage = True
    #: Defaults of the ``counting_path`` and ``memory_budget`` arguments (None: from the
    #: environment), settable by tests and ``bench/overhead.py --torch-path``.
    counting_path: str | None = None
    memory_budget: int | None = None

    def __init__(self, adapter: Any, probes: Iterable[str], counting_path: str | None = None,
                 memory_budget: int | None = None) -> None:
        self.adapter = adapter
        self.probes = frozenset(probes)
        unknown = self.probes - PROBES
        if unknown:
            raise ValueError(f"unknown probes {sorted(unknown)}; known: {sorted(PROBES)}")
        path = resolve_counting_path(counting_path if counting_path is not None
                                     else type(self).counting_path)
        budget = KeepBudget(resolve_budget(memory_budget if memory_budget is not None
                                           else type(self).memory_budget))
        self._wrappers: list[ForwardWrapper] = []
        self._weights = WeightCache()
        self._steps = StepIndex(numpy=path == "auto")
        self._arrays = LastArray(numpy=path == "auto", budget=budget)
        self._matrices: dict[str, LinearCounter | ConvCounter | CellCounter | RecurrentCounter
                             | ElementwiseCounter] = {}
        self._neurons: dict[str, NeuronCounter] = {}
        self._neuron_layers: dict[str, NeuronLayer] = {}
        self._kinds, self._layer_weights = WeightKinds(), {}  # weight values per layer
        self.plan: CoveragePlan | None = None
        self.ops: OpCounter | None = None
        self._update = _StateUpdate()

    def __enter__(self) -> Instrument:
        self.attach()
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

    def attach(self) -> None:
        """Wrap the layers the requested probes need."""
        try:
            if "synops" in self.probes:
                layers = _connection_layers(self.adapter)
                for name, module in layers:
                    self._wrap_connection(name, module)
                self._wrap_state_updates()
                if self.coverage:
                    self._plan(layers)
            if self.probes & {"activations", "membrane"}:
                for layer in self.adapter.neuron_layers():
                    self._wrap_neuron(layer)
        except BaseException:
            self.detach()
            raise
        listeners = getattr(self.adapter, "step_listeners", None)
        if listeners is not None and self._matrices:
            listeners.append(self._steps.announce)

    def detach(self) -> None:
        for wrapper in reversed(self._wrappers):
            wrapper.remove()
        self._wrappers.clear()
        listeners = getattr(self.adapter, "step_listeners", None)
        if listeners is not None and self._steps.announce in listeners:
            listeners.remove(self._steps.announce)
        self._steps.clear()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Count nothing inside (e.g. an on-line learning rule that runs the network
        itself, with autograd): the layers' own forwards are restored and the adapter's
        time-step announcements go unheard; the probes resume as they were on exit.
        What was counted before stays for the next :meth:`collect`."""
        if not self._wrappers or getattr(self, "_paused", False):
            yield
            return
        self._paused = True
        for wrapper in reversed(self._wrappers):
            wrapper.remove()
        listeners = getattr(self.adapter, "step_listeners", None)
        heard = listeners is not None and self._steps.announce in listeners
        if heard:
            listeners.remove(self._steps.announce)
        try:
            yield
        finally:
            for wrapper in self._wrappers:
                wrapper.reinstall()
            if heard:
                listeners.append(self._steps.announce)
            self._paused = False

    def _wrap_connection(self, name: str, module: nn.Module) -> None:
        self._layer_weights[name] = layer_weights(module)
        update, key = self._update, id(module)
        if isinstance(module, (nn.Linear, *CONV_TYPES)):
            counter = LinearCounter(name, module, self._weights, self._steps, self._arrays) \
                if isinstance(module, nn.Linear) else ConvCounter(name, module, self._steps,
                                                                  self._arrays)
            self._matrices[name] = counter
            # the torch path forced: no kernel to try first
            add = counter._add_with_torch if isinstance(counter, LinearCounter) \
                and not self._arrays.numpy else counter.add

            def make(forward: Forward) -> Forward:
                def matrix_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    if update.seen is None or update.first(key):
                        add(args[0] if args else kwargs["input"])
                    return output
                return matrix_forward
        elif isinstance(module, (*CELL_TYPES, *RNN_TYPES)):
            recurrent = CellCounter(name, module, self._weights, self._steps, self._arrays) \
                if isinstance(module, CELL_TYPES) else RecurrentCounter(
                    name, module, self._weights, Copies(), self._arrays.budget)
            self._matrices[name] = recurrent
            add_call = recurrent.add_call

            def make(forward: Forward) -> Forward:
                def recurrent_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    if update.seen is None or update.first(key):
                        add_call(args, kwargs, output)
                    return output
                return recurrent_forward
        elif (attribute := elementwise_weight(module)) is not None:
            elementwise = self._matrices[name] = ElementwiseCounter(name, module, attribute)
            weight = elementwise.weight()
            self._layer_weights[name] = [weight] if weight is not None else []

            def make(forward: Forward) -> Forward:
                def elementwise_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    if update.seen is None or update.first(key):
                        elementwise.add(args[0] if args else next(iter(kwargs.values())),
                                        output)
                    return output
                return elementwise_forward
        else:
            raise UnsupportedLayerError(
                f"cannot count synaptic operations of {type(module).__name__} {name!r}")
        self._wrappers.append(ForwardWrapper(module, make))

    def _wrap_state_updates(self) -> None:
        """Within one state update of a neuron that owns connection layers (the adapter's
        ``state_updates``), count each connection layer once: snnTorch's reset to zero
        evaluates the update twice on the same state (:func:`~neuromark.models.base.
        find_state_updates`), which a chip would not."""
        finder = getattr(self.adapter, "state_updates", None)
        update = self._update

        def make(method: Forward) -> Forward:
            def counted_once(*args: Any, **kwargs: Any) -> Any:
                if update.seen is not None:  # nested: the outer update's scope holds
                    return method(*args, **kwargs)
                update.seen = set()
                try:
                    return method(*args, **kwargs)
                finally:
                    update.seen = None
            return counted_once

        for _, module, attribute in (finder() if finder is not None else ()):
            self._wrappers.append(ForwardWrapper(module, make, attribute))

    def _plan(self, layers: list[tuple[str, nn.Module]]) -> None:
        """Sort the parameters (:func:`plan_coverage`); where some are intercepted, enter
        an :class:`OpCounter` around their owners' forward and pause it inside the wrapped
        connection layers below them."""
        root = self.adapter.module
        self.plan = plan = plan_coverage(root, layers, getattr(self.adapter, "exempt_params", ()))
        if not plan.owners:
            return
        named = dict(root.named_parameters(remove_duplicate=False))
        tracked = {n for n in plan.params if n not in plan.exempt
                   and not any(n in names for names in plan.wrapped.values())}
        ops = self.ops = OpCounter(plan.ids, {n: named[n] for n in plan.params}, tracked)
        below = {id(m) for _, owner in plan.owners for m in owner.modules()}

        def enter(forward: Forward) -> Forward:
            def intercepted_forward(*args: Any, **kwargs: Any) -> Any:
                if ops.active:
                    return forward(*args, **kwargs)
                ops.active = True
                try:
                    with ops:
                        return forward(*args, **kwargs)
                finally:
                    ops.active = False
            return intercepted_forward

        def pause(forward: Forward) -> Forward:
            def paused_forward(*args: Any, **kwargs: Any) -> Any:
                ops.paused += 1
                try:
                    return forward(*args, **kwargs)
                finally:
                    ops.paused -= 1
            return paused_forward

        for _, module in layers:
            if id(module) in below:
                self._wrappers.append(ForwardWrapper(module, pause))
        for _, owner in plan.owners:
            self._wrappers.append(ForwardWrapper(owner, enter))

    def _weight_values(self, ops: dict[str, LayerOps]) -> None:
        """Each counted layer's :attr:`LayerOps.weight_values` (intercepted ones: by the
        weight's dotted name)."""
        for name, layer in ops.items():
            weights = self._layer_weights.get(name)
            if weights is None:
                named = dict(self.adapter.module.named_parameters(remove_duplicate=False))
                weights = self._layer_weights[name] = [named[name]] if name in named else []
            layer.weight_values = self._kinds.kind(weights) if layer.dense else None

    def _wrap_neuron(self, layer: NeuronLayer) -> None:
        counter = self._neurons[layer.name] = NeuronCounter(
            layer.name, layer.membrane if "membrane" in self.probes else None,
            "activations" in self.probes, self._arrays)
        self._neuron_layers[layer.name] = layer
        module = layer.module
        self._wrappers.append(ForwardWrapper(module, lambda forward: counter.wrap(module, forward)))

    def collect(self) -> Activity:
        """Sum what the probes recorded since the last call, and clear it."""
        activity = Activity()
        self._arrays.clear()
        self._arrays.budget.used = 0  # the torch path's kept tensors are reduced below
        wrapped = self.plan.wrapped if self.plan is not None else {}
        for name, counter in self._matrices.items():
            cell = counter.take_cell() if isinstance(counter, CellCounter) \
                else (None, 0.0, None)
            acs, macs, dense, call_acs, call_macs = counter.take()
            activity.ops[name] = LayerOps(acs, macs, dense, *cell,
                                          call_rule=(call_acs, call_macs))
            if dense or getattr(counter, "empty_seen", False):
                activity.consumed.update(wrapped.get(name, ()))
        activity.coverage = self.plan
        activity.neuron_layers = self._neuron_layers
        if self.ops is not None:
            for name, (acs, macs, dense, call_acs, call_macs) in self.ops.take().items():
                ops = activity.ops.setdefault(name, LayerOps())
                ops.effective_acs += acs
                ops.effective_macs += macs
                ops.dense += dense
                ops.call_rule = (ops.call_rule[0] + call_acs, ops.call_rule[1] + call_macs)
            activity.consumed |= self.ops.consumed
            activity.activation_products = self.ops.activation_products
            activity.uses = self.ops.uses
            self.ops.consumed = set()
            self.ops.activation_products = 0.0
            self.ops.refresh()
        self._weight_values(activity.ops)
        for name, counter in self._neurons.items():
            nonzeros, total, updates = counter.take()
            activity.neurons[name] = LayerActivity(zeros=total - nonzeros, total=total,
                                                   membrane_updates=updates)
        self._steps.clear()  # the batch's step tensors: not held while the next is made
        return activity
