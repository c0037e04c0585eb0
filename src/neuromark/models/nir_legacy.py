"""NIR files written by older NIR versions, whose stored types nir's type check refuses.

nir 1.x checks, on reading, that each edge joins an output type to an equal input type.
Files exported with NIR 0.x can fail it although their parameters are sound: Rockpool's
LIF export for the NIR paper (``lif_rockpool.nir``, NIR 0.2.0) stores the ``Output`` node
as ``[1, 1, 1]`` where its source gives ``[1]``. :func:`read_untyped` reads such a file with
``type_check=False``, then re-derives every type from what determines it:

- ``Linear`` / ``Affine``: input ``(weight.shape[1],)``, output ``(weight.shape[0],)``;
- neuron and element-wise nodes (LIF, CubaLIF, IF, LI, CubaLI, I, Scale, Threshold): the
  broadcast shape of their parameters, in and out;
- ``Input``: the input type of the node it feeds; ``Output``: the output type of its source
  (only where the stored type holds as many elements: a layout difference such as
  ``[1, 1, 1]`` for ``[1]``, never a different size);
- other nodes (convolutions, pooling, flatten) keep the types the file stores.

nir's type check then runs on the re-derived graph; a graph it still refuses is not read.

The caller says so: :func:`~neuromark.models.nir_model.read_graph` warns, and the model
block of the results records the note (``model.notes``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuromark.models.nir_check import ELEMENTWISE, _fields

#: The message start of nir's type-check failure.
TYPE_ERROR = "Type inference error"


def file_version(path: Path) -> str:
    """The ``version`` a ``.nir`` file records (``"?"`` when it records none)."""
    import h5py

    with h5py.File(path, "r") as f:
        value = f["version"][()] if "version" in f else b"?"
    return value.decode() if isinstance(value, bytes) else str(value)


def _derived(node: Any) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    kind = type(node).__name__
    fields = _fields(node)
    if kind in ("Linear", "Affine") and "weight" in fields and fields["weight"].ndim == 2:
        out, inp = fields["weight"].shape
        return (int(inp),), (int(out),)
    if kind in ELEMENTWISE and fields:
        shape = tuple(int(v) for v in np.broadcast_shapes(*(a.shape for a in fields.values())))
        return (shape, shape) if shape else None
    return None


def rederive_types(nodes: dict[str, Any], edges: list[tuple[str, str]]) -> list[str]:
    """Set each node's ``input_type`` / ``output_type`` from its parameters (module
    docstring); returns one line per type changed (``node: input [1, 1, 1] -> [1]``)."""
    changes: list[str] = []

    def put(name: str, which: str, shape: tuple[int, ...], same_size: bool = False) -> None:
        node = nodes[name]
        types = getattr(node, f"{which}_type", None)
        old = None if not isinstance(types, dict) else types.get(which)
        if same_size and old is not None and int(np.prod(old)) != int(np.prod(shape)):
            return  # a different size is an error in the file, not a layout to re-derive
        if old is None or np.atleast_1d(old).tolist() != list(shape):
            changes.append(f"{name}: {which} {None if old is None else np.atleast_1d(old).tolist()}"
                           f" -> {list(shape)}")
        setattr(node, f"{which}_type", {which: np.asarray(shape)})

    for name, node in nodes.items():
        shapes = _derived(node)
        if shapes is not None:
            put(name, "input", shapes[0])
            put(name, "output", shapes[1])
    for src, dst in edges:
        kind_src, kind_dst = type(nodes[src]).__name__, type(nodes[dst]).__name__
        if kind_src == "Input" and _derived(nodes[dst]) is not None:
            shape = _derived(nodes[dst])[0]  # type: ignore[index]
            put(src, "input", shape, same_size=True)
            put(src, "output", shape, same_size=True)
        if kind_dst == "Output" and _derived(nodes[src]) is not None:
            shape = _derived(nodes[src])[1]  # type: ignore[index]
            put(dst, "input", shape, same_size=True)
            put(dst, "output", shape, same_size=True)
    return changes


def read_untyped(nir: Any, path: Path) -> tuple[Any, str]:
    """(graph read without nir's type check with its types re-derived, the note saying so)."""
    graph = nir.read(str(path), type_check=False)
    changes = rederive_types(dict(graph.nodes), list(graph.edges))
    graph.check_types()  # ValueError: still inconsistent with types from the parameters
    reader = getattr(nir, "__version__", "?")
    note = (f"{path.name}: written by NIR {file_version(path)}; nir {reader} refused its "
            f"stored types, so it was read without nir's type check and the types were "
            f"re-derived from the parameters ({'; '.join(changes) or 'none changed'})")
    return graph, note
