"""A float MLP as Akida ``Dense1D`` layers: our post-training quantisation onto the integer
arithmetic the installed SDK documents (``help(akida.Dense1D)``, akida 2.19.3)::

    prod = matmul(inputs << input_shift, weights)             # int8 weights
    out  = (prod + (bias << bias_shift)) * output_scales * 2**output_shift
    out  = relu(out), saturated to output_bits                  # int8: 0..127

(``output_shift`` < 0 shifts right; measured on the engine: scale 3, shift 1 turns 20 into 120.)
Weights are quantised per output channel (symmetric, 127 levels); a hidden layer's output
scale comes from the largest activation on calibration data; the last layer has no
activation and 8 signed output bits, every class on one common scale (the largest score on
calibration data -> 127) so that argmax compares like with like; every layer then maps onto
the device's NPs (32 output bits would keep the last layer in software).
Written from the SDK's docstrings; no BrainChip code is copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DenseInts:
    """Integer variables of one ``Dense1D`` layer (names as ``layer.get_variable_names()``)."""

    weights: np.ndarray        # (in, out) int8
    bias: np.ndarray           # (out,) int8
    bias_shift: np.ndarray     # (out,) uint8
    output_scales: np.ndarray  # (out,) uint8
    output_shift: np.ndarray   # (out,) int8


def multiplier(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(scale uint8, shift int8)`` with ``scale * 2**shift ~= m`` (m > 0), scale in 128..255."""
    m = np.maximum(np.asarray(m, dtype=np.float64), 1e-30)
    k = np.clip(np.floor(np.log2(255.0 / m)), -127, 127)
    scale = np.clip(np.rint(m * 2.0 ** k), 1, 255)
    return scale.astype(np.uint8), (-k).astype(np.int8)


def quantise_dense(weight: np.ndarray, bias: np.ndarray, in_scale: float, out_scale: np.ndarray | float
                   ) -> DenseInts:
    """Integer ``Dense1D`` variables for ``y = x @ weight + bias`` with ``x ~= x_int * in_scale``
    and ``y ~= out_int * out_scale`` (``weight`` (in, out) float, ``bias`` (out,))."""
    w = np.asarray(weight, dtype=np.float64) * in_scale
    step = np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0          # per output channel
    w_int = np.clip(np.rint(w / step), -127, 127).astype(np.int8)
    b_acc = np.asarray(bias, dtype=np.float64) / step                 # bias in accumulator units
    shift = np.maximum(0, np.ceil(np.log2(np.maximum(np.abs(b_acc), 1e-12) / 127.0))).astype(np.int64)
    b_int = np.clip(np.rint(b_acc / 2.0 ** shift), -127, 127).astype(np.int8)
    scale, out_shift = multiplier(step / np.broadcast_to(np.asarray(out_scale, np.float64), step.shape))
    return DenseInts(w_int, b_int, shift.astype(np.uint8), scale, out_shift)


def quantise_mlp(layers: list[tuple[np.ndarray, np.ndarray]], calibration: np.ndarray,
                 in_scale: float) -> list[DenseInts]:
    """The integer variables of every layer of the float MLP ``layers`` (see
    :func:`build_akida_mlp`, which puts the same integers into the SDK's layers)."""
    out = []
    x = calibration.astype(np.float64) * in_scale
    scale = in_scale
    for i, (w, b) in enumerate(layers):
        y = x @ w + b
        if i == len(layers) - 1:
            out_scale = float(max(np.abs(y).max(), 1e-12) / 127.0)
        else:
            y = np.maximum(y, 0.0)
            out_scale = float(max(y.max(), 1e-12) / 127.0)
        out.append(quantise_dense(w, b, scale, out_scale))
        x, scale = y, out_scale
    return out


def integer_forward(ints: list[DenseInts], x: np.ndarray) -> np.ndarray:
    """(N, classes) int outputs of the integer MLP ``ints`` on integer inputs ``x`` (N, F):
    the arithmetic of the module docstring in numpy (int64; a right shift by ``r`` rounds
    half up, ``(acc + 2**(r-1)) >> r``), ReLU and 0..127 saturation on hidden layers,
    -128..127 on the last (8 signed output bits). neuromark's own integer model on the CPU;
    it gives the SDK engine's outputs exactly (``tests/test_chip_shared_task.py``; a
    flooring shift differs by up to 2 on half the outputs)."""
    h = np.asarray(x, dtype=np.int64)
    for i, layer in enumerate(ints):
        acc = h @ layer.weights.astype(np.int64)
        acc = acc + (layer.bias.astype(np.int64) << layer.bias_shift.astype(np.int64))
        acc = acc * layer.output_scales.astype(np.int64)
        shift = layer.output_shift.astype(np.int64)
        right = np.maximum(-shift, 0)
        half = np.where(right > 0, np.left_shift(1, np.maximum(right - 1, 0)), 0)
        acc = np.where(shift >= 0, acc << np.maximum(shift, 0), (acc + half) >> right)
        if i < len(ints) - 1:
            h = np.clip(acc, 0, 127)
        else:
            h = np.clip(acc, -128, 127)
    return h


def build_akida_mlp(akida: Any, layers: list[tuple[np.ndarray, np.ndarray]], inputs: int,
                    calibration: np.ndarray, in_scale: float) -> tuple[Any, list[int]]:
    """An ``akida.Model`` (InputData int8 -> Dense1D ReLU ... -> Dense1D) of the float MLP
    ``layers`` [(weight (in, out), bias (out,)), ...] and the bits of each layer's weights.

    ``calibration``: (N, inputs) integer inputs whose float activations set the hidden
    layers' output scales (largest activation -> 127)."""
    model = akida.Model()
    model.add(akida.InputData(input_shape=(1, 1, inputs), input_bits=8, name="input"))
    x = calibration.astype(np.float64) * in_scale
    scale = in_scale
    for i, (w, b) in enumerate(layers):
        last = i == len(layers) - 1
        y = x @ w + b
        if last:  # signed 8-bit scores, one scale for all classes: the largest |score| -> 127
            out_scale: Any = float(max(np.abs(y).max(), 1e-12) / 127.0)
            layer = akida.Dense1D(units=w.shape[1], output_bits=8, name=f"dense{i}")
        else:
            y = np.maximum(y, 0.0)
            out_scale = float(max(y.max(), 1e-12) / 127.0)
            layer = akida.Dense1D(units=w.shape[1], output_bits=8,
                                  activation=akida.ActivationType.ReLU, name=f"dense{i}")
        model.add(layer)
        ints = quantise_dense(w, b, scale, out_scale)
        for name in ("weights", "bias", "bias_shift", "output_scales", "output_shift"):
            layer.set_variable(name, getattr(ints, name))
        x, scale = y, out_scale
    return model, [8] * len(layers)
