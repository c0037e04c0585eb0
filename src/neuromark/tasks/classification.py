"""The ``classification`` task: evaluate a trained spike classifier with the harness.

Config: see :mod:`neuromark.baselines.shd_recipe`. ``run`` makes sure the checkpoint exists
(training it once when ``train_if_missing``; cached by recipe hash), loads it with
``torch.load(weights_only=True)``, bins the test split and runs :class:`neuromark.Benchmark`
with the configured metrics (default: accuracy with standard error, footprint, activation
sparsity, synaptic operations, membrane updates). Works unchanged on the real SHD/SSC files
(``data: {train: shd_train.h5, test: shd_test.h5, t_max_ms: 1400}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark._threads import torch_threads
from neuromark.config import ConfigFile
from neuromark.errors import ConfigError
from neuromark.results import BenchmarkInfo, Results


def max_over_time_argmax(output: Any) -> Any:
    """Postprocessor: readout (B, T, K) -> class (B,) by maximum over time, then argmax."""
    return output.max(dim=1).values.argmax(dim=-1)


class ClassificationTask:
    """Spike-data classification (SHD, SSC, the spoken-digit corpus)."""

    name = "classification"

    def validate(self, config: ConfigFile) -> Any:
        settings = self._settings(config)
        if settings.data.corpus is None:
            from neuromark.baselines.shd_recipe import data_paths

            data_paths(settings, config)
        return settings

    def _settings(self, config: ConfigFile) -> Any:
        """The validated settings, metric names checked (the data files are not looked at)."""
        from neuromark.baselines.shd_recipe import eval_metrics, load_settings
        from neuromark.registry import metrics

        settings = load_settings(config)
        for i, name in enumerate(eval_metrics(settings)):
            if name not in metrics:
                try:
                    metrics.get(name)
                except KeyError as exc:
                    raise ConfigError(f"{config.where(('eval', 'metrics', i))}: eval.metrics[{i}]: "
                                      f"{exc}") from None
        return settings

    def run(self, config: ConfigFile, out_dir: Path, *, quiet: bool = False) -> list[Results]:
        import torch

        from neuromark.baselines.shd_recipe import dense, eval_metrics, load_split, prepare_checkpoint
        from neuromark.registry import metrics
        from neuromark.runner import Benchmark

        settings = self._settings(config)
        # Finds the data files (a missing one is the same ConfigError validate gives) and
        # loads the checkpoint once each.
        prepared = prepare_checkpoint(settings, config, quiet=quiet)
        model, meta, path, trained = prepared.model, prepared.meta, prepared.path, prepared.trained
        test_path = prepared.paths["test"]
        frames, labels = dense(load_split(test_path, settings), settings)
        x = torch.as_tensor(frames)
        y = torch.as_tensor(labels, dtype=torch.long)
        size = settings.eval.batch_size
        loader = [(x[i:i + size], y[i:i + size]) for i in range(0, len(y), size)]
        bench = settings.benchmark
        info = BenchmarkInfo(bench.id, bench.version, bench.parent, bench.citation or _citation())
        harness = Benchmark(model, loader, [], [max_over_time_argmax],
                            [metrics.get(name)() for name in eval_metrics(settings)], quiet=quiet, info=info)
        with torch_threads(settings.train.threads):
            results = harness.run(config=config.data, seeds={"train": settings.train.seed})
        results.details.update({
            "checkpoint": str(path), "trained_now": trained, "model": settings.model.kind,
            "test_file": str(test_path), "train_seconds": meta.get("train_seconds"),
            "train_samples": meta.get("train_samples"), "epochs": meta.get("epochs"),
            "final_train_loss": (meta.get("loss") or [None])[-1],
            "final_train_accuracy": (meta.get("train_accuracy") or [None])[-1],
            "chance_accuracy": 1.0 / max(1, int(meta.get("classes", 1))),
            "input_shape": list(frames.shape[1:]),
        })
        if meta.get("loss"):
            from neuromark.plotting import plot_training

            plot = plot_training(meta, out_dir / f"{bench.id}_training.png", bench.id)
            results.details["plots"] = [f"{out_dir.name}/{plot.name}"]
        return [results]




def _citation() -> str:
    from neuromark.data.shd import CITATION

    return CITATION


TASK = ClassificationTask()
