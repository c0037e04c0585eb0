"""What each probe costs inside a running network, measured by switching parts off.

One batch of ``bench/e2e_shd.py``'s SHD-layout file (pre-binned), the reference LIF net
(700-128-20), all three probes (synaptic ops, activations, membranes). Per round, each
variant's forward pass runs between two plain forward passes (the bare adapter, no
probes) and is divided by their mean, so the host's drift cancels; printed: the median
per-round ratio (and quartiles) and the extra µs per time step. Variants:

- ``all``: the probes as they run (the first Linear layer counted by one pass per batch);
- ``pass off``: the first layer counted at every step by its own kernel call instead;
- ``neuron kernel off``: the neuron probes' kernel replaced by a Python function
  returning zeros (what one kernel call per neuron layer and step costs in place);
- ``neurons only`` / ``linears only``: the other probes' bodies replaced by nothing (their
  wrappers still installed, so the difference is the bodies' work);
- ``empty wrappers``: every probe wrapper installed, every body empty (the cost of being
  wrapped at all);
- ``bare bodies``: the floor of counting at each call: each neuron body is its numpy views
  and one kernel call, the second Linear's its view and one kernel call, with none of the
  checks that keep the counts right on other networks (state shape and dtype, device,
  gradients, in-place updates, tuples, keyword calls); valid on this net only.

The ablated variants give no (or wrong) counts; only ``all`` and ``pass off`` are valid
runs. Run:
``python bench/probe_ablation.py [--batches 16 64 256] [--rounds 40]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _e2e_common import DT_US, ROOT, T_MAX_US, data_file, reference_lif  # noqa: E402

from neuromark.benchmarks.shd.datasets import SpikeFileDataset  # noqa: E402
from neuromark.instrument import linear_counter, membrane  # noqa: E402
from neuromark.instrument.kernels import NO_SAMPLES, UNITS  # noqa: E402
from neuromark.instrument.probes import Instrument  # noqa: E402
from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402

REAL_WRAP = membrane.NeuronCounter.wrap
REAL_ADD = linear_counter.LinearCounter.add
REAL_PASS = linear_counter.LinearCounter._add_from_batch
REAL_COMPILED = membrane.compiled


def _no_neuron_kernel():
    kernels = REAL_COMPILED()
    return kernels[0], lambda output, after, before: (0, 0), *kernels[2:]


def _empty_wrap(self, module, forward):
    def neuron_forward(*args, **kwargs):
        return forward(*args, **kwargs)
    return neuron_forward


def _empty_add(self, x, per_sample=None) -> None:
    return None


def _no_pass(self, x, step) -> bool:
    return False


def _bare_wrap(self, module, forward):
    kernel, buffers, arrays = membrane.compiled()[1], module._buffers, self.arrays

    def neuron_forward(*args, **kwargs):
        last = self._last
        if last is None:  # the first step of a batch: the real path
            before = self.before(module, args, kwargs)
            output = forward(*args, **kwargs)
            self.after(module, output, before)
            return output
        output = forward(*args)
        out, after = output[0] if isinstance(output, tuple) else output, buffers["mem"]
        out_array, after_array = out.numpy(), after.numpy()
        arrays.tensor, arrays.array = out, out_array
        nonzero, changed = kernel(out_array, after_array, last[1])
        self.nonzeros, self.total = self.nonzeros + nonzero, self.total + out_array.size
        self.updates += changed
        self._last = (after, after_array)
        return output
    return neuron_forward


def _bare_add(self, x, per_sample=None) -> None:
    step = self.steps.linear_index.get(id(x))
    if step is not None:  # the first Linear: the batch pass as it is
        REAL_PASS(self, x, step)
        return
    array = arrays.array if x is (arrays := self.arrays).tensor else x.numpy()
    rows = array.reshape(array.shape[0], 1, array.shape[1])
    self.dense += rows.shape[0] * rows.shape[2] * self.out_features
    if self._weight is None:
        self._refresh(self.read_weight())
    self.record(*self._kernel(rows, 0, self._col_nnz, *UNITS["f"], 1, NO_SAMPLES))


#: variant -> (neuron wrap, Linear add, batch pass, the kernels the neuron wrap takes)
VARIANTS = {
    "all": (REAL_WRAP, REAL_ADD, REAL_PASS, REAL_COMPILED),
    "pass off": (REAL_WRAP, REAL_ADD, _no_pass, REAL_COMPILED),
    "neuron kernel off": (REAL_WRAP, REAL_ADD, REAL_PASS, _no_neuron_kernel),
    "neurons only": (REAL_WRAP, _empty_add, REAL_PASS, REAL_COMPILED),
    "linears only": (_empty_wrap, REAL_ADD, REAL_PASS, REAL_COMPILED),
    "empty wrappers": (_empty_wrap, _empty_add, REAL_PASS, REAL_COMPILED),
    "bare bodies": (_bare_wrap, _bare_add, REAL_PASS, REAL_COMPILED),
}


def forward_ns(model: SNNTorchModel, x: torch.Tensor) -> int:
    model.reset_state()
    start = time.perf_counter_ns()
    model(x)
    return time.perf_counter_ns() - start


def measure(x: torch.Tensor, rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per variant: (ratios to the neighbouring plain passes, extra ns per step)."""
    plain = SNNTorchModel(reference_lif())
    models = {name: SNNTorchModel(reference_lif()) for name in VARIANTS}
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in VARIANTS}
    steps = x.shape[1]
    try:
        with torch.inference_mode():
            for r in range(rounds):
                names = list(VARIANTS) if r % 2 == 0 else list(VARIANTS)[::-1]
                for name in names:
                    wrap, add, batch_pass, kernels = VARIANTS[name]
                    membrane.NeuronCounter.wrap = wrap
                    membrane.compiled = kernels
                    linear_counter.LinearCounter.add = add
                    linear_counter.LinearCounter._add_from_batch = batch_pass
                    model = models[name]
                    instrument = Instrument(model, {"synops", "activations", "membrane"})
                    before = forward_ns(plain, x)
                    with instrument:
                        probed = forward_ns(model, x)
                        instrument.collect()
                    mean = (before + forward_ns(plain, x)) / 2
                    out[name][0].append(probed / mean)
                    out[name][1].append((probed - mean) / steps)
    finally:
        membrane.NeuronCounter.wrap = REAL_WRAP
        linear_counter.LinearCounter.add = REAL_ADD
        linear_counter.LinearCounter._add_from_batch = REAL_PASS
        membrane.compiled = REAL_COMPILED
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--samples", type=int, default=2264)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    path = data_file(ROOT / ".cache/e2e_shd", args.samples, 0)
    print(f"{path}; {args.rounds} rounds, {args.threads} thread(s); ratio = probed forward / "
          "mean of the plain forwards either side (median, quartiles)")
    for batch in args.batches:
        x = next(iter(SpikeFileDataset(path).loader(batch, DT_US, T_MAX_US)))[0]
        for name, (ratios, extra) in measure(x, args.rounds).items():
            q1, _, q3 = statistics.quantiles(ratios)
            print(f"batch {batch:4d} {name:17s} {statistics.median(ratios):6.3f} "
                  f"({q1:.3f}-{q3:.3f})  extra {statistics.median(extra) / 1e3:7.1f} us/step")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
