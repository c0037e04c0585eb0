"""NIR graphs in and out: :func:`from_nir` builds a network the harness runs and counts;
:func:`to_nir` exports an snnTorch network through snnTorch's own exporter.

The import is our own mapping (nirtorch 2.x's interpreter builds an ``fx`` graph whose
modules hide the neuron state from our probes, and maps ``Flatten`` dims without the batch
offset): each node becomes a torch module, and :class:`NIRNetwork` runs one time step per
call. Edges into a node are summed (NIR's rule); an edge whose source has not run yet in
this step (a recurrent edge) carries that source's output of the previous step (zeros at
the first step). Subgraphs (``NIRGraph`` nodes, e.g. snnTorch's ``RLeaky``) are inlined.

Every parameter is checked before any module is built (:mod:`neuromark.models.nir_check`:
finite, positive time constants, consistent shapes, one input, no orphans, size limits).
Supported nodes: Input, Output, Affine, Linear, Conv1d, Conv2d, Flatten, AvgPool2d,
SumPool2d, Scale, Threshold, LIF, CubaLIF, LI, CubaLI, IF, I. Delay is not supported (it
needs a per-edge buffer the harness does not count); any other node raises naming it and
its type. Neuron dynamics: :mod:`neuromark.models.nir_neurons` (forward Euler at ``dt``).

Round trip with snnTorch 1.0 / nir 1.0.8: snnTorch exports ``Leaky``/``Synaptic`` only
with per-neuron tensors for beta (alpha) and threshold and an unbatched sample, so
:func:`to_nir` exports a copy with shared values broadcast per neuron; NIR's
neurons reset to ``v_reset``, so a subtract-reset net comes back as zero-reset (lossy;
docs/frameworks.md gives the measured difference). Zero-reset nets round-trip exactly.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.errors import DataError, UnsupportedLayerError, require
from neuromark.models import nir_neurons as nn_nir
from neuromark.models.nir_check import check_graph
from neuromark.models.nir_legacy import TYPE_ERROR, read_untyped
from neuromark.models.snntorch_model import SNNTorchModel


def _nir() -> Any:
    return require("nir", "nir")


def _tensor(value: Any) -> Tensor:
    return torch.as_tensor(np.asarray(value, dtype=np.float32))


def _ints(value: Any) -> Any:
    if isinstance(value, str):
        return value
    arr = np.atleast_1d(np.asarray(value)).astype(int)
    return int(arr[0]) if arr.size == 1 else tuple(int(v) for v in arr)


def _linear(weight: Any, bias: Any = None) -> nn.Linear:
    w = _tensor(weight)
    layer = nn.Linear(w.shape[1], w.shape[0], bias=bias is not None)
    with torch.no_grad():
        layer.weight.copy_(w)
        if bias is not None:
            layer.bias.copy_(_tensor(bias))
    return layer


def _conv(node: Any, dims: int) -> nn.Module:
    w = _tensor(node.weight)
    cls = nn.Conv1d if dims == 1 else nn.Conv2d
    bias = getattr(node, "bias", None)
    layer = cls(w.shape[1] * int(node.groups), w.shape[0], tuple(w.shape[2:]),
                stride=_ints(node.stride), padding=_ints(node.padding),
                dilation=_ints(node.dilation), groups=int(node.groups),
                bias=bias is not None and np.size(bias) > 0)
    with torch.no_grad():
        layer.weight.copy_(w)
        if layer.bias is not None:
            layer.bias.copy_(_tensor(bias).reshape(-1))
    return layer


def _flatten(node: Any) -> nn.Flatten:
    # NIR's dims leave out the batch dimension; torch's count it
    start, end = int(node.start_dim), int(node.end_dim)
    return nn.Flatten(start + 1 if start >= 0 else start, end + 1 if end >= 0 else end)


def node_module(name: str, node: Any, dt: float) -> nn.Module:
    """The torch module for NIR node ``node`` (named ``name`` in its graph)."""
    kind = type(node).__name__
    build = {
        "Input": lambda n: nn.Identity(),
        "Output": lambda n: nn.Identity(),
        "Affine": lambda n: _linear(n.weight, n.bias),
        "Linear": lambda n: _linear(n.weight),
        "Conv1d": lambda n: _conv(n, 1),
        "Conv2d": lambda n: _conv(n, 2),
        "Flatten": _flatten,
        "AvgPool2d": lambda n: nn.AvgPool2d(_ints(n.kernel_size), _ints(n.stride),
                                            _ints(n.padding)),
        "SumPool2d": lambda n: nn_nir.SumPool2d(n.kernel_size, n.stride, n.padding),
        "Scale": lambda n: nn_nir.Scale(n.scale),
        "Threshold": lambda n: nn_nir.Threshold(n.threshold),
        "LIF": lambda n: nn_nir.NIRLIF(n.tau, n.r, n.v_leak, n.v_threshold, n.v_reset, dt),
        "CubaLIF": lambda n: nn_nir.NIRLIF(n.tau_mem, n.r, n.v_leak, n.v_threshold, n.v_reset,
                                           dt, tau_syn=n.tau_syn, w_in=n.w_in),
        "IF": lambda n: nn_nir.NIRLIF(1.0, n.r, 0.0, n.v_threshold, n.v_reset, dt, leak=False),
        "LI": lambda n: nn_nir.NIRLI(n.tau, n.r, n.v_leak, dt),
        "CubaLI": lambda n: nn_nir.NIRLI(n.tau_mem, n.r, n.v_leak, dt, tau_syn=n.tau_syn,
                                         w_in=n.w_in),
        "I": lambda n: nn_nir.NIRLI(1.0, n.r, 0.0, dt, leak=False),
    }.get(kind)
    if build is None:
        raise UnsupportedLayerError(
            f"NIR node {name!r} of type {kind} is not supported by neuromark's NIR import "
            f"(supported: Input, Output, Affine, Linear, Conv1d, Conv2d, Flatten, AvgPool2d, "
            f"SumPool2d, Scale, Threshold, LIF, CubaLIF, LI, CubaLI, IF, I)")
    try:
        return build(node)
    except UnsupportedLayerError:
        raise
    except Exception as exc:
        raise DataError(f"NIR node {name!r} ({kind}): cannot build it: {type(exc).__name__}: "
                        f"{exc}") from exc


def flatten_graph(graph: Any, prefix: str = "") -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Nodes and edges of ``graph`` with subgraphs inlined (names ``sub.node``); a
    subgraph's Input and Output nodes stay as pass-through nodes."""
    nir = _nir()
    nodes: dict[str, Any] = {}
    edges: list[tuple[str, str]] = []
    ends: dict[str, tuple[list[str], list[str]]] = {}
    for key, node in graph.nodes.items():
        name = f"{prefix}{key}"
        if isinstance(node, nir.NIRGraph):
            sub_nodes, sub_edges = flatten_graph(node, f"{name}.")
            nodes.update(sub_nodes)
            edges.extend(sub_edges)
            ins = [f"{name}.{k}" for k, n in node.nodes.items() if isinstance(n, nir.Input)]
            outs = [f"{name}.{k}" for k, n in node.nodes.items() if isinstance(n, nir.Output)]
            if len(ins) != 1 or len(outs) != 1:
                raise DataError(f"NIR subgraph {name!r} needs one Input and one Output node, "
                                f"has {len(ins)} and {len(outs)}")
            ends[name] = (ins, outs)
        else:
            nodes[name] = node
    for src, dst in graph.edges:
        src, dst = f"{prefix}{src}", f"{prefix}{dst}"
        for name in (src, dst):
            if name not in nodes and name not in ends:
                raise DataError(f"NIR edge ({src!r}, {dst!r}) names an unknown node {name!r}")
        src = ends[src][1][0] if src in ends else src
        dst = ends[dst][0][0] if dst in ends else dst
        edges.append((src, dst))
    return nodes, edges


def _order(nodes: Iterable[str], edges: list[tuple[str, str]], inputs: list[str]) -> list[str]:
    """Nodes in run order: depth-first from the inputs, each after its non-recurrent
    predecessors (an edge that closes a cycle is recurrent)."""
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    for src, dst in edges:
        preds[dst].append(src)
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(node: str) -> None:
        if state.get(node) is not None:
            return  # done, or on the current path (a recurrent edge)
        state[node] = 0
        for p in preds[node]:
            visit(p)
        state[node] = 1
        order.append(node)

    for node in [*inputs, *preds]:
        visit(node)
    return order


class NIRNetwork(nn.Module):
    """A NIR graph as a torch network: one call is one time step, ``(B, *in) -> (B, *out)``.

    Modules are registered under their NIR node names (dots replaced by ``_``), so
    results and errors name the NIR node."""

    def __init__(self, graph: Any, dt: float = 1e-4) -> None:
        super().__init__()
        nir = _nir()
        nodes, edges = flatten_graph(graph)
        check_graph(nodes, edges, dt)  # finite, positive, consistent, connected, bounded
        self.inputs = [k for k, n in nodes.items() if isinstance(n, nir.Input) and "." not in k]
        self.outputs = [k for k, n in nodes.items() if isinstance(n, nir.Output) and "." not in k]
        self.names = {k: k.replace(".", "_") for k in nodes}
        self.layers = nn.ModuleDict({self.names[k]: node_module(k, n, dt)
                                     for k, n in nodes.items()})
        self.order = _order(nodes, edges, self.inputs)
        self.preds: dict[str, list[str]] = {k: [] for k in nodes}
        for src, dst in edges:
            self.preds[dst].append(src)
        self.shapes = {k: _shape(n) for k, n in nodes.items()}
        position = {node: i for i, node in enumerate(self.order)}
        #: sources of recurrent edges: their previous step's output is carried over
        self.recurrent_sources = sorted({p for node in self.order for p in self.preds[node]
                                         if position.get(p, len(position)) >= position[node]})
        self._last: dict[str, Tensor] = {}

    def reset_state(self) -> None:
        """Forget the previous step's outputs (recurrent edges start from zeros)."""
        self._last = {}

    def forward(self, x: Tensor) -> Tensor:
        done: dict[str, Tensor] = {}
        for node in self.order:
            if node == self.inputs[0]:
                value = x
            else:
                parts = [self._value(p, done, x) for p in self.preds[node]]
                value = parts[0] if len(parts) == 1 else torch.stack(
                    torch.broadcast_tensors(*parts)).sum(0)
            done[node] = self.layers[self.names[node]](value)
        self._last = done
        return done[self.outputs[0]]

    def recurrent_state(self) -> dict[str, Tensor]:
        """The outputs carried to the next step by recurrent edges (B, *shape), by node:
        state per sample, like a neuron's membrane."""
        return {f"{self.names[p]}.recurrent": self._last[p] for p in self.recurrent_sources
                if p in self._last}

    def _value(self, node: str, done: dict[str, Tensor], x: Tensor) -> Tensor:
        """``node``'s output in this step, else in the previous step (a recurrent edge),
        else zeros of its NIR output shape (the first step)."""
        if node in done:
            return done[node]
        if node in self._last:
            return self._last[node]
        shape = self.shapes.get(node)
        if shape is None:
            raise DataError(f"NIR node {node!r} feeds a recurrent edge but its output shape "
                            "is not in the graph (set its output_type)")
        return x.new_zeros((x.shape[0], *shape))


def _shape(node: Any) -> tuple[int, ...] | None:
    """A node's output shape without the batch dimension, from its NIR type, if known."""
    types = getattr(node, "output_type", None)
    shape = types.get("output") if isinstance(types, dict) else None
    if shape is None or np.size(shape) == 0:
        return None
    return tuple(int(v) for v in np.atleast_1d(shape))


def read_graph(graph_or_path: Any) -> Any:
    """A ``nir.NIRGraph`` as given, or read from a ``.nir`` file (see :func:`read_graph_noted`)."""
    return read_graph_noted(graph_or_path)[0]


def read_graph_noted(graph_or_path: Any) -> tuple[Any, tuple[str, ...]]:
    """(graph, notes): a ``nir.NIRGraph`` as given, or read from a ``.nir`` file. A file of
    an older NIR version whose stored types nir's type check refuses is read without the
    check and its types re-derived from the parameters
    (:func:`~neuromark.models.nir_legacy.read_untyped`), with a :class:`UserWarning` and a
    note saying so."""
    nir = _nir()
    if isinstance(graph_or_path, nir.NIRGraph):
        return graph_or_path, ()
    path = Path(graph_or_path)
    if not path.is_file():
        raise DataError(f"NIR file not found: {path}")
    try:
        return nir.read(str(path)), ()
    except ValueError as exc:
        if not str(exc).startswith(TYPE_ERROR):
            raise DataError(f"{path}: not a readable NIR file: ValueError: {exc}") from exc
        first = exc
    except Exception as exc:
        unknown = _unknown_node_types(nir, path)
        if unknown:
            raise DataError(f"{path}: " + "; ".join(
                f"node {name!r} has type {kind!r}" for name, kind in unknown)
                + f", which nir {getattr(nir, '__version__', '?')} does not know (known: "
                f"{', '.join(sorted(_known_types(nir)))})") from None
        raise DataError(f"{path}: not a readable NIR file: {type(exc).__name__}: {exc}") from exc
    try:
        graph, note = read_untyped(nir, path)
    except Exception as exc:
        raise DataError(f"{path}: not a readable NIR file: {first}; read without the type "
                        f"check: {type(exc).__name__}: {exc}") from exc
    warnings.warn(f"{note} (nir said: {first})", UserWarning, stacklevel=3)
    return graph, (note,)


def _known_types(nir: Any) -> set[str]:
    """Names of the node classes the installed nir defines."""
    found, todo = set(), [nir.NIRNode]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("nir") and sub.__name__ not in found:
                found.add(sub.__name__)
                todo.append(sub)
    return found


def _unknown_node_types(nir: Any, path: Path) -> list[tuple[str, str]]:
    """(node path, type) of every node of a ``.nir`` (HDF5) file whose ``type`` the
    installed nir does not define; [] when the file cannot be walked."""
    try:
        import h5py

        known, found = _known_types(nir), []
        with h5py.File(path, "r") as f:
            def walk(group: Any, prefix: str) -> None:
                for name, node in group.get("nodes", {}).items():
                    kind = node.get("type")
                    kind = kind[()] if kind is not None else b""
                    kind = kind.decode("utf-8", "replace") if isinstance(kind, bytes) else str(kind)
                    if kind not in known:
                        found.append((prefix + name, kind))
                    if kind == "NIRGraph":
                        walk(node, f"{prefix}{name}.")
            walk(f["node"], "")
        return found
    except Exception:  # noqa: BLE001 - only a better message is at stake
        return []


class NIRModel(SNNTorchModel):
    """The adapter of a :class:`NIRNetwork`: its state also holds the outputs its
    recurrent edges carry to the next step. ``notes`` say how the file was read where
    that departs from the plain path; they go into the results' model block."""

    notes: tuple[str, ...] = ()

    def state(self) -> dict[str, Tensor]:
        return {**super().state(), **self.module.recurrent_state()}


def from_nir(graph_or_path: Any, dt: float = 1e-4) -> SNNTorchModel:
    """A model adapter for a NIR graph (or ``.nir`` file): the network steps over the time
    dimension of (B, T, *features) batches and returns (B, T, *out)."""
    graph, notes = read_graph_noted(graph_or_path)
    model = NIRModel(NIRNetwork(graph, dt))
    model.notes = notes
    if not isinstance(graph_or_path, _nir().NIRGraph):  # weights read from a file: trained
        model.weights_file = model.module.weights_file = str(graph_or_path)
    return model


def nir_model(path: Path, dt: float = 1e-4) -> SNNTorchModel:
    """Registry entry ``nir``: ``model: {name: nir, options: {path: net.nir}}`` (a relative
    ``path`` lies in the config file's folder)."""
    if not dt > 0:
        raise ValueError(f"dt must be > 0 seconds, got {dt}")
    return from_nir(Path(path), dt)


# The export (snnTorch's exporter, shared parameters broadcast per neuron) lives in its own
# module; imported here so that ``from neuromark.models.nir_model import to_nir`` works.
from neuromark.models.nir_export import NO_NIR_NODE, per_neuron_copy, to_nir  # noqa: E402, F401
