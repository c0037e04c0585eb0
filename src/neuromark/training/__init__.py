"""Training and checkpoints, shared by every trainable model family.

- :class:`ModelFamily` (:mod:`.family`): the protocol of a registered model with a training
  recipe (``name``, ``options_model``, ``train_model``, ``fit``, ``load``, ``spiking``,
  ``tasks``; optional ``trains_on``).
- :class:`TrainRecipe` (:mod:`.recipe`): the pydantic base of every family's ``train:``
  settings (seed, epochs, batch_size, lr, threads; :meth:`TrainRecipe.recipe`), and the
  types of those fields (``Epochs``, ``BatchSize``, ``LearningRate``, ``Threads``) with
  which a family changes a default.
- :mod:`.checkpoints`: one checkpoint cache: one header format, one recipe hash, one
  replacement rule, one :func:`prepare` (train unless a checkpoint of the same recipe is
  cached).
"""

from neuromark.training.checkpoints import (
    FORMAT,
    Prepared,
    checkpoint_owner,
    is_neuromark_checkpoint,
    prepare,
    read_checkpoint,
    recipe_hash,
    restore_network,
    save_checkpoint,
)
from neuromark.training.family import ModelFamily, TrainedModule, family_for, training_device
from neuromark.training.recipe import BatchSize, Epochs, LearningRate, Threads, TrainRecipe

__all__ = ["FORMAT", "BatchSize", "Epochs", "LearningRate", "ModelFamily", "Prepared", "Threads",
           "TrainRecipe", "TrainedModule", "checkpoint_owner", "family_for", "is_neuromark_checkpoint",
           "prepare", "read_checkpoint", "recipe_hash", "restore_network", "save_checkpoint",
           "training_device"]
