"""The model adapter check: a model (an ``nn.Module``, wrapped as the runner wraps it, or a
:class:`~neuromark.models.adapter.ModelAdapter`) runs a batch and is measured the same
whatever the batch.

:func:`check_adapter` checks:

- the wrap: :func:`neuromark.models.as_adapter` gives a ``ModelAdapter``;
- a batch runs: the output holds a tensor, finite, with the batch's samples along the
  adapter's ``batch_dim``; the adapter records the batch size; after
  ``reset_state()`` the same batch gives the same output (no state left behind);
- the runner's static and workload figures are present: ``footprint`` (bytes, > 0),
  ``synaptic_operations`` (``Effective_MACs``, ``Effective_ACs``, ``Dense``, each >= 0)
  and, for a spiking model, ``activation_sparsity`` in [0, 1];
- they are independent of the batch size: the same data evaluated in batches of each
  size of ``batch_sizes`` give identical figures (footprint, every synaptic operations key,
  activation sparsity): per-sample figures must not depend on how samples were grouped.

How a plugin author uses it in their own test::

    import torch
    from neuromark.testing.adapter import check_adapter
    from my_plugin import MyFrameworkModel, build_net

    def test_my_adapter_keeps_the_contract():
        data = (torch.rand(8, 5, 16) < 0.3).float()       # (samples, steps, features)
        figures = check_adapter(MyFrameworkModel(build_net()), data, batch_sizes=(1, 3, 8))
        assert figures["footprint"] == 16 * 10 * 4         # one float32 Linear(16, 10)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from neuromark.metrics.complexity import ActivationSparsity, SynapticOperations
from neuromark.metrics.static import Footprint
from neuromark.models import as_adapter
from neuromark.models.adapter import ModelAdapter, find_tensor
from neuromark.runner import Benchmark
from neuromark.testing.guard import Problems, contract_check
from neuromark.testing.results import ContractError

SYNOPS_KEYS = ("Effective_MACs", "Effective_ACs", "Dense")


def figures_at(model: Any, data: Any, batch: int, *, spiking: bool, mac_rule: str = "per_sample",
               counting_path: str | None = None) -> dict[str, Any]:
    """Footprint, synaptic operations (and activation sparsity when ``spiking``) of
    ``model`` on ``data`` (samples along dim 0) evaluated in batches of ``batch``;
    ``mac_rule`` and ``counting_path`` as :class:`~neuromark.metrics.complexity.SynapticOperations`
    and :class:`~neuromark.runner.Benchmark` take them."""
    import torch

    targets = torch.zeros(len(data))
    loader = [(data[i:i + batch], targets[i:i + batch]) for i in range(0, len(data), batch)]
    metrics: list[Any] = [Footprint(), SynapticOperations(mac_rule=mac_rule)]
    if spiking:
        metrics.append(ActivationSparsity())
    res = Benchmark(model, loader, metrics=metrics, quiet=True, counting_path=counting_path).run()
    out = {"footprint": res["footprint"], "synaptic_operations": dict(res["synaptic_operations"])}
    if spiking:
        out["activation_sparsity"] = res["activation_sparsity"]
    return out


@contract_check
def check_adapter(model: Any, data: Any, *, batch_sizes: Sequence[int] = (1, 2),
                  spiking: bool | None = None, mac_rule: str = "per_sample",
                  counting_path: str | None = None) -> dict[str, Any]:
    """Check ``model`` on ``data`` (a tensor, samples along dim 0; see the module
    docstring); ``spiking``: whether activation sparsity applies (None: when the adapter
    finds neuron layers); ``mac_rule``, ``counting_path``: see :func:`figures_at`.
    Returns the figures (at the first batch size). Whatever the model raises is reported
    as a :class:`ContractError` naming the call, after every problem already found."""
    import torch

    problems = Problems(type(model).__name__)
    with problems.calling("as_adapter(model)"):
        adapter = as_adapter(model)
    if not isinstance(adapter, ModelAdapter):
        raise ContractError(f"{type(model).__name__}: as_adapter gave a {type(adapter).__name__}, "
                            f"not a neuromark.models.adapter.ModelAdapter")
    name = type(adapter).__name__
    problems.what = name
    batch = data[:max(2, min(len(data), max(batch_sizes)))]
    adapter.train(False)
    with torch.no_grad():
        with problems.calling(f"reset_state() and a forward pass of a batch of {len(batch)}"):
            adapter.reset_state()
            first = find_tensor(adapter(batch))
        with problems.calling("reset_state() and the same batch again"):
            adapter.reset_state()
            second = find_tensor(adapter(batch))
    if first is None:
        problems.append("the output of a batch holds no tensor")
        problems.raise_if_any()
    if not torch.isfinite(first).all():
        problems.append(f"{name}: the output of a batch is not finite")
    dim = adapter.batch_dim
    if dim is not None and (first.dim() <= dim or first.shape[dim] != len(batch)):
        problems.append(f"{name}: output shape {tuple(first.shape)} has not the {len(batch)} "
                        f"samples along batch_dim {dim}")
    if adapter.last_batch_size != len(batch):
        problems.append(f"{name}: last_batch_size is {adapter.last_batch_size}, the batch had "
                        f"{len(batch)} samples")
    if second is None or second.shape != first.shape or not torch.equal(first, second):
        problems.append(f"{name}: the same batch after reset_state() gave another output "
                        f"(state left behind between batches)")
    problems.raise_if_any()
    spiking = bool(adapter.neuron_layers()) if spiking is None else spiking
    measured = []
    for b in batch_sizes:
        with problems.calling(f"measuring footprint and synaptic operations in batches of {b}"):
            measured.append((b, figures_at(model, data, b, spiking=spiking, mac_rule=mac_rule,
                                           counting_path=counting_path)))
    base = measured[0][1]
    footprint, synops = base["footprint"], base["synaptic_operations"]
    if not isinstance(footprint, (int, float)) or not footprint > 0:
        problems.append(f"{name}: footprint is {footprint!r}, not a number of bytes > 0")
    missing = [k for k in SYNOPS_KEYS if k not in synops]
    if missing:
        problems.append(f"{name}: synaptic_operations lacks {', '.join(missing)}")
    if any(not math.isfinite(synops[k]) or synops[k] < 0 for k in SYNOPS_KEYS if k in synops):
        problems.append(f"{name}: synaptic_operations {synops} holds a negative or non-finite count")
    if spiking and not 0 <= base["activation_sparsity"] <= 1:
        problems.append(f"{name}: activation_sparsity {base['activation_sparsity']} is not in [0, 1]")
    for b, other in measured[1:]:
        for key in base:
            if other[key] != base[key]:
                problems.append(f"{name}: {key} is {other[key]} at batch size {b}, "
                                f"{base[key]} at batch size {measured[0][0]}: a per-sample "
                                f"figure must not depend on the batch")
    problems.raise_if_any()
    return base
