"""The algorithm-track loop: data -> preprocess -> model -> postprocess -> metrics.

Example:
    >>> bench = Benchmark(SNNTorchModel(net), loader, [], [ChooseMaxCount()],
    ...                   [ClassificationAccuracy(), SynapticOperations()])  # doctest: +SKIP
    >>> results = bench.run()  # doctest: +SKIP

State: by default the model's state is reset before every batch (independent samples).
Streaming tasks choose ``reset="stream"`` (reset where a batch's third element says
``new_stream``; state carries across the chunks of one stream; S parallel streams that start
together are one batch ``(S, L, C)`` with per-row state) or ``reset="never"`` (one reset
before the run).

Device: with ``device`` the runner places the model there and moves each batch itself
(tensors inside tuples, lists and dicts included, ``non_blocking``); without it, model and
data stay where the caller put them. The results' provenance records the device used.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from neuromark.benchmark_settings import derive_identity, stamp_derived
from neuromark.context import RunContext
from neuromark.devices import device_provenance, module_device, move_to
from neuromark.errors import ConfigError, DataError, MetricError, ModelOutputError, NeuromarkError
from neuromark.identity import BenchmarkIdentity, ModelIdentity, identity_for
from neuromark.instrument.probes import Instrument
from neuromark.metrics.base import StaticMetric, Step, WorkloadMetric
from neuromark.models import as_adapter
from neuromark.models.untrained import untrained_flag
from neuromark.models.wrapping import describe_output
from neuromark.provenance import stamp_provenance
from neuromark.registry import tasks
from neuromark.results import CUSTOM_BENCHMARK, Results, Score
from neuromark.said import say_flag

Preprocessor = Callable[[tuple[Any, Any]], tuple[Any, Any]]
Postprocessor = Callable[[Any], Any]
#: When the runner resets the model's state (:meth:`ModelAdapter.reset_state`):
#: ``"batch"`` before every batch (independent samples; the default); ``"stream"`` before a
#: batch whose third element, a mapping, has ``new_stream`` true (a loader that feeds long
#: streams in chunks marks each stream's first chunk; state carries across its chunks);
#: ``"never"`` once before the first batch only (the whole run is one stream).
ResetRule = Literal["batch", "stream", "never"]
RESET_RULES: tuple[str, ...] = ("batch", "stream", "never")


class ModelRunError(ModelOutputError, RuntimeError):
    """The model raised while running a batch; the message names the benchmark, batch,
    layer and input shape, and ``__cause__`` is the original exception."""


def _non_finite(output: Any) -> str:
    """"NaN", "inf" or "NaN and inf" when a float tensor in ``output`` holds such values;
    "" when all are finite."""
    if isinstance(output, torch.Tensor):
        # a finite sum means every value is finite (NaN and inf propagate) and is ~100x
        # cheaper than isfinite(); a sum that overflows falls back to the exact test
        if not output.is_floating_point() or bool(torch.isfinite(output.sum())) \
                or bool(torch.isfinite(output).all()):
            return ""
        nan, inf = bool(torch.isnan(output).any()), bool(torch.isinf(output).any())
        return " and ".join(name for name, seen in (("NaN", nan), ("inf", inf)) if seen)
    if isinstance(output, (tuple, list)):
        return next((bad for bad in map(_non_finite, output) if bad), "")
    return ""


def _failing_layer(exc: BaseException, root: Any) -> str:
    """The name of the innermost module of ``root`` whose ``forward`` was running when
    ``exc`` was raised (from the traceback's frames; nothing is hooked), or ""."""
    if not isinstance(root, torch.nn.Module):
        return ""
    names = {id(m): name for name, m in root.named_modules()}
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, torch.nn.Module) and id(owner) in names:
            found = names[id(owner)] or type(owner).__name__
        tb = tb.tb_next
    return found


def _num_samples(targets: Any, batch_index: int) -> int:
    try:
        return len(targets)
    except TypeError:
        raise ModelOutputError(f"batch {batch_index}: targets of type {type(targets).__name__} "
                               "have no length; the number of samples is len(targets)") from None


@dataclass(frozen=True)
class GivenModel:
    """A model handed over in Python to run on a config's benchmark
    (:meth:`Benchmark.from_config`): the model, its identity, whether it is trained (see
    :class:`Benchmark`'s ``trained``) and a decoding rule overriding the config's (None:
    the config's ``eval.postprocessor``, else by output shape)."""

    model: Any
    identity: ModelIdentity
    trained: bool | None = None
    postprocessor: str | None = None


class ConfiguredBenchmark:
    """A config's benchmark (identity, data, metrics, decoding) with a model given in Python;
    :meth:`run` returns the results, as ``neuromark run`` would file them
    (``<benchmark id>--<label>.json``), so they join the config's leaderboard table.

    Made by :meth:`Benchmark.from_config`."""

    def __init__(self, task: Any, plan: Any, ctx: Any, config: Any = None) -> None:
        self.task, self.plan, self.ctx, self.config = task, plan, ctx, config

    @property
    def info(self) -> BenchmarkIdentity:
        """The benchmark's identity (the config's ``benchmark`` block)."""
        return self.plan.settings.benchmark.info()

    def run(self) -> Results:
        """Run the given model on the benchmark; the results (one file's worth)."""
        (results,) = self.task.run(self.plan, self.ctx)
        stamp_derived(results, self.config)
        return results


class Benchmark:
    """Runs a model over a dataloader and computes metrics.

    Args:
        model: a :class:`neuromark.models.adapter.ModelAdapter` or a bare ``nn.Module``.
        dataloader: iterable of ``(data, targets)`` batches; samples per batch = len(targets)
            after preprocessing.
        preprocessors: callables ``(data, targets) -> (data, targets)`` applied in order.
        postprocessors: callables ``output -> predictions`` applied in order.
        metrics: static and workload metric instances.
        quiet: no progress bar (a bar is shown only on a terminal anyway).
        info: the benchmark's identity for the results file (task, data, metric set; the
            same for every model run on it). None: ``BenchmarkIdentity("custom")``.
        identity: the model's identity for the results file
            (:func:`neuromark.results.model_identity` builds one from a name, options and
            checkpoint). None: named by the model's class name, options and checkpoint
            unknown.
        model_label: the model's label in file names and leaderboards (replaces
            ``identity``'s; default: its name).
        reset: when the model's state is reset (:data:`ResetRule`): "batch" (default),
            "stream" (batches ``(data, targets, {"new_stream": bool})``) or "never".
        device: where the model runs (a ``torch.device`` or its name, e.g. "cuda:0"); the
            runner moves the model there and each batch (before preprocessing). None: no
            placement (model and batches stay where they are).
        device_requested: how the device was asked for (e.g. "auto"), for the provenance.
        counting_path: how synaptic operations are counted ("auto" or "torch"; None: "auto");
            a run passes its context's (:class:`neuromark.context.RunContext`).
        memory_budget: bytes the torch counting path may keep per batch (None: 2 GiB).
        trained: whether the model is trained: True (a checkpoint, a recipe, your own
            training), False (untrained on purpose, e.g. for timing only; recorded in
            ``details["untrained"]``), None (not declared: a network whose weights are
            still as PyTorch's default initialisation drew them is flagged
            :data:`~neuromark.models.untrained.UNTRAINED_FLAG`, on stderr and in the results).
    """

    def __init__(self, model: Any, dataloader: Iterable[Any],
                 preprocessors: Sequence[Preprocessor] = (),
                 postprocessors: Sequence[Postprocessor] = (),
                 metrics: Sequence[StaticMetric | WorkloadMetric] = (), *,
                 quiet: bool = False, info: BenchmarkIdentity | None = None,
                 identity: ModelIdentity | None = None, model_label: str | None = None,
                 reset: ResetRule = "batch", device: Any = None,
                 device_requested: str | None = None, counting_path: str | None = None,
                 memory_budget: int | None = None, trained: bool | None = None) -> None:
        if reset not in RESET_RULES:
            raise ValueError(f"reset={reset!r}: one of {', '.join(RESET_RULES)}")
        self.reset = reset
        self.adapter = as_adapter(model)
        self.dataloader = dataloader
        self.preprocessors = list(preprocessors)
        self.postprocessors = list(postprocessors)
        self.metrics = list(metrics)
        for metric in self.metrics:
            if not isinstance(metric, (StaticMetric, WorkloadMetric)):
                raise TypeError(f"{metric!r} is not a neuromark metric instance "
                                "(StaticMetric or WorkloadMetric)")
        self.quiet = quiet
        self.info = info or BenchmarkIdentity(CUSTOM_BENCHMARK)
        self.identity = identity_for(self.adapter, identity, model_label)
        self.device = None if device is None else torch.device(device)
        self.device_requested = device_requested
        self.counting_path = counting_path
        self.memory_budget = memory_budget
        self.trained = trained
        self._wrapped: dict[str, Any] | None = None

    @classmethod
    def from_config(cls, path: str | Path, *, model: Any, label: str | None = None,
                    trained: bool | None = None, postprocessor: str | None = None,
                    quiet: bool = True, device: str | None = None,
                    cache_dir: str | Path | None = None) -> ConfiguredBenchmark:
        """A shipped (or your own) config's benchmark with ``model`` in place of its model:
        the config's benchmark identity, data, metrics and ``eval`` settings, so the
        results join that benchmark's leaderboard table as the config route's would, with
        the same flags.

        Args:
            path: a config file (``configs/...`` relative paths are also looked up in the
                neuromark checkout); a ``classification`` config.
            model: your network (a bare ``nn.Module``, wrapped as :func:`as_adapter` does) or
                a model adapter.
            label: the model's label in the results' file name and the leaderboard
                (default: its class name).
            trained: as :class:`Benchmark`'s ``trained`` (None: the weights are tested).
            postprocessor: the decoding rule (``spike_count``, ``argmax``,
                ``max_over_time``, ``mean_over_time``); None: the config's
                ``eval.postprocessor``, else by output shape.
            device, cache_dir: as ``neuromark run``'s ``--device`` and ``--cache-dir``.

        Example:
            >>> bench = Benchmark.from_config("configs/shd/spoken_digits_snn.yaml",
            ...                               model=net, label="mine")  # doctest: +SKIP
            >>> bench.run().save("results/mine/spoken-digits--mine.json")  # doctest: +SKIP
        """
        from neuromark.config import find_config, load_config  # pydantic, yaml

        config = load_config(find_config(path))
        derive_identity(config)  # a shipped id with changed settings gets its own id
        ctx = RunContext.build(quiet=quiet, device=device, cache_dir=cache_dir)
        config.cache_root = ctx.cache_dir
        name = config.data.get("task") if isinstance(config.data, dict) else None
        task = tasks.get(name) if isinstance(name, str) and name in tasks.names() else None
        if not callable(getattr(task, "with_model", None)):
            raise ConfigError(f"{config.where(('task',))}: Benchmark.from_config takes a config "
                              f"whose task runs a given model (classification), not {name!r}")
        adapter = as_adapter(model)
        given = GivenModel(adapter, identity_for(adapter, None, label), trained, postprocessor)
        return ConfiguredBenchmark(task, task.with_model(task.plan(config, ctx), given), ctx,
                                   config)

    def _progress(self, iterable: Iterable[Any], quiet: bool) -> Iterable[Any]:
        if quiet or not sys.stderr.isatty():
            return iterable
        from tqdm.auto import tqdm

        total = len(iterable) if hasattr(iterable, "__len__") else None  # type: ignore[arg-type]
        return tqdm(iterable, total=total, desc=self.info.id, unit="batch", leave=False)

    def run(self, *, quiet: bool | None = None, config: dict[str, Any] | None = None,
            seeds: dict[str, Any] | None = None) -> Results:
        """Run the workload once and return the results (static metrics after the run)."""
        quiet = self.quiet if quiet is None else quiet
        workload = [m for m in self.metrics if isinstance(m, WorkloadMetric)]
        static = [m for m in self.metrics if isinstance(m, StaticMetric)]
        for metric in workload:
            metric.reset()
            bind = getattr(metric, "bind_model", None)  # e.g. energy: the operand precision
            if callable(bind):
                bind(self.adapter)
        for metric in static:  # e.g. footprint under NeuroBench's rule: before any data
            before = getattr(metric, "before_run", None)
            if callable(before):
                before(self.adapter)
        nan_allowed = all(m.handles_nan for m in workload if m.uses_predictions)
        probes = frozenset().union(*(m.requires for m in workload))
        self.adapter.train(False)
        module = getattr(self.adapter, "module", None)
        if self.device is not None and isinstance(module, torch.nn.Module):
            module.to(self.device)
        seen = resets = 0
        instrument = self._instrument = Instrument(self.adapter, probes, self.counting_path,
                                                   self.memory_budget)
        with instrument, torch.inference_mode():
            index = -1  # not enumerate(): it holds the previous batch while fetching the next
            for batch in self._batches(self._progress(self.dataloader, quiet)):
                index += 1
                if self.device is not None:
                    batch = move_to(batch, self.device)
                data, targets = self._preprocess(batch, index)
                bad = _non_finite(targets)
                if bad:
                    raise DataError(f"benchmark {self.info.id}: batch {index}: targets contain "
                                    f"{bad}; targets must be finite")
                if self._resets(batch, index):
                    self.adapter.reset_state()
                    resets += 1
                output = self._forward(data, index)
                if index == 0:
                    self._say_wrapping(output)
                bad = _non_finite(output)
                if bad and not nan_allowed:
                    raise ModelOutputError(f"batch {index}: model output contains {bad} "
                                           f"(benchmark {self.info.id})")
                predictions = output
                for post in self.postprocessors:
                    try:
                        predictions = post(predictions)
                    except ModelOutputError as exc:  # with the benchmark, batch and wrapping
                        raise ModelOutputError(f"benchmark {self.info.id}: batch {index}: "
                                               f"{exc}{self._wrapping_clause()}") from exc
                step = Step(index, predictions, targets, _num_samples(targets, index),
                            self._collect(instrument, index) if probes else None)
                self._check_predictions(step)
                for metric in workload:
                    try:
                        metric.update(step)
                    except Exception as exc:
                        raise MetricError(f"metric {metric.name!r} failed on batch {index}: "
                                          f"{exc}") from exc
                seen += step.num_samples
                # drop this batch before the next is made: the loader can then reuse its memory
                del batch, data, targets, output, predictions, step
        if seen == 0:
            raise ModelOutputError("the dataloader yielded no samples")
        scores: dict[str, Score] = {}
        for metric in static + workload:
            try:
                value = metric.compute(self.adapter) if isinstance(metric, StaticMetric) \
                    else metric.compute()
            except Exception as exc:
                raise MetricError(f"metric {metric.name!r} failed: {exc}") from exc
            scores.update(value if isinstance(value, dict) else {metric.name: value})
        details: dict[str, Any] = {"samples": seen}
        if self._wrapped is not None:
            details["adapter"] = self._wrapped
        if self.reset != "batch":
            details["state_resets"] = {"rule": self.reset, "count": resets}
        for metric in workload:  # e.g. synaptic_operations: coverage, activation products
            extra = getattr(metric, "details", None)
            if callable(extra):
                details[metric.name] = extra()
        used = self.device if self.device is not None else module_device(module)
        provenance = stamp_provenance({}, device=device_provenance(used, self.device_requested))
        results = Results(scores=scores, benchmark=self.info, config=config or {},
                          seeds=seeds or {}, details=details, provenance=provenance,
                          model=self.identity)
        self._flag_untrained(results, module)
        return results

    def _flag_untrained(self, results: Results, module: Any) -> None:
        """The untrained flag (:mod:`neuromark.models.untrained`), on stderr and in
        ``results``; a model declared untrained is recorded in ``details["untrained"]``."""
        if self.trained is False:
            results.details["untrained"] = "declared (trained: false)"
            return
        flag = untrained_flag(module, self.trained)
        if flag is not None:
            results.flag(flag)
            say_flag(self.info.id, flag)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Count nothing inside, during :meth:`run` (an on-line learning rule that runs the
        network itself between batches); outside a run there is nothing to pause."""
        instrument = getattr(self, "_instrument", None)
        if instrument is None:
            yield
            return
        with instrument.paused():
            yield

    def metric_states(self) -> list[dict[str, Any]]:
        """After :meth:`run`: each workload metric's picklable
        :meth:`~neuromark.metrics.base.WorkloadMetric.state`, in the order of ``metrics``.

        Intended use, a workload split over executor units: each unit runs a Benchmark on
        its share and returns these states (plain values) to the driver, which builds the
        same metrics afresh, calls ``metric.merge_state(state)`` for every unit in unit
        order and then ``compute()``: the figures of one run over all the units' data.
        """
        return [m.state() for m in self.metrics if isinstance(m, WorkloadMetric)]

    def _resets(self, batch: Any, index: int) -> bool:
        """Whether the model's state is reset before batch ``index`` (see ``reset``)."""
        if self.reset == "batch":
            return True
        if self.reset == "never":
            return index == 0
        meta = batch[2] if isinstance(batch, (tuple, list)) and len(batch) > 2 else None
        if not isinstance(meta, Mapping) or "new_stream" not in meta:
            raise DataError(f"benchmark {self.info.id}: batch {index}: reset='stream' needs "
                            "batches (data, targets, {'new_stream': bool}); this batch has no "
                            "such mapping")
        if index == 0 and not meta["new_stream"]:
            raise DataError(f"benchmark {self.info.id}: batch 0 must start a stream "
                            "(new_stream true)")
        return bool(meta["new_stream"])

    def _batches(self, iterable: Iterable[Any]) -> Iterable[Any]:
        """``iterable``'s batches; an exception inside the data loader is re-raised as a
        :class:`DataError` naming the benchmark and the batch, chained to the original."""
        iterator = iter(iterable)
        index = 0
        while True:
            try:
                batch = next(iterator)
            except StopIteration:
                return
            except NeuromarkError:
                raise
            except Exception as exc:
                raise DataError(f"benchmark {self.info.id}: batch {index}: the data loader "
                                f"raised {type(exc).__name__}: {exc}") from exc
            yield batch
            del batch  # not held while the next batch is made
            index += 1

    def _forward(self, data: Any, index: int) -> Any:
        """The model's output on ``data``; an exception is re-raised as a
        :class:`ModelRunError` naming the benchmark, the batch, the layer that raised
        and the input shape, chained to the original."""
        try:
            return self.adapter(data)
        except NeuromarkError:
            raise
        except Exception as exc:
            layer = _failing_layer(exc, getattr(self.adapter, "module", None))
            shape = tuple(data.shape) if hasattr(data, "shape") else type(data).__name__
            raise ModelRunError(
                f"benchmark {self.info.id}: batch {index}: the model raised "
                f"{type(exc).__name__}{f' in layer {layer!r}' if layer else ''} on input of "
                f"shape {shape}: {exc}{self._wrapping_clause(plain=False)}") from exc

    def _wrapping_clause(self, plain: bool = True) -> str:
        """What an error says of a bare net's wrapping (:mod:`neuromark.models.wrapping`);
        ``plain``: also of a plain call (TorchModel), which changes nothing but says what
        the output is."""
        wrapping = getattr(self.adapter, "auto_wrapped", None)
        if wrapping is None or (not plain and wrapping.adapter == "TorchModel"):
            return ""
        module = getattr(self.adapter, "module", None)
        return wrapping.clause(type(module).__name__, getattr(self.adapter, "step_output", None))

    def _say_wrapping(self, output: Any) -> None:
        """Once per run, for a net given bare and wrapped in a stepping adapter: which
        adapter, what each call fed it, what it returned and what the run's output is (on
        stderr and in ``details["adapter"]``)."""
        wrapping = getattr(self.adapter, "auto_wrapped", None)
        if wrapping is None or wrapping.adapter == "TorchModel":  # a plain call changes nothing
            return
        module = getattr(self.adapter, "module", None)
        seen = getattr(self.adapter, "step_output", None)
        self._wrapped = {"name": wrapping.adapter, "auto": True, "why": wrapping.why,
                         "output": describe_output(output)}
        if seen is not None:
            self._wrapped["net_returned"] = seen
        print(f"{self.info.id}: {wrapping.note(type(module).__name__, seen, describe_output(output))}",
              file=sys.stderr)

    @staticmethod
    def _collect(instrument: Instrument, index: int) -> Any:
        try:
            return instrument.collect()
        except ValueError as exc:
            raise MetricError(f"activity probes failed on batch {index}: {exc}") from exc

    def _preprocess(self, batch: Any, index: int) -> tuple[Any, Any]:
        if not isinstance(batch, (tuple, list)) or len(batch) < 2:
            raise ModelOutputError(f"batch {index}: the dataloader must yield (data, targets), "
                                   f"got {type(batch).__name__}")
        data, targets = batch[0], batch[1]
        for pre in self.preprocessors:
            try:
                data, targets = pre((data, targets))
            except NeuromarkError as exc:  # the same error, with the batch and benchmark
                raise type(exc)(f"benchmark {self.info.id}: batch {index}: {exc}") from exc
        return data, targets

    @staticmethod
    def _check_predictions(step: Step) -> None:
        predictions = step.predictions
        if hasattr(predictions, "shape") and len(predictions.shape) > 0 \
                and predictions.shape[0] != step.num_samples:
            raise ModelOutputError(
                f"batch {step.batch_index}: postprocessed predictions of shape "
                f"{tuple(predictions.shape)} do not fit targets of shape "
                f"{tuple(getattr(step.targets, 'shape', (step.num_samples,)))}")
