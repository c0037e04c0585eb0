"""Keyword few-shot class-incremental learning (FSCIL) on the MSWC subset, with the
prototypical conversion of NeuroBench (Yik et al., Algorithm 1).

Protocol:

1. Pre-train a backbone (a registered model with ``features`` and ``output``) on the base
   classes (base train), 200-way output, cross entropy on the base logits. Its accuracy on
   base test over the base classes is the **base accuracy** (no prototypes).
2. Replace ``output`` by :func:`prototype_layer`: for class k, c_k = the mean feature over
   its samples (the base train clips for base classes, the k support shots for new ones),
   weights w_k = 2 c_k, bias b_k = -c_k.c_k, so that the argmax of the logits is the
   nearest prototype. The backbone is never updated.
3. Session 0 = base test. Sessions 1..10 each add one incremental language's 10 words:
   ``shots`` support clips per word (drawn from its support pool, the first
   ``support_pool`` clips of the class in list order) and ``query_shots`` query clips per
   word (from the next ``query_pool`` clips), appended to a cumulative query set. Session
   s is scored on base test + the cumulative query, classes not yet seen masked out.
4. ``repeats: N`` draws N session orders and shot samples from the task's own generators
   (``numpy.random.default_rng([seed, repeat])``; never global state).

Scores: per session (mean over repeats, with the 5th-95th percentile band in details)
accuracy on all seen classes and on the new classes' query clips only; the base accuracy;
the session average (mean of sessions 0-10; standard error over repeats); the frozen
reference ``base_acc * N_base / (N_base + N_query,s)`` per session (the accuracy of a model
that learns nothing new) and its average; complexity metrics per session (repeat 0,
through :class:`neuromark.runner.Benchmark` on the full model with the prototype head,
which also cross-checks the session accuracy computed from cached features).

Modules: this one holds the task (plan, run, results); :mod:`.fscil_config` its options
(the config schema, with an example); :mod:`.fscil_backbone` what the sessions run on (the
corpus as features and the pre-trained backbone); :mod:`.fscil_sessions` the prototype
head, the session sampling and the scoring of one session order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuromark._threads import torch_threads
from neuromark.benchmarks.keywords.fscil_backbone import backbone, load_corpus, prepare_backbone
from neuromark.benchmarks.keywords.fscil_config import (  # noqa: F401 - the options are also named from here
    COMPLEXITY,
    DataSettings,
    EvalSettings,
    FeatureSettings,
    FSCILConfig,
    FSCILSettings,
    ModelSettings,
    SynthSettings,
    TrainSettings,
)
from neuromark.benchmarks.keywords.fscil_sessions import (
    OrderInputs,
    SessionSampler,
    cumulative,
    order_units,
    session_head,
)
from neuromark.benchmarks.keywords.mswc import INCREMENTAL_LANGUAGES
from neuromark.benchmarks.keywords.plots import plot_fscil
from neuromark.config import ConfigFile
from neuromark.context import RunContext
from neuromark.devices import module_device
from neuromark.errors import ConfigError
from neuromark.executors import share
from neuromark.identity import model_identity
from neuromark.metrics.names import build_metrics, metric_names
from neuromark.registry import metrics as metric_registry
from neuromark.registry import models
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, out_dir_of
from neuromark.tasks.evaluation import evaluate
from neuromark.training.family import family_for

CITATION = """@article{yik2025neurobench,
  title={The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author={Yik, Jason and others}, journal={Nature Communications}, volume={16}, pages={1545},
  year={2025}}"""


class FSCILTask(TaskBase):
    """Keyword FSCIL with prototypes (see the module notes)."""

    name = "fscil"
    placement = "units"  # the backbone on the driver; one unit per session order

    settings_model = FSCILConfig

    def check(self, s: FSCILConfig, config: ConfigFile, ctx: RunContext) -> None:
        for key, langs in (("languages", s.data.languages), ("order", s.fscil.order)):
            for i, lang in enumerate(langs or []):
                if lang not in INCREMENTAL_LANGUAGES:
                    where = config.where(("data" if key == "languages" else "fscil", key, i))
                    raise ConfigError(f"{where}: {lang!r} is not an incremental MSWC language "
                                      f"({', '.join(INCREMENTAL_LANGUAGES)})")
        chosen = set(s.data.languages or INCREMENTAL_LANGUAGES)
        if s.fscil.order is not None and (set(s.fscil.order) != chosen or len(s.fscil.order) != len(chosen)):
            raise ConfigError(f"{config.where(('fscil', 'order'))}: fscil.order must list each language "
                              f"of the run once: {', '.join(sorted(chosen))}")
        if s.fscil.shots > s.fscil.support_pool or s.fscil.query_shots > s.fscil.query_pool:
            raise ConfigError(f"{config.where(('fscil',))}: need shots <= support_pool and "
                              "query_shots <= query_pool")
        family_for(models, s.model.name, self.name, config.where(("model", "name")))  # a backbone
        build_metrics(s.eval.complexity, config, ("eval", "complexity"))
        return None

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        s, config = plan.settings, plan.config
        device = ctx.device_for(s.device, config.where(("device",)), label=s.benchmark.id,
                                announce=True)
        with torch_threads(s.train.threads):
            results = self._run(s, config, ctx, device)
        used = ctx.device_record(device, s.device)
        results.provenance = {"device": used}
        return [results]

    def train(self, plan: TaskPlan, ctx: RunContext, *, checkpoint: Path | None = None,
              retrain: bool = True) -> Any:
        """Pre-train the backbone on the base classes and cache it (``retrain``: even when
        one of the same recipe is cached); returns its :class:`~neuromark.training.checkpoints.Prepared`."""
        s, config = plan.settings, plan.config
        device = ctx.device_for(s.device, config.where(("device",)))
        with torch_threads(s.train.threads):
            data = load_corpus(s, config, ctx.quiet)
            return prepare_backbone(s, config, data, ctx.quiet, device, checkpoint=checkpoint,
                                    retrain=retrain)

    def _run(self, s: FSCILConfig, config: ConfigFile, ctx: RunContext, device: Any = "cpu"
             ) -> Results:
        data = load_corpus(s, config, ctx.quiet)
        model, meta = backbone(s, config, data, ctx.quiet, device)
        steps = data["train_x"].shape[1] if s.features.kind == "delta_mel" else None
        base_pred = _predict(model, data["test_x"], s.eval.batch_size)[:, :100].argmax(1)
        base_acc = float((base_pred == data["test_y"]).double().mean())
        emb = {k: _embed(model, data[f"{k}_x"], s.eval.batch_size) for k in ("train", "test", "eval")}
        sampler = SessionSampler(data["eval_y"], data["eval_lang"], shots=s.fscil.shots,
                                 support_pool=s.fscil.support_pool, query_pool=s.fscil.query_pool,
                                 query_shots=s.fscil.query_shots)
        inputs = OrderInputs(emb, {k: data[k] for k in ("train_y", "test_y", "eval_y")}, sampler,
                             base_acc, steps)
        orders = self._score_orders(s, config, inputs, ctx)
        acc = np.stack([o["accuracy"] for o in orders])
        new_acc = np.stack([o["new_class_accuracy"] for o in orders])
        frozen = orders[-1]["frozen"]
        complexity: list[dict[str, Any]] = []
        first = sampler.sessions(s.fscil.seed, 0, s.fscil.order)  # repeat 0, as its unit drew it
        if s.eval.complexity:
            for k, support, query in cumulative(first):
                complexity.append(self._complexity(s, model, session_head(inputs, support), data,
                                                   query, k, acc[0, k], config, ctx, device))
        return self._results(s, config, out_dir_of(ctx), meta, base_acc, acc, new_acc, frozen, complexity,
                             data, [x.language for x in first])

    @staticmethod
    def _score_orders(s: FSCILConfig, config: ConfigFile, inputs: OrderInputs, ctx: RunContext
                      ) -> list[dict[str, Any]]:
        """Every repeat's session order, scored as one unit each on the run's executor
        (in this process by default); outcomes in repeat order."""
        where = config.where(("fscil", "repeats")) if "repeats" in config.data.get("fscil", {}) \
            else str(config.path or "<config>")
        units = order_units(share(ctx.executor, inputs), s.fscil.seed, s.fscil.repeats, s.fscil.order,
                            s.train.threads, where)  # the features stored once, not per unit
        return ctx.run_units(units, desc=f"{s.benchmark.id} orders", unit="order")

    def _complexity(self, s: FSCILConfig, model: Any, head: Any, data: dict[str, Any], query: list[int],
                    session: int, accuracy: float, config: ConfigFile, ctx: RunContext,
                    device: Any = "cpu") -> dict[str, Any]:
        """Complexity metrics of the full model with this session's prototype head, on the
        session's test set (evenly spaced ``complexity_samples`` of it when set)."""
        import copy

        import torch

        x = torch.cat([data["test_x"], data["eval_x"][query]])
        y = torch.cat([data["test_y"], data["eval_y"][query]])
        if s.eval.complexity_samples and s.eval.complexity_samples < len(y):
            pick = np.linspace(0, len(y) - 1, s.eval.complexity_samples).round().astype(np.int64)
            x, y = x[torch.from_numpy(pick)], y[torch.from_numpy(pick)]
        net = copy.deepcopy(model)
        net.output = head
        mask = (~head.present).to(device)

        def post(out: Any) -> Any:
            logits = out.sum(1) if out.dim() == 3 else out
            return logits.masked_fill(mask, float("-inf")).argmax(-1)

        names = list(s.eval.complexity)
        if "classification_accuracy" not in metric_names(names):
            names.append("classification_accuracy")
        batches = [(x[i:i + s.eval.batch_size], y[i:i + s.eval.batch_size])
                   for i in range(0, len(y), s.eval.batch_size)]
        metrics = build_metrics(names, config, ("eval", "complexity"))
        result = evaluate(ctx, net, batches, metrics, postprocessors=[post], quiet=True,
                          device=device)
        out = {"session": session, "samples": len(y)}
        out.update({k: v.value for k, v in result.scores.items()})
        if not s.eval.complexity_samples:
            out["accuracy_matches_features_path"] = abs(out["classification_accuracy"] - accuracy) < 1e-9
        return out

    def _results(self, s: FSCILConfig, config: ConfigFile, out_dir: Path, meta: dict[str, Any],
                 base_acc: float, acc: np.ndarray, new_acc: np.ndarray, frozen: np.ndarray,
                 complexity: list[dict[str, Any]], data: dict[str, Any], order0: list[str | None]) -> Results:
        info = s.benchmark.info(CITATION)
        mean, p5, p95 = acc.mean(0), np.percentile(acc, 5, axis=0), np.percentile(acc, 95, axis=0)
        new_mean = np.nanmean(new_acc[:, 1:], axis=0) if acc.shape[1] > 1 else np.array([])
        per_repeat_avg = acc.mean(1)
        reps = len(per_repeat_avg)
        se = float(per_repeat_avg.std(ddof=1) / np.sqrt(reps)) if reps > 1 else None
        n_test = len(data["test_y"])
        scores = {
            "base_accuracy": Score(base_acc, float(np.sqrt(base_acc * (1 - base_acc) / n_test)), "",
                                   True),
            "session_average": Score(float(mean.mean()), se, "", True),
            "frozen_average": Score(float(frozen.mean()), None, "", True),
            "gain_over_frozen": Score(float(mean.mean() - frozen.mean()), se, "", True),
            "last_session_accuracy": Score(float(mean[-1]), None, "", True),
            "new_class_average": Score(float(new_mean.mean()) if new_mean.size else None, None, "", True),
        }
        first = complexity[0] if complexity else {}
        for name in metric_names(s.eval.complexity):
            if name in first:
                scores[name] = Score(first[name], None,
                                     getattr(metric_registry.get(name), "unit", ""),
                                     None)  # footprint in bytes, operations per sample
        plot = plot_fscil(mean, p5, p95, np.concatenate([[np.nan], new_mean]), frozen,
                          out_dir / f"{info.id}_sessions.png", f"{info.id} ({reps} repeats)")
        details = {
            "sessions": list(range(len(mean))),
            "accuracy_mean": mean.tolist(), "accuracy_p5": p5.tolist(), "accuracy_p95": p95.tolist(),
            "new_class_accuracy_mean": [None, *new_mean.tolist()],
            "new_class_accuracy_p5": [None, *np.nanpercentile(new_acc[:, 1:], 5, axis=0).tolist()],
            "new_class_accuracy_p95": [None, *np.nanpercentile(new_acc[:, 1:], 95, axis=0).tolist()],
            "frozen_reference": frozen.tolist(), "session_average_per_repeat": per_repeat_avg.tolist(),
            "language_order_repeat0": order0, "complexity_per_session": complexity,
            "corpus": data["corpus"], "backbone": {k: v for k, v in meta.items() if k != "recipe"},
            "plots": [f"{out_dir.name}/{plot.name}"],
            "primary_metric": "session_average",  # the headline reports and leaderboards show
        }
        if data.get("front_end") is not None:
            details["front_end"] = data["front_end"]
        return Results(scores=scores, benchmark=info, details=details, config=s.model_dump(mode="json"),
                       seeds={"train": s.train.seed, "fscil": s.fscil.seed, "repeats": s.fscil.repeats},
                       model=model_identity(s.model.name, s.model.options, meta.get("checkpoint"),
                                            s.model.label))


def _embed(model: Any, x: Any, batch_size: int) -> Any:
    """Embeddings (N, F) on the CPU, computed on the model's device."""
    from neuromark.benchmarks.keywords.train import embed

    return embed(model, x.to(module_device(model)), batch_size).cpu()


def _predict(model: Any, x: Any, batch_size: int) -> Any:
    """Logits (N, K) on the CPU, computed on the model's device."""
    from neuromark.benchmarks.keywords.train import predict

    return predict(model, x.to(module_device(model)), batch_size).cpu()


TASK = FSCILTask()
