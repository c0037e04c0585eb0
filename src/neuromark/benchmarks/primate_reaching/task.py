"""Primate reaching: cursor-velocity decoding from motor-cortex threshold crossings
(NeuroBench v1.0 motor prediction; O'Doherty et al., Zenodo 583331). R² per session.

Protocol, per session: the decoder (a registered decoder family) is trained on the
training split (a checkpoint of the shared cache, :mod:`neuromark.benchmarks.primate_reaching.decoders`;
``neuromark train CONFIG`` retrains them); the test split is ONE stream fed to
:class:`neuromark.runner.Benchmark` in chunks ``(1, L, C)`` (``data.chunk`` = L, default
250 steps = 1 s) with ``reset="stream"``: state carries across chunks and is reset at the
stream's start. R² is accumulated over the whole test split per dimension,
``R²_d = 1 - SSE_d / (N Var(y_d))``, and averaged over x and y. Scores: ``r2`` = the mean
over sessions with its standard error over sessions, ``r2[indy]`` and ``r2[loco]`` the
same per monkey (:func:`per_monkey`); every complexity metric (per 4-ms
step, footprint for one stream) = the mean over sessions; per-session values in details.

Options: ``data.shared_decoder`` trains ONE decoder on the pooled training splits of all
sessions (equal channel counts; sessions joined with
:data:`~neuromark.benchmarks.primate_reaching.decoders.POOL_GAP` zero steps so no window spans two)
instead of one per session. ``data.parallel_sessions`` (needs it) feeds
the sessions' test streams side by side, batches ``(S, L, C)`` with per-stream state
(:mod:`.parallel_streams`: unequal lengths end in a shorter chunk and the batch shrinks,
so no padded step is ever computed or scored); R² stays per session, the complexity metrics
are then pooled over all sessions' steps (per 4-ms step, footprint for one stream), i.e. the
step-weighted mean of the sequential run's per-session values.

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
      on_invalid: error          # error (default) | drop: invalid samples and spike times
                                 # dropped and counted (details.per_session[s].invalid_records)
    model: {name: snn2, options: {hidden: 64}}      # ridge_decoder, ann2d, snn2
    checkpoint_dir: cache:checkpoints/primate_reaching
    device: cpu                # cpu (default), cuda, cuda:N or auto (ridge fits on the CPU)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from neuromark._progress import progress
from neuromark._threads import torch_threads
from neuromark.benchmarks.primate_reaching.decoders import decoder_checkpoint, model_and_details
from neuromark.benchmarks.primate_reaching.dropped import dropped_flag, invalid_entry
from neuromark.benchmarks.primate_reaching.entry import PRIMATE_REACHING
from neuromark.benchmarks.primate_reaching.parallel_streams import parallel_stream
from neuromark.benchmarks.primate_reaching.reader import CITATION, PrimateReaching, sub_bins
from neuromark.components import resolve_entry
from neuromark.config import ConfigFile, IdentitySettings, Seed, StrictModel, resolve_path, validate
from neuromark.context import RunContext
from neuromark.devices import DeviceName
from neuromark.errors import ConfigError, DataError
from neuromark.identity import model_identity
from neuromark.io_atomic import to_jsonable
from neuromark.metrics.functional.stats import standard_error
from neuromark.metrics.names import MetricEntry, build_metrics
from neuromark.model_label import ModelLabel
from neuromark.processors.encoder_cost import mean_block
from neuromark.registry import models
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, task_results
from neuromark.tasks.evaluation import evaluate
from neuromark.training.family import ModelFamily

PARENT = "neurobench-primate_reaching"
ALL_SESSIONS = ("indy_20160622_01", "indy_20160630_01", "indy_20170131_02",
                "loco_20170210_03", "loco_20170215_02", "loco_20170301_05")
METRICS = {"spiking": ["footprint", "connection_sparsity", "activation_sparsity",
                       "synaptic_operations", "membrane_updates"],
           "ann": ["footprint", "connection_sparsity", "activation_sparsity",
                   "synaptic_operations"],
           "linear": ["footprint", "connection_sparsity", "synaptic_operations"]}
WARMUP_RULE = ("every test step is scored, the first ones included: a stream starts from "
               "empty state (zero history before its first step); NeuroBench's ANN2D instead "
               "outputs zeros for its first 50 steps, which it also scores")


class SurrogateSpec(StrictModel):
    duration_s: float = Field(480.0, gt=0, le=7200)
    seed: Seed = 0


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
    on_invalid: Literal["error", "drop"] = Field(
        "error", description="error: a session breaking the reader's input contract is refused; "
        "drop: its invalid samples and spike times are dropped and counted per rule")

    def reader_kwargs(self) -> dict[str, Any]:
        """The reader's settings, which also enter the decoders' recipe hash: ``on_invalid``
        only when ``drop`` (so decoders cached before the option existed keep their hash)."""
        kw: dict[str, Any] = {"bin_width": self.bin_width, "train_ratio": self.train_ratio}
        if self.on_invalid != "error":
            kw["on_invalid"] = self.on_invalid
        return kw

    def time_step_s(self) -> tuple[float, str]:
        """One decoder step per bin (:mod:`neuromark.metrics.execution_rate`)."""
        return self.bin_width, "data.bin_width"


class DecoderSpec(StrictModel):
    name: str
    options: dict[str, Any] = {}
    label: ModelLabel | None = None  # in results file names and leaderboards (default: name)


class PrimateReachingConfig(StrictModel):
    task: Literal["primate_reaching"]
    description: str = ""
    benchmark: IdentitySettings
    data: DataSettings = DataSettings()
    model: DecoderSpec
    checkpoint_dir: str = "cache:checkpoints/primate_reaching"
    metrics: list[MetricEntry] | None = None  # names or {name, options}
    threads: int = Field(1, ge=1)
    device: DeviceName = "cpu"


def flatten_targets(batch: tuple[Any, Any]) -> tuple[Any, Any]:
    """Preprocessor: targets (S, L, 2) -> (S*L, 2): one sample per 4-ms step."""
    data, targets = batch
    return data, targets.reshape(-1, targets.shape[-1])


def per_monkey(per_session: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """R² per monkey, as the NeuroBench paper and leaderboard report it beside the mean of
    all sessions: the monkey is a session file name's first part (``indy_20160622_01`` ->
    ``indy``); ``{monkey: {"sessions", "r2" (mean over its sessions), "r2_se" (standard
    error over them, None for one session)}}``."""
    groups: dict[str, list[str]] = {}
    for session in per_session:
        groups.setdefault(session.split("_", 1)[0], []).append(session)
    out = {}
    for monkey, sessions in groups.items():
        r2s = [per_session[s]["r2"] for s in sessions]
        out[monkey] = {"sessions": sessions, "r2": sum(r2s) / len(r2s),
                       "r2_se": standard_error(r2s)}
    return out


def r2_per_dimension(predictions: Any, targets: Any) -> list[float]:
    """``1 - SSE_d / (N Var(y_d))`` per column of (N, D) arrays (population variance)."""
    import numpy as np

    p, y = np.asarray(predictions, np.float64), np.asarray(targets, np.float64)
    ss_tot = ((y - y.mean(0)) ** 2).sum(0)
    if (ss_tot <= 0).any():
        raise DataError("r2 is undefined: a velocity dimension has zero variance in the test split")
    return (1.0 - ((y - p) ** 2).sum(0) / ss_tot).tolist()


class PrimateReachingTask(TaskBase):
    """The ``primate_reaching`` task (see the module docstring)."""

    name = "primate_reaching"
    placement = "unit"

    settings_model = PrimateReachingConfig

    def check(self, cfg: PrimateReachingConfig, config: ConfigFile, ctx: RunContext) -> dict[str, Any]:
        family = resolve_entry(models, cfg.model.name, config.where(("model", "name")), "model.name")
        if not isinstance(family, ModelFamily) or self.name not in family.tasks:
            raise ConfigError(f"{config.where(('model', 'name'))}: model.name: {cfg.model.name!r} "
                              "is not a streaming decoder family (ridge_decoder, ann2d, snn2)")
        options = validate(family.options_model, cfg.model.options, config, ("model", "options"))
        build_metrics(self._metric_names(cfg, family), config, ("metrics",))
        if cfg.data.parallel_sessions and not cfg.data.shared_decoder:
            raise ConfigError(f"{config.where(('data', 'parallel_sessions'))}: "
                              "data.parallel_sessions: parallel streams run ONE decoder over "
                              "every session; set data.shared_decoder: true")

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
        return {"family": family, "options": options}

    @staticmethod
    def _metric_names(cfg: PrimateReachingConfig, family: Any) -> list[MetricEntry]:
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
        kw = cfg.data.reader_kwargs()
        per_session: dict[str, dict[str, Any]] = {}
        with torch_threads(cfg.threads):
            shared = (model_and_details(self._decoder(plan, root, cfg.data.sessions, device))
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
                    model, ckpt = shared or model_and_details(self._decoder(plan, root, [session],
                                                                            device))
                    entry, info = self._session(cfg, model, root, session, kw, names, config,
                                                ctx, device)
                    per_session[session] = {**entry, **({} if shared else ckpt)}
                    for n in names:
                        per_metric[n].append(entry["metrics"][n])
                scores = {n: Score(_mean(v), unit=info[n].unit,
                                   higher_is_better=info[n].higher_is_better)
                          for n, v in per_metric.items()}
        r2s = [e["r2"] for e in per_session.values()]
        monkeys = per_monkey(per_session)
        scores = {"r2": Score(sum(r2s) / len(r2s), standard_error(r2s), "", True),
                  **{f"r2[{m}]": Score(e["r2"], e["r2_se"], "", True) for m, e in monkeys.items()},
                  **scores}
        details = {"per_session": per_session, "per_monkey": monkeys, "warmup_rule": WARMUP_RULE,
                   "data": "surrogate" if cfg.data.surrogate else "recorded",
                   "data_root": str(root), "steps_per_second": 250,
                   "complexity": ("pooled over all sessions' steps (parallel streams)"
                                  if cfg.data.parallel_sessions else "mean over sessions")}
        if shared is not None:
            details["shared_decoder"] = shared[1]
        details["front_end"] = mean_block([e["front_end"] for e in per_session.values()],  # issue 47.4
                                          [e["samples"] for e in per_session.values()], keep_parts=False)
        dropped = dropped_flag(per_session)
        if dropped:
            print(f"{cfg.benchmark.id}: {dropped}", file=sys.stderr)
        resolved = cfg.model_dump()
        resolved["model"]["options"] = options.model_dump()
        bench = cfg.benchmark.info(_citation())
        if bench.parent is None:
            bench.parent = PARENT
        res = task_results(scores, benchmark=bench,
                           model=model_identity(cfg.model.name, resolved["model"]["options"], None,
                                                cfg.model.label),
                           effective=resolved, device=ctx.device_record(device, cfg.device),
                           seeds={"model": options.seed, "surrogate": resolved["data"]["surrogate"]},
                           details=details)
        if dropped:
            res.flag(dropped)
        return [res]

    @staticmethod
    def _session(cfg: PrimateReachingConfig, model: Any, root: Path, session: str,
                 kw: dict[str, Any], names: list[str], config: ConfigFile, ctx: RunContext,
                 device: Any = "cpu") -> tuple[dict[str, Any], dict[str, Score]]:
        """One session's test split as one stream on ``device``: its entry and metric
        scores."""
        import numpy as np

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
                 "metrics": {n: to_jsonable(res.scores[n].value) for n in names},
                 **invalid_entry(root, session, kw, test), "front_end": test.front_end_cost().to_json()}
        return entry, {n: res.scores[n] for n in names}

    @staticmethod
    def _parallel(cfg: PrimateReachingConfig, model: Any, root: Path, kw: dict[str, Any],
                  names: list[str], config: ConfigFile, ctx: RunContext, device: Any = "cpu"
                  ) -> tuple[dict[str, dict[str, Any]], dict[str, Score]]:
        """Every session's test split as parallel streams of one batch (see the module):
        per-session entries (R², samples) and the metric scores pooled over all steps."""
        import numpy as np
        import torch

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
                                    "reaches": len(test.segments),
                                    **invalid_entry(root, session, kw, test),
                                    "front_end": test.front_end_cost().to_json()}
        return per_session, {n: res.scores[n] for n in names}

    def train(self, plan: TaskPlan, ctx: RunContext, *, checkpoint: Path | None = None,
              retrain: bool = True) -> list[Any]:
        """Train every decoder of the config (one per session, or the shared one) through the
        shared cache (:mod:`~neuromark.benchmarks.primate_reaching.decoders`), ``retrain``: even when one of
        the same recipe is cached; ``checkpoint``: the folder (default ``checkpoint_dir``).
        Returns their :class:`~neuromark.training.checkpoints.Prepared`."""
        cfg = plan.settings
        device = ctx.device_for(cfg.device, plan.config.where(("device",)))
        root = resolve_path(cfg.data.root, plan.config)
        if cfg.data.surrogate is not None:
            PRIMATE_REACHING.synthesize(root, **cfg.data.surrogate.model_dump(), sessions=cfg.data.sessions)
        groups = [cfg.data.sessions] if cfg.data.shared_decoder else [[s] for s in cfg.data.sessions]
        with torch_threads(cfg.threads):
            return [self._decoder(plan, root, g, device, checkpoint, retrain=retrain) for g in groups]

    @staticmethod
    def _decoder(plan: TaskPlan, root: Path, sessions: list[str], device: Any = "cpu",
                 folder: Path | None = None, *, retrain: bool = False) -> Any:
        """The checkpoint of the decoder trained on ``sessions``' training splits (one
        session: its own decoder; several: one shared decoder on the pooled splits), reused
        when its recipe matches
        (:func:`~neuromark.benchmarks.primate_reaching.decoders.decoder_checkpoint`)."""
        cfg, config = plan.settings, plan.config
        kw = cfg.data.reader_kwargs()
        return decoder_checkpoint(plan.parts["family"], plan.parts["options"], root, sessions, kw,
                                  folder or resolve_path(cfg.checkpoint_dir, config), config,
                                  device, retrain=retrain)

    @staticmethod
    def example_input(plan: TaskPlan, prepared: list[Any], session: str | None, where: str
                      ) -> tuple[Any, Any, dict[str, Any]]:
        """The export hook (``neuromark export``): of the decoders :meth:`train` returned,
        the one of ``session`` (None: the config's first session; the shared one when the
        config shares it), the first chunk of that session's test stream (1, L, C) as the
        input to check it on, and what the export report records of the choice."""
        data = plan.settings.data
        sessions = list(data.sessions)
        name = session or sessions[0]
        if name not in sessions:
            raise ConfigError(f"--session {name!r} is not one of the config's sessions "
                              f"({', '.join(sessions)})")
        chosen = prepared[0 if data.shared_decoder else sessions.index(name)]
        test = PrimateReaching(resolve_path(data.root, plan.config), name, "test",
                               **data.reader_kwargs())
        batch = next(iter(test.stream(data.chunk)))[0]
        return chosen, batch, {
            "session": name, "decoder": "shared by " + ", ".join(sessions) if data.shared_decoder
            else f"{name}'s own (one of {len(sessions)}; --session picks another)",
            "checkpoint": str(chosen.path),
            "sample": f"the first chunk of {name}'s test stream ({batch.shape[1]} steps)"}


def _mean(values: list[Any]) -> Any:
    if isinstance(values[0], dict):
        return {k: sum(v[k] for v in values) / len(values) for k in values[0]}
    return sum(values) / len(values)


def _citation() -> str:
    return CITATION


TASK = PrimateReachingTask()
