"""Front-end cost (issue 47.4) of the detection input: the event tensor
(:class:`~neuromark.processors.event_frames.EventTensor`), counted by the rules of
:mod:`neuromark.processors.encoder_cost` (kinds of operation, per event and per window).
"""

from __future__ import annotations

from typing import Any

from neuromark.processors.encoder_cost import EncoderCost, Stage, ops


def event_tensor_cost(tensor: Any, events_per_window: float | None = None) -> EncoderCost:
    """:class:`~neuromark.processors.event_frames.EventTensor`: per event (the kernels of
    :mod:`~neuromark.processors.event_frames`) and per window (clearing the tensor; for
    ``histo`` the normalisation of every cell). ``events_per_window``: the mean measured
    over the data (None: per-sample totals not given)."""
    cells = tensor.num_tbins * tensor.channels * tensor.height * tensor.width
    # _cell: rel = t - start (1 add), b = rel // dt (1 div), x >> ds and y >> ds (2 shifts,
    # counted as add: a shifter costs no more than an adder), 6 bound tests (cmp)
    locate = ops(add=3, div=1, cmp=6)
    if tensor.kind == "histo":
        per_event = [Stage("locate", locate, "rel = t - start, bin = rel // dt, x >> ds, y >> ds "
                           "(2 add), 6 bound tests"),
                     Stage("count", ops(add=1), "+1 in its (bin, polarity, pixel) cell")]
        fixed = [Stage("normalise", ops(div=cells, cmp=cells),
                       "count / (max_incr 4^ds) and min(., 1) per cell")]
        state = {"tensor (float32)": 4 * cells, "counts (int32)": 4 * cells}
    else:
        per_event = [Stage("locate", locate, "rel = t - start, bin = rel // dt, x >> ds, y >> ds "
                           "(2 add), 6 bound tests"),
                     Stage("time surface", ops(mac=2, mul=1, div=1, add=1, cmp=2),
                           "within = (rel - b dt) * 3 / dt (1 MAC, 1 mul, 1 div), "
                           "micro-bin = min(int(within), 2) (1 cmp), value = within - ub (1 add), "
                           "channel 2 ub + p (1 MAC), keep the latest (1 cmp)")]
        fixed = []
        state = {"tensor (float32)": 4 * cells}
    fixed.insert(0, Stage("clear", ops(), f"{cells} cells zeroed per window (memory, no arithmetic)"))
    options = {"kind": tensor.kind, "delta_t_us": tensor.delta_t_us, "num_tbins": tensor.num_tbins,
               "height": tensor.height, "width": tensor.width, "downsample": tensor.downsample,
               "max_incr": tensor.max_incr, "cells": cells}
    notes = [] if events_per_window is not None else ["events per window not measured"]
    return EncoderCost(tensor.kind, options, "event", events_per_window, fixed, {}, state, notes,
                        per_event)
