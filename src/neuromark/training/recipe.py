"""The base of every model family's ``train:`` settings."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from neuromark.config import Seed, StrictModel

#: The types (with their bounds) of the base fields, for a family that changes a default
#: without restating the bound: ``epochs: Epochs = 30``.
Epochs = Annotated[int, Field(ge=1)]
BatchSize = Annotated[int, Field(ge=1)]
LearningRate = Annotated[float, Field(gt=0)]
Threads = Annotated[int, Field(ge=1)]


class TrainRecipe(StrictModel):
    """``train:`` of a trainable model family: the settings every recipe has. A family's
    settings subclass it, adding their own fields and defaults (field names and defaults
    are part of cached checkpoints' recipe hashes: never rename one). A subclass changes a
    base default by restating the field with its type alias (the bound comes with it); the
    field keeps its place, first, in the recipe.

    Example:
        >>> class MyTrain(TrainRecipe):
        ...     epochs: Epochs = 5
        >>> MyTrain(lr=0.1).recipe()["epochs"]
        5
    """

    seed: Seed = 0
    epochs: Epochs = 1
    batch_size: BatchSize = 32
    lr: LearningRate = 1e-3
    threads: Threads = Field(1, description="torch threads while training")

    def recipe(self) -> dict[str, Any]:
        """The settings as they enter the recipe hash (JSON-able): all fields by default;
        a family leaves out those that cannot change the trained weights, or that came
        after its first cached checkpoints (so that those keep their hash)."""
        return self.model_dump(mode="json")
