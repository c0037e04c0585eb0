"""A NIR path to Xylo (issue 44, part 3): a NIR graph neuromark exports (e.g. an snnTorch
``Linear -> Synaptic`` net through :func:`neuromark.models.nir_model.to_nir`) goes through
Rockpool's NIR import to the Xylo mapper and XyloSim (or a board), and the Rockpool network
goes back to NIR, which neuromark's own NIR reader runs and counts with the harness. So one
model compares across a CPU (neuromark's NIR network), a simulator (XyloSim) and a chip.

Rockpool's importer (``rockpool.nn.modules.torch.nir.from_nir``) turns ``Linear`` into
``LinearTorch`` and ``CubaLIF`` into ``LIFTorch``; the Xylo mapper then needs a bias-free
``Linear -> CubaLIF -> Linear -> CubaLIF`` chain (``Affine`` biases break its design rules)
within Xylo Audio 2's limits. A graph it refuses gets :class:`ConfigError` with the
mapper's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neuromark.errors import ConfigError


@dataclass
class XyloDeployment:
    """A NIR graph on Xylo: ``net`` the float Rockpool network Rockpool built from it,
    ``quantised`` the Xylo specification (``global_quantize`` of the mapper's output),
    ``dt_s`` the time step Rockpool derived from the neurons (``tau_mem / (1 + r)``)."""

    net: Any
    quantised: dict[str, Any]
    dt_s: float
    inputs: int
    outputs: int


#: Why a NIR node type cannot go to Xylo Audio 2 (the rule), by type.
RULES = {
    "Affine": "Xylo's synapses have no bias: export the layer without one (nir.Linear)",
    "Conv1d": "Xylo Audio 2 has no convolution: only dense input, recurrent and output weights",
    "Conv2d": "Xylo Audio 2 has no convolution: only dense input, recurrent and output weights",
    "LIF": "Xylo neurons are current-based: use CubaLIF (a synaptic current and a membrane)",
    "IF": "Xylo neurons leak: use CubaLIF with Xylo's time constants",
    "LI": "Xylo's output layer spikes: use CubaLIF",
    "CubaLI": "Xylo's output layer spikes: use CubaLIF",
}
#: Xylo Audio 2's limits as rockpool 3.1.0's mapper checks them (inputs, hidden, outputs).
LIMITS = {"input channels": 16, "hidden neurons": 1000, "output neurons": 8}


def check_xylo_rules(graph: Any) -> None:
    """Refuse, before Rockpool sees it, a NIR graph that Xylo Audio 2 cannot hold, naming the
    layer (node) and the rule: node types other than ``Input``, ``Output``, bias-free
    ``Linear`` and ``CubaLIF`` (:data:`RULES`), and layer sizes above :data:`LIMITS`."""
    import numpy as np

    for name, node in graph.nodes.items():
        kind = type(node).__name__
        if kind not in ("Input", "Output", "Linear", "CubaLIF"):
            rule = RULES.get(kind, "only bias-free Linear and CubaLIF layers map onto Xylo")
            raise ConfigError(f"NIR graph: layer {name!r} ({kind}) cannot go to Xylo Audio 2: "
                              f"{rule}")
    neurons = [n for n, node in graph.nodes.items() if type(node).__name__ == "CubaLIF"]
    sizes = {n: int(np.asarray(graph.nodes[n].tau_mem).size) for n in neurons}
    linears = [(n, np.asarray(node.weight).shape) for n, node in graph.nodes.items()
               if type(node).__name__ == "Linear"]
    if linears:
        first, shape = linears[0]
        if shape[-1] > LIMITS["input channels"]:
            raise ConfigError(f"NIR graph: layer {first!r} (Linear) takes {shape[-1]} inputs; "
                              f"Xylo Audio 2 has {LIMITS['input channels']} input channels")
    if neurons:
        *hidden, last = neurons
        for n in hidden:
            if sizes[n] > LIMITS["hidden neurons"]:
                raise ConfigError(f"NIR graph: layer {n!r} (CubaLIF) has {sizes[n]} neurons; "
                                  f"Xylo Audio 2 has {LIMITS['hidden neurons']} hidden neurons")
        if sum(sizes[n] for n in hidden) > LIMITS["hidden neurons"]:
            raise ConfigError(f"NIR graph: layers {hidden} hold {sum(sizes[n] for n in hidden)} "
                              f"hidden neurons; Xylo Audio 2 has {LIMITS['hidden neurons']}")
        if sizes[last] > LIMITS["output neurons"]:
            raise ConfigError(f"NIR graph: layer {last!r} (CubaLIF, the output layer) has "
                              f"{sizes[last]} neurons; Xylo Audio 2 has "
                              f"{LIMITS['output neurons']} output neurons")


def nir_to_xylo(graph: Any, a2: Any) -> XyloDeployment:
    """Map NIR ``graph`` onto Xylo Audio 2
    (``a2``: :func:`~neuromark.system.chips.rockpool_xylo.xylo_audio2`)."""
    from rockpool.nn.modules.torch.nir import from_nir
    from rockpool.transform.quantize_methods import global_quantize

    check_xylo_rules(graph)
    net = from_nir(graph)
    try:
        spec = a2.mapper(net.as_graph(), weight_dtype="float", threshold_dtype="float",
                         dash_dtype="float")
    except Exception as exc:  # Rockpool's DRCError and its causes
        cause = f"{exc}" + (f" ({exc.__cause__})" if exc.__cause__ else "")
        raise ConfigError(f"NIR graph: Rockpool's Xylo Audio 2 mapper refuses it: {cause}") from exc
    lif = [m for m in net.modules() if type(m).__name__ == "LIFTorch"]
    return XyloDeployment(net, dict(global_quantize(**spec)), float(lif[0].dt),
                          int(spec["weights_in"].shape[0]), int(spec["weights_out"].shape[1]))


def xylo_to_nir(net: Any, inputs: int, outputs: int) -> Any:
    """The Rockpool network ``net`` back as a ``nir.NIRGraph`` (Rockpool's exporter). A
    network Rockpool imported from NIR exports its ``input``/``output`` placeholders as empty
    (None) nodes; they are given back as ``nir.Input``/``nir.Output`` of the right sizes.
    Rockpool 3.1.0's exporter builds its edges from a set and, for some string hash seeds
    (``PYTHONHASHSEED`` 0 and 3 of 0-7, measured), adds a self-loop ``output -> output``
    that no layer has and NIR's type inference rejects ("No output nodes found"); a
    self-loop on a placeholder is dropped."""
    import nir
    import numpy as np
    import torch
    from rockpool.nn.modules.torch.nir import to_nir

    graph = to_nir(net, torch.zeros(1, inputs))
    nodes = dict(graph.nodes)
    if nodes.get("input", 0) is None:
        nodes["input"] = nir.Input(input_type=np.array([inputs]))
    if nodes.get("output", 0) is None:
        nodes["output"] = nir.Output(output_type=np.array([outputs]))
    placeholders = {"input", "output"}
    edges = [(a, b) for a, b in graph.edges if not (a == b and a in placeholders)]
    return nir.NIRGraph(nodes=nodes, edges=edges)


def harness_counts(graph: Any, dt_s: float) -> dict[str, Any]:
    """What neuromark's harness counts on a NIR graph read by its own reader
    (:func:`neuromark.models.nir_model.from_nir`): parameters and connection layers."""
    from neuromark.metrics.static import ParameterCount
    from neuromark.models.nir_model import from_nir

    model = from_nir(graph, dt=dt_s)
    layers = model.connection_layers()
    return {"parameter_count": int(ParameterCount().compute(model).value),
            "connection_layers": len(layers),
            "weights": int(sum(m.weight.numel() for _, m in layers))}
