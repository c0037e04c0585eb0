"""Where the end-to-end SHD route's time goes: read, bin, host-to-model copies, model,
probes, counting and result assembly, at several batch sizes and torch thread counts.

The route is ``bench/e2e_shd.py``'s neuromark route (the SHD-layout file of
``--samples`` samples, the reference LIF net, seven metrics), run in this process with
timers around its parts (each timer costs well under 1 us per call; a call is a chunk, a
batch or a run, never a time step):

- ``read``: the file's chunks (``iter_spike_chunks``, h5py);
- ``bin``: the binning kernel (``SpikeBatches._bin``) and the batch's allocation;
- ``copies``: batches moved to the model's device (``move_to``; 0 on CPU: no copy);
- ``model``: the plain loop's forward passes on the same batches, pre-binned (no probes),
  the mean of one run before the route and one after;
- ``probes``: the metric run's forward passes minus ``model`` (the probes' per-call work);
- ``counting``: ``Instrument.collect`` (per-batch reductions, the torch path's included);
- ``results``: everything else of the run (metric updates, postprocessing, static
  metrics, the results object, the loader's own Python).

Times are CPU seconds of the process (``time.process_time``: all threads, so torch's
workers count, and time spent waiting for a CPU on a loaded machine does not), medians
of ``--rounds``. Run:
``python bench/e2e_profile.py [--batches 32 64 128] [--threads 1 2] [--rounds 3]
[--samples 2264] [--torch-path]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _e2e_common import (  # noqa: E402
    CHANNELS,
    DT_US,
    ROOT,
    T_MAX_US,
    data_file,
    reference_lif,
    seven_metrics,
)

PARTS = ("read", "bin", "copies", "model", "probes", "counting", "results")


class Timers:
    """Accumulated CPU seconds per part."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PARTS + ("forward", "loader"), 0.0)

    @contextmanager
    def patched(self, owner: object, name: str, part: str):
        """``owner.name`` timed into ``part`` while inside the block."""
        original = getattr(owner, name)
        seconds = self.seconds

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[part] += time.process_time() - start

        setattr(owner, name, timed)
        try:
            yield
        finally:
            setattr(owner, name, original)


def timed_chunks(timers: Timers, chunks):
    """A generator of ``chunks``'s items whose ``next`` time goes to ``read``."""
    def generator(*args, **kwargs):
        iterator = chunks(*args, **kwargs)
        while True:
            start = time.process_time()
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                timers.seconds["read"] += time.process_time() - start
            yield item
    return generator


def plain_model(model, batches) -> float:
    """CPU seconds of the plain loop's forward passes (no probes) over ``batches``."""
    seconds = 0.0
    with torch.inference_mode():
        for data, _ in batches:
            model.reset_state()
            start = time.process_time()
            model(data)
            seconds += time.process_time() - start
    return seconds


def profile_once(path: Path, batch_size: int) -> dict[str, float]:
    """One run of the route with timers; the plain loop's model time on the same batches."""
    from neuromark import Benchmark, runner
    from neuromark.benchmarks.shd.datasets import SpikeFileDataset
    from neuromark.data import spike_stream
    from neuromark.instrument.probes import Instrument
    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.processors.decoding import ChooseMaxCount

    timers = Timers()
    model = SNNTorchModel(reference_lif())
    batches = list(SpikeFileDataset(path).loader(batch_size, DT_US, T_MAX_US))
    before = plain_model(SNNTorchModel(model.module), batches)
    loader = SpikeFileDataset(path).loader(batch_size, DT_US, T_MAX_US)
    start = time.process_time()
    chunks = spike_stream.iter_spike_chunks
    spike_stream.iter_spike_chunks = timed_chunks(timers, chunks)
    with timers.patched(spike_stream.SpikeBatches, "_bin", "bin"), \
            timers.patched(spike_stream.SpikeBatches, "_new", "bin"), \
            timers.patched(runner, "move_to", "copies"), \
            timers.patched(Instrument, "collect", "counting"), \
            timers.patched(SNNTorchModel, "__call__", "forward"):
        try:
            Benchmark(model, loader, [], [ChooseMaxCount()], seven_metrics(), quiet=True).run()
        finally:
            spike_stream.iter_spike_chunks = chunks
    total = time.process_time() - start
    seconds = timers.seconds
    # the plain loop on the same batches, before and after the run (the host's speed drifts)
    seconds["model"] = (before + plain_model(SNNTorchModel(model.module), batches)) / 2
    seconds["probes"] = seconds["forward"] - seconds["model"]
    seconds["results"] = total - sum(seconds[p] for p in ("read", "bin", "copies", "forward",
                                                           "counting"))
    seconds["total"] = total
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2264)
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torch-path", action="store_true",
                        help="the torch counting path (the GPU's) instead of the kernels")
    parser.add_argument("--folder", type=Path, default=ROOT / ".cache/e2e_shd")
    args = parser.parse_args()
    from neuromark.instrument.probes import Instrument

    if args.torch_path:
        Instrument.counting_path = "torch"
    path = data_file(args.folder, args.samples, args.seed)
    load = os.getloadavg()
    print(f"{path}: {args.samples} samples x {T_MAX_US // DT_US} bins x {CHANNELS} channels; "
          f"counting path {'torch' if args.torch_path else 'auto (kernels)'}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; CPU seconds, medians of {args.rounds}")
    profile_once(path, args.batches[0])  # warm-up: numba's cache, page cache
    print(f"{'batch':>5s} {'thr':>3s} " + " ".join(f"{p:>8s}" for p in PARTS)
          + f" {'total':>8s} {'overhead':>9s}")
    for threads in args.threads:
        torch.set_num_threads(threads)
        for batch in args.batches:
            runs = [profile_once(path, batch) for _ in range(args.rounds)]
            med = {k: statistics.median(r[k] for r in runs) for k in PARTS + ("total",)}
            print(f"{batch:5d} {threads:3d} " + " ".join(f"{med[p]:8.3f}" for p in PARTS)
                  + f" {med['total']:8.3f} {med['total'] / med['model']:8.2f}x")
            sys.stdout.flush()
    print("overhead = total / model: the route's time over its plain forward passes alone")


if __name__ == "__main__":
    main()
