"""Counting of Linear-layer calls: one fused kernel pass per call on CPU, torch elsewhere.

CPU float inputs are read by the kernel of :func:`~neuromark.instrument.kernels.linear_counts`
as rows of a (rows, steps, in) array: a time step announced by the adapter (``data[:, t]``
of a (B, T, in) batch) is row set ``t`` of the batch itself (one row per sample), and any
other input ``x`` is ``x.reshape(-1, 1, in)``, read batch-first: sample ``i`` is ``x[i]``
(``x.shape[0]`` samples of equally many rows; a 1-d ``x`` is one sample). Other inputs
(GPU, other dtypes) take the torch path (:mod:`~neuromark.instrument.deferred`). Either way
a sample's ops in a call are ACs when its input values are all -1, 0 or 1, else MACs (and
the whole call's, for the per-call rule; see :mod:`~neuromark.instrument.call_totals`);
NaN input is reported by :meth:`~neuromark.instrument.call_totals.CallTotals.take`,
outside the forward pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError
from neuromark.instrument.arrays import LastArray
from neuromark.instrument.call_totals import CallTotals, Totals, rows_per_sample
from neuromark.instrument.deferred import totals
from neuromark.instrument.kernels import NO_SAMPLES, UNITS, column_counts_array, compiled
from neuromark.instrument.layer_ops import WeightCache
from neuromark.instrument.steps import StepIndex
from neuromark.metrics.functional.synops import weight_column_nnz


def weight_reader(module: nn.Module, name: str) -> Callable[[], Tensor]:
    """A call returning the weight ``name`` of ``module`` as its forward uses it: the
    parameter itself, or the effective weight of a parametrisation (``torch.nn.utils.prune``
    and ``weight_norm`` keep it as an attribute, ``parametrize`` computes it on access)."""
    parameters = module._parameters
    if parameters.get(name) is not None:
        return lambda: parameters[name]
    if not isinstance(getattr(module, name, None), Tensor):
        raise UnsupportedLayerError(f"{type(module).__name__} has no weight {name!r}")
    return lambda: getattr(module, name)


class LinearCounter(CallTotals):
    """Effective and dense operations of successive calls of one ``nn.Linear``, or of one
    weight matrix ``weight_name`` (out, in) of another module, such as a cell's
    ``weight_ih``."""

    def __init__(self, name: str, module: nn.Module, weights: WeightCache,
                 steps: StepIndex, arrays: LastArray | None = None,
                 weight_name: str = "weight") -> None:
        self.arrays = arrays or LastArray()
        super().__init__(name, self.arrays.budget)
        self.module = module
        self.weights = weights
        self.steps = steps
        self.weight_name = weight_name
        self.read_weight = weight_reader(module, weight_name)
        self.out_features = self.read_weight().shape[0]
        #: a parametrised weight, recomputed by each forward (no version counter)
        self._derived = not isinstance(self.read_weight(), nn.Parameter)
        self._weight: Tensor | None = None  # the weight _col_nnz was computed for
        self._stamp = (0, -1)  # its (data_ptr, version) then
        self._col_nnz = np.zeros(0, np.float32)
        self._kernel = compiled()[0]  # see linear_counts(); called directly: once per call
        self._step_kernel = compiled()[2]
        #: the announced batch whose steps were counted in one pass, the batch's version
        #: counter then, and its per-step (effective, residual, ACs, MACs), or None when
        #: this batch's calls are counted one by one
        self._batch: np.ndarray | None = None
        self._batch_version = -1
        self._batch_counts: np.ndarray | None = None
        self._seen: list[int] = []  # the steps counted from the pass, not yet recorded
        #: torch path: the weight whose column counts were read last, its (address,
        #: version) then, and the counts (WeightCache's, or a parametrised weight's own)
        self._torch_weight: Tensor | None = None
        self._torch_stamp = (0, -1)
        self._torch_col_nnz: Tensor | None = None

    def add(self, x: Tensor, per_sample: np.ndarray = NO_SAMPLES) -> None:
        """Record one call's input ``x`` (..., in); with ``per_sample`` (samples, 2), also
        write each sample's (effective ops, spike residual) there."""
        step = self.steps.linear_index.get(id(x))
        if step is not None:
            if per_sample is NO_SAMPLES and self._add_from_batch(x, step):
                return
            rows, group = self.steps.batch, 1
        else:
            array = self.arrays.get(x)
            if array is None:
                self._add_with_torch(x)
                return
            rows, step = array.reshape(-1, 1, array.shape[-1]), 0
            group = rows.shape[0] // array.shape[0] if array.ndim > 1 and array.shape[0] \
                else max(rows.shape[0], 1)
        self.dense += rows.shape[0] * rows.shape[2] * self.out_features
        if rows.size == 0:
            self.empty_seen = True  # called, on an empty input: its weights were used
            return
        weight = self.read_weight()
        if weight is not self._weight or self._derived or weight._version != self._stamp[1]:
            self._refresh(weight)
        self.record(*self._kernel(rows, step, self._col_nnz, *UNITS[rows.dtype.char], group,
                                  per_sample))

    def _add_from_batch(self, x: Tensor, step: int) -> bool:
        """Note the call on announced step ``step`` (``x`` is ``batch[:, step]``), counted
        from the batch's one-pass counts (:func:`~neuromark.instrument._compiled.step_rows`,
        taken at the layer's first call in the batch, with the weight and batch as they
        were then) when the batch ends or the pass stops applying (:meth:`_record_seen`).
        One kernel call per batch instead of one per step, and one list append per step:
        between a network's layers every call into other code costs several times its own
        work (cold caches; see ``docs/performance.md``). False when the pass does not
        apply, and the caller counts the call as usual: an empty batch, a parametrised
        weight, an inference tensor (no version counter), or a weight or batch changed in
        place since the pass (then for the rest of the batch)."""
        weight = self.read_weight()
        if self._batch_counts is not None and self.steps.batch is self._batch \
                and x._version == self._batch_version and weight is self._weight \
                and weight._version == self._stamp[1]:
            self._seen.append(step)
            return True
        batch = self.steps.batch
        if batch is self._batch:  # the pass no longer applies to this batch
            self._record_seen()
            self._batch_counts = None
            return False
        self._record_seen()
        self._batch, self._batch_counts = batch, None
        if self._derived or batch.size == 0 or x.is_inference():
            return False
        if weight is not self._weight or weight._version != self._stamp[1]:
            self._refresh(weight)
        out = np.empty((batch.shape[1], 4))
        self._step_kernel(batch, self._col_nnz, *UNITS[batch.dtype.char], out)
        self._batch_version, self._batch_counts = x._version, out
        self._seen.append(step)
        return True

    def _record_seen(self) -> None:
        """Record the noted steps, one call each, from the pass's counts."""
        seen = self._seen
        if not seen:
            return
        batch = self._batch
        self._seen = []
        self.dense += len(seen) * batch.shape[0] * batch.shape[2] * self.out_features
        for counts in self._batch_counts[seen].tolist():
            self.record(*counts)

    def _refresh(self, weight: Tensor) -> None:
        """Column counts of a new or changed weight (in-place changes bump its version)."""
        version = -1 if self._derived else weight._version
        self._weight, self._stamp = weight, (weight.data_ptr(), version)
        self._col_nnz = column_counts_array(self._column_nnz(weight), weight.numel())

    def _column_nnz(self, weight: Tensor) -> Tensor:
        """Cached for parameters; a parametrised weight (``prune``, ``weight_norm``,
        ``parametrize``) is a new tensor each call and is counted afresh."""
        if isinstance(weight, nn.Parameter):
            return self.weights.col_nnz(weight)
        return weight_column_nnz(weight.detach())

    def _add_with_torch(self, x: Tensor) -> None:
        """Keep the call for the torch path's reduction, with the column counts of the
        weight as it is at this call (see :mod:`~neuromark.instrument.deferred`)."""
        self.dense += x.numel() * self.out_features
        weight = self.read_weight()
        if weight is not self._torch_weight or self._derived \
                or self._torch_stamp != (weight.data_ptr(), weight._version):
            self._torch_col_nnz = self._column_nnz(weight)
            if not self._derived:  # a derived weight may be an inference tensor: no version
                self._torch_weight, self._torch_stamp = weight, (weight.data_ptr(),
                                                                 weight._version)
        col_nnz = self._torch_col_nnz
        steps = self.steps
        step = steps.torch_index.get(id(x)) if steps.dims == 3 else None
        if step is not None:
            self.kept.add_step(steps.held, step, col_nnz)
        else:
            self.kept.add(x, x.shape[-1], col_nnz, self.arrays.copies, rows_per_sample(x))

    def on_torch_path(self, x: Tensor) -> bool:
        """Whether :meth:`add` would count ``x`` with torch rather than the kernel."""
        return id(x) not in self.steps.linear_index and self.arrays.get(x) is None

    def take(self) -> Totals:
        """See :meth:`CallTotals.take`; also checks the weight storage stayed put."""
        self._record_seen()  # then reset() drops the batch: it is not held past the batch
        weight = self._weight
        if weight is not None and weight.data_ptr() != self._stamp[0]:
            self._weight = None
            self.reset()
            raise ValueError(f"the weight storage of connection layer {self.name!r} was "
                             "replaced (``weight.data = ...``) during the batch; its "
                             "operations cannot be attributed to the right weights")
        return super().take()

    def reset(self) -> None:
        super().reset()
        self._seen = []
        self._batch, self._batch_counts = None, None


class CellCounter:
    """An RNN/LSTM/GRU cell: W_ih applied to the input and W_hh to the hidden state entering
    the step (all zeros when none is passed: dense operations only), each counted like a
    Linear layer; the totals are reported together under the cell's name.

    Also kept, for neurobench's cell definition (``SynapticOperations(recurrent_gates=True,
    cell_mac_rule="input")``): ``input_rule``, the (ACs, MACs) of both matrices with each
    sample's ops in a call classified by its input x alone (``input_call_rule``: each whole
    call's, by the whole batch's x), and ``gates``, the gate products per call (LSTM: f*c,
    i*g, o*tanh(c); GRU: r*(W_hn h + b), (1 - z)*n, z*h; 3 x hidden per row; RNN: 0).
    """

    def __init__(self, name: str, module: nn.Module, weights: WeightCache,
                 steps: StepIndex, arrays: LastArray | None = None) -> None:
        self.hidden_size = module.hidden_size
        self.gate_products = 0 if isinstance(module, nn.RNNCell) else 3 * module.hidden_size
        self.input = LinearCounter(name, module, weights, steps, arrays, "weight_ih")
        self.hidden = LinearCounter(name, module, weights, steps, arrays, "weight_hh")
        self.input_rule = [0.0, 0.0]
        self.input_call_rule = [0.0, 0.0]
        self.gates = 0.0
        self._torch_calls: list[bool] = []  # torch path: whether each kept call had hx

    @property
    def empty_seen(self) -> bool:
        return self.input.empty_seen

    def add_call(self, args: tuple, kwargs: dict, output: object = None) -> None:
        """Record one call ``cell(input, hx)``; an LSTM cell's ``hx`` is ``(h, c)``."""
        x = args[0] if args else kwargs["input"]
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        if isinstance(hx, tuple):
            hx = hx[0]
        rows = x.numel() // x.shape[-1]
        self.gates += rows * self.gate_products
        if hx is None:
            self.hidden.dense += rows * self.hidden_size * self.hidden.out_features
        if self.input.on_torch_path(x) or (hx is not None and self.hidden.on_torch_path(hx)):
            self.input._add_with_torch(x)
            if hx is not None:
                self.hidden._add_with_torch(hx)
            self._torch_calls.append(hx is not None)
            return
        self._reduce_torch_calls()  # a kernel call after torch-path ones in this batch
        samples = x.shape[0] if x.dim() > 1 else 1
        x_samples = np.zeros((samples, 2))
        h_samples = np.zeros((samples, 2))
        self.input.add(x, x_samples)
        if hx is not None:
            self.hidden.add(hx, h_samples)
        effective = x_samples[:, 0] + h_samples[:, 0]
        residual = x_samples[:, 1]
        self.input_rule[0] += float(effective[residual == 0].sum())
        self.input_rule[1] += float(effective[residual > 0].sum())
        x_residual = float(residual.sum())
        if x_residual == x_residual:
            self.input_call_rule[1 if x_residual else 0] += float(effective.sum())

    def _reduce_torch_calls(self) -> None:
        """Add the torch path's kept calls to both matrices' totals and the input rules."""
        calls, self._torch_calls = self._torch_calls, []
        if not calls:
            return
        x_counts = self.input.kept.reduce()
        h_counts = self.hidden.kept.reduce()
        effective, nonspike, nan = x_counts
        sample_effective = effective.clone()
        if h_counts is not None:
            has_hidden = torch.tensor(calls, device=effective.device)
            h_effective = h_counts[0][:, :effective.shape[1]]
            sample_effective[has_hidden, :h_effective.shape[1]] += h_effective
        call_effective = sample_effective.sum(dim=1)
        call_nonspike, call_clean = nonspike.any(dim=1), ~nan.any(dim=1)
        rule = torch.stack([
            torch.where(~nonspike & ~nan, sample_effective, 0).sum(),
            torch.where(nonspike & ~nan, sample_effective, 0).sum(),
            torch.where(~call_nonspike & call_clean, call_effective, 0).sum(),
            torch.where(call_nonspike & call_clean, call_effective, 0).sum()]).tolist()
        self.input_rule[0] += rule[0]
        self.input_rule[1] += rule[1]
        self.input_call_rule[0] += rule[2]
        self.input_call_rule[1] += rule[3]
        self.input._add(totals(x_counts))
        self.hidden._add(totals(h_counts))

    def take(self) -> Totals:
        """See :meth:`CallTotals.take`, for both matrices together."""
        self._reduce_torch_calls()
        first, second = self.input.take(), self.hidden.take()
        return tuple(a + b for a, b in zip(first, second))  # type: ignore[return-value]

    def take_cell(self) -> tuple[tuple[float, float], float, tuple[float, float]]:
        """(input-rule ACs and MACs per sample, gate products, input-rule ACs and MACs
        per call) since the last call."""
        self._reduce_torch_calls()
        rule, gates = (self.input_rule[0], self.input_rule[1]), self.gates
        call_rule = (self.input_call_rule[0], self.input_call_rule[1])
        self.input_rule, self.input_call_rule, self.gates = [0.0, 0.0], [0.0, 0.0], 0.0
        return rule, gates, call_rule
