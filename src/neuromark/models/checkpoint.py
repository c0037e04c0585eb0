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


def load_state_dict(model: Any, path: Path) -> None:
    """Load a ``state_dict`` (or a checkpoint dict holding one under ``state_dict``) into
    ``model`` (a module or an adapter with ``.module``) and put it in eval mode."""
    payload = read_weights(path)
    state = payload.get("state_dict", payload) if isinstance(payload, dict) else payload
    module = getattr(model, "module", model)
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise DataError(f"{path}: weights do not fit the model: {exc}") from exc
    module.eval()
