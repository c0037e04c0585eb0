"""A user's own ONNX MLP on Akida (issue 57.3), through neuromark's quantiser onto the SDK's
``Dense1D`` layers (BrainChip's own path, ``quantizeml`` + ``cnn2snn``, does not install next
to this environment's numpy: docs/chips.md, "Your own model on a chip").

:func:`read_onnx_mlp` reads an ONNX graph of dense layers: ``Gemm`` (``transB`` 0 or 1, with or
without a bias) or ``MatMul`` followed by an ``Add`` of a constant, with ``Relu`` between
layers, optionally after a ``Flatten`` or ``Reshape`` of the input; the weights come from the
graph's initializers. What an Akida ``Dense1D`` chain cannot be is refused before anything
runs, naming the node and the rule (a convolution, another activation, an activation on the
output layer, a shape that does not chain). The model takes the task's spike counts as
floats (0 .. 15 for ``spoken_digits_8``) and gives one score per class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import ConfigError

#: Why an ONNX operator cannot go onto Akida's Dense1D chain (the rule), by op type.
RULES = {
    "Conv": "this path maps dense layers only (Akida's Conv2D needs BrainChip's cnn2snn)",
    "Sigmoid": "Akida 2.0 Dense1D layers activate with ReLU only",
    "Tanh": "Akida 2.0 Dense1D layers activate with ReLU only",
    "LeakyRelu": "Akida 2.0 Dense1D layers activate with ReLU only",
    "Softmax": "the output layer gives raw scores: drop Softmax (argmax is unchanged)",
    "BatchNormalization": "fold batch normalisation into the preceding layer's weights first",
    "Dropout": "export the model in inference mode (no Dropout)",
}
PASS_THROUGH = ("Flatten", "Reshape", "Identity")


def read_onnx_mlp(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(weight (in, out) float64, bias (out,) float64), ...]`` of the ONNX MLP at ``path``;
    :class:`ConfigError` naming the node and the rule for anything else."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as exc:
        raise ConfigError(f"sut.options.onnx needs the onnx package ({exc}); install it: "
                          "pip install 'neuromark[onnx]'") from None

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # a damaged or foreign file
        raise ConfigError(f"sut.options.onnx: {path} is not a readable ONNX model "
                          f"({type(exc).__name__}: {exc})") from None
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    layers: list[list[Any]] = []  # [weight, bias, node name]
    relu_after: list[bool] = []
    for node in model.graph.node:
        where = f"sut.options.onnx: {path.name}: node {node.name or '(unnamed)'!r} ({node.op_type})"
        if node.op_type == "Gemm":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
                raise ConfigError(f"{where}: only Gemm with transA 0, alpha 1, beta 1 maps onto Dense1D")
            w = _constant(weights, node.input[1], where)
            w = w.T if attrs.get("transB", 0) else w
            b = (_constant(weights, node.input[2], where, ndim=None) if len(node.input) > 2
                 and node.input[2] else np.zeros(w.shape[1]))
            if b.size != w.shape[1]:
                raise ConfigError(f"{where}: a bias of {b.size} values for {w.shape[1]} units")
            layers.append([w, b.reshape(-1), node.name])
            relu_after.append(False)
        elif node.op_type == "MatMul":
            w = _constant(weights, node.input[1], where)
            layers.append([w, np.zeros(w.shape[1]), node.name])
            relu_after.append(False)
        elif node.op_type == "Add":
            if not layers or relu_after[-1]:
                raise ConfigError(f"{where}: an Add maps onto Dense1D only as the bias of the "
                                  "MatMul before it")
            constant = next((i for i in node.input if i in weights), None)
            if constant is None:
                raise ConfigError(f"{where}: a bias must be a constant (an initializer)")
            layers[-1][1] = layers[-1][1] + weights[constant].reshape(-1)
        elif node.op_type == "Relu":
            if not layers:
                raise ConfigError(f"{where}: a ReLU on the input cannot map onto Dense1D")
            relu_after[-1] = True
        elif node.op_type in PASS_THROUGH:
            if layers:
                raise ConfigError(f"{where}: a {node.op_type} between dense layers does not "
                                  "map onto a Dense1D chain (only before the first)")
        else:
            rule = RULES.get(node.op_type, "this path maps Gemm/MatMul(+Add) layers with ReLU "
                                           "between them only")
            raise ConfigError(f"{where} cannot go onto Akida: {rule}")
    if not layers:
        raise ConfigError(f"sut.options.onnx: {path.name}: no dense layer (Gemm or MatMul) found")
    if relu_after[-1]:
        raise ConfigError(f"sut.options.onnx: {path.name}: node {layers[-1][2]!r}: the output "
                          "layer must give raw scores (no ReLU after it): argmax of the scores "
                          "is the prediction")
    if not all(relu_after[:-1]):
        bad = layers[relu_after.index(False)][2]
        raise ConfigError(f"sut.options.onnx: {path.name}: node {bad!r}: a hidden layer needs a "
                          "ReLU after it (Akida's Dense1D activation)")
    for (w0, _, _), (w1, _, name) in zip(layers, layers[1:]):
        if w0.shape[1] != w1.shape[0]:
            raise ConfigError(f"sut.options.onnx: {path.name}: node {name!r} takes {w1.shape[0]} "
                              f"inputs, the layer before gives {w0.shape[1]}")
    return [(w, b) for w, b, _ in layers]


def _constant(weights: dict[str, np.ndarray], name: str, where: str,
              ndim: int | None = 2) -> np.ndarray:
    if name not in weights:
        raise ConfigError(f"{where}: its weights {name!r} are not a constant (an initializer)")
    value = weights[name]
    if ndim is not None and value.ndim != ndim:
        raise ConfigError(f"{where}: weights of shape {value.shape}; a dense layer's are 2-D")
    return value
