"""Front-end cost (issue 47.4) of the keyword features (:mod:`.features`: waveform, MFCC,
delta-modulated log-mel spikes), counted by the rules of :mod:`neuromark.processors.encoder_cost`
(kinds of operation, per audio sample and per clip).
"""

from __future__ import annotations

from typing import Any

from neuromark.processors.encoder_cost import EncoderCost, Stage, ops, resample_cost, stft_mel_stages


def keyword_features_cost(features: Any, samples: int | None = None) -> EncoderCost:
    """:class:`~neuromark.benchmarks.keywords.features.KeywordFeatures` on a clip of
    ``samples`` at its ``sample_rate`` (default: one second): the raw or resampled waveform
    (:func:`~neuromark.processors.encoder_cost.resample_cost`), or the STFT and mel
    filterbank (:func:`~neuromark.processors.encoder_cost.stft_mel_stages`) then MFCC or
    delta modulation."""
    samples = int(samples or features.sample_rate)
    kind = features.kind
    if kind == "waveform":
        if not features.target_rate or features.target_rate == features.sample_rate:
            cost = EncoderCost("waveform", {"sample_rate": features.sample_rate, "clip_samples": samples},
                                "audio sample", float(samples), [],
                                notes=["the raw waveform: no encoder"])
            return cost
        cost = resample_cost(features.sample_rate, features.target_rate, samples)
        return EncoderCost("waveform", {**cost.options, "kind": kind}, cost.per, cost.units_per_sample,
                            cost.stages, cost.parameters_bytes, cost.state_bytes,
                            ["the waveform resampled to the model's rate; nothing else"])
    if kind not in ("mfcc", "delta_mel"):
        raise ValueError(f"unknown keyword feature kind {kind!r} (waveform, mfcc, delta_mel)")
    n_fft, hop, n_mels = features.n_fft, features.hop_length, features.n_mels
    stages, params, state, frames = stft_mel_stages(samples, features.sample_rate, n_fft, hop, n_mels,
                                                    features.fmin, features.fmax, True, None)
    cells = frames * n_mels
    options = {"kind": kind, "sample_rate": features.sample_rate, "n_fft": n_fft, "hop_length": hop,
               "n_mels": n_mels, "fmin": features.fmin, "fmax": features.fmax, "clip_samples": samples,
               "frames": frames}
    notes: list[str] = []
    if kind == "mfcc":
        n_mfcc = features.n_mfcc
        stages += [
            Stage("dB", ops(cmp=cells, transcendental=cells, mul=cells),
                  "10 log10(max(mel, 1e-10)): 1 cmp + 1 log10 + 1 mul per mel value"),
            Stage("top_db floor", ops(cmp=2 * cells, add=1),
                  "peak over the clip (1 cmp per value), peak - top_db (1 add), max (1 cmp per value)"),
            Stage("DCT-II", ops(mac=frames * n_mfcc * n_mels),
                  f"dense ({n_mfcc}, {n_mels}) matrix per frame: n_mfcc * n_mels MACs"),
        ]
        params["DCT matrix (float32)"] = 4 * n_mfcc * n_mels
        options["n_mfcc"] = n_mfcc
        notes.append("top_db needs the clip's peak: the floor is applied after the whole clip")
    else:
        steps = frames - 1
        stages += [
            Stage("log", ops(add=cells, transcendental=cells), "ln(mel + 1e-6): 1 add + 1 log per value"),
            Stage("delta modulator", ops(add=2 * steps * n_mels, cmp=2 * steps * n_mels,
                                         mac=steps * n_mels),
                  f"per channel and step (T = frames - 1 = {steps}): diff = x - ref (1 add), "
                  "diff >= th and diff <= -th (2 cmp), event = up - down (1 add), "
                  "ref += th * event (1 MAC)"),
        ]
        state["delta references (float32)"] = 4 * n_mels
        options["threshold"] = features.threshold
    return EncoderCost(kind, options, "audio sample", float(samples), stages, params, state, notes)
