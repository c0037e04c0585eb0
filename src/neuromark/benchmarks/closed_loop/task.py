"""Closed-loop benchmarks: an agent drives an environment; scored by what the loop achieves.

Protocol: for each seed of ``episodes.seeds``, episodes ``0 .. count-1``, each from its own
seed (:func:`~neuromark.benchmarks.closed_loop.env.episode_seed`), at most ``max_steps`` steps. Each
step: observation (1, 1, obs) -> agent -> action -> environment
(:mod:`~neuromark.benchmarks.closed_loop.episodes`). Episodes are executor units
(``episodes.per_unit`` per unit; with on-line learning the episodes of a seed are one
unit, since each learns from the last); the driver merges the units in order, so every
executor gives the same figures.

Scores (:mod:`neuromark.benchmarks.closed_loop.scores`): ``success_rate``, ``time_to_target_successes_s``,
``time_to_target_all_s``, ``reward_mean``, ``reward_std``, ``reward_risk`` (from 20
episodes); complexity metrics per step (the runner's probes, one sample per step), with
``<metric>_per_episode`` (per step x mean steps per episode) and ``synaptic_operations_per_s``
(per step x ``1/dt``, the execution rate the environment's time step implies); with
``learning``, ``weights_changed_fraction`` and ``plasticity_operations`` per step
(:mod:`neuromark.benchmarks.closed_loop.plasticity`). Config: :mod:`~neuromark.benchmarks.closed_loop.config`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark._threads import torch_threads
from neuromark.benchmarks.closed_loop.config import (
    ClosedLoopConfig,
    build_env,
    check_output,
    check_settings,
    check_work,
    learning_spec,
)
from neuromark.benchmarks.closed_loop.env import TrainingEpisodes
from neuromark.benchmarks.closed_loop.episodes import EpisodeJob, run_model, run_reference
from neuromark.benchmarks.closed_loop.plasticity import plasticity_figures
from neuromark.benchmarks.closed_loop.references import check_reference
from neuromark.benchmarks.closed_loop.scores import FIGURES, Episode, over_seeds
from neuromark.config import ConfigFile, resolve_path, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError, MetricError
from neuromark.executors import Unit, share
from neuromark.identity import model_identity
from neuromark.metrics.base import StaticMetric
from neuromark.metrics.names import build_metrics
from neuromark.metrics.static import Footprint
from neuromark.models import as_adapter
from neuromark.models.configured import build_configured
from neuromark.registry import models
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, task_results
from neuromark.training.checkpoints import prepare, recipe_hash
from neuromark.training.family import family_for

PARENT = {"ops": "neurobench-closed_loop_ops", "gymnasium": "neurobench-closed_loop_control"}
CITATION = ("NeuroBench closed-loop track, branch 2025_GC (github.com/NeuroBench/neurobench "
            "@c8dfd47): online prosthesis simulator and BenchmarkClosedLoop")
METRICS = {"spiking": ["footprint", "connection_sparsity", "activation_sparsity",
                       "synaptic_operations", "membrane_updates", "neuron_operations"],
           "ann": ["footprint", "connection_sparsity", "activation_sparsity", "synaptic_operations"],
           "linear": ["footprint", "connection_sparsity", "synaptic_operations"]}
#: Per-step figures also given per episode.
PER_EPISODE = ("synaptic_operations", "membrane_updates", "neuron_operations")


class ClosedLoopTask(TaskBase):
    """The ``closed_loop`` task (see the module docstring)."""

    name = "closed_loop"
    placement = "units"

    settings_model = ClosedLoopConfig

    def check(self, cfg: ClosedLoopConfig, config: ConfigFile, ctx: RunContext) -> dict[str, Any]:
        env, env_options = build_env(cfg, config)
        cfg._control_step_s = float(env.dt)  # the execution rate (TaskBase.run): 1 / dt
        check_settings(cfg, env, config)
        check_work(cfg, env, config, ctx.allow_long)
        parts: dict[str, Any] = {"env_options": env_options, "dt": env.dt,
                                 "obs_size": env.observation_size,
                                 "space": env.action_space.describe(),
                                 "reward_is_length": bool(getattr(env, "reward_is_length", False)),
                                 "rule": learning_spec(cfg, config), "family": None}
        if cfg.agent.reference is not None:
            problem = check_reference(cfg.agent.reference, env)
            if problem:
                raise ConfigError(f"{config.where(('agent', 'reference'))}: agent.reference: {problem}")
            if cfg.metrics:
                raise ConfigError(f"{config.where(('metrics',))}: metrics: a reference policy has "
                                  "no network to count")
            return parts
        spec = cfg.agent.model
        assert spec is not None
        where = config.where(("agent", "model", "name"))
        family = family_for(models, spec.name, self.name, where)
        if family is not None:
            options = validate(family.options_model, spec.options, config, ("agent", "model", "options"))
            try:
                model = family.build(options, env.observation_size, env.action_space.size)
            except ValueError as exc:  # e.g. loop_wiener for a Discrete action space
                raise ConfigError(f"{where}: model.name: {spec.name!r} cannot drive "
                                  f"{cfg.env.name!r}: {exc}") from None
            parts.update(family=family, options=options)
        else:
            ckpt = resolve_path(spec.checkpoint, config) if spec.checkpoint else None
            model, source = build_configured(spec.name, spec.options, ckpt, config, ("agent", "model"))
            parts.update(model=model, checkpoint=ckpt, source=source)
        check_output(model, env, where, spec.name)
        parts["metrics"] = self._metric_names(cfg, family)
        build_metrics(parts["metrics"], config, ("metrics",))
        return parts

    @staticmethod
    def _metric_names(cfg: ClosedLoopConfig, family: Any) -> list[Any]:
        if cfg.metrics is not None:
            return list(cfg.metrics)
        if family is None:
            return METRICS["linear"]
        return METRICS["spiking" if family.spiking else
                       "ann" if getattr(family, "has_neurons", True) else "linear"]

    def train(self, plan: TaskPlan, ctx: RunContext, *, checkpoint: Path | None = None,
              retrain: bool = True) -> list[Any]:
        """Train the config's model family on its training episodes (the shared cache)."""
        if plan.parts["family"] is None:
            raise ConfigError(f"{plan.config.where(('agent',))}: agent: only a model family has "
                              "a training recipe")
        return [self._prepared(plan, checkpoint, retrain=retrain)]

    @staticmethod
    def _prepared(plan: TaskPlan, folder: Path | None = None, *, retrain: bool = False) -> Any:
        cfg, family, options = plan.settings, plan.parts["family"], plan.parts["options"]
        data = TrainingEpisodes(cfg.env.name, plan.parts["env_options"], tuple(cfg.train.seeds),
                                cfg.train.episodes, cfg.episodes.max_steps)
        recipe = {"family": family.name, "version": getattr(family, "recipe_version", 1),
                  "options": options.model_dump(mode="json"),
                  "env": {"name": cfg.env.name, "options": plan.parts["env_options"]},
                  "train": cfg.train.model_dump(), "max_steps": cfg.episodes.max_steps}
        folder = folder or resolve_path(cfg.checkpoint_dir, plan.config)
        files = [Path(plan.parts["env_options"]["neurons"])] \
            if plan.parts["env_options"].get("neurons") else []  # a neuron CSV: its bytes
        path = Path(folder) / f"{family.name}-{recipe_hash(recipe, files)[:16]}.pt"

        def fit() -> tuple[Any, dict[str, Any]]:
            with torch_threads(cfg.threads):
                return family.fit(options, None, data, data.make().action_space.size)

        return prepare(family, path, recipe, files, fit, retrain=retrain)

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        cfg, config, parts = plan.settings, plan.config, plan.parts
        model, ckpt = parts.get("model"), parts.get("checkpoint")
        model_details: dict[str, Any] = dict(parts.get("source") or {})  # a factory's file
        if parts["family"] is not None:
            prepared = self._prepared(plan)
            model, ckpt = prepared.model, prepared.path
            model_details = {"checkpoint": str(prepared.path), "trained_now": prepared.trained,
                             "train_seconds": prepared.meta.get("train_seconds")}
        jobs = self._jobs(cfg, parts)
        where = str(config.path or "<config>")
        device = ctx.device_for(cfg.device, config.where(("device",)), label=cfg.benchmark.id,
                                announce=True)
        parts["device"] = ctx.device_record(device, cfg.device)
        shared = share(ctx.executor, model) if model is not None else None
        units = [Unit(f"{cfg.benchmark.id} seed {j.seed} episodes {j.episodes[0]}-{j.episodes[-1]}",
                      where, run_reference if model is None else run_model,
                      (j, cfg.agent.reference) if model is None else
                      (j, shared, tuple(parts["metrics"]), parts["rule"], ctx.for_unit(),
                       None, str(device)),
                      num_cpus=cfg.threads) for j in jobs]
        with torch_threads(cfg.threads):
            ordered = ctx.run_units(units)
        episodes = [Episode(*e) for o in ordered for e in o["episodes"]]
        summary = over_seeds(episodes, parts["dt"])
        scores = self._episode_scores(summary, parts["reward_is_length"])
        if model is not None:
            scores.update(self._complexity(plan, model, ordered, summary))
        plastic = plasticity_figures([o["plasticity"] for o in ordered if o["plasticity"]])
        if plastic is not None:
            scores["weights_changed_fraction"] = Score(plastic["weights_changed_fraction"], None, "",
                                                       False)
            scores["plasticity_operations"] = Score(plastic["plasticity_operations"], None,
                                                    "ops/step", False)
        return [self._results(plan, ctx, scores, summary, episodes, model_details, ckpt)]

    @staticmethod
    def _jobs(cfg: ClosedLoopConfig, parts: dict[str, Any]) -> list[EpisodeJob]:
        step = cfg.episodes.count if parts["rule"] is not None else cfg.episodes.per_unit
        return [EpisodeJob(cfg.env.name, parts["env_options"], seed,
                           tuple(range(a, min(a + step, cfg.episodes.count))), cfg.episodes.max_steps)
                for seed in cfg.episodes.seeds for a in range(0, cfg.episodes.count, step)]

    @staticmethod
    def _episode_scores(summary: dict[str, Any], reward_is_length: bool) -> dict[str, Score]:
        units = {"success_rate": ("", True), "time_to_target_successes_s": ("s", False),
                 "time_to_target_all_s": ("s", False)}
        out = {}
        for name in FIGURES:
            figure = summary[name]
            if figure["value"] is None:
                continue  # no success, or fewer than 20 episodes for the risk: see details
            unit, better = units.get(name, ("", not reward_is_length))
            out[name] = Score(figure["value"], figure["error"], unit, better)
        return out

    def _complexity(self, plan: TaskPlan, model: Any, ordered: list[Any],
                    summary: dict[str, Any]) -> dict[str, Score]:
        """Workload metrics merged over the units (per step), static metrics of ``model``,
        and the per-episode and per-second figures."""
        import torch

        names, config = plan.parts["metrics"], plan.config
        built = build_metrics(names, config, ("metrics",))
        obs = plan.parts["obs_size"]
        workload = [m for m in built if not isinstance(m, StaticMetric)]
        for i, metric in enumerate(workload):
            for out in ordered:
                metric.merge_state(out["states"][i])
        adapter = as_adapter(model)
        scores: dict[str, Score] = {}
        for metric in built:
            if isinstance(metric, Footprint):  # neuron state measured on one observation
                metric = Footprint(example_input=torch.zeros(1, 1, obs))
            try:
                value = metric.compute(adapter) if isinstance(metric, StaticMetric) else metric.compute()
            except Exception as exc:
                raise MetricError(f"metric {metric.name!r} failed: {exc}") from exc
            scores.update(value if isinstance(value, dict) else {metric.name: value})
        for score in scores.values():  # one sample is one step here
            if score.unit.endswith("/sample"):
                score.unit = score.unit[: -len("/sample")] + "/step"
        steps, rate = summary["steps_mean"], 1.0 / plan.parts["dt"]
        for name in PER_EPISODE:
            if name in scores:
                scores[f"{name}_per_episode"] = Score(_scaled(scores[name].value, steps), None,
                                                      "per episode", False)
        if "synaptic_operations" in scores:
            scores["synaptic_operations_per_s"] = Score(
                _scaled(scores["synaptic_operations"].value, rate), None, "ops/s", False)
        return scores

    def _results(self, plan: TaskPlan, ctx: RunContext, scores: dict[str, Score],
                 summary: dict[str, Any], episodes: list[Episode], model_details: dict[str, Any],
                 ckpt: Path | None) -> Results:
        cfg, parts = plan.settings, plan.parts
        resolved = cfg.model_dump()
        resolved["env"]["options"] = parts["env_options"]
        if parts["family"] is not None:
            resolved["agent"]["model"]["options"] = parts["options"].model_dump(mode="json")
        details = {
            "episodes": {k: v for k, v in summary.items() if k not in FIGURES},
            "figures": {k: summary[k] for k in FIGURES},
            "per_episode": [[e.seed, e.index, e.steps, e.ret, e.success] for e in episodes],
            "per_episode_columns": ["seed", "episode", "steps", "return", "success"],
            "dt_s": parts["dt"], "execution_rate_hz": 1.0 / parts["dt"],
            "action_space": parts["space"], "complexity": "per step (one sample per step)",
            "time_rule": "episode time = steps x dt, the hold in the target included "
                         "(NeuroBench's t_sim*dt); failures count their full length in *_all_s",
            "primary_metric": "success_rate",  # the headline reports and leaderboards show
        }
        if summary["reward_risk"]["value"] is None:
            details["reward_risk_note"] = "risk needs at least 20 episodes (5 % of N >= 1)"
        if model_details:
            details["model"] = model_details
        bench = cfg.benchmark.info(CITATION)
        if bench.parent is None:
            bench.parent = PARENT.get(cfg.env.name)
        if cfg.agent.reference is not None:
            identity = model_identity(f"reference-{cfg.agent.reference}", {}, None, None)
        else:
            spec = resolved["agent"]["model"]
            identity = model_identity(spec["name"], spec["options"], ckpt, cfg.agent.model.label)
        return task_results(scores, benchmark=bench, model=identity, effective=resolved,
                            device=parts["device"],
                            seeds={"episodes": list(cfg.episodes.seeds),
                                   "train": list(cfg.train.seeds) if parts["family"] else None},
                            details=details)


def _scaled(value: Any, factor: float) -> Any:
    """``value * factor`` for a number or each entry of a dict of numbers."""
    return {k: x * factor for k, x in value.items()} if isinstance(value, dict) else value * factor


TASK = ClosedLoopTask()
