"""Front-end cost (issue 47.4) of DVS Gesture's frames (:mod:`.transforms`), counted by the
rules of :mod:`neuromark.processors.encoder_cost` (kinds of operation, per event and per
sample).
"""

from __future__ import annotations

import math

from neuromark.processors.encoder_cost import EncoderCost, Stage, ops


def dvs_frames_cost(frame_size: tuple[int, int, int], n_time_bins: int, denoise_us: float,
                    spatial_factor: float, events_per_sample: float | None,
                    kept_fraction: float | None) -> EncoderCost:
    """DVS Gesture's frames (:mod:`.transforms`): ``Denoise`` per event,
    then ``Downsample`` and ``ToFrame`` per event kept (``kept_fraction`` of them, measured),
    and the time bins' edges per sample. ``frame_size`` = (W, H, P) of the frames."""
    w, h, pol = frame_size
    kept = 1.0 if kept_fraction is None else float(kept_fraction)
    per_event = [
        Stage("denoise", ops(add=1, cmp=8), "memory[x, y] = t + filter_time (1 add); 4 neighbours, "
              "each a bound test and a time test (8 cmp)"),
        Stage("downsample", ops(mul=2 * kept), f"x, y times {spatial_factor} (2 mul) per kept event "
              f"({kept:.4g} of the events)"),
        Stage("to frame", ops(mac=3 * kept, add=kept), "flat index ((bin P + p) H + y) W + x (3 MAC) and "
              "+1 in its cell, per kept event"),
    ]
    n_kept = (events_per_sample or 0.0) * kept
    lg = math.ceil(math.log2(n_kept)) if n_kept > 1 else 0
    fixed = [Stage("time bins", ops(add=1, div=1, mac=n_time_bins, cmp=2 * n_time_bins * lg),
                   f"bin length (1 add, 1 div), {n_time_bins} starts (1 MAC each), two binary searches per "
                   f"bin (ceil(log2 kept events) = {lg} cmp each)")]
    sensor = (int(round(w / spatial_factor)), int(round(h / spatial_factor)))
    notes = [] if events_per_sample is not None else ["events per sample not measured"]
    return EncoderCost("dvs_frames", {"frame_size": list(frame_size), "n_time_bins": n_time_bins,
                                       "denoise_us": denoise_us, "spatial_factor": spatial_factor,
                                       "kept_fraction": kept_fraction},
                        "event", events_per_sample, fixed, {},
                        {"denoise memory (float64)": 8 * sensor[0] * sensor[1],
                         "frames (int16)": 2 * n_time_bins * w * h * pol}, notes, per_event)
