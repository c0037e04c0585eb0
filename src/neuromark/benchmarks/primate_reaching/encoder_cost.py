"""Front-end cost (issue 47.4) of primate reaching's inputs, counted by the rules of
:mod:`neuromark.processors.encoder_cost` (kinds of operation, per spike or per 4-ms step):
the decoders' binned threshold crossings (:func:`window_counts_cost`) and the PSTH
candidates' inputs (:func:`kinematic_features_cost`, :func:`controller_inputs_cost`).
"""

from __future__ import annotations

from neuromark.processors.encoder_cost import EncoderCost, Stage, ops


def window_counts_cost(channels: int, sub_bins: int, spikes_per_step: float | None) -> EncoderCost:
    """Primate reaching's input (:func:`~.reader.bin_session`): each spike marks its 4-ms
    bin (``floor((t - origin) / 4 ms)``: 1 add, 1 div; 2 bound tests), then per channel and
    step a running count (1 add) and the window's difference (1 add) over ``sub_bins`` bins.
    ``spikes_per_step``: measured over the recording (None: not measured)."""
    per_spike = [Stage("mark bin", ops(add=1, div=1, cmp=2), "j = floor((t - origin) / 4 ms) "
                       "(1 add, 1 div), 0 <= j <= n - 2 (2 cmp)")]
    fixed = [Stage("window count", ops(add=2 * channels), f"cumulative count and window difference "
                   f"over {sub_bins} bins: 2 add per channel, {channels} channels")]
    return EncoderCost("spike_window_counts", {"channels": channels, "window_bins": sub_bins,
                                                "bin_s": 0.004},
                        "spike", spikes_per_step, fixed, {},
                        {"running counts (int32)": 4 * channels * (sub_bins + 1)},
                        [] if spikes_per_step is not None else ["spikes per step not measured"], per_spike)


def kinematic_features_cost(leads: tuple[int, ...]) -> EncoderCost:
    """The lagged-linear candidate's features per 4-ms step
    (:func:`~.encoders.kinematic_features`): velocity by central differences, speed,
    position / 100, gathered at each lead."""
    n = len(leads)
    stages = [Stage("velocity", ops(add=2, div=2), "np.gradient: (p[k+1] - p[k-1]) / 2 for x and y"),
              Stage("speed", ops(mul=1, mac=1, transcendental=1), "sqrt(vx^2 + vy^2)"),
              Stage("position", ops(div=2), "x / 100, y / 100"),
              Stage("leads", ops(add=n, cmp=n), f"index k + lead clipped at the end, {n} leads")]
    depth = max(leads) + 1
    return EncoderCost("kinematic_features", {"leads": list(leads), "features": 5 * n}, "step", 1.0,
                        stages, {}, {"lead buffer (float64)": 8 * 5 * depth},
                        [f"the leads look {max(leads)} steps ahead: a chip would delay the neural "
                         "data instead (the same buffer)"])


def controller_inputs_cost() -> EncoderCost:
    """The controller candidate's inputs per 4-ms step
    (:func:`~.encoders.controller_inputs`): target and cursor positions / 100."""
    return EncoderCost("controller_inputs", {"inputs": 4}, "step", 1.0,
                        [Stage("scale", ops(div=4), "target x, y and cursor x, y divided by 100")],
                        {}, {"inputs (float32)": 16})
