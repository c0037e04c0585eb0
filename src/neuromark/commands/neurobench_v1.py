"""``neuromark neurobench-v1 CONFIG... --out DIR``: NeuroBench v1.0's published rows, from
NeuroBench's own trained checkpoints, with the published figures beside ours.

A row config (``configs/neurobench_v1/*.yaml``)::

    row: primate reaching, ANN2D, indy_20160622_01     # the published row it belongs to
    architecture: ann2d        # a key of neuromark.networks.neurobench_v1.ARCHITECTURES
    channels: 96               # input width (primate decoders; 0 for the others)
    checkpoint: checkpoints/primate_reaching/model_data/2D_ANN_Weight/indy_..._dict.pth
    adapter: torch             # torch (the module takes the whole input) or snntorch
                               # (one step per call; input (B, T, *features))
    example_shape: [51, 1, 96] # a data-free input: Dense is a function of its shape only
    dense_divisor: 2           # optional: Dense per executed forward = ops / this
    published: {footprint: 20824, dense: 4704, r2: 0.593}   # NeuroBench's figures
    needs_data: the six primate sessions (O'Doherty et al., Zenodo 583331) for R2, ...

Every path is relative to the config's folder. A folder given on the command line is read
for its row configs; the task configs beside them (``task: mackey_glass``) are for
``neuromark run``. The results file per config
(``DIR/<config stem>.json``) holds ``footprint`` (our rule), ``footprint_neurobench``
(NeuroBench 2.3.0's rule), ``parameter_count``, ``connection_sparsity`` and ``dense``
(synaptic operations' Dense on the zero example input, per sample, or per executed forward
with ``dense_divisor``), with ``details.published`` and ``details.needs_data``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from neuromark.commands import add_command
from neuromark.errors import ConfigError, NeuromarkError
from neuromark.identity import BenchmarkIdentity
from neuromark.results import Score

DESCRIPTION = """Static figures of NeuroBench v1.0's trained baselines (configs/neurobench_v1):
footprint under our rule and under NeuroBench's, parameter count, connection sparsity and Dense
on a data-free example input, each results file carrying NeuroBench's published figures in
details.published."""

KEYS = ("row", "architecture", "channels", "checkpoint", "adapter", "example_shape",
        "dense_divisor", "published", "needs_data", "note")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "neurobench-v1", "static figures of NeuroBench's trained "
                         "baselines beside the published rows", DESCRIPTION)
    parser.add_argument("configs", nargs="+", type=Path, metavar="CONFIG",
                        help="row configs (configs/neurobench_v1/*.yaml) or folders of them")
    parser.add_argument("--out", type=Path, required=True, help="folder for the results files")
    parser.set_defaults(func=_main)


def row_config_paths(folder: Path) -> list[Path]:
    """The row configs in ``folder`` (``*.yaml`` without a ``task:`` key; the folder's task
    configs, such as the Mackey-Glass ESN rows, are run by ``neuromark run``)."""
    import yaml

    out = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            data = None  # read_row names the problem
        if not (isinstance(data, dict) and "task" in data):
            out.append(path)
    return out


def read_row(path: Path) -> dict[str, Any]:
    """The row config at ``path``, checked (unknown keys, missing fields, the checkpoint
    present); ConfigError naming the file and field otherwise."""
    import yaml

    from neuromark.networks.neurobench_v1 import ARCHITECTURES

    try:
        row = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the row config: {exc}") from None
    if not isinstance(row, dict):
        raise ConfigError(f"{path}: a row config is a mapping (see neuromark neurobench-v1 -h)")
    if "task" in row:
        raise ConfigError(f"{path}: a task config (task: {row['task']}), not a row config: "
                          f"run it with `neuromark run {path}`")
    unknown = sorted(set(row) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown field(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")
    for key in ("row", "architecture", "checkpoint", "example_shape"):
        if key not in row:
            raise ConfigError(f"{path}: field {key!r} is missing")
    if row["architecture"] not in ARCHITECTURES:
        raise ConfigError(f"{path}: field 'architecture': {row['architecture']!r} is none of "
                          f"{', '.join(sorted(ARCHITECTURES))}")
    if row.get("adapter", "torch") not in ("torch", "snntorch"):
        raise ConfigError(f"{path}: field 'adapter' must be torch or snntorch")
    shape = row["example_shape"]
    if not (isinstance(shape, list) and shape and all(isinstance(n, int) and n > 0 for n in shape)):
        raise ConfigError(f"{path}: field 'example_shape' must be a list of positive integers")
    checkpoint = (path.parent / row["checkpoint"]).resolve()
    if not checkpoint.is_file():
        raise ConfigError(f"{path}: field 'checkpoint': no file {checkpoint}")
    row = {**row, "checkpoint": checkpoint, "config_path": path}
    try:  # the checkpoint must fit the architecture before any work is done
        row_model(row)
    except Exception as exc:  # noqa: BLE001 - unpickling and loading raise several types
        raise ConfigError(f"{path}: field 'checkpoint': {exc}") from None
    return row


def row_model(row: dict[str, Any]) -> Any:
    """The architecture of ``row`` with its checkpoint loaded (eval mode)."""
    from neuromark.networks.neurobench_v1 import load_baseline

    return load_baseline(row["architecture"], row["checkpoint"], int(row.get("channels") or 0))


def static_figures(row: dict[str, Any], quiet: bool = True) -> Any:
    """Results of one row: our metrics on the loaded checkpoint and the zero example input
    (a :class:`neuromark.results.Results` with ``details.published``)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from neuromark.metrics.complexity import SynapticOperations
    from neuromark.metrics.static import (
        ConnectionSparsity,
        Footprint,
        FootprintNeurobench,
        ParameterCount,
    )
    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.models.torch_model import TorchModel
    from neuromark.runner import Benchmark

    net = row_model(row)
    # parameters that apply no synapse (SNN_Flat's output scalings): exempt from coverage
    exempt = tuple(getattr(net, "neuromark_elementwise_parameters", ()))
    adapter = (SNNTorchModel(net, exempt_params=exempt) if row.get("adapter") == "snntorch"
               else TorchModel(net, exempt_params=exempt))
    example = torch.zeros(row["example_shape"])
    loader = DataLoader(TensorDataset(example, torch.zeros(example.shape[0])),
                        batch_size=example.shape[0])
    info = BenchmarkIdentity(id=f"neurobench_v1-{row['config_path'].stem}", version="1.0",
                             parent="neurobench-v1.0")
    results = Benchmark(adapter, loader, [], [], [
        Footprint(), FootprintNeurobench(), ParameterCount(),
        ConnectionSparsity(recurrent_biases=True), SynapticOperations(mac_rule="per_call")],
        quiet=quiet, info=info, trained=True).run()
    ops = results.scores.pop("synaptic_operations")
    dense = ops.value["Dense"]  # per sample (row of the example)
    if row.get("dense_divisor"):  # per executed forward: all ops / executions
        dense = dense * example.shape[0] / float(row["dense_divisor"])
    results.scores["dense"] = Score(dense, unit="ops", higher_is_better=False,
                                    raw={"per": "executed forward" if row.get("dense_divisor")
                                         else "sample", "example_shape": row["example_shape"]})
    results.details.update({
        "row": row["row"], "architecture": row["architecture"],
        "checkpoint": str(row["checkpoint"].name),
        "published": dict(row.get("published") or {}),
        "needs_data": row.get("needs_data"), "note": row.get("note")})
    return results


def _main(args: argparse.Namespace) -> int:
    paths = [p for c in args.configs for p in (row_config_paths(c) if c.is_dir() else [c])]
    try:
        rows = [read_row(p) for p in paths]  # every config checked before any work
    except NeuromarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        results = static_figures(row)
        out = results.save(args.out / f"{row['config_path'].stem}.json", replace=True)
        s = results.scores
        print(f"{row['config_path'].stem}: footprint {s['footprint'].value:,.0f} B (ours), "
              f"{s['footprint_neurobench'].value:,.0f} B (NeuroBench rule); parameters "
              f"{s['parameter_count'].value:,}; connection sparsity "
              f"{s['connection_sparsity'].value:.4f}; Dense {s['dense'].value:,.1f} -> {out}")
    return 0
