"""Several streams fed side by side: batches ``(S, L, C)``, one row per stream, with no
padded step.

Streams of unequal length all start at batch 0. A chunk ends every ``chunk`` steps and
wherever a stream ends, so a stream's last chunk is never padded; from then on the batch
holds only the streams still running (in their original order). Each batch carries a
mapping ``{"new_stream", "streams", "keep"}``: ``new_stream`` is true on batch 0 only (the
runner's ``reset="stream"`` then clears every row's state), ``streams`` lists the position
in the input of each row, and ``keep`` is None when the rows are those of the previous
batch, else the indices of the previous batch's rows that remain (a streaming model keeps
only their state, e.g. the primate decoders' ``keep_streams(rows)``). Because no padded
step is ever computed, no metric or score needs a mask: every counted step is real.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from neuromark.errors import ConfigError


def chunk_schedule(lengths: Sequence[int], chunk: int) -> list[tuple[int, int, list[int]]]:
    """``[(start, stop, active streams)]`` covering every stream's steps: boundaries at
    multiples of ``chunk`` and at each stream's length; a stream is active in
    ``[start, stop)`` when its length is at least ``stop``."""
    if chunk < 1:
        raise ConfigError(f"parallel streams: chunk={chunk} must be >= 1")
    if not lengths or min(lengths) < 1:
        raise ConfigError(f"parallel streams: every stream needs at least one step, got "
                          f"lengths {list(lengths)}")
    ends = sorted(set(range(chunk, max(lengths), chunk)) | set(lengths))
    out, start = [], 0
    for stop in ends:
        out.append((start, stop, [i for i, n in enumerate(lengths) if n >= stop]))
        start = stop
    return out


def parallel_stream(inputs: Sequence[Any], targets: Sequence[Any], chunk: int = 250
                    ) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """Batches ``(x (S', L, C) float32, y (S', L, D), meta)`` of the streams ``inputs[i]``
    (N_i, C) with ``targets[i]`` (N_i, D), as the module describes. Every stream must have
    the same C (a ConfigError names the first that differs)."""
    import torch

    if len(inputs) != len(targets):
        raise ConfigError(f"parallel streams: {len(inputs)} inputs but {len(targets)} targets")
    for i, (x, y) in enumerate(zip(inputs, targets)):
        if len(x) != len(y):
            raise ConfigError(f"parallel streams: stream {i} has {len(x)} input steps but "
                              f"{len(y)} targets")
        if x.shape[1:] != inputs[0].shape[1:]:
            raise ConfigError(f"parallel streams: stream {i} has inputs of shape {x.shape[1:]} "
                              f"per step, stream 0 {inputs[0].shape[1:]}; parallel streams need "
                              "the same shape (e.g. equal channel counts)")
    previous: list[int] | None = None
    for start, stop, active in chunk_schedule([len(x) for x in inputs], chunk):
        keep = None
        if previous is not None and active != previous:
            keep = torch.tensor([previous.index(i) for i in active])
        x = np.stack([np.asarray(inputs[i][start:stop], np.float32) for i in active])
        y = np.stack([np.asarray(targets[i][start:stop]) for i in active])
        yield (torch.from_numpy(x), torch.from_numpy(y),
               {"new_stream": previous is None, "streams": active, "keep": keep})
        previous = active
