"""What ``bench/e2e_shd.py`` and ``bench/e2e_grid.py`` share: the seeded SHD-layout file, the
reference snnTorch LIF network and the two timed routes from the file on disk to the results
(neuromark's ``SpikeFileDataset.loader`` + ``Benchmark``; neurobench 2.x + tonic's ``SHD`` +
``ToFrame``). Each route returns ``{"route_s", "route_cpu_s", "figures"}`` (wall and CPU
seconds inside the process; figures as plain floats under neuromark's metric names).

Nothing here imports a package at module level but the standard library, so the neurobench
route runs in a reference interpreter that has no neuromark.
"""

from __future__ import annotations

import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = ROOT / ".cache/reference-venv/bin/python"
DT_US, T_MAX_US, CHANNELS, CLASSES = 10_000, 1_000_000, 700, 20


def write_file(path: Path, n: int, seed: int = 0, chunk: int = 500) -> Path:
    """The SHD layout (vlen float16 times, vlen uint16 units, uint16 labels and speakers,
    class names), written ``chunk`` samples at a time so that 20,000 samples fit in memory;
    each sample sorted by (time, unit) after rounding to float16, as ``write_shd_file`` does."""
    import h5py
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with h5py.File(tmp, "w") as f:
        times = f.create_dataset("spikes/times", (n,), dtype=h5py.vlen_dtype(np.float16))
        units = f.create_dataset("spikes/units", (n,), dtype=h5py.vlen_dtype(np.uint16))
        f.create_dataset("labels", data=rng.integers(0, CLASSES, n).astype(np.uint16))
        f.create_dataset("extra/speaker", data=rng.integers(0, 10, n).astype(np.uint16))
        f.create_dataset("extra/keys", data=np.array([f"class{i}".encode() for i in range(CLASSES)]))
        f.create_group("extra/meta_info")
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            t_obj, u_obj = np.empty(hi - lo, dtype=object), np.empty(hi - lo, dtype=object)
            for j, count in enumerate(rng.integers(1000, 9001, hi - lo)):
                t = rng.uniform(0.0, 0.999, count).astype(np.float16)
                u = rng.integers(0, CHANNELS, count).astype(np.uint16)
                order = np.lexsort((u, t))
                t_obj[j], u_obj[j] = t[order], u[order]
            for j in range(hi - lo):  # h5py cannot broadcast a 1-element object array
                times[lo + j], units[lo + j] = t_obj[j], u_obj[j]
    tmp.replace(path)
    (path.parent / "shd_test.h5.zip").write_bytes(b"")  # tonic checks only that it exists
    return path


def data_file(folder: Path, n: int, seed: int) -> Path:
    """``folder/n<N>_s<seed>/SHD/shd_test.h5`` (tonic's layout), written when missing."""
    path = folder / f"n{n}_s{seed}" / "SHD" / "shd_test.h5"
    return path if path.is_file() else write_file(path, n, seed)


def reference_lif():
    """The reference snnTorch network (no data drawn: nothing but the net in memory)."""
    import snntorch as snn
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(700, 128), snn.Leaky(beta=0.9, init_hidden=True),
                        nn.Linear(128, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True))
    with torch.no_grad():
        net[0].weight.mul_(4)
    return net


def plain(value):
    """Scores and tensors as plain floats (dicts kept)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return float(value)


def seven_metrics() -> list:
    """Fresh instances of the seven metrics, in neurobench's order (static, then workload)."""
    from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
    from neuromark.metrics.correctness import ClassificationAccuracy
    from neuromark.metrics.static import ConnectionSparsity, Footprint, ParameterCount

    return [Footprint(), ParameterCount(), ConnectionSparsity(), ClassificationAccuracy(),
            ActivationSparsity(), SynapticOperations(), MembraneUpdates()]


def route_neuromark(path: Path, batch_size: int) -> dict:
    import h5py  # noqa: F401

    from neuromark import Benchmark, metrics, runner  # noqa: F401
    from neuromark.benchmarks.shd.datasets import SpikeFileDataset
    from neuromark.data import hdf5_vlen, spike_stream  # noqa: F401  (numba)
    from neuromark.instrument import probes  # noqa: F401
    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.processors.decoding import ChooseMaxCount

    net = reference_lif()
    start, cpu = time.perf_counter(), time.process_time()
    loader = SpikeFileDataset(path).loader(batch_size, DT_US, T_MAX_US)
    results = Benchmark(SNNTorchModel(net), loader, [], [ChooseMaxCount()], seven_metrics(),
                        quiet=True).run()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    figures = {k: plain(v) for k, v in dict(results).items()}
    return {"route_s": seconds, "route_cpu_s": cpu, "figures": figures}


#: neurobench 2.x result keys -> ours.
NB_KEYS = {"Footprint": "footprint", "ParameterCount": "parameter_count",
           "ConnectionSparsity": "connection_sparsity", "ClassificationAccuracy": "classification_accuracy",
           "ActivationSparsity": "activation_sparsity", "SynapticOperations": "synaptic_operations",
           "MembraneUpdates": "membrane_updates"}


class _Squeeze:
    """ToFrame's (T, 1, 700) int frames -> (T, 700) float32, as the net takes them."""

    def __call__(self, frames):
        import numpy as np

        return frames[:, 0, :].astype(np.float32)


def route_neurobench(path: Path, batch_size: int) -> dict:
    import tonic
    from neurobench.benchmarks import Benchmark as NBBenchmark
    from neurobench.metrics import static as nb_static
    from neurobench.metrics import workload as nb_workload
    from neurobench.models import SNNTorchModel as NBSNNTorchModel
    from torch.utils.data import DataLoader

    net = reference_lif()
    start, cpu = time.perf_counter(), time.process_time()
    to_frame = tonic.transforms.ToFrame(sensor_size=(CHANNELS, 1, 1), time_window=DT_US, start_time=0,
                                        end_time=T_MAX_US)
    dataset = tonic.datasets.SHD(str(path.parents[1]), train=False,
                                 transform=tonic.transforms.Compose([to_frame, _Squeeze()]))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    static = [nb_static.Footprint, nb_static.ParameterCount, nb_static.ConnectionSparsity]
    workload = [nb_workload.ClassificationAccuracy, nb_workload.ActivationSparsity,
                nb_workload.SynapticOperations, nb_workload.MembraneUpdates]
    results = NBBenchmark(NBSNNTorchModel(net), loader, [], [lambda s: s.sum(1).argmax(-1)],
                          [static, workload]).run(quiet=True, verbose=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    figures = {NB_KEYS.get(k, k): plain(v) for k, v in results.items()}
    return {"route_s": seconds, "route_cpu_s": cpu, "figures": figures}
