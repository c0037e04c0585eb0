"""The ``closed_loop`` config and its checks at load (file:line errors before any work).

Config::

    task: closed_loop
    benchmark: {id: ops-ann, version: "1.0", parent: neurobench-closed_loop_ops}
    env: {name: ops, options: {}}            # or {name: gymnasium, options: {id: CartPole-v1}}
    agent:
      model: {name: ops_ann, options: {}}    # a registered model (family or factory) ...
      # reference: oracle                    # ... or a reference policy (oracle, zero, random, balance)
    episodes: {count: 50, max_steps: 300, seeds: [0], per_unit: 10}
    train: {seeds: [100000], episodes: 40}   # a model family's training episodes (seeds apart)
    learning: {rule: delta, options: {lr: 0.001}}   # on-line learning (optional)
    metrics: [footprint, synaptic_operations]       # default: by the model's kind
    checkpoint_dir: cache:checkpoints/closed_loop
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr, model_validator

from neuromark.components import resolve_entry
from neuromark.config import ConfigFile, IdentitySettings, Seed, StrictModel, resolve_path, validate
from neuromark.devices import DeviceName
from neuromark.errors import ConfigError, MissingExtraError
from neuromark.metrics.names import MetricEntry
from neuromark.model_label import ModelLabel
from neuromark.models import as_adapter
from neuromark.registry import environments, learning_rules

#: Agent steps a closed-loop entry may take, test and training episodes at their longest,
#: before it needs ``--allow-long`` (``RunContext.allow_long``): 10^6, about 30 min at the
#: ~560 steps/s measured for a 96-16-32-2 ANN on OPS with its probes (2-core VM under load,
#: 2026-12-02); NeuroBench's full OPS protocol is 45,000 test steps (docs/failures.md).
WORK_LIMIT_STEPS = 1_000_000


class EnvSpec(StrictModel):
    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class ModelSpec(StrictModel):
    name: str
    options: dict[str, Any] = Field(default_factory=dict)
    checkpoint: str | None = None  # a factory's state_dict file
    label: ModelLabel | None = None


class AgentSpec(StrictModel):
    model: ModelSpec | None = None
    reference: Literal["oracle", "zero", "random", "balance"] | None = None

    @model_validator(mode="after")
    def _one(self) -> AgentSpec:
        if (self.model is None) == (self.reference is None):
            raise ValueError("give exactly one of agent.model and agent.reference")
        return self


class EpisodeSettings(StrictModel):
    count: int = Field(50, ge=1, le=1_000_000)
    max_steps: int = Field(300, ge=1, le=10_000_000)
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1)
    per_unit: int = Field(10, ge=1, description="episodes per executor unit (learning: all "
                          "episodes of a seed are one unit)")


class TrainSettings(StrictModel):
    seeds: list[Seed] = Field(default_factory=lambda: [100_000], min_length=1)
    episodes: int = Field(40, ge=1, le=100_000, description="training episodes per seed")


class LearningSpec(StrictModel):
    rule: str
    options: dict[str, Any] = Field(default_factory=dict)


class ClosedLoopConfig(StrictModel):
    task: Literal["closed_loop"]
    description: str = ""
    benchmark: IdentitySettings
    env: EnvSpec
    agent: AgentSpec
    episodes: EpisodeSettings = EpisodeSettings()
    train: TrainSettings = TrainSettings()
    learning: LearningSpec | None = None
    metrics: list[MetricEntry] | None = None
    checkpoint_dir: str = "cache:checkpoints/closed_loop"
    threads: int = Field(1, ge=1)
    device: DeviceName = "cpu"  # cpu (default), cuda, cuda:N or auto; training runs on the CPU
    #: The environment's control step (s), set by the task's plan once the env is built.
    _control_step_s: float | None = PrivateAttr(None)

    def time_step_s(self) -> tuple[float, str] | None:
        """One agent step per environment step (:mod:`neuromark.metrics.execution_rate`);
        None until the plan has built the environment."""
        if self._control_step_s is None:
            return None
        return self._control_step_s, f"env {self.env.name!r}: its control step dt, one agent step each"


def build_env(cfg: ClosedLoopConfig, config: ConfigFile) -> tuple[Any, dict[str, Any]]:
    """(environment, its validated options as plain values); ConfigError at ``env``."""
    where = config.where(("env", "name"))
    factory = resolve_entry(environments, cfg.env.name, where, "env.name")
    model = getattr(factory, "options_model", None)
    options = (validate(model, cfg.env.options, config, ("env", "options")).model_dump()
               if model is not None else dict(cfg.env.options))
    if cfg.env.name == "ops" and options.get("neurons"):  # a file beside the config
        options["neurons"] = str(resolve_path(options["neurons"], config))
    if cfg.env.name == "gymnasium":
        from neuromark.benchmarks.closed_loop.gym_env import check_id

        try:
            check_id(options["id"], config.where(("env", "options", "id")))
        except MissingExtraError as exc:
            raise ConfigError(f"{where}: env.name: {exc}") from None
    try:
        env = factory(**options)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to build is the config's
        raise ConfigError(f"{config.where(('env',))}: env: {cfg.env.name!r} cannot be built "
                          f"with these options: {type(exc).__name__}: {exc}") from None
    return env, options


def check_settings(cfg: ClosedLoopConfig, env: Any, config: ConfigFile) -> None:
    """Settings that cannot work together: repeated or shared seeds, an OPS hold longer
    than the episode, a learning rule without a network or without an ideal action."""
    seeds = cfg.episodes.seeds
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"{config.where(('episodes', 'seeds'))}: episodes.seeds: a seed is "
                          "listed twice")
    shared = sorted(set(seeds) & set(cfg.train.seeds))
    if shared and cfg.agent.model is not None:
        raise ConfigError(f"{config.where(('train', 'seeds'))}: train.seeds: seed(s) {shared} "
                          "are test seeds too (episodes.seeds); training and test episodes "
                          "must come from different seeds")
    hold, limit = getattr(env, "hold_steps", None), getattr(env, "max_steps", None)
    if hold is not None and limit is not None and hold > min(limit, cfg.episodes.max_steps):
        raise ConfigError(f"{config.where(('episodes', 'max_steps'))}: no episode can succeed: "
                          f"the hold in the target takes {hold} steps, an episode at most "
                          f"{min(limit, cfg.episodes.max_steps)}")
    if cfg.learning is not None:
        where = config.where(("learning", "rule"))
        if cfg.agent.model is None:
            raise ConfigError(f"{where}: learning: a reference policy has no weights to learn")
        if cfg.learning.rule == "delta" and not callable(getattr(env, "ideal_action", None)):
            raise ConfigError(f"{where}: learning.rule: the delta rule learns from the "
                              f"environment's ideal action, which {cfg.env.name!r} has not")


def learning_spec(cfg: ClosedLoopConfig, config: ConfigFile) -> tuple[str, dict[str, Any]] | None:
    """``(rule, validated options)`` of ``learning`` (None without it)."""
    if cfg.learning is None:
        return None
    factory = resolve_entry(learning_rules, cfg.learning.rule, config.where(("learning", "rule")),
                            "learning.rule")
    model = getattr(factory, "options_model", None)
    options = (validate(model, cfg.learning.options, config, ("learning", "options")).model_dump()
               if model is not None else dict(cfg.learning.options))
    return cfg.learning.rule, options


def check_output(model: Any, env: Any, where: str, name: str) -> None:
    """Run ``model`` once on a zero observation (1, 1, obs) and check that its output holds
    the action space's number of values; ConfigError at ``where`` otherwise."""
    import torch

    adapter = as_adapter(model)
    module = getattr(adapter, "module", None)
    if module is not None and hasattr(module, "named_parameters"):
        for pname, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            if torch.nn.parameter.is_lazy(tensor):
                continue  # shaped by the first forward below
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                count = int((~torch.isfinite(tensor)).sum())
                raise ConfigError(f"{where}: model.name: {name!r}: weight {pname!r} "
                                  f"{tuple(tensor.shape)} holds {count} NaN/infinite value(s); "
                                  f"the agent cannot drive env {type(env).__name__} with it")
    adapter.reset_state()
    try:
        with torch.inference_mode():
            out = adapter(torch.zeros(1, 1, env.observation_size))
    except Exception as exc:  # noqa: BLE001 - the message names the shapes
        raise ConfigError(f"{where}: model.name: {name!r} does not run on one observation of "
                          f"shape (1, 1, {env.observation_size}): {type(exc).__name__}: {exc}") from None
    finally:
        adapter.reset_state()
    size = env.action_space.size
    values = int(out.numel()) if hasattr(out, "numel") else -1
    if values != size and not (values % size == 0 and out.shape[-1] == size):
        raise ConfigError(f"{where}: model.name: {name!r} outputs {tuple(out.shape)} per step, "
                          f"the environment's action space is {env.action_space.describe()}: "
                          f"it needs {size} values per step")


def estimated_steps(cfg: ClosedLoopConfig, env: Any) -> dict[str, int]:
    """The most agent steps the entry can take: ``test`` (seeds x episodes x the longest
    episode) and ``train`` (a model family's training episodes, the same length); the
    longest episode is ``episodes.max_steps``, or the environment's own ``max_steps`` when
    that is shorter."""
    longest = cfg.episodes.max_steps
    own = getattr(env, "max_steps", None)
    if isinstance(own, int) and own > 0:
        longest = min(longest, own)
    test = len(cfg.episodes.seeds) * cfg.episodes.count * longest
    train = len(cfg.train.seeds) * cfg.train.episodes * longest if cfg.agent.model is not None else 0
    return {"test": test, "train": train, "longest_episode": longest}


def check_work(cfg: ClosedLoopConfig, env: Any, config: ConfigFile, allow_long: bool) -> dict[str, int]:
    """:func:`estimated_steps`, refused with a :class:`ConfigError` at ``episodes`` when the
    total exceeds :data:`WORK_LIMIT_STEPS` and ``allow_long`` is off; with it, the estimate
    is printed before any work."""
    import sys

    steps = estimated_steps(cfg, env)
    total = steps["test"] + steps["train"]
    if total > WORK_LIMIT_STEPS:
        what = (f"up to {total:,} agent steps ({len(cfg.episodes.seeds)} seed(s) x "
                f"{cfg.episodes.count} episodes x {steps['longest_episode']:,} steps = "
                f"{steps['test']:,} test steps" + (f", plus {steps['train']:,} training steps"
                                                  if steps["train"] else "") + ")")
        if not allow_long:
            raise ConfigError(f"{config.where(('episodes',))}: episodes: {what} exceed the work "
                              f"limit of {WORK_LIMIT_STEPS:,} steps (about 30 min at the ~560 "
                              "steps/s of a small ANN); lower episodes.count / episodes.max_steps, or "
                              "pass --allow-long to run it")
        print(f"closed_loop {cfg.benchmark.id}: {what}, over the limit of {WORK_LIMIT_STEPS:,}; "
              "running it (--allow-long)", file=sys.stderr)
    return steps
