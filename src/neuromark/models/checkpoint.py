"""Reading weight files safely: ``torch.load(weights_only=True)`` with errors naming the file."""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

from neuromark.errors import DataError


def read_weights(path: Path, *, missing_hint: str = "") -> Any:
    """The payload of a torch weight file (tensors, numbers, dicts only: no code runs).

    Raises :class:`DataError` naming ``path`` when it is missing (followed by
    ``missing_hint``) or not loadable.
    """
    import torch

    if not path.is_file():
        raise DataError(f"{path}: no such checkpoint{missing_hint}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc), re.IGNORECASE)
        if found is None:  # not a pickle of objects: truncated or foreign bytes
            raise DataError(f"{path}: not a loadable checkpoint: {exc}") from exc
        what = f" ({found.group(1)})"
        raise DataError(f"{path}: refused: it holds pickled Python objects{what} beyond tensors, "
                        "numbers and dicts, and loading them could run code; neuromark never "
                        "loads such a file. Save the weights alone (torch.save(model."
                        "state_dict(), PATH)) from a source you trust") from None
    except (RuntimeError, EOFError, OSError) as exc:
        raise DataError(f"{path}: not a loadable checkpoint: {exc}") from exc


def fit_problems(module: Any, state: Any) -> list[str]:
    """Why ``state`` (a state dict) does not fit ``module`` under a strict load: keys the
    model has and the file lacks, keys the file has and the model lacks, and tensors whose
    shapes differ (each list shortened to its first 8); [] when it fits."""
    if not isinstance(state, dict):
        return [f"the file holds a {type(state).__name__}, not a state dict (a mapping of "
                f"parameter names to tensors)"]
    own = module.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [str(k) for k in state if k not in own]
    shapes = [f"{k}: file {tuple(state[k].shape)} vs model {tuple(v.shape)}"
              for k, v in own.items() if k in state and hasattr(state[k], "shape")
              and hasattr(v, "shape") and tuple(state[k].shape) != tuple(v.shape)]

    def listed(items: list[str]) -> str:
        return ", ".join(items[:8]) + (f", ... ({len(items)} in all)" if len(items) > 8 else "")

    return ([f"missing key(s), in the model but not in the file: {listed(missing)}"] if missing else []) \
        + ([f"unexpected key(s), in the file but not in the model: {listed(unexpected)}"]
           if unexpected else []) \
        + ([f"shape mismatch(es): {listed(shapes)}"] if shapes else [])


def load_state_dict(model: Any, path: Path, where: str = "") -> None:
    """Load a ``state_dict`` (or a checkpoint dict holding one under ``state_dict``) into
    ``model`` (a module or an adapter with ``.module``) strictly and put it in eval mode.

    A file that does not fit (:func:`fit_problems`: missing or unexpected keys, other
    shapes) raises :class:`DataError` naming ``where`` (the config's ``file:line`` of
    ``model.checkpoint``, when the model comes from a config), the file, the model's class
    and each problem; ``neuromark validate`` and the run give the same message."""
    payload = read_weights(path)
    state = payload.get("state_dict", payload) if isinstance(payload, dict) else payload
    module = getattr(model, "module", model)
    prefix = f"{where}: model.checkpoint: " if where else ""
    problems = fit_problems(module, state)
    if problems:
        raise DataError(f"{prefix}{path}: weights do not fit the model ({type(module).__name__}): "
                        + "; ".join(problems) + ". Is it the checkpoint of another model? Give "
                        "the file saved from this model (torch.save(model.state_dict(), PATH))")
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(f"{prefix}{path}: weights do not fit the model "
                        f"({type(module).__name__}): {exc}") from exc
    module.eval()
