"""Front-end cost (issue 47.4) of the binned spike files (:class:`.entries.BinnedSpikes`),
counted by the rules of :mod:`neuromark.processors.encoder_cost` (kinds of operation, per
event and per sample); the cochlea before it is the kernel's
(:func:`~neuromark.processors.encoder_cost.cochlea_cost`).
"""

from __future__ import annotations

from neuromark.data.binning import n_bins
from neuromark.processors.encoder_cost import EncoderCost, Stage, ops


def binned_spikes_cost(channels: int, dt_us: int, t_max_us: int, pool: int,
                       events_per_sample: float | None) -> EncoderCost:
    """Binning spikes to (T, channels // pool) counts (:class:`~neuromark.processors.spike_transforms.
    BinSpikes`, then :class:`~neuromark.processors.spike_transforms.PoolChannels` on the units), as
    :class:`~.entries.BinnedSpikes` does: per event (``events_per_sample`` of them, None: not
    measured), with the frame as state."""
    steps = n_bins(dt_us, t_max_us)
    per_event = [Stage("bin", ops(div=1, cmp=2, add=1), "bin = t // dt (1 div), 2 bound tests, "
                       "+1 in its cell")]
    if pool > 1:
        per_event.append(Stage("pool", ops(div=1), "unit // pool (1 div)"))
    width = channels // pool
    return EncoderCost("bin_spikes", {"channels": channels, "dt_us": dt_us, "t_max_us": t_max_us,
                                       "pool": pool, "steps": steps},
                        "event", events_per_sample, [], {}, {"frame (float32)": 4 * steps * width},
                        [] if events_per_sample is not None else ["events per sample not measured"],
                        per_event)
