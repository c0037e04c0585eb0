"""What the FSCIL sessions run on: the corpus as features, and the backbone (a registered
model with ``features`` and ``output``) pre-trained on the base classes and cached through
the shared checkpoint cache (:mod:`neuromark.training`).

:func:`load_corpus` decodes the MSWC clips (synthesising the corpus first when the config
asks) and turns them into the configured features; :func:`backbone` returns the cached
backbone or trains it. The recipe hash is the one FSCIL backbones had before the cache was
shared (model name and options, features, ``train:`` but ``threads``, the device when not
the CPU, then the training features' and labels' bytes); a backbone in the header of
neuromark before 0.2.0 (``neuromark-fscil-1``) is no longer read: it is retrained in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.keywords.encoder_cost import keyword_features_cost
from neuromark.benchmarks.keywords.features import KeywordFeatures
from neuromark.benchmarks.keywords.fscil_config import FSCILConfig, TrainSettings
from neuromark.benchmarks.keywords.mswc import INCREMENTAL_LANGUAGES, MSWC, SAMPLE_RATE
from neuromark.components import ComponentSpec, build_component
from neuromark.config import ConfigFile, resolve_path
from neuromark.data.entry import MARK
from neuromark.devices import recipe_device
from neuromark.errors import ConfigError, DataError
from neuromark.registry import models
from neuromark.training.checkpoints import Prepared, prepare, read_checkpoint
from neuromark.training.family import TrainedModule


@dataclass(frozen=True)
class BackboneFamily:
    """A registered model seen as the FSCIL task's trainable family: ``new()`` builds it
    from the config's options; :meth:`fit` pre-trains it on the base classes (cross
    entropy on their logits; :func:`~neuromark.benchmarks.keywords.models.fit_classifier`)."""

    name: str
    new: Callable[[], Any] = field(compare=False)
    seed: int = 0
    shift_axis: int = -1  # time axis of the features: -1 (B, C, frames), 1 (B, T, C)
    options_model: Any = dict  # options are checked against the registered factory
    train_model: type[TrainSettings] = TrainSettings
    spiking: bool = False
    tasks: tuple[str, ...] = ("fscil",)

    def trains_on(self, device: Any) -> Any:
        return device

    def build(self) -> Any:
        from neuromark.benchmarks.keywords.train import init_seeded

        return init_seeded(self.new, self.seed)

    def fit(self, options: Any, train: TrainSettings, data: Any, classes: int, *, quiet: bool = True,
            label: str = "", device: Any = "cpu") -> tuple[TrainedModule, dict[str, Any]]:
        """Pre-train on ``data`` = (features, labels) of base train, on ``device``."""
        from neuromark.benchmarks.keywords.train import fit_classifier, time_shift

        x, y = data
        model = self.build().to(device)
        shift = time_shift(train.time_shift, self.shift_axis) if train.time_shift else None
        log = None if quiet else (lambda line: print(f"{label}: {line}"))
        info = fit_classifier(model, x.to(device), y.to(device), epochs=train.epochs,
                              batch_size=train.batch_size, lr=train.lr, weight_decay=train.weight_decay,
                              step_size=train.step_size, gamma=train.gamma, seed=train.seed,
                              classes=classes, augment=shift, log=log)
        return TrainedModule(self.name, dict(options or {}), model), {
            "epochs": train.epochs, "train_seconds": info["train_seconds"],
            "final_train_loss": info["loss"][-1], "final_train_accuracy": info["train_accuracy"][-1]}

    def load(self, path: Path) -> tuple[Any, dict[str, Any]]:
        """(backbone in eval mode, meta) from a checkpoint of this model (or an older FSCIL
        backbone checkpoint)."""
        payload = read_checkpoint(Path(path), (self.name,), what="FSCIL backbone")
        model = self.build()
        try:
            model.load_state_dict(payload["state_dict"])
        except (RuntimeError, TypeError, KeyError) as exc:
            raise DataError(f"{path}: weights do not fit the model: {exc}") from None
        return model.eval(), payload["meta"]


def backbone_family(s: Any, config: ConfigFile) -> BackboneFamily:
    """The configured backbone as a :class:`BackboneFamily` (``s``: the FSCIL settings)."""
    spec = ComponentSpec(name=s.model.name, options=s.model.options)

    def new() -> Any:
        return build_component(models, spec, config, ("model",))

    family = BackboneFamily(s.model.name, new, s.train.seed, 1 if s.features.kind == "delta_mel" else -1)
    model = family.build()
    if not hasattr(model, "features") or not hasattr(model, "output"):
        raise ConfigError(f"{config.where(('model', 'name'))}: model {s.model.name!r} has no "
                          "features()/output: the FSCIL task needs a backbone with both")
    return family


def backbone(s: Any, config: ConfigFile, data: dict[str, Any], quiet: bool, device: Any = "cpu", *,
             checkpoint: Path | None = None, retrain: bool = False) -> tuple[Any, dict[str, Any]]:
    """The pre-trained backbone on ``device`` and its meta (with ``checkpoint`` and
    ``trained_now``): the cached one at ``model.checkpoint`` (or ``checkpoint``) when its
    recipe hash matches, else trained there and saved (weights saved from the CPU)."""
    prepared = prepare_backbone(s, config, data, quiet, device, checkpoint=checkpoint, retrain=retrain)
    return prepared.model.to(device), {**prepared.meta, "checkpoint": str(prepared.path),
                                       "trained_now": prepared.trained}


def prepare_backbone(s: Any, config: ConfigFile, data: dict[str, Any], quiet: bool, device: Any = "cpu",
                     *, checkpoint: Path | None = None, retrain: bool = False) -> Prepared:
    """The backbone's checkpoint through the shared cache (:func:`neuromark.training.checkpoints.prepare`)."""
    family = backbone_family(s, config)
    spec = ComponentSpec(name=s.model.name, options=s.model.options)
    recipe = {"model": spec.model_dump(), "features": s.features.model_dump(),
              "train": s.train.recipe(), **recipe_device(device)}
    hashed = [data["train_x"].numpy().tobytes(), data["train_y"].numpy().tobytes()]

    def fit() -> tuple[Any, dict[str, Any]]:
        return family.fit(s.model.options, s.train, (data["train_x"], data["train_y"]), 100,
                          quiet=quiet, label=s.benchmark.id, device=device)

    return prepare(family, checkpoint or resolve_path(s.model.checkpoint, config), recipe, hashed, fit,
                   train_if_missing=s.train_if_missing, retrain=retrain, device=device)


def load_corpus(s: FSCILConfig, config: ConfigFile, quiet: bool) -> dict[str, Any]:
    """Decoded clips -> features, as tensors: ``train_x/y`` (base train), ``test_x/y`` (base
    test), ``eval_x/y/lang`` (incremental clips of the chosen languages)."""
    import torch

    root = resolve_path(s.data.root, config)
    corpus: dict[str, Any] = {"root": str(root), "synthetic": s.data.synthesize is not None}
    if s.data.synthesize is not None:
        from neuromark.benchmarks.keywords.mswc import MSWC_ENTRY

        size = s.data.synthesize
        mark = root / MARK
        before = mark.read_bytes() if mark.is_file() else None
        MSWC_ENTRY.synthesize(root, **size.model_dump())  # the data set entry's generator
        if not quiet and (mark.read_bytes() if mark.is_file() else None) != before:
            print(f"{s.benchmark.id}: synthesised the MSWC-layout corpus in {root} (reused by "
                  "later runs)")
        corpus.update(size.model_dump())
    cache = resolve_path("cache:decoded", config)  # the run's cache folder, never the data folder
    f = s.features
    feats = KeywordFeatures(f.kind, SAMPLE_RATE, None, f.n_fft, f.hop_length, f.n_mels, f.n_mfcc,
                            f.fmin, f.fmax, f.threshold)

    def featurise(clips: np.ndarray) -> Any:
        return torch.cat([feats(clips[i:i + 256]) for i in range(0, len(clips), 256)])

    out: dict[str, Any] = {"corpus": corpus}
    for key, subset in (("train", "base_train"), ("test", "base_test")):
        ds = MSWC(root, subset, long_clips=s.data.long_clips)
        clips = ds.arrays(cache)
        out[f"{key}_x"] = featurise(clips)
        # the feature recipe's cost on one clip, beside the model's figures (issue 47.4)
        out["front_end"] = keyword_features_cost(feats, int(np.shape(clips)[-1])).to_json()
        out[f"{key}_y"] = torch.from_numpy(ds.labels)
        if int(ds.labels.max(initial=0)) >= 100:
            raise DataError(f"{ds.list_file}: base lists must hold base classes (0-99) only")
    xs, ys, langs = [], [], []
    for lang in s.data.languages or INCREMENTAL_LANGUAGES:
        ds = MSWC(root, "evaluation", language=lang, long_clips=s.data.long_clips)
        xs.append(featurise(ds.arrays(cache)))
        ys.append(torch.from_numpy(ds.labels))
        langs += [lang] * len(ds)
    out["eval_x"], out["eval_y"], out["eval_lang"] = torch.cat(xs), torch.cat(ys), np.array(langs)
    corpus.update({"base_train": len(out["train_y"]), "base_test": len(out["test_y"]),
                   "evaluation": len(out["eval_y"]), "feature_shape": list(out["train_x"].shape[1:])})
    return out
