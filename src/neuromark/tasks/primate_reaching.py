"""Primate reaching: cursor-velocity decoding from motor-cortex threshold crossings
(NeuroBench v1.0 motor prediction; O'Doherty et al., Zenodo 583331). R² per session.

Protocol, per session: the decoder (a registered decoder family) is trained on the
training split (cached checkpoint by recipe hash); the test split is ONE stream fed to
:class:`neuromark.runner.Benchmark` in chunks ``(1, L, C)`` (``data.chunk`` = L, default
250 steps = 1 s) with ``reset="stream"``: state carries across chunks and is reset at the
stream's start. R² is accumulated over the whole test split per dimension,
``R²_d = 1 - SSE_d / (N Var(y_d))``, and averaged over x and y. Scores: ``r2`` = the mean
over sessions with its standard error over sessions; every complexity metric (per 4-ms
step, footprint for one stream) = the mean over sessions; per-session values in details.

Options: ``data.shared_decoder`` trains ONE decoder on the pooled training splits of all
sessions (equal channel counts; sessions joined with :data:`POOL_GAP` zero steps so no
window spans two) instead of one per session. ``data.parallel_sessions`` (needs it) feeds
the sessions' test streams side by side, batches ``(S, L, C)`` with per-stream state
(:mod:`neuromark.data.parallel_streams`: unequal lengths end in a shorter chunk and the
batch shrinks, so no padded step is ever computed or scored); R² stays per session, the
complexity metrics are then pooled over all sessions' steps (per 4-ms step, footprint for
one stream), i.e. the step-weighted mean of the sequential run's per-session values.

Config::

    task: primate_reaching
    benchmark: {id: primate-reaching-snn2, version: "1.0", parent: neurobench-primate_reaching}
    data:
      root: cache:primate_reaching/surrogate-480s   # folder of the six .mat files
      surrogate: {duration_s: 480, seed: 0}         # written there when missing; null: real data
      sessions: [indy_20160622_01, ...]             # default: all six
      bin_width: 0.004
      train_ratio: 0.5
      chunk: 250
      shared_decoder: false                         # one decoder for all sessions
      parallel_sessions: false                      # test streams side by side (S, L, C)
    model: {name: snn2, options: {hidden: 64}}      # ridge_decoder, ann2d, snn2
    checkpoint_dir: cache:checkpoints/primate_reaching
    device: cpu                # cpu (default), cuda, cuda:N or auto (ridge fits on the CPU)
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from neuromark._progress import progress
from neuromark._threads import torch_threads
from neuromark.components import resolve_entry
from neuromark.config import BenchmarkSettings, ConfigFile, StrictModel, resolve_path, validate
from neuromark.context import RunContext
from neuromark.data.download import file_digest
from neuromark.data.primate_entry import PRIMATE_REACHING
from neuromark.devices import (
    DeviceName,
    checkpoint_device_meta,
    device_provenance,
    recipe_device,
)
from neuromark.errors import ConfigError, DataError
from neuromark.metrics.functional import standard_error
from neuromark.metrics.names import build_metrics
from neuromark.model_label import ModelLabel
from neuromark.registry import models
from neuromark.results import Results, Score, atomic_path, model_identity, to_jsonable
from neuromark.tasks.base import BenchmarkTask, TaskPlan
from neuromark.tasks.evaluation import evaluate

PARENT = "neurobench-primate_reaching"
ALL_SESSIONS = ("indy_20160622_01", "indy_20160630_01", "indy_20170131_02",
                "loco_20170210_03", "loco_20170215_02", "loco_20170301_05")
METRICS = {"spiking": ["footprint", "connection_sparsity", "activation_sparsity",
                       "synaptic_operations", "membrane_updates"],
           "ann": ["footprint", "connection_sparsity", "activation_sparsity",
                   "synaptic_operations"],
           "linear": ["footprint", "connection_sparsity", "synaptic_operations"]}
#: Zero steps between sessions in the pooled training recording of a shared decoder
#: (longer than any decoder's input window, so no window spans two sessions).
POOL_GAP = 1000
WARMUP_RULE = ("every test step is scored, the first ones included: a stream starts from "
               "empty state (zero history before its first step); NeuroBench's ANN2D instead "
               "outputs zeros for its first 50 steps, which it also scores")


class SurrogateSpec(StrictModel):
    duration_s: float = Field(480.0, gt=0, le=7200)
    seed: int = 0


class DataSettings(StrictModel):
    root: str = "cache:primate_reaching/surrogate-480s"
    surrogate: SurrogateSpec | None = SurrogateSpec()
    sessions: list[str] = Field(default_factory=lambda: list(ALL_SESSIONS), min_length=1)
    bin_width: float = Field(0.004, gt=0)
    train_ratio: float = Field(0.5, gt=0, lt=1)
    chunk: int = Field(250, ge=1, description="steps per chunk L of the test stream")
    shared_decoder: bool = Field(False, description="one decoder trained on the pooled "
                                 "training splits of all sessions (equal channel counts)")
    parallel_sessions: bool = Field(False, description="feed the sessions' test streams side "
                                    "by side, (S, L, C) with per-stream state; needs "
                                    "shared_decoder")


class DecoderSpec(StrictModel):
    name: str
    options: dict[str, Any] = {}
    label: ModelLabel | None = None  # in results file names and leaderboards (default: name)


class PrimateReachingConfig(StrictModel):
    task: Literal["primate_reaching"]
    description: str = ""
    benchmark: BenchmarkSettings
    data: DataSettings = DataSettings()
    model: DecoderSpec
    checkpoint_dir: str = "cache:checkpoints/primate_reaching"
    metrics: list[str] | None = None
    threads: int = Field(1, ge=1)
    device: DeviceName = "cpu"


def flatten_targets(batch: tuple[Any, Any]) -> tuple[Any, Any]:
    """Preprocessor: targets (S, L, 2) -> (S*L, 2): one sample per 4-ms step."""
    data, targets = batch
    return data, targets.reshape(-1, targets.shape[-1])


def r2_per_dimension(predictions: Any, targets: Any) -> list[float]:
    """``1 - SSE_d / (N Var(y_d))`` per column of (N, D) arrays (population variance)."""
    import numpy as np

    p, y = np.asarray(predictions, np.float64), np.asarray(targets, np.float64)
    ss_tot = ((y - y.mean(0)) ** 2).sum(0)
    if (ss_tot <= 0).any():
        raise DataError("r2 is undefined: a velocity dimension has zero variance in the test split")
    return (1.0 - ((y - p) ** 2).sum(0) / ss_tot).tolist()


class PrimateReachingTask(BenchmarkTask):
    """The ``primate_reaching`` task (see the module docstring)."""

    name = "primate_reaching"
    placement = "unit"
    train_note = "its decoders train per session inside the run (cached by recipe in checkpoint_dir)"

    def plan(self, config: ConfigFile, ctx: RunContext) -> TaskPlan:
        cfg = validate(PrimateReachingConfig, config.data, config)
        ctx.device_for(cfg.device, config.where(("device",)))  # CUDA asked for where absent
        family = resolve_entry(models, cfg.model.name, config.where(("model", "name")), "model.name")
        if not hasattr(family, "fit_stream"):
            raise ConfigError(f"{config.where(('model', 'name'))}: model.name: {cfg.model.name!r} "
                              "is not a streaming decoder family (ridge_decoder, ann2d, snn2)")
        options = validate(family.options_model, cfg.model.options, config, ("model", "options"))
        build_metrics(self._metric_names(cfg, family), config, ("metrics",))
        if cfg.data.parallel_sessions and not cfg.data.shared_decoder:
            raise ConfigError(f"{config.where(('data', 'parallel_sessions'))}: "
                              "data.parallel_sessions: parallel streams run ONE decoder over "
                              "every session; set data.shared_decoder: true")
        from neuromark.data.primate_reaching import sub_bins

        try:
            sub_bins(cfg.data.bin_width)
        except ConfigError as exc:
            raise ConfigError(f"{config.where(('data', 'bin_width'))}: data.bin_width: {exc}") from None
        if cfg.data.surrogate is None:
            root = resolve_path(cfg.data.root, config)
            for s in cfg.data.sessions:
                if not (root / f"{s}.mat").is_file():
                    raise ConfigError(f"{config.where(('data', 'root'))}: {root / (s + '.mat')}: no "
                                      "such file; download it (PrimateReaching(root, session)"
                                      ".download()) or set data.surrogate")
        elif any(s not in ALL_SESSIONS for s in cfg.data.sessions):
            bad = [s for s in cfg.data.sessions if s not in ALL_SESSIONS]
            raise ConfigError(f"{config.where(('data', 'sessions'))}: data.sessions: the surrogate "
                              f"has no session {bad[0]!r} (one of {', '.join(ALL_SESSIONS)})")
        return TaskPlan(config, cfg, {"family": family, "options": options})

    @staticmethod
    def _metric_names(cfg: PrimateReachingConfig, family: Any) -> list[str]:
        if cfg.metrics is not None:
            return list(cfg.metrics)
        kind = "spiking" if family.spiking else ("ann" if getattr(family, "has_neurons", True)
                                                  else "linear")
        return METRICS[kind]

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        config, cfg = plan.config, plan.settings
        family, options = plan.parts["family"], plan.parts["options"]
        device = ctx.device_for(cfg.device, config.where(("device",)), label=cfg.benchmark.id,
                                announce=True)
        root = resolve_path(cfg.data.root, config)
        if cfg.data.surrogate is not None:  # the data set entry's generator, not a task step
            PRIMATE_REACHING.synthesize(root, **cfg.data.surrogate.model_dump(), sessions=cfg.data.sessions)
        names = self._metric_names(cfg, family)
        kw = {"bin_width": cfg.data.bin_width, "train_ratio": cfg.data.train_ratio}
        per_session: dict[str, dict[str, Any]] = {}
        with torch_threads(cfg.threads):
            shared = (self._model(cfg, family, options, root, cfg.data.sessions, kw, config, device)
                      if cfg.data.shared_decoder else None)
            if cfg.data.parallel_sessions:
                assert shared is not None  # validate() requires shared_decoder
                per_session, scores = self._parallel(cfg, shared[0], root, kw, names, config,
                                                     ctx, device)
            else:
                per_metric: dict[str, list[Any]] = {n: [] for n in names}
                info: dict[str, Score] = {}
                for session in progress(cfg.data.sessions, desc=cfg.benchmark.id,
                                        unit="session", quiet=ctx.quiet):
                    model, ckpt = shared or self._model(cfg, family, options, root, [session],
                                                        kw, config, device)
                    entry, info = self._session(cfg, model, root, session, kw, names, config,
                                                ctx, device)
                    per_session[session] = {**entry, **({} if shared else ckpt)}
                    for n in names:
                        per_metric[n].append(entry["metrics"][n])
                scores = {n: Score(_mean(v), unit=info[n].unit,
                                   higher_is_better=info[n].higher_is_better)
                          for n, v in per_metric.items()}
        r2s = [e["r2"] for e in per_session.values()]
        scores = {"r2": Score(sum(r2s) / len(r2s), standard_error(r2s), "", True), **scores}
        details = {"per_session": per_session, "warmup_rule": WARMUP_RULE,
                   "data": "surrogate" if cfg.data.surrogate else "recorded",
                   "data_root": str(root), "steps_per_second": 250,
                   "complexity": ("pooled over all sessions' steps (parallel streams)"
                                  if cfg.data.parallel_sessions else "mean over sessions")}
        if shared is not None:
            details["shared_decoder"] = shared[1]
        resolved = cfg.model_dump()
        resolved["model"]["options"] = options.model_dump()
        bench = cfg.benchmark.info(_citation())
        if bench.parent is None:
            bench.parent = PARENT
        used = device_provenance(device, ctx.device_requested(cfg.device))
        return [Results(scores=scores, benchmark=bench, config=resolved,
                        seeds={"model": options.seed, "surrogate": resolved["data"]["surrogate"]},
                        details=details, provenance={"device": used},
                        model=model_identity(cfg.model.name, resolved["model"]["options"], None,
                                             cfg.model.label))]

    @staticmethod
    def _session(cfg: PrimateReachingConfig, model: Any, root: Path, session: str,
                 kw: dict[str, Any], names: list[str], config: ConfigFile, ctx: RunContext,
                 device: Any = "cpu") -> tuple[dict[str, Any], dict[str, Score]]:
        """One session's test split as one stream on ``device``: its entry and metric
        scores."""
        import numpy as np

        from neuromark.data.primate_reaching import PrimateReaching

        test = PrimateReaching(root, session, "test", **kw)
        captured: list[Any] = []

        def capture(output: Any) -> Any:
            flat = output.reshape(-1, output.shape[-1])
            captured.append(flat.detach().cpu().numpy())
            return flat

        metrics = build_metrics(names, config, ("metrics",))
        res = evaluate(ctx, model, test.stream(cfg.data.chunk), metrics,
                       preprocessors=[flatten_targets], postprocessors=[capture], quiet=True,
                       reset="stream", device=device)
        _, labels = test.arrays()
        r2 = r2_per_dimension(np.concatenate(captured), labels)
        entry = {"r2": sum(r2) / 2, "r2_x": r2[0], "r2_y": r2[1], "samples": res.details["samples"],
                 "channels": test.channels, "reaches": len(test.segments),
                 "metrics": {n: to_jsonable(res.scores[n].value) for n in names}}
        return entry, {n: res.scores[n] for n in names}

    @staticmethod
    def _parallel(cfg: PrimateReachingConfig, model: Any, root: Path, kw: dict[str, Any],
                  names: list[str], config: ConfigFile, ctx: RunContext, device: Any = "cpu"
                  ) -> tuple[dict[str, dict[str, Any]], dict[str, Score]]:
        """Every session's test split as parallel streams of one batch (see the module):
        per-session entries (R², samples) and the metric scores pooled over all steps."""
        import numpy as np
        import torch

        from neuromark.data.parallel_streams import parallel_stream
        from neuromark.data.primate_reaching import PrimateReaching
        from neuromark.metrics.static import Footprint

        tests = [PrimateReaching(root, s, "test", **kw) for s in cfg.data.sessions]
        inputs = [t.arrays()[0][t.indices] for t in tests]
        labels = [t.arrays()[1] for t in tests]
        rows: list[list[int]] = []
        captured: list[Any] = []

        def feed() -> Any:
            for x, y, meta in parallel_stream(inputs, labels, cfg.data.chunk):
                if meta["keep"] is not None:  # streams ended: keep the others' state
                    model.keep_streams(meta["keep"])
                rows.append(meta["streams"])
                yield x, y, meta

        def capture(output: Any) -> Any:
            captured.append(output.detach().cpu().numpy())
            return output.reshape(-1, output.shape[-1])

        metrics = [Footprint(example_input=torch.zeros(1, 1, inputs[0].shape[1]))
                   if m.name == "footprint" else m for m in build_metrics(names, config, ("metrics",))]
        res = evaluate(ctx, model, feed(), metrics, preprocessors=[flatten_targets],
                       postprocessors=[capture], quiet=True, reset="stream", device=device)
        outputs: list[list[Any]] = [[] for _ in tests]
        for active, out in zip(rows, captured):
            for row, stream in enumerate(active):
                outputs[stream].append(out[row])
        per_session = {}
        for session, test, y, out in zip(cfg.data.sessions, tests, labels, outputs):
            r2 = r2_per_dimension(np.concatenate(out), y)
            per_session[session] = {"r2": sum(r2) / 2, "r2_x": r2[0], "r2_y": r2[1],
                                    "samples": len(y), "channels": test.channels,
                                    "reaches": len(test.segments)}
        return per_session, {n: res.scores[n] for n in names}

    @staticmethod
    def _model(cfg: PrimateReachingConfig, family: Any, options: Any, root: Path,
               sessions: list[str], kw: dict[str, Any], config: ConfigFile, device: Any = "cpu"
               ) -> tuple[Any, dict[str, Any]]:
        """The decoder trained on ``sessions``' training splits (one session: its own
        decoder; several: one shared decoder on the pooled splits); a checkpoint is reused
        when its recipe matches."""
        import torch

        from neuromark.data.primate_reaching import PrimateReaching

        trains = [PrimateReaching(root, s, "train", **kw) for s in sessions]
        channels = {s: t.channels for s, t in zip(sessions, trains)}
        if len(set(channels.values())) > 1:
            raise ConfigError(f"{config.where(('data', 'shared_decoder'))}: data.shared_decoder: "
                              f"one decoder needs equal channel counts, the sessions have "
                              f"{channels}; choose sessions of one array (indy_* or loco_*)")
        digests = [file_digest(t.path) for t in trains]
        trains_on = family.trains_on(device) if hasattr(family, "trains_on") else "cpu"
        recipe = {"family": family.kind, "options": options.model_dump(), "data": kw,
                  "file_sha256": digests[0], **recipe_device(trains_on)}
        name = sessions[0]
        if len(sessions) > 1:
            recipe.update({"sessions": list(sessions), "file_sha256": digests,
                           "pool_gap": POOL_GAP})
            name = "shared"
        digest = hashlib.sha256(json.dumps(to_jsonable(recipe), sort_keys=True).encode()).hexdigest()
        path = resolve_path(cfg.checkpoint_dir, config) / f"{family.kind}-{name}-{digest[:16]}.pt"
        model = family.build(options, trains[0].channels)
        if path.is_file():
            saved = torch.load(path, weights_only=True)
            if not isinstance(saved, dict) or saved.get("format") != "neuromark-primate-decoder-1":
                raise DataError(f"{path}: not a neuromark primate-decoder checkpoint; move it away")
            model.load_state_dict(saved["state_dict"])
            return model.eval(), {"checkpoint": str(path), "trained_now": False,
                                  "train_seconds": saved["train_seconds"]}
        start = time.perf_counter()
        model = (family.fit_stream(options, pooled_training(trains), trains_on)
                 if hasattr(family, "trains_on") else family.fit_stream(options, pooled_training(trains)))
        seconds = time.perf_counter() - start
        with atomic_path(path) as tmp:
            torch.save({"format": "neuromark-primate-decoder-1", "recipe": json.dumps(to_jsonable(recipe)),
                        "state_dict": model.state_dict(), "train_seconds": seconds,
                        **checkpoint_device_meta(trains_on)}, tmp)
        return model, {"checkpoint": str(path), "trained_now": True, "train_seconds": seconds}


def pooled_training(trains: list[Any]) -> Any:
    """One :class:`~neuromark.baselines.primate_reaching.TrainData` of the training splits
    of ``trains`` (one session: its recording as is; several: the recordings joined with
    :data:`POOL_GAP` zero steps between them, reaches shifted accordingly)."""
    import numpy as np

    from neuromark.baselines.primate_reaching import TrainData

    if len(trains) == 1:
        return TrainData(*trains[0]._load())
    xs, ys, segments, offset = [], [], [], 0
    for train in trains:
        x, y, segs = train._load()
        segments += [(a + offset, b + offset) for a, b in segs]
        xs += [x, np.zeros((POOL_GAP, x.shape[1]), x.dtype)]
        ys += [y, np.zeros((POOL_GAP, y.shape[1]), y.dtype)]
        offset += len(x) + POOL_GAP
    return TrainData(np.concatenate(xs), np.concatenate(ys), segments)


def _mean(values: list[Any]) -> Any:
    if isinstance(values[0], dict):
        return {k: sum(v[k] for v in values) / len(values) for k in values[0]}
    return sum(values) / len(values)


def _citation() -> str:
    from neuromark.data.primate_reaching import CITATION

    return CITATION


TASK = PrimateReachingTask()
