"""Operation-level counting with torch's own ``TorchFunctionMode``, for parameters that no
layer wrapper covers (see :mod:`~neuromark.instrument.coverage`).

The mode is entered only inside the modules that own such parameters, so a model whose
parameters are all wrapped never pays for it. A call is a *weight operation* when one
operand is a parameter of the model or a view of one (``w.t()``, a reshape, a slice: found
by the parameter's storage); it is counted with the same definitions as the wrappers:
dense = every multiplication of an input element by a weight, effective = those with
both non-zero, ACs when the other operand holds only -1, 0 and 1, else MACs. The split
is per sample (batch-first inputs of ``F.linear``, ``x @ W``, ``W @ x`` with a batched
``x`` of 3+ dims, convolutions; the batch dimension 1 of attention's time-major inputs)
and per call for the rest (einsum, weights of 3+ dims), which are then one sample.

Counted: ``F.linear``, ``matmul``/``@``/``mm``/``bmm``/``addmm``/``baddbmm``, ``einsum``,
convolutions and transposed convolutions (1d/2d/3d), ``F.multi_head_attention_forward``
(``nn.MultiheadAttention`` takes it, not its fused path, while a mode is active) and
``F.scaled_dot_product_attention``. A contraction of two activations (attention scores,
``A @ V``) is an *activation product*: reported apart, never a synaptic operation.

Calls inside a wrapped connection layer are not counted here (the wrapper counts them):
wrappers of connection layers below an intercepted module pause the mode.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from neuromark.instrument.call_totals import CallTotals, rows_per_sample
from neuromark.instrument.kernels import (
    NO_SAMPLES,
    UNITS,
    as_array,
    column_counts_array,
    compiled,
)
from neuromark.metrics.functional.synops import masked_counts

_MATMUL = {torch.matmul, Tensor.matmul, Tensor.__matmul__, torch.mm, Tensor.mm,
           torch.bmm, Tensor.bmm}
_ADDMM = {torch.addmm, Tensor.addmm, torch.baddbmm, Tensor.baddbmm}
_CONV = {F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d, F.conv_transpose2d,
         F.conv_transpose3d}
_ADD = {Tensor.__add__, Tensor.__radd__, torch.add, Tensor.add, Tensor.__sub__,
        torch.sub, Tensor.sub, Tensor.add_, Tensor.__iadd__}
_MHA_SIGNATURE = inspect.signature(F.multi_head_attention_forward)


def _mask(x: Tensor) -> Tensor:
    return (x != 0).to(torch.float64)


def _ones(x: Tensor) -> Tensor:
    return torch.ones(x.shape, dtype=torch.float64, device=x.device)


def _residual(x: Tensor, sample_dim: int | None = None) -> Tensor:
    """Spike residual of ``x`` (0 exactly for values in {-1, 0, 1}, NaN for NaN): one
    value (1,), or one per sample along ``sample_dim`` (S,)."""
    if x.dtype not in (torch.float32, torch.float64):
        x = x.to(torch.float32)
    magnitude = x.abs()
    defect = magnitude - magnitude.sign()
    if sample_dim is None:
        defect = defect.reshape(1, -1)
    else:
        defect = defect.movedim(sample_dim, 0).reshape(x.shape[sample_dim], -1)
    return torch.linalg.vecdot(defect, defect)


def _name(func: Any) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))


def _attention_counts(x: Tensor, counts: Tensor) -> tuple[Tensor, int | None]:
    """(effective ops, sample dim) of an attention projection's input ``x``: (L, N, E),
    time-major, per sample along dim 1; unbatched (L, E): one sample."""
    if x.dim() == 3 and x.shape[1] > 0:
        rows = x.transpose(0, 1).reshape(-1, x.shape[-1])
        return masked_counts(rows, counts, x.shape[0])[0], 1
    return masked_counts(x.reshape(-1, x.shape[-1]), counts)[0], None


class OpCounter(TorchFunctionMode):
    """Counts weight operations while entered (see the module doc).

    Args:
        ids: ``id(parameter)`` -> dotted name, for every parameter of the model.
        tracked: names of the intercepted parameters (their other uses are noted, to
            name them when they end up uncovered).
    """

    def __init__(self, ids: dict[int, str], params: dict[str, Tensor],
                 tracked: set[str]) -> None:
        super().__init__()
        self.ids = ids
        self.params = params
        self.tracked = tracked
        self.paused = 0
        self.active = False
        self.totals: dict[str, CallTotals] = {}
        self.consumed: set[str] = set()
        self.uses: dict[str, list[str]] = {}
        self.activation_products = 0.0
        self._recent: deque[Tensor] = deque(maxlen=8)  # outputs of counted ops (bias adds)
        self._columns: dict[tuple, tuple] = {}  # (name, dim, shape, strides) -> (stamp, ...)
        self._kernel = compiled()[0]
        self.refresh()

    def refresh(self) -> None:
        """Re-read the parameters' storages (a swapped weight moves its storage)."""
        by_storage: dict[int, str | None] = {}
        for name, p in self.params.items():
            if p.numel():
                ptr = p.untyped_storage().data_ptr()
                by_storage[ptr] = name if ptr not in by_storage else None  # shared: by id only
        self.storages = {k: v for k, v in by_storage.items() if v is not None}
        self._recent.clear()

    def weight_name(self, x: Any) -> str | None:
        """The parameter ``x`` is, or is a view of; None for anything else."""
        if not isinstance(x, Tensor):
            return None
        name = self.ids.get(id(x))
        if name is None and self.storages and x.numel():
            try:
                name = self.storages.get(x.untyped_storage().data_ptr())
            except (RuntimeError, NotImplementedError):
                return None
        return name

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if self.paused:
            return func(*args, **kwargs)
        if func is F.linear:
            return self._linear(func, args, kwargs)
        if func in _MATMUL or func is Tensor.__rmatmul__:
            a, b = (args[1], args[0]) if func is Tensor.__rmatmul__ else args[:2]
            out = func(*args, **kwargs)
            self._contraction(func, a, b, out)
            return out
        if func in _ADDMM:
            out = func(*args, **kwargs)
            bias = args[0] if args else kwargs.get("input")
            a = args[1] if len(args) > 1 else kwargs.get("mat1", kwargs.get("batch1"))
            b = args[2] if len(args) > 2 else kwargs.get("mat2", kwargs.get("batch2"))
            if self._contraction(func, a, b, out):
                self._consume(bias)
            return out
        if func is torch.einsum:
            return self._einsum(func, args, kwargs)
        if func in _CONV:
            return self._conv(func, args, kwargs)
        if func is F.multi_head_attention_forward:
            return self._attention(func, args, kwargs)
        if func is F.scaled_dot_product_attention:
            q, k, v = (list(args) + [kwargs.get(n) for n in ("query", "key", "value")])[:3]
            self.activation_products += float(q.numel() * k.shape[-2]
                                              + q.numel() // q.shape[-1] * v.shape[-2] * v.shape[-1])
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        if getattr(func, "__name__", None) != "__get__":  # attribute reads (x.shape) are no use
            self._note(func, args, out)
        return out

    # -- counting -------------------------------------------------------------------------
    def _totals(self, name: str) -> CallTotals:
        totals = self.totals.get(name)
        if totals is None:
            totals = self.totals[name] = CallTotals(name)
        return totals

    def _consume(self, *tensors: Any) -> None:
        for t in tensors:
            name = self.weight_name(t)
            if name is not None:
                self.consumed.add(name)

    def _record(self, name: str, x: Tensor, effective: Tensor, dense: float, out: Any,
                sample_dim: int | None = None) -> None:
        """One call on input ``x``: ``effective`` is 0-d (one sample), or per sample (S,)
        of ``x``'s samples along ``sample_dim``."""
        totals = self._totals(name)
        totals.dense += dense
        totals.pending.append((effective.to(torch.float64).reshape(-1),
                               _residual(x, sample_dim)))
        self.consumed.add(name)
        if isinstance(out, Tensor):
            self._recent.append(out)

    def _linear(self, func: Any, args: tuple, kwargs: dict) -> Any:
        out = func(*args, **kwargs)
        x = args[0] if args else kwargs["input"]
        weight = args[1] if len(args) > 1 else kwargs["weight"]
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        name = self.weight_name(weight)
        dense = float(x.numel() // max(x.shape[-1], 1) * weight.numel())
        if name is None:
            self.activation_products += dense
            return out
        self._rows(name, x, x.reshape(-1, x.shape[-1]), weight, 0, dense, out,
                   rows_per_sample(x))
        self._consume(bias)
        return out

    def _rows(self, name: str, x: Tensor, rows: Tensor, weight: Tensor, dim: int,
              dense: float, out: Any, group: int) -> None:
        """Count ``rows`` (R, K), each ``group`` successive rows one sample, against a 2-d
        weight whose non-zeros along ``dim`` are the weights each input column meets: the
        Linear kernel's one pass on CPU floats, torch ops elsewhere. Column counts of a
        parameter are cached while it is unchanged."""
        key = (name, dim, weight.shape, weight.stride())  # w and w.t() differ by strides
        hit = self._columns.get(key)
        stamp = (weight.data_ptr(), weight._version if not weight.is_inference() else -1)
        if hit is None or hit[0] != stamp or stamp[1] < 0:
            counts = (weight != 0).sum(dim=dim, dtype=torch.float64)
            hit = self._columns[key] = (stamp, counts,
                                        column_counts_array(counts, weight.numel()))
        array = as_array(rows)
        if array is None or array.size == 0:
            effective, residual = masked_counts(rows, hit[1], group)
            totals = self._totals(name)
            totals.dense += dense
            totals.pending.append((effective, residual))
            self.consumed.add(name)
            if isinstance(out, Tensor):
                self._recent.append(out)
            return
        totals = self._totals(name)
        totals.dense += dense
        totals.record(*self._kernel(array.reshape(array.shape[0], 1, -1), 0, hit[2],
                                    *UNITS[array.dtype.char], group, NO_SAMPLES))
        self.consumed.add(name)
        if isinstance(out, Tensor):
            self._recent.append(out)

    def _contraction(self, func: Any, a: Tensor, b: Tensor, out: Tensor) -> bool:
        """Count ``a @ b`` (any batch dims); returns whether a weight took part."""
        dense = float(out.numel() * a.shape[-1])
        name_a, name_b = self.weight_name(a), self.weight_name(b)
        if name_a is None and name_b is None:
            self.activation_products += dense
            return False
        if name_b is not None and b.dim() == 2 and name_a is None:
            # the weights each x[..., k] meets: row k of b
            self._rows(name_b, a, a.reshape(-1, a.shape[-1]), b, 1, dense, out,
                       rows_per_sample(a))
        elif name_a is not None and a.dim() <= 2 and name_b is None:
            rows = b.reshape(1, -1) if b.dim() == 1 else b.transpose(-1, -2).reshape(-1, b.shape[-2])
            if a.dim() == 2:  # W @ x: a batched x (N, ..., K, M) has N samples
                samples = b.shape[0] if b.dim() > 2 and b.shape[0] else 1
                self._rows(name_a, b, rows, a, 0, dense, out, max(rows.shape[0] // samples, 1))
            else:
                self._record(name_a, b, masked_counts(rows, _mask(a))[0], dense, out)
        else:  # a weight of 3+ dims, or two weights: the contraction of the masks
            x, name = (a, name_b) if name_b is not None else (b, name_a)
            if name_a is not None and name_b is not None:
                x, name = a, name_b
                self.consumed.add(name_a)
            effective = func(_mask(a), _mask(b)).sum()
            self._record(name, x, effective, dense, out)
        return True

    def _einsum(self, func: Any, args: tuple, kwargs: dict) -> Any:
        out = func(*args, **kwargs)
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        tensors = [t for t in operands if isinstance(t, Tensor)]
        names = [self.weight_name(t) for t in tensors]
        dense = float(func(equation, *[_ones(t) for t in tensors]).sum())
        weights = [n for n in names if n is not None]
        if not weights:
            self.activation_products += dense
            return out
        if len(tensors) != 2:
            self.uses.setdefault(weights[0], []).append(f"einsum with {len(tensors)} operands")
            return out
        x = tensors[0] if names[0] is None else tensors[1]
        effective = func(equation, *[_mask(t) for t in tensors]).sum()
        self._record(weights[-1], x, effective, dense, out)
        self.consumed.update(weights)
        return out

    def _conv(self, func: Any, args: tuple, kwargs: dict) -> Any:
        out = func(*args, **kwargs)
        x = args[0] if args else kwargs["input"]
        weight = args[1] if len(args) > 1 else kwargs["weight"]
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        rest = args[3:]
        name = self.weight_name(weight)
        geometry = dict(kwargs)
        for key in ("input", "weight", "bias"):
            geometry.pop(key, None)
        batched = x.dim() == weight.dim() and x.shape[0] > 0
        effective = func(_mask(x), _mask(weight), None, *rest, **geometry)
        effective = effective.flatten(1).sum(dim=1) if batched else effective.sum()
        dense = float(func(_ones(x), _ones(weight), None, *rest, **geometry).sum())
        if name is None:
            self.activation_products += dense
            return out
        self._record(name, x, effective, dense, out, 0 if batched else None)
        self._consume(bias)
        return out

    def _attention(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """``F.multi_head_attention_forward``: the q/k/v and output projections as weight
        operations, the scores and ``A @ V`` as activation products."""
        bound = _MHA_SIGNATURE.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        out = func(*args, **kwargs)
        query, key, value = a["query"], a["key"], a["value"]
        embed = a["embed_dim_to_check"]
        if a["use_separate_proj_weight"]:
            projections = [(query, a["q_proj_weight"]), (key, a["k_proj_weight"]),
                           (value, a["v_proj_weight"])]
        else:
            projections = list(zip((query, key, value), a["in_proj_weight"].chunk(3)))
        for x, weight in projections:
            name = self.weight_name(weight)
            dense = float(x.numel() // x.shape[-1] * weight.numel())
            if name is None:
                self.activation_products += dense
                continue
            counts = (weight != 0).sum(dim=0, dtype=torch.float64)
            effective, sample_dim = _attention_counts(x, counts)
            self._record(name, x, effective, dense, None, sample_dim)
        self._consume(a["in_proj_bias"], a["bias_k"], a["bias_v"], a["out_proj_bias"])
        # the heads' concatenation entering the output projection: the same call with an
        # identity projection
        replay = dict(a)
        replay.update(out_proj_weight=torch.eye(embed, dtype=query.dtype, device=query.device),
                      out_proj_bias=None, need_weights=False)
        heads = func(**replay)[0]
        out_weight = a["out_proj_weight"]
        name = self.weight_name(out_weight)
        dense = float(heads.numel() // embed * out_weight.numel())
        counts = (out_weight != 0).sum(dim=0, dtype=torch.float64)
        if name is None:
            self.activation_products += dense
        else:
            effective, sample_dim = _attention_counts(heads, counts)
            self._record(name, heads, effective, dense, None, sample_dim)
        targets = query.numel() // embed  # tokens of the query, over the batch
        sources = key.shape[0] + (a["bias_k"] is not None) + bool(a["add_zero_attn"])
        self.activation_products += 2.0 * targets * sources * embed
        return out

    def _note(self, func: Any, args: tuple, out: Any) -> None:
        """An uncounted call: a bias added to a counted op's output consumes the bias;
        other uses of intercepted parameters are noted for the coverage message."""
        for i, arg in enumerate(args):
            name = self.weight_name(arg)
            if name is None or name not in self.tracked:
                continue
            if func in _ADD and len(args) == 2 and any(args[1 - i] is r for r in self._recent):
                self.consumed.add(name)
                if isinstance(out, Tensor):
                    self._recent.append(out)
            elif not (isinstance(out, Tensor) and out.numel()
                      and self.weight_name(out) == name):  # a view is no use yet
                self.uses.setdefault(name, []).append(_name(func))

    def take(self) -> dict[str, tuple[float, float, float, float, float]]:
        """Per weight since the last take: (ACs, MACs, dense, per-call ACs, per-call MACs)
        (see :meth:`CallTotals.take`)."""
        out = {name: totals.take() for name, totals in self.totals.items()}
        self._recent.clear()
        return out
