"""The input contract of the NIR import, checked on the flattened graph before any module
is built (:func:`check_graph`); every error names the node and the field.

- **Sizes**: at most :data:`MAX_NODES` nodes, at most :data:`MAX_PARAMETERS` parameter
  values in all, and no declared shape (``input_type``/``output_type``) with more than
  :data:`MAX_PARAMETERS` elements or a dimension below 1.
- **Finite**: every numeric field of every node (weights, biases, time constants,
  thresholds, resistances, leaks, resets, scales) holds finite values: a NaN membrane never
  spikes, so a NaN parameter would silently lower accuracy instead of failing the output check.
- **Neuron models**: time constants (``tau``, ``tau_mem``, ``tau_syn``) > 0 and at least
  the simulation step ``dt``: the forward-Euler update (:mod:`~neuromark.models.nir_neurons`)
  keeps ``1 - dt/tau`` of the state per step, which is negative for ``tau < dt`` (the
  membrane flips sign every step; below ``dt/2`` it grows without bound), while NIR's
  continuous-time leak only ever decays (Pedersen et al. 2024); a spiking
  neuron's ``v_threshold`` lies above its ``v_reset`` (for the usual ``v_reset = 0``: a
  positive threshold; NIR allows physical units such as ``v_reset = -70``,
  ``v_threshold = -50``); a ``Threshold`` node's ``threshold`` > 0 (its input at rest is
  0, so a threshold at or below it spikes every step); per-neuron fields broadcast to one shape.
- **Shapes**: ``Linear``/``Affine`` weights are 2-D with a bias of their output size; on
  each edge the source's output shape equals the target's input shape where both are
  declared (an element-wise node with one value broadcasts).
- **Structure**: exactly one ``Input`` and one ``Output`` node at the top level; no orphan
  node (each is reached from the Input and reaches the Output). ``nir`` gives a node
  without predecessors its own Input (``input_<name>``); that is reported as the orphan it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from neuromark.errors import DataError

MAX_NODES = 10_000  #: nodes of a graph, subgraphs inlined
MAX_PARAMETERS = 100_000_000  #: parameter values of a graph in all (400 MB as float32)

#: time constants that must be > 0, per node type
TIME_CONSTANTS = {"LIF": ("tau",), "CubaLIF": ("tau_mem", "tau_syn"), "LI": ("tau",),
                  "CubaLI": ("tau_mem", "tau_syn")}
SPIKING = ("LIF", "CubaLIF", "IF")
ELEMENTWISE = ("LIF", "CubaLIF", "IF", "LI", "CubaLI", "I", "Scale", "Threshold")
_SKIP = ("metadata", "input_type", "output_type")


def _fields(node: Any) -> dict[str, np.ndarray]:
    """The numeric fields of a node, as arrays (None and non-numeric fields left out)."""
    out = {}
    if not dataclasses.is_dataclass(node):
        return out
    for field in dataclasses.fields(node):
        value = getattr(node, field.name, None)
        if field.name in _SKIP or value is None or isinstance(value, str):
            continue
        try:
            arr = np.asarray(value)
        except Exception:  # noqa: BLE001 - a field numpy cannot read is not a parameter
            continue
        if arr.dtype.kind in "biuf":
            out[field.name] = arr
    return out


def _types(node: Any, which: str) -> np.ndarray | None:
    types = getattr(node, f"{which}_type", None)
    shape = types.get(which) if isinstance(types, dict) else None
    if shape is None or np.size(shape) == 0 or np.asarray(shape).dtype.kind not in "iuf":
        return None
    return np.atleast_1d(np.asarray(shape))


def _check_node(name: str, node: Any, dt: float | None = None) -> int:
    """Check one node's fields (time constants against the step ``dt`` in s, when given);
    returns its number of parameter values."""
    kind = type(node).__name__
    fields = _fields(node)
    for key, arr in fields.items():
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
            raise DataError(f"NIR node {name!r} ({kind}): field {key!r} holds a non-finite value "
                            f"({arr.ravel()[bad]} at flat index {bad}); every parameter must be finite")
    for key in TIME_CONSTANTS.get(kind, ()):
        if key in fields and not (fields[key] > 0).all():
            raise DataError(f"NIR node {name!r} ({kind}): field {key!r} must be > 0 (a time "
                            f"constant in s), got min {fields[key].min():g}")
        if key in fields and dt is not None and not (fields[key] >= dt).all():
            tau = float(fields[key].min())
            raise DataError(f"NIR node {name!r} ({kind}): field {key!r} = {tau:g} s is below the "
                            f"step dt = {dt:g} s: forward Euler keeps 1 - dt/tau = {1 - dt / tau:.3g} "
                            "of the state per step, a sign flip NIR's leak never makes; import "
                            f"with dt <= {tau:g} or a larger {key}")
    if kind in SPIKING and "v_threshold" in fields:
        reset = fields.get("v_reset", np.zeros(1))
        if not (fields["v_threshold"] > reset).all():
            raise DataError(f"NIR node {name!r} ({kind}): field 'v_threshold' must lie above "
                            f"v_reset (min {fields['v_threshold'].min():g}, v_reset max "
                            f"{np.max(reset):g})")
    if kind == "Threshold" and "threshold" in fields and not (fields["threshold"] > 0).all():
        raise DataError(f"NIR node {name!r} (Threshold): field 'threshold' must be > 0 (a node at "
                        f"rest, input 0, would spike every step), got min {fields['threshold'].min():g}")
    if kind in ELEMENTWISE:
        try:
            np.broadcast_shapes(*(a.shape for a in fields.values()))
        except ValueError:
            shapes = {k: a.shape for k, a in fields.items()}
            raise DataError(f"NIR node {name!r} ({kind}): per-neuron fields of different "
                            f"shapes {shapes}") from None
    if kind in ("Linear", "Affine"):
        w = fields.get("weight")
        if w is None or w.ndim != 2:
            raise DataError(f"NIR node {name!r} ({kind}): field 'weight' must be 2-D "
                            f"(out, in), got shape {None if w is None else w.shape}")
        bias = fields.get("bias")
        if bias is not None and bias.size not in (1, w.shape[0]):
            raise DataError(f"NIR node {name!r} ({kind}): field 'bias' has {bias.size} values, "
                            f"the weight {w.shape[0]} outputs")
    for which in ("input", "output"):
        shape = _types(node, which)
        if shape is not None and ((shape < 1).any() or np.prod(shape, dtype=float) > MAX_PARAMETERS):
            raise DataError(f"NIR node {name!r} ({kind}): {which}_type {shape.tolist()} must have "
                            f"dimensions >= 1 and at most {MAX_PARAMETERS:,} elements")
    return sum(int(a.size) for a in fields.values())


def _check_edges(nodes: dict[str, Any], edges: list[tuple[str, str]]) -> None:
    for src, dst in edges:
        out, inp = _types(nodes[src], "output"), _types(nodes[dst], "input")
        if out is None or inp is None or np.array_equal(out, inp):
            continue
        if any(type(nodes[k]).__name__ in ELEMENTWISE and np.prod(shape) == 1
               for k, shape in ((dst, inp), (src, out))):
            continue  # an element-wise node with one value for all neurons broadcasts
        raise DataError(f"NIR edge ({src!r}, {dst!r}): node {src!r} outputs shape {out.tolist()}, "
                        f"node {dst!r} ({type(nodes[dst]).__name__}) takes input_type "
                        f"{inp.tolist()}")


def _reach(start: list[str], links: dict[str, list[str]]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in links[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _check_structure(nodes: dict[str, Any], edges: list[tuple[str, str]]) -> None:
    kinds = {k: type(n).__name__ for k, n in nodes.items()}
    inputs = [k for k in nodes if kinds[k] == "Input" and "." not in k]
    outputs = [k for k in nodes if kinds[k] == "Output" and "." not in k]
    succ: dict[str, list[str]] = {k: [] for k in nodes}
    pred: dict[str, list[str]] = {k: [] for k in nodes}
    for src, dst in edges:
        succ[src].append(dst)
        pred[dst].append(src)
    added = [k for k in inputs if k.startswith("input_") and succ[k] == [k[len("input_"):]]]
    if len(inputs) > 1 and added:
        orphan = succ[added[0]][0]
        raise DataError(f"NIR node {orphan!r} ({kinds[orphan]}) is an orphan: no edge reaches it "
                        f"from the graph's input (nir gave it its own Input node {added[0]!r})")
    if len(inputs) != 1 or len(outputs) != 1:
        raise DataError(f"a NIR graph for neuromark needs exactly one Input and one Output node, "
                        f"got inputs {inputs} and outputs {outputs}")
    from_input, to_output = _reach(inputs, succ), _reach(outputs, pred)
    for name in nodes:
        if name not in from_input or name not in to_output:
            side = "is not reached from the Input" if name not in from_input \
                else "does not reach the Output"
            raise DataError(f"NIR node {name!r} ({kinds[name]}) is an orphan: it {side} "
                            f"{inputs[0] if name not in from_input else outputs[0]!r}")


def check_graph(nodes: dict[str, Any], edges: list[tuple[str, str]], dt: float | None = None) -> None:
    """Check a flattened graph (:func:`neuromark.models.nir_model.flatten_graph`) against the
    contract of the module docstring (time constants against the step ``dt`` in s, when
    given); raises :class:`DataError` naming node and field."""
    if dt is not None and not (np.isfinite(dt) and dt > 0):
        raise DataError(f"NIR import: dt = {dt!r} must be a finite step > 0 in seconds")
    if len(nodes) > MAX_NODES:
        raise DataError(f"a NIR graph has {len(nodes):,} nodes; neuromark imports at most "
                        f"{MAX_NODES:,} (subgraphs inlined)")
    total = 0
    for name, node in nodes.items():
        total += _check_node(name, node, dt)
        if total > MAX_PARAMETERS:
            raise DataError(f"NIR node {name!r}: the graph's parameters exceed "
                            f"{MAX_PARAMETERS:,} values in all")
    _check_structure(nodes, edges)
    _check_edges(nodes, edges)
