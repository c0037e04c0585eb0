"""One evaluation helper around the runner, for every runner-based task.

:func:`evaluate` applies what a run context decides (coverage mode, counting path, memory
budget, quietness) and the device a task resolved, so that no task wires the runner by hand.

Example:
    >>> results = evaluate(ctx, model, loader, metrics, device=device,
    ...                    postprocessors=[decoder], info=info)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from neuromark.context import RunContext
from neuromark.identity import BenchmarkIdentity
from neuromark.results import Results


def evaluate(ctx: RunContext, model: Any, data: Iterable[Any], metrics: Sequence[Any], *,
             preprocessors: Sequence[Any] = (), postprocessors: Sequence[Any] = (),
             info: BenchmarkIdentity | None = None, device: Any = None,
             device_requested: str | None = None, coverage: str | None = None,
             reset: str = "batch", quiet: bool | None = None,
             config: dict[str, Any] | None = None, seeds: dict[str, Any] | None = None,
             on_harness: Any = None, trained: bool | None = None) -> Results:
    """Run ``model`` over ``data`` with ``metrics`` under ``ctx``.

    Args:
        ctx: the run context (coverage, counting path, memory budget, quietness).
        model: a model adapter or a bare ``nn.Module``.
        data: iterable of ``(data, targets[, meta])`` batches.
        metrics: metric instances; those that check coverage get :meth:`RunContext.coverage_for`
            of ``coverage`` (a config's own setting, which takes precedence).
        device: the ``torch.device`` the task resolved (``ctx.device_for``); None: no placement.
        device_requested: how it was asked for (provenance).
        reset: the runner's state reset rule.
        quiet: overrides ``ctx.quiet`` (inner loops of a task that shows its own progress).
        on_harness: called with the :class:`~neuromark.runner.Benchmark` before it runs
            (e.g. to hold its :meth:`~neuromark.runner.Benchmark.paused` switch).
        trained: whether the model is trained (the runner's ``trained``; None: not
            declared, the runner tests the weights).
    """
    from neuromark.runner import Benchmark

    metrics = list(metrics)
    ctx.apply_coverage(metrics, coverage)
    harness = Benchmark(model, data, preprocessors, postprocessors, metrics,
                        quiet=ctx.quiet if quiet is None else quiet, info=info, reset=reset,
                        device=device, device_requested=device_requested,
                        counting_path=ctx.counting_path, memory_budget=ctx.memory_budget,
                        trained=trained)
    if on_harness is not None:
        on_harness(harness)
    return harness.run(config=config, seeds=seeds)
