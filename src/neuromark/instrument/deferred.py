"""The torch counting path: keep what each counter needs during a batch, reduce once.

Used for tensors the numba kernels cannot read (GPU tensors, float16, bfloat16) and for
every tensor when the path is forced (``counting_path="torch"`` on
:class:`~neuromark.instrument.probes.Instrument`, or ``NEUROMARK_COUNTING_PATH=torch``),
so that it can be studied on CPU. During the batch a probed call launches at most one
device op (a copy of the tensor it needs) and never waits for the device; at
:meth:`~neuromark.instrument.probes.Instrument.collect` each layer's calls are reduced
with a few large ops and one host sync.

Exactness, as on CPU: every call is counted on its own. What is kept:
- a tensor that nothing can have written in place yet (not an inference tensor, version
  0) is kept by reference and its version is checked at the reduction (an error names
  the layer when it moved);
- any other tensor (inference tensors have no version counter) is copied at the call
  (one device op; a neuron layer's output and the next layer's input share one copy);
- time steps announced by the adapter are read from the batch itself (no copy);
- weights are read at each call (their column counts follow in-place changes).

Memory: per connection layer, B x T x K input elements per batch (none when the input
is the batch's own time steps); per neuron layer B x T x N outputs and B x T x N
membranes; the reduction stacks at most :data:`CHUNK_BYTES` more at a time. Above the
budget (``memory_budget`` bytes, ``NEUROMARK_COUNT_BUDGET_MB``, default
:data:`DEFAULT_BUDGET_BYTES`, shared by all layers) a layer reduces each call as it
happens, still on the device, and a warning says so once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch import Tensor

#: How tensors are counted: ``"auto"`` (numba kernels for CPU float32/float64, the torch
#: path for anything else) or ``"torch"`` (the torch path for every tensor).
COUNTING_PATHS = ("auto", "torch")
#: Memory the torch path may keep per batch, all layers together: 2 GiB.
DEFAULT_BUDGET_BYTES = 2 * 1024**3
#: Largest stack built at once by a reduction: 256 MiB.
CHUNK_BYTES = 256 * 1024**2


def resolve_counting_path(path: str | None) -> str:
    """``path``, else ``"auto"``; checked. A run passes its context's ``counting_path``
    (:class:`neuromark.context.RunContext`, whose default is ``$NEUROMARK_COUNTING_PATH``)."""
    value = path if path is not None else "auto"
    if value not in COUNTING_PATHS:
        raise ValueError(f"counting_path is {value!r}; expected one of {list(COUNTING_PATHS)}")
    return value


def resolve_budget(budget_bytes: int | None) -> int:
    """``budget_bytes``, else the default (2 GiB). A run passes its context's
    ``memory_budget`` (whose default is ``$NEUROMARK_COUNT_BUDGET_MB``)."""
    if budget_bytes is not None:
        if budget_bytes < 0:
            raise ValueError(f"memory_budget must be >= 0 bytes, got {budget_bytes}")
        return int(budget_bytes)
    return DEFAULT_BUDGET_BYTES


@dataclass
class KeepBudget:
    """Bytes the torch path keeps in the current batch, against ``limit`` (all layers)."""

    limit: int = DEFAULT_BUDGET_BYTES
    used: int = 0
    warned: bool = False

    def admit(self, nbytes: int, layer: str) -> bool:
        """Reserve ``nbytes`` for ``layer``; False (and one warning per run) when over."""
        if self.used + nbytes <= self.limit:
            self.used += nbytes
            return True
        if not self.warned:
            self.warned = True
            warnings.warn(f"the torch counting path reached its memory budget "
                          f"({self.limit / 1024**2:.0f} MiB) at layer {layer!r}: layers over "
                          f"it now reduce each call as it happens (same counts, more device "
                          f"ops); raise the memory budget (RunContext.memory_budget, "
                          f"$NEUROMARK_COUNT_BUDGET_MB) to keep more", stacklevel=2)
        return False


def nbytes(x: Tensor) -> int:
    """Bytes of ``x``'s elements (``numel * element_size``)."""
    return x.nbytes


@dataclass
class Held:
    """A tensor kept for counting: itself with its version then, or a copy; a copy made
    by :class:`Copies` is slot ``index`` of ``slab``, so that successive copies of one
    shape read back as one tensor without stacking (it serves reshaped views of the
    tensor it copies too, so its shape may differ from theirs: readers reshape by size)."""

    tensor: Tensor
    version: int = -1  # -1: a copy, nothing to check
    slab: Tensor | None = None
    index: int = 0

    def check(self, layer: str) -> None:
        if self.version >= 0 and self.tensor._version != self.version:
            raise ValueError(
                f"layer {layer!r}: a tensor kept for counting was written in place later "
                f"in the batch, so this batch's counts cannot be exact; set "
                "a memory budget of 0 ($NEUROMARK_COUNT_BUDGET_MB=0) to count each call as "
                "it happens")


def unwritten(x: Tensor) -> bool:
    """Whether nothing can have written ``x`` in place yet (so it may be held by reference
    and its version checked later): version 0, outside inference mode."""
    return not x.is_inference() and x._version == 0


def hold(x: Tensor) -> Held:
    """``x`` by reference when nothing can have written it in place yet, else a copy."""
    if unwritten(x):
        return Held(x.detach(), 0)
    return Held(x.detach().clone())


def stacked(held: list[Held]) -> Tensor:
    """The tensors of ``held`` (of one shape) stacked: a view of their slab when they are
    its successive slots, else a new tensor."""
    first = held[0]
    slab, start, end = first.slab, first.index, first.index + len(held)
    if slab is not None and [h.index for h in held] == list(range(start, end)) \
            and all([h.slab is slab for h in held]):  # (lists: no generator resumed per item)
        return slab[start:end].reshape(len(held), *first.tensor.shape)
    return torch.stack([h.tensor for h in held])


#: Slots per slab of :class:`Copies` (fewer when they would pass :data:`CHUNK_BYTES`).
SLAB_SLOTS = 32


class _Slab:
    """A slab of copies of one shape, dtype and device: its slots (views made once) and
    how many are used."""

    __slots__ = ("tensor", "slots", "used")

    def __init__(self, x: Tensor) -> None:
        size = max(1, min(SLAB_SLOTS, CHUNK_BYTES // max(nbytes(x), 1)))
        self.tensor = torch.empty((size, *x.shape), dtype=x.dtype, device=x.device)
        self.slots = self.tensor.unbind(0)
        self.used = 0


class Copies:
    """The torch path's copies: :func:`hold`, with copies written to successive slots of
    slabs (one per shape, dtype and device; new slabs each batch), and a one-slot cache so
    that a neuron layer's output and the next layer's input share one copy, also when
    that input is the output reshaped (e.g. by ``nn.Flatten``)."""

    def __init__(self) -> None:
        self.source: Tensor | None = None
        self.held: Held | None = None
        self.slabs: dict[tuple, _Slab] = {}  # per (shape, dtype, device)

    def hold(self, x: Tensor) -> Held:
        """:func:`hold` of ``x``; the previous one's when ``x`` is the same tensor, or is
        a copy of the same elements in the same order (``x`` a reshaped view of that
        tensor: the copy keeps that tensor's shape, so readers reshape it by size)."""
        source = self.source
        if source is not None and (x is source or self.held.version < 0
                                   and x.data_ptr() == source.data_ptr()
                                   and _same_elements(x, source)):
            return self.held  # type: ignore[return-value]
        held = Held(x.detach(), 0) if unwritten(x) else self._copy(x)
        self.source, self.held = x, held
        return held

    def _copy(self, x: Tensor) -> Held:
        key = (x.shape, x.dtype, x.device)
        slab = self.slabs.get(key)
        if slab is None or slab.used == len(slab.slots):
            slab = self.slabs[key] = _Slab(x)
        index = slab.used
        slot = slab.slots[index]
        slot.copy_(x.detach() if x.requires_grad else x)
        slab.used = index + 1
        return Held(slot, -1, slab.tensor, index)

    def clear(self) -> None:
        """Forget the last copy and the slabs (those kept stay alive with their holds)."""
        self.source = self.held = None
        self.slabs = {}


def _same_elements(x: Tensor, source: Tensor) -> bool:
    """Whether ``x``, starting where the live tensor ``source`` starts, holds its elements
    in the same order (one memory block, same size, dtype and device: a reshaped view)."""
    return x.dtype == source.dtype and x.numel() == source.numel() \
        and x.device == source.device \
        and x.is_contiguous() and source.is_contiguous()


def call_counts(inputs: Tensor, counts: Tensor, rows_dim: int,
                group: int = 1) -> tuple[Tensor, Tensor, Tensor]:
    """Per-call, per-sample counts of ``inputs`` (calls and rows in dims 0 and 1, in the
    order ``rows_dim`` says, elements in dim 2) against ``counts`` (K,), the non-zero
    weights each input element meets; each ``group`` successive rows of a call are one
    sample (rows in dim 0: ``group`` must be 1).

    Returns (effective ops (n, S) float64: the sum over a sample's rows of
    ``[x != 0] @ counts``; a non-spike flag (n, S): some value of the sample is not -1, 0
    or 1; a NaN flag (n, S)), on the inputs' device. float16 and bfloat16 values are read
    as float32 (exactly). Row sums run in float32 on CPU when ``sum(counts)`` (which bounds
    them) is below 2**24, else in float64 (never in float32 on a GPU, where TF32 could
    round them). The non-spike test is the spike residual ``sum (|x| - [x != 0])**2`` of
    the sample: a sum of non-negative terms, each either 0 or at least 2**-48, so it is 0
    exactly for spikes (and NaN for NaN input)."""
    if inputs.dtype not in (torch.float32, torch.float64):
        inputs = inputs.to(torch.float32)
    exact32 = inputs.device.type == "cpu" and float(counts.sum()) < 2**24
    dtype = inputs.dtype if exact32 else torch.float64
    magnitude = inputs.abs()
    indicator = magnitude.sign()  # 1 where x != 0
    per_row = indicator.to(dtype) @ counts.to(device=inputs.device, dtype=dtype)
    defect = magnitude.sub_(indicator)  # in place: one full-size temporary less
    residual = torch.linalg.vecdot(defect, defect)
    if rows_dim == 0:
        return per_row.to(torch.float64).T, residual.T != 0, residual.T.isnan()
    calls, rows = per_row.shape
    effective = per_row.reshape(calls, rows // group, group).sum(dim=2, dtype=torch.float64)
    residual = residual.reshape(calls, rows // group, group).sum(dim=2)
    return effective, residual != 0, residual.isnan()


@dataclass
class _Call:
    """One kept call: its input, read as rows (R, ``width``), ``group`` rows per sample,
    or time step ``step`` of the announced batch (one row per sample)."""

    held: Held | None
    counts: Tensor
    step: int = -1
    group: int = 1
    width: int = 0


@dataclass
class KeptCalls:
    """The calls of one weight matrix in the current batch, reduced by :meth:`reduce`.

    ``partials`` holds per-call, per-sample counts already reduced (calls over the
    budget, or reduced groups)."""

    layer: str
    budget: KeepBudget
    calls: list[_Call] = field(default_factory=list)
    partials: list[tuple[Tensor, Tensor, Tensor]] = field(default_factory=list)
    batch: Held | None = None  # the announced batch (B, T, K) the steps come from
    over: bool = False  # over the budget: reduce each call as it happens

    def add(self, x: Tensor, width: int, counts: Tensor, copies: Copies,
            group: int = 1) -> None:
        """One call with input ``x``, read as rows (R, ``width``), each ``group``
        successive rows one sample."""
        if self._over(x.nbytes):
            self.partials.append(call_counts(x.reshape(1, -1, width), counts, 1, group))
            return
        self.calls.append(_Call(copies.hold(x), counts, -1, group, width))

    def add_step(self, batch: Held, step: int, counts: Tensor) -> None:
        """One call on time step ``step`` of the announced ``batch`` (B, T, K)."""
        if self.batch is not batch and self.batch is not None \
                and self.batch.tensor is not batch.tensor:
            self._reduce_calls()
        if self.over:  # (a step keeps no bytes: only a layer already over reduces it now)
            self._over(0)
            self.partials.append(call_counts(batch.tensor[:, step:step + 1], counts, 0))
            return
        self.batch = batch
        self.calls.append(_Call(None, counts, step))

    def _over(self, size: int) -> bool:
        """Whether this call is reduced now: the layer went over the budget (the calls
        kept so far are reduced first, so that partials stay in call order)."""
        if not self.over and not self.budget.admit(size, self.layer):
            self.over = True
        if self.over and self.calls:
            self._reduce_calls()
        return self.over

    def reduce(self) -> tuple[Tensor, Tensor, Tensor] | None:
        """Per-call, per-sample (effective, non-spike, NaN), each (calls, samples), of
        every call since the last reduce, in call order; None when there was none. Calls
        with fewer samples are padded with samples of no ops (spike, not NaN), which
        count nothing under either rule."""
        self._reduce_calls()
        if not self.partials:
            return None
        parts = self.partials
        self.partials = []
        if len(parts) == 1:
            return parts[0]
        width = max(p[0].shape[1] for p in parts)
        return tuple(torch.cat([torch.nn.functional.pad(p[i], (0, width - p[i].shape[1]))
                                for p in parts])
                     for i in range(3))  # type: ignore[return-value]

    def _reduce_calls(self) -> None:
        calls, self.calls = self.calls, []
        start = 0
        if calls and _one_group(calls):  # the common case, without a pairwise test
            start = len(calls)
            self.partials.append(self._group_counts(calls))
        while start < len(calls):
            end = start + 1
            first = calls[start]
            while end < len(calls) and _same_group(first, calls[end]) \
                    and (first.step >= 0 or (end - start + 1) * nbytes(first.held.tensor)
                         <= CHUNK_BYTES):
                end += 1
            self.partials.append(self._group_counts(calls[start:end]))
            start = end
        if self.batch is not None:
            self.batch.check(self.layer)
            self.batch = None

    def _group_counts(self, group: list[_Call]) -> tuple[Tensor, Tensor, Tensor]:
        counts = group[0].counts
        if group[0].step < 0:
            for call in group:
                if call.held.version >= 0:  # (a copy has nothing to check)
                    call.held.check(self.layer)
            rows = stacked([c.held for c in group]).reshape(len(group), -1, group[0].width)
            return call_counts(rows, counts, 1, group[0].group)
        batch = self.batch.tensor
        steps = [c.step for c in group]
        if steps != list(range(steps[0], steps[0] + len(steps))):
            picked = batch[:, torch.tensor(steps, device=batch.device)]
        else:
            picked = batch[:, steps[0]:steps[0] + len(steps)]
        return call_counts(picked, counts, 0)


def _one_group(calls: list[_Call]) -> bool:
    """Whether ``calls`` are one group: all steps of the announced batch, or all rows of
    one shape and dtype (under :data:`CHUNK_BYTES` together), with one weight version."""
    first = calls[0]
    counts = first.counts
    if first.step >= 0:
        return all([c.step >= 0 and c.counts is counts for c in calls])
    tensor, group, width = first.held.tensor, first.group, first.width
    shape, dtype = tensor.shape, tensor.dtype
    return len(calls) * nbytes(tensor) <= CHUNK_BYTES and all([
        c.step < 0 and c.counts is counts and c.group == group and c.width == width
        and c.held.tensor.shape == shape and c.held.tensor.dtype == dtype for c in calls])


def _same_group(first: _Call, other: _Call) -> bool:
    if other.counts is not first.counts or (first.step < 0) != (other.step < 0) \
            or other.group != first.group or other.width != first.width:
        return False
    if first.step >= 0:
        return True
    a, b = first.held.tensor, other.held.tensor
    return a.shape == b.shape and a.dtype == b.dtype


def totals(vectors: tuple[Tensor, Tensor, Tensor] | None
           ) -> tuple[float, float, float, float, bool]:
    """(ACs, MACs) by the per-sample rule, (ACs, MACs) by the per-call rule (a call's
    ops are MACs when any of its samples is not binary) and whether NaN was seen, of
    per-call, per-sample counts (calls, samples) (one host sync)."""
    if vectors is None:
        return 0.0, 0.0, 0.0, 0.0, False
    effective, nonspike, nan = vectors
    clean = ~nan
    call_effective, call_nonspike = effective.sum(dim=1), nonspike.any(dim=1)
    call_clean = clean.all(dim=1)
    values = torch.stack([
        torch.where(clean & ~nonspike, effective, 0).sum(),
        torch.where(clean & nonspike, effective, 0).sum(),
        torch.where(call_clean & ~call_nonspike, call_effective, 0).sum(),
        torch.where(call_clean & call_nonspike, call_effective, 0).sum(),
        nan.any().to(torch.float64)]).tolist()
    return values[0], values[1], values[2], values[3], bool(values[4])
