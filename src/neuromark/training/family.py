"""The model-family protocol: a registered model with a training recipe."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from neuromark.errors import ConfigError


@runtime_checkable
class ModelFamily(Protocol):
    """A registry entry (``neuromark.registry.models``) that trains its own checkpoints.

    Attributes:
        name: its registry name, and the ``kind`` its checkpoints record.
        options_model: the pydantic model of ``model.options``.
        train_model: its :class:`~neuromark.training.recipe.TrainRecipe` subclass (``train:``).
        spiking: True when it has neuron layers (activation sparsity, membrane updates).
        tasks: the tasks whose data it trains on (``classification``, ``detection``, ...).

    Methods:
        fit(options, train, data, classes, *, quiet, label, device) -> (model, info): train
            a fresh model on a task's training data; ``model.checkpoint()`` gives
            ``{"kind", "config", "state_dict"}``; ``info`` joins the checkpoint's meta.
        load(path) -> (model in eval mode, meta): a checkpoint it saved.
        trains_on(device) (optional): where it trains when a run asks for ``device``
            (e.g. the CPU for a numpy fit); without it the family trains on the CPU.
    """

    name: str
    options_model: Any
    train_model: Any
    spiking: bool
    tasks: tuple[str, ...]

    def fit(self, options: Any, train: Any, data: Any, classes: int, *, quiet: bool = True,
            label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]: ...

    def load(self, path: Path) -> tuple[Any, dict[str, Any]]: ...


def training_device(family: Any, device: Any) -> Any:
    """Where ``family`` trains when asked for ``device``: its ``trains_on(device)``, or the
    CPU for a family without one (it knows no devices)."""
    trains_on = getattr(family, "trains_on", None)
    return trains_on(device) if callable(trains_on) else "cpu"


@dataclass
class TrainedModule:
    """A trained torch module with what its checkpoint records (:meth:`checkpoint`)."""

    kind: str
    config: dict[str, Any]
    net: Any

    def checkpoint(self) -> dict[str, Any]:
        """``{"kind", "config", "state_dict"}`` (tensors on the CPU)."""
        state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
        return {"kind": self.kind, "config": self.config, "state_dict": state}


def family_for(registry: Any, name: str, task: str, where: str) -> ModelFamily | None:
    """The registered :class:`ModelFamily` ``name`` when it trains on ``task``'s data; None
    when the entry is no model family (a factory). :class:`ConfigError` at ``where`` (the
    config's ``model.name``) for an unknown name, or for a family of another task, naming
    the families that train on ``task``."""
    from neuromark.components import resolve_entry

    entry = resolve_entry(registry, name, where, "model.name")
    if not isinstance(entry, ModelFamily):
        return None
    if task in entry.tasks:
        return entry
    known = [n for n, e in registered(registry) if isinstance(e, ModelFamily) and task in e.tasks]
    raise ConfigError(f"{where}: model.name: {name!r} is a model family of "
                      f"{', '.join(entry.tasks)}; it does not train on {task} data (the families "
                      f"of {task}: {', '.join(known) or 'none'}; or a registered model factory)")


def registered(registry: Any) -> list[tuple[str, Any]]:
    """(name, entry) of every registered entry that loads (optional extras may not)."""
    out = []
    for name in registry.names():
        try:
            out.append((name, registry.get(name)))
        except Exception:  # noqa: BLE001 - an entry whose extra is missing lists nothing
            continue
    return out
