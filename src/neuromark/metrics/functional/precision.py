"""Stored precision of a model's tensors, for the footprint and for energy profiles.

A tensor's bit width comes, last one winning:

1. its dtype: float32 32 bits, ... (``element_size()``); torch's quantised dtypes by
   their packed width (``qint8``/``quint8`` 8, ``qint32`` 32, ``quint4x2`` 4,
   ``quint2x4`` 2: ``element_size()`` says 1 byte for the last two, though two or four
   values share a byte);
2. a ``torch.ao`` fake-quant module on a weight (``weight_fake_quant`` with
   ``quant_min``/``quant_max``, as QAT modules carry): ``ceil(log2(quant_max - quant_min
   + 1))`` bits for that module's ``weight``;
3. a declaration by the adapter, ``weight_bits={"fc1.weight": 2}`` (the adapter's
   attribute ``weight_bits``, or the network's ``neuromark_weight_bits``): dotted names
   of parameters or buffers, integer bits 1..64 and at most the tensor's dtype width (a
   ternary weight declared as 2 bits; 33 bits for a float32 tensor is refused).

A tensor of ``n`` values at ``b`` bits is stored in ``ceil(n b / 8)`` bytes (packed,
rounded up per tensor). The weights of torch's quantised modules
(``torch.ao.nn.quantized.Linear``/``Conv*``: not parameters, packed) are counted from
``weight()`` and ``bias()``, with their quantisation parameters (per tensor or per
channel: a 4-byte scale and a 4-byte zero point each).

Neurobench 2.3.0 counts ``numel() * element_size()`` of parameters and buffers (4 bytes
for a 2-bit weight held in float32; neurobench issue #235).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

#: Bits per value of torch's quantised dtypes (by name, so torch is not imported here).
QUANTISED_BITS = {"torch.qint8": 8, "torch.quint8": 8, "torch.qint32": 32,
                  "torch.quint4x2": 4, "torch.quint2x4": 2}


def packed_bytes(numel: int, bits: int) -> int:
    """Bytes of ``numel`` values of ``bits`` bits packed together: ``ceil(numel bits / 8)``."""
    return -(-int(numel) * int(bits) // 8)


def dtype_bits(tensor: Any) -> int:
    """Bits per value the tensor's dtype stores (see the module)."""
    return QUANTISED_BITS.get(str(tensor.dtype), tensor.element_size() * 8)


def fake_quant_bits(module: Any) -> dict[str, tuple[int, str]]:
    """``{"<module>.weight": (bits, source)}`` of every submodule with a ``torch.ao``
    fake-quant module on its weight."""
    out = {}
    for name, sub in module.named_modules():
        fq = getattr(sub, "weight_fake_quant", None)
        lo, hi = getattr(fq, "quant_min", None), getattr(fq, "quant_max", None)
        if lo is None or hi is None:
            continue
        levels = int(hi) - int(lo) + 1
        bits = max(1, math.ceil(math.log2(levels)))
        out[f"{name}.weight" if name else "weight"] = (
            bits, f"torch.ao {type(fq).__name__} [{int(lo)}, {int(hi)}]: {levels} levels")
    return out


def declared_bits(adapter: Any) -> dict[str, tuple[int, str]]:
    """The adapter's (or network's) ``weight_bits`` declaration, checked: each name a
    parameter or buffer of the network, each width an integer in 1..64."""
    module = adapter.module
    given = getattr(adapter, "weight_bits", None) or getattr(module, "neuromark_weight_bits", None)
    if not given:
        return {}
    if not isinstance(given, Mapping):
        raise TypeError(f"weight_bits must map tensor names to bits, got {type(given).__name__}")
    tensors = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    known = set(tensors)
    out = {}
    for name, bits in given.items():
        if name not in known:
            close = sorted(k for k in known if k.split(".")[-1] == str(name).split(".")[-1])[:5]
            raise ValueError(f"weight_bits: {name!r} is no parameter or buffer of "
                             f"{type(module).__name__}" + (f" (did you mean {', '.join(close)}?)"
                                                           if close else ""))
        if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 64:
            raise ValueError(f"weight_bits[{name!r}] = {bits!r}: an integer number of bits in 1..64")
        stored = dtype_bits(tensors[name])
        if bits > stored:
            raise ValueError(f"weight_bits[{name!r}] = {bits}: wider than its dtype "
                             f"{tensors[name].dtype} ({stored} bits) can hold; declare at most "
                             f"{stored}")
        out[name] = (bits, "declared by the adapter (weight_bits)")
    return out


def quantised_module_tensors(module: Any) -> Iterator[tuple[str, Any]]:
    """``(name, tensor)`` of the packed weights and biases of torch's quantised modules,
    which hold them outside parameters and buffers."""
    for name, sub in module.named_modules():
        if not (hasattr(sub, "_packed_params") and callable(getattr(sub, "weight", None))):
            continue
        prefix = f"{name}." if name else ""
        yield f"{prefix}weight", sub.weight()
        bias = sub.bias() if callable(getattr(sub, "bias", None)) else None
        if bias is not None:
            yield f"{prefix}bias", bias


def quantisation_parameter_bytes(tensor: Any) -> int:
    """Bytes of a quantised tensor's scale and zero point (4 + 4 per tensor or channel)."""
    if not getattr(tensor, "is_quantized", False):
        return 0
    if "per_channel" in str(tensor.qscheme()):
        return 8 * int(tensor.q_per_channel_scales().numel())
    return 8


def tensor_precision(adapter: Any, skip: set[int] = frozenset()) -> dict[str, dict[str, Any]]:
    """``{name: {"kind", "numel", "bits", "bytes", "source"}}`` of every parameter, buffer
    (except those whose ``id`` is in ``skip``: neuron state) and quantised-module weight."""
    module = adapter.module
    override = {**fake_quant_bits(module), **declared_bits(adapter)}
    out: dict[str, dict[str, Any]] = {}
    seen: set[int] = set(skip)
    groups = [("parameter", module.named_parameters()), ("buffer", module.named_buffers()),
              ("quantised", quantised_module_tensors(module))]
    for kind, items in groups:
        for name, tensor in items:
            if id(tensor) in seen:
                continue
            seen.add(id(tensor))
            bits, source = override.get(name, (dtype_bits(tensor), f"dtype {tensor.dtype}"))
            out[name] = {"kind": kind, "numel": int(tensor.numel()), "bits": bits,
                         "dtype_bits": dtype_bits(tensor),
                         "bytes": packed_bytes(tensor.numel(), bits)
                         + quantisation_parameter_bytes(tensor), "source": source}
    return out


def neurobench_rule_bytes(module: Any) -> int:
    """Footprint under NeuroBench 2.3.0's rule: ``numel() * element_size()`` summed over
    the module's parameters and buffers as it holds them now (each tensor once, at its
    dtype's width, no packing, no neuron state beyond what is a buffer). NeuroBench reads
    it before any data flow (its static metrics run first), so a buffer that grows with the
    data (an input history) counts at its initial size."""
    seen: set[int] = set()
    total = 0
    for tensor in (*module.parameters(), *module.buffers()):
        if id(tensor) not in seen:
            seen.add(id(tensor))
            total += int(tensor.numel()) * int(tensor.element_size())
    return total


def reduced(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{name: {"bits", "source"}}`` of the entries of :func:`tensor_precision` below
    float precision by declaration or quantised dtype (what a results file records)."""
    return {name: {"bits": e["bits"], "source": e["source"], "dtype_bits": e["dtype_bits"]}
            for name, e in entries.items()
            if not e["source"].startswith("dtype torch.float")}


def operand_bits(adapter: Any) -> dict[str, int]:
    """``{weight name: bits}`` of parameters and quantised-module weights: the operand
    precision an energy profile should price a multiplication by that weight at."""
    return {name: e["bits"] for name, e in tensor_precision(adapter).items()
            if e["kind"] != "buffer"}
