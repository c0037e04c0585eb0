"""The primate_reaching task's decoders through the shared checkpoint cache
(:mod:`neuromark.training.checkpoints`: its header, recipe hash and replacement rule).

One checkpoint per decoder in ``checkpoint_dir``, content-addressed:
``<kind>-<session>-<hash16>.pt`` for a session's own decoder and
``<kind>-shared-<hash16>.pt`` for one shared by several sessions, ``hash16`` the first 16
hex digits of the recipe hash, so that shared and per-session decoders never collide. The
recipe: ``family`` (kind), ``options`` (``model.options``, the training settings
included), ``data`` (``bin_width``, ``train_ratio``), ``file_sha256`` (the session file's
sha256; a shared decoder: every file's, with ``sessions`` and ``pool_gap``), and the
training device when not the CPU; the training files enter the hash through their sha256
in the recipe, as in neuromark's first decoder cache (files of its header of before 0.2.0,
``neuromark-primate-decoder-1``, are no longer read: they are retrained in place).
``neuromark train CONFIG`` retrains every decoder of a config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark.config import ConfigFile
from neuromark.data.download import file_digest
from neuromark.devices import recipe_device
from neuromark.errors import ConfigError, DataError
from neuromark.io_atomic import to_jsonable
from neuromark.training.checkpoints import Prepared, prepare, recipe_hash
from neuromark.training.family import training_device

#: Zero steps between sessions in the pooled training recording of a shared decoder
#: (longer than any decoder's input window, so no window spans two sessions).
POOL_GAP = 1000


def decoder_checkpoint(family: Any, options: Any, root: Path, sessions: list[str],
                       kw: dict[str, Any], folder: Path, config: ConfigFile, device: Any = "cpu",
                       *, retrain: bool = False) -> Prepared:
    """The decoder trained on ``sessions``' training splits (one session: its own decoder;
    several: one shared decoder on the pooled splits), in ``folder``: the cached checkpoint
    when its recipe hash matches (unless ``retrain``), else trained now and saved."""
    from neuromark.benchmarks.primate_reaching.reader import PrimateReaching

    trains = [PrimateReaching(root, s, "train", **kw) for s in sessions]
    channels = {s: t.channels for s, t in zip(sessions, trains)}
    if len(set(channels.values())) > 1:
        raise ConfigError(f"{config.where(('data', 'shared_decoder'))}: data.shared_decoder: "
                          f"one decoder needs equal channel counts, the sessions have "
                          f"{channels}; choose sessions of one array (indy_* or loco_*)")
    digests = [file_digest(t.path) for t in trains]
    trains_on = training_device(family, device)
    recipe = {"family": family.kind, "options": options.model_dump(), "data": kw,
              "file_sha256": digests[0], **recipe_device(trains_on)}
    name = sessions[0]
    if len(sessions) > 1:
        recipe.update({"sessions": list(sessions), "file_sha256": digests, "pool_gap": POOL_GAP})
        name = "shared"
    recipe = to_jsonable(recipe)
    path = Path(folder) / f"{family.kind}-{name}-{recipe_hash(recipe, [])[:16]}.pt"

    def fit() -> tuple[Any, dict[str, Any]]:
        return family.fit(options, None, pooled_training(trains), 2, device=trains_on)

    return prepare(family, path, recipe, [], fit, retrain=retrain, device=device)


def model_and_details(prepared: Prepared) -> tuple[Any, dict[str, Any]]:
    """A decoder's checkpoint as a run uses it: (model, what the result records of it)."""
    return prepared.model, {"checkpoint": str(prepared.path), "trained_now": prepared.trained,
                            "train_seconds": prepared.meta.get("train_seconds")}


def pooled_training(trains: list[Any]) -> Any:
    """One :class:`~neuromark.networks.ridge_decoder.TrainData` of the training splits of
    ``trains`` (one session: its recording as is; several: the recordings joined with
    :data:`POOL_GAP` zero steps between them, reaches shifted accordingly)."""
    import numpy as np

    from neuromark.networks.ridge_decoder import TrainData

    for train in trains:  # a decoder fit on no spike at all is singular (ridge) or blind
        x, _, segs = train._load()
        if not any(x[a:b].any() for a, b in segs):
            raise DataError(f"{train.path}: session {train.session!r}: the train split holds no "
                            f"spike in any of its {x.shape[1]} channels; a decoder cannot be fit")
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
