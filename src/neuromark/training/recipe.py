"""The base of every model family's ``train:`` settings."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from neuromark.config import StrictModel


class TrainRecipe(StrictModel):
    """``train:`` of a trainable model family: the settings every recipe has. A family's
    settings subclass it, adding their own fields and defaults (field names and defaults
    are part of cached checkpoints' recipe hashes: never rename one).

    Example:
        >>> class MyTrain(TrainRecipe):
        ...     epochs: int = Field(5, ge=1)
        >>> MyTrain(lr=0.1).recipe()["epochs"]
        5
    """

    seed: int = 0
    epochs: int = Field(1, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    threads: int = Field(1, ge=1, description="torch threads while training")

    def recipe(self) -> dict[str, Any]:
        """The settings as they enter the recipe hash (JSON-able): all fields by default;
        a family leaves out those that cannot change the trained weights, or that came
        after its first cached checkpoints (so that those keep their hash)."""
        return self.model_dump(mode="json")
