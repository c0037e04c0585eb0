"""Front-end cost (issue 47.4) of ThorEEGMI's preprocessing (:func:`.lee2019.epochs`), counted
by the rules of :mod:`neuromark.processors.encoder_cost` (kinds of operation, per input
sample and per trial).
"""

from __future__ import annotations

from fractions import Fraction

from neuromark.processors.encoder_cost import EncoderCost, Stage, ops


def band_pass_resample_cost(fs: float, *, band_hz: tuple[float, float], filter: str, order: int,
                            fs_out: float, window_s: tuple[float, float], channels_in: int,
                            channels_out: int) -> EncoderCost:
    """ThorEEGMI's preprocessing (:func:`.lee2019.epochs`) for one trial: zero-phase band-pass
    of every channel (``butter``: ``order`` second-order sections, ``sosfiltfilt``; ``fir``:
    ``order + 1`` taps, ``filtfilt``; both run forward and backward), ``resample_poly`` to
    ``fs_out``, the unit scale. Counted on the input samples of the trial's window
    (``window_s`` at ``fs``), its share of the continuous recording that is filtered."""
    n_in = (window_s[1] - window_s[0]) * fs
    steps = int(round((window_s[1] - window_s[0]) * fs_out))
    cells = n_in * channels_in
    if filter == "butter":
        # one section, transposed direct form II (scipy's sosfilt): y = b0 x + z0 (1 MAC);
        # z0 = b1 x - a1 y + z1 (2 MAC); z1 = b2 x - a2 y (1 mul, 1 MAC)
        band = Stage("band-pass", ops(mac=2 * 4 * order * cells, mul=2 * order * cells),
                     f"{order} second-order sections (4 MAC + 1 mul each) per sample, forward and "
                     f"backward, {channels_in} channels")
        params = {"SOS coefficients (float64)": 8 * 6 * order}
        state = {"section states (float64)": 8 * 2 * order * channels_in}
    elif filter == "fir":
        taps = order + 1
        band = Stage("band-pass", ops(mac=2 * taps * cells), f"{taps}-tap FIR per sample, forward and "
                     f"backward, {channels_in} channels")
        params = {"FIR taps (float64)": 8 * taps}
        state = {"delay lines (float64)": 8 * taps * channels_in}
    else:
        raise ValueError(f"filter must be 'butter' or 'fir', got {filter!r}")
    ratio = Fraction(fs_out / fs).limit_denominator(1000)
    up, down = ratio.numerator, ratio.denominator
    taps_rs = 2 * 10 * max(up, down) + 1
    per_out = -(-taps_rs // up)
    stages = [band,
              Stage("resample", ops(mac=steps * channels_in * per_out),
                    f"resample_poly up={up}, down={down}: {taps_rs}-tap FIR, {per_out} MACs per output, "
                    f"{steps} outputs per channel"),
              Stage("unit", ops(mul=steps * channels_out), "x * scale per output value")]
    params["resampling FIR (float64)"] = 8 * taps_rs
    state["trial (float32)"] = 4 * steps * channels_out
    return EncoderCost("band_pass_resample", {"fs": fs, "band_hz": list(band_hz), "filter": filter,
                                               "order": order, "fs_out": fs_out, "window_s": list(window_s),
                                               "channels_in": channels_in, "channels_out": channels_out},
                        "input sample", cells, stages, params, state,
                        ["the recording between trials is filtered too: only the trial window's "
                         "share is counted", "filtfilt's edge padding not counted"])
