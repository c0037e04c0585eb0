"""A model a config names by registry entry: built, its checkpoint loaded, its provenance.

Shared by the tasks that evaluate a registered factory (``classification``,
``detection``): ``model: {name, options, checkpoint}`` where ``name`` is a factory (not a
model family with a training recipe), including ``python``, your own file
(:mod:`neuromark.models.python_model`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neuromark.components import ComponentSpec, build_component, path_options, resolve_path_options
from neuromark.config import ConfigFile
from neuromark.models.checkpoint import load_state_dict
from neuromark.registry import models


def build_configured(name: str, options: Mapping[str, Any], checkpoint: Path | None,
                     config: ConfigFile | None, loc: Sequence[str | int] = ("model",)
                     ) -> tuple[Any, dict[str, Any]]:
    """(model, provenance): the entry ``name`` built with ``options`` (checked, path options
    resolved from the config's folder), the ``state_dict`` of ``checkpoint`` (an absolute
    path; read with ``weights_only=True``) loaded into it when given. ``provenance`` holds
    ``paths`` (path options as the model read them) and, for an entry that reports its
    source (``python``), ``model_file`` (file, sha256, function); empty keys are left out."""
    model = build_component(models, ComponentSpec(name=name, options=dict(options)), config, loc)
    if checkpoint is not None:  # strict: keys and shapes, the config's line in the message
        load_state_dict(model, checkpoint,
                        config.where((*loc, "checkpoint")) if config is not None else "")
    entry = models.get(name)
    provenance: dict[str, Any] = {}
    source = getattr(entry, "source", None)
    if callable(source):
        provenance["model_file"] = source(dict(options), config, tuple(loc))
    else:
        resolved = resolve_path_options(entry, options, options, config, loc)
        paths = {f"{'.'.join(map(str, loc))}.options.{k}": str(resolved[k])
                 for k in path_options(entry) if k in options}
        if paths:
            provenance["paths"] = paths
    return model, provenance
