"""Training and checkpoints, shared by every trainable model family. Import each name from
the module that defines it:

- :mod:`.family`: :class:`~neuromark.training.family.ModelFamily`, the protocol of a
  registered model with a training recipe (``name``, ``options_model``, ``train_model``,
  ``fit``, ``load``, ``spiking``, ``tasks``; optional ``trains_on``).
- :mod:`.recipe`: :class:`~neuromark.training.recipe.TrainRecipe`, the pydantic base of
  every family's ``train:`` settings (seed, epochs, batch_size, lr, threads;
  ``TrainRecipe.recipe()``), and the types of those fields (``Epochs``, ``BatchSize``,
  ``LearningRate``, ``Threads``) with which a family changes a default.
- :mod:`.checkpoints`: one checkpoint cache: one header format, one recipe hash, one
  replacement rule, one :func:`~neuromark.training.checkpoints.prepare` (train unless a
  checkpoint of the same recipe is cached).
"""
