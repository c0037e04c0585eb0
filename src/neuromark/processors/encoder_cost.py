"""Front-end cost: what an input encoder computes before the model sees the data (issue 47.4).

NeuroBench's complexity metrics (footprint, synaptic operations, activation sparsity)
count the model only. A model fed by a cochlea, an MFCC or a delta-modulation encoder
leans on work that a chip would also do, so the encoder's cost is reported as its own
block beside the model's figures (``details["front_end"]`` of the results), never added
to the headline figures.

What is counted, per encoder, from its configuration (sample rate, n_fft, hop, mel
bands, channels, thresholds, ...), by kind of operation (:data:`KINDS`):

- ``mac``: multiply-accumulate (``a + b * c``); ``mul``: a multiply alone; ``add``: an add
  or subtract; ``cmp``: a comparison, max, min or clip; ``div``: a division;
  ``transcendental``: exp, log, log10, sqrt; ``random``: one uniform random number.
- FFTs by the nominal count of FFTW's benchFFT (http://www.fftw.org/speed/method.html): a
  complex transform of size N costs ``5 N log2 N`` real flops, a transform of real data
  half of it, ``2.5 N log2 N``. We split it as radix-2 Cooley-Tukey does: ``N/2 log2 N``
  butterflies of one complex multiply (4 mul, 2 add) and two complex adds (4 add), i.e.
  ``2 N log2 N`` mul and ``3 N log2 N`` add for complex data, half each for real data
  (:func:`fft_ops`). For an N that is not a power of two it is the same nominal formula.
- A complex multiply is 4 mul + 2 add, counted as 2 ``mac`` + 2 ``mul``.
- A filter bank applied as a matrix costs one MAC per nonzero weight.
- Branches: the operations of the path the code takes in the worst case (every clip and
  threshold test counted; each listed with the stage).

Counts are per unit of input (``per``: an audio sample, or an event) and per benchmark
sample (a clip of the configured length, a detection window), with the footprint: bytes of
the encoder's constants (window, filter weights, DCT matrix, transfer matrix) and of its
state, at the dtype the code holds them in.

Energy: the counts priced with an energy profile of :mod:`~neuromark.metrics.functional.
energy_profiles` (default ``horowitz45-fp32``: the encoders compute in floating point):
``mac`` at ``mac_j``, ``mul`` at ``mac_j`` (an upper bound: the profile has no multiply
alone), ``add`` and ``cmp`` at ``ac_j`` (a comparison is a subtraction). Divisions,
transcendental calls and random numbers have no figure in any profile: their counts are
listed as ``unpriced`` and the energy is then a lower bound, said so in ``energy.scope``;
an encoder whose operations are all unpriced has energy ``"not estimated"``, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neuromark.errors import ConfigError

#: Kinds of operation, in the order they are reported.
KINDS = ("mac", "mul", "add", "cmp", "div", "transcendental", "random")
#: The kinds an energy profile prices, and the profile figure each is priced at.
PRICED = {"mac": "mac_j", "mul": "mac_j", "add": "ac_j", "cmp": "ac_j"}
#: The profile used when the caller names none.
DEFAULT_PROFILE = "horowitz45-fp32"

FFT_RULE = ("FFTW benchFFT nominal count (http://www.fftw.org/speed/method.html): complex "
            "5 N log2 N flops = 2 N log2 N mul + 3 N log2 N add; real data half of it")


def ops(**counts: float) -> dict[str, float]:
    """A count by kind, every kind of :data:`KINDS` present (0 where not given)."""
    unknown = set(counts) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown operation kind(s) {sorted(unknown)}: one of {', '.join(KINDS)}")
    return {k: float(counts.get(k, 0.0)) for k in KINDS}


def add_ops(*parts: Mapping[str, float], scale: float = 1.0) -> dict[str, float]:
    """Sum of counts, times ``scale``."""
    return {k: scale * sum(float(p.get(k, 0.0)) for p in parts) for k in KINDS}


def fft_ops(n: int, *, real: bool) -> dict[str, float]:
    """One FFT of size ``n``: ``2 n log2 n`` mul + ``3 n log2 n`` add for complex data, half
    of each for real data (see the module notes; 0 for ``n`` <= 1)."""
    if n < 1:
        raise ValueError(f"FFT size must be >= 1, got {n}")
    lg = n * math.log2(n) if n > 1 else 0.0
    half = 0.5 if real else 1.0
    return ops(mul=2.0 * lg * half, add=3.0 * lg * half)


@dataclass(frozen=True)
class Stage:
    """One stage of an encoder: ``ops`` per benchmark sample, and how they were counted."""

    name: str
    ops: dict[str, float]
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ops": {k: v for k, v in self.ops.items() if v}, "rule": self.rule}


@dataclass(frozen=True)
class EncoderCost:
    """An encoder's cost (see the module notes).

    Attributes:
        encoder: the encoder's name (e.g. ``"mfcc"``, ``"cochlea"``).
        options: the configuration the counts were derived from.
        per: the unit of input (``"audio sample"``, ``"event"``).
        units_per_sample: how many ``per`` units one benchmark sample holds (samples of a
            clip; for events the mean measured over the data, or None when not measured).
        stages: the stages, each with its ops per benchmark sample (for event encoders:
            per event, and the per-window ones apart, see ``fixed``).
        parameters_bytes: constants (windows, filter weights, ...) by name, bytes.
        state_bytes: state and working buffers by name, bytes.
        notes: what is not counted, or how.
    """

    encoder: str
    options: dict[str, Any]
    per: str
    units_per_sample: float | None
    stages: list[Stage]
    parameters_bytes: dict[str, int] = field(default_factory=dict)
    state_bytes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    per_unit_stages: list[Stage] = field(default_factory=list)

    @property
    def ops_per_sample(self) -> dict[str, float] | None:
        """Operations per benchmark sample, by kind (None: event encoder, events not measured)."""
        if self.per_unit_stages:
            if self.units_per_sample is None:
                return None
            return add_ops(add_ops(*(s.ops for s in self.stages)),
                           add_ops(*(s.ops for s in self.per_unit_stages), scale=self.units_per_sample))
        return add_ops(*(s.ops for s in self.stages))

    @property
    def ops_per_unit(self) -> dict[str, float] | None:
        """Operations per ``per`` unit: per audio sample (the sample's total over its
        samples), or per event (the per-event stages only)."""
        if self.per_unit_stages:
            return add_ops(*(s.ops for s in self.per_unit_stages))
        total = self.ops_per_sample
        if total is None or not self.units_per_sample:
            return None
        return add_ops(total, scale=1.0 / self.units_per_sample)

    @property
    def footprint_bytes(self) -> int:
        return sum(self.parameters_bytes.values()) + sum(self.state_bytes.values())

    def energy(self, profile: Any = DEFAULT_PROFILE) -> dict[str, Any]:
        """Energy per benchmark sample from the counts (see the module notes)."""
        counts = self.ops_per_sample
        if counts is None:
            return {"value": "not estimated", "why": "events per sample not measured"}
        return price(counts, profile)

    def to_json(self, profile: Any = DEFAULT_PROFILE) -> dict[str, Any]:
        """The block written to ``details["front_end"]``."""
        per_sample = self.ops_per_sample
        per_unit = self.ops_per_unit
        out: dict[str, Any] = {
            "encoder": self.encoder, "options": dict(self.options), "per": self.per,
            "units_per_sample": self.units_per_sample,
            "ops_per_sample": None if per_sample is None else {k: per_sample[k] for k in KINDS},
            "ops_per_sample_total": None if per_sample is None else sum(per_sample.values()),
            f"ops_per_{self.per.replace(' ', '_')}": None if per_unit is None
            else {k: per_unit[k] for k in KINDS},
            "stages": [s.to_json() for s in self.stages],
            "footprint": {"parameters_bytes": dict(self.parameters_bytes),
                          "state_bytes": dict(self.state_bytes), "total_bytes": self.footprint_bytes},
            "energy": self.energy(profile),
            "counting": FFT_RULE,
            "notes": list(self.notes),
        }
        if self.per_unit_stages:
            out["stages_per_unit"] = [s.to_json() for s in self.per_unit_stages]
        return out


def price(counts: Mapping[str, float], profile: Any = DEFAULT_PROFILE) -> dict[str, Any]:
    """Energy of ``counts`` (ops by kind) with an energy profile (a registered name, a YAML
    file or an :class:`~neuromark.metrics.functional.energy_profiles.EnergyProfile`):
    ``mac`` and ``mul`` at ``mac_j``, ``add`` and ``cmp`` at ``ac_j``; the other kinds
    are listed unpriced (a lower bound); "not estimated" when nothing is priced."""
    from neuromark.metrics.functional.energy_profiles import get_profile

    p = get_profile(profile)
    priced = {k: float(counts[k]) for k in PRICED if counts.get(k)}
    unpriced = {k: float(counts[k]) for k in KINDS if k not in PRICED and counts.get(k)}
    if not priced and not unpriced:
        return {"value": "not estimated", "profile": p.label(), "why": "no operations counted"}
    if not priced:
        return {"value": "not estimated", "profile": p.label(),
                "why": f"the profile prices none of its operations ({', '.join(unpriced)})"}
    joules = sum(n * getattr(p, PRICED[k]) for k, n in priced.items())
    scope = ("mac at mac_j, mul at mac_j (upper bound), add and cmp at ac_j; arithmetic "
             "only, no memory access")
    if unpriced:
        scope += "; a lower bound: " + ", ".join(f"{n:.4g} {k}" for k, n in unpriced.items()) + \
            " not priced (no figure in the profile)"
    return {"value": joules, "unit": "J/sample (estimate)", "profile": p.label(), "scope": scope}


def _nonzero(matrix: Any) -> int:
    import numpy as np

    return int(np.count_nonzero(matrix))


# ---------------------------------------------------------------------------------------
# Spectral front ends: STFT -> power -> mel (-> log / MFCC / delta modulation)


def stft_mel_stages(samples: int, sample_rate: int, n_fft: int, hop: int, n_mels: int, fmin: float,
                    fmax: float | None, htk: bool, norm: str | None
                    ) -> tuple[list[Stage], dict[str, int], dict[str, int], int]:
    """Stages of ``torch.stft`` (periodic Hann, centred, real input, onesided) -> power ->
    mel filterbank (:func:`neuromark.processors.mel.mel_filterbank`), for a clip of
    ``samples``; (stages, parameters bytes, state bytes, frames). The mel front ends' common
    part (:func:`mel_energies_cost`, a family's MFCC or delta-modulation features)."""
    from neuromark.processors.mel import mel_filterbank

    if min(samples, n_fft, hop, n_mels) <= 0:
        raise ValueError(f"front-end cost: samples, n_fft, hop_length, n_mels must be positive, got "
                         f"{samples}, {n_fft}, {hop}, {n_mels}")
    frames = 1 + samples // hop
    bins = n_fft // 2 + 1
    fb = mel_filterbank(sample_rate, n_fft, n_mels, fmin, fmax, htk=htk, norm=norm)
    weights = _nonzero(fb)
    stages = [
        Stage("window", ops(mul=frames * n_fft), "n_fft multiplies per frame (Hann window)"),
        Stage("fft", add_ops(fft_ops(n_fft, real=True), scale=frames),
              f"one real FFT of n_fft={n_fft} per frame, frames = 1 + samples // hop = {frames}"),
        Stage("power", ops(mul=frames * bins, mac=frames * bins), "re^2 + im^2 per bin: 1 mul + 1 MAC, "
              f"{bins} bins per frame"),
        Stage("mel filterbank", ops(mac=frames * weights),
              f"one MAC per nonzero filter weight: {weights} of {fb.size} per frame"),
    ]
    params = {"window (float32)": 4 * n_fft, "mel filterbank nonzero weights (float32)": 4 * weights}
    state = {"frame buffer (float32)": 4 * n_fft, "spectrum (complex64)": 8 * bins,
             "mel frame (float32)": 4 * n_mels}
    return stages, params, state, frames


def mel_energies_cost(mfe: Any, samples: int | None = None) -> EncoderCost:
    """:class:`~neuromark.processors.mel.MelFilterbankEnergies` (Slaney mels, area-normalised)
    on a clip of ``samples`` (default: one second)."""
    samples = int(samples or mfe.sample_rate)
    stages, params, state, frames = stft_mel_stages(samples, mfe.sample_rate, mfe.n_fft, mfe.hop_length,
                                                    mfe.n_mels, mfe.fmin, mfe.fmax, False, "slaney")
    if mfe.log:
        stages.append(Stage("log", ops(add=frames * mfe.n_mels, transcendental=frames * mfe.n_mels),
                            "ln(energy + eps) per mel value: 1 add + 1 log"))
    options = {"sample_rate": mfe.sample_rate, "n_fft": mfe.n_fft, "hop_length": mfe.hop_length,
               "n_mels": mfe.n_mels, "fmin": mfe.fmin, "fmax": mfe.fmax, "log": mfe.log,
               "clip_samples": samples, "frames": frames}
    return EncoderCost("mel_filterbank_energies", options, "audio sample", float(samples), stages,
                        params, state)


def resample_cost(rate: int, new_rate: int, samples: int) -> EncoderCost:
    """Polyphase resampling (``scipy.signal.resample_poly``, default Kaiser window) of a clip
    of ``samples`` at ``rate`` to ``new_rate``: scipy designs an FIR of
    ``2 * 10 * max(up, down) + 1`` taps; the polyphase filter spends ``ceil(taps / up)`` MACs
    on each output sample."""
    from fractions import Fraction

    ratio = Fraction(new_rate, rate)
    up, down = ratio.numerator, ratio.denominator
    taps = 2 * 10 * max(up, down) + 1
    out = -(-samples * up // down)
    per_out = -(-taps // up)
    stages = [Stage("polyphase FIR", ops(mac=out * per_out),
                    f"up={up}, down={down}: {taps}-tap FIR (scipy's half length 10 max(up, down)), "
                    f"ceil(taps / up) = {per_out} MACs per output sample, {out} outputs")]
    return EncoderCost("resample_poly", {"rate": rate, "new_rate": new_rate, "up": up, "down": down,
                                          "taps": taps, "clip_samples": samples},
                        "audio sample", float(samples), stages, {"FIR taps (float64)": 8 * taps},
                        {"delay line (float64)": 8 * per_out})


# ---------------------------------------------------------------------------------------
# Event encoders


def mean_block(blocks: list[dict[str, Any]], weights: list[float] | None = None, *,
               keep_parts: bool = True) -> dict[str, Any]:
    """One block for a benchmark scored as the mean over parts (sessions): the first
    block's description, ops per sample and energy as the (weighted) mean, each part kept
    under ``per_part`` (unless ``keep_parts`` is False: the parts are recorded elsewhere)."""
    if not blocks:
        raise ValueError("mean_block: no blocks")
    w = [1.0] * len(blocks) if weights is None else [float(x) for x in weights]
    total = sum(w)
    out = dict(blocks[0])
    counts = [b.get("ops_per_sample") for b in blocks]
    if all(c is not None for c in counts):
        mean = {k: sum(wi * c[k] for wi, c in zip(w, counts)) / total for k in KINDS}  # type: ignore[index]
        out["ops_per_sample"], out["ops_per_sample_total"] = mean, sum(mean.values())
    else:
        out["ops_per_sample"] = out["ops_per_sample_total"] = None
    energies = [b["energy"].get("value") for b in blocks]
    if all(isinstance(e, (int, float)) for e in energies):
        out["energy"] = {**blocks[0]["energy"],
                         "value": sum(wi * e for wi, e in zip(w, energies)) / total}
    out["footprint"] = max((b["footprint"] for b in blocks), key=lambda f: f["total_bytes"])
    if keep_parts:
        out["per_part"] = blocks
    out["options"] = {k: v for k, v in out.get("options", {}).items() if all(
        b.get("options", {}).get(k) == v for b in blocks)}  # those the parts share
    out["units_per_sample"] = (sum(wi * b["units_per_sample"] for wi, b in zip(w, blocks)) / total
                               if all(b.get("units_per_sample") is not None for b in blocks) else None)
    out["combined"] = "mean over parts, weighted by their samples (footprint: the largest)"
    return out


def spike_count_frames_cost(channels: int, dt_us: int, t_max_us: int, groups: int, clip: int,
                            events_per_sample: float | None) -> EncoderCost:
    """The chips' integer inputs (:func:`~neuromark.system.chips.features.spike_counts`): per
    spike its time in µs (1 mul), the window test (1 cmp), the step (1 div), the group
    ``unit * G // channels`` (1 mul, 1 div), the flat index (2 MAC) and +1; per sample the
    clip of every (step, group) cell (1 cmp)."""
    steps = t_max_us // dt_us
    per_spike = [Stage("bin and group", ops(mul=2, cmp=1, div=2, mac=2, add=1),
                       "t * 1e6 (1 mul), t < window (1 cmp), t // dt (1 div), unit * G // C (1 mul, 1 div), "
                       "flat index (2 MAC), +1")]
    fixed = [Stage("clip", ops(cmp=steps * groups), f"min(count, {clip}) on {steps} x {groups} cells")]
    return EncoderCost("spike_counts", {"channels": channels, "dt_us": dt_us, "t_max_us": t_max_us,
                                         "groups": groups, "clip": clip, "steps": steps},
                        "event", events_per_sample, fixed, {}, {"counts (int16)": 2 * steps * groups},
                        [] if events_per_sample is not None else ["events per sample not measured"],
                        per_spike)


# ---------------------------------------------------------------------------------------
# The cochlea (Cramer et al. 2020): audio -> 700 channels of spikes


def cochlea_cost(cochlea: Any, samples: int, sample_rate: int) -> EncoderCost:
    """:class:`~neuromark.processors.cochlea.model.Cochlea` on a clip of ``samples`` at
    ``sample_rate`` (after its own resampling, which is not counted when the clip is at the
    cochlea's rate): conditioning, basilar membrane (FFT, transfer multiply, inverse real
    FFT per channel, as :func:`~neuromark.processors.cochlea.basilar_membrane.
    membrane_velocity` computes them), Meddis hair cell and bushy cells per channel and
    model sample. The transfer matrix is a constant of the clip length (computed once)."""
    p = cochlea.params
    c = p.basilar_membrane.channels
    n = int(samples)
    if n < 4:
        raise ValueError(f"cochlea cost: a clip of at least 4 samples, got {n}")
    bins = n // 2 + 1  # model samples per channel, at sample_rate // 2
    half = bins // 2 + 1
    steps = c * bins
    refrac = p.bushy_cell.tau_refrac * (sample_rate // 2)
    dead = max(0, math.ceil(refrac) - 1)
    stages = [
        Stage("conditioning", ops(mac=n, mul=2 * n, div=1, transcendental=1),
              "RMS: sum of squares (1 MAC per sample), 1 div + 1 sqrt; scale to rms_level "
              "(1 mul per sample); Hann ramps (1 mul per sample)"),
        Stage("spectrum", fft_ops(n, real=True), f"FFT of the clip, n = {n} (real data)"),
        Stage("transfer", ops(mac=2 * c * bins, mul=2 * c * bins),
              f"V(w, x) * FFT(audio): {c} channels x {bins} bins complex multiplies "
              "(2 MAC + 2 mul each; zeros above the cut-off multiplied too, as the code does)"),
        Stage("hermitian", ops(add=2 * c * half, mul=2 * c * half),
              f"0.5 (Y + conj Y(-k)) on {half} bins per channel: 2 add + 2 mul"),
        Stage("inverse FFT", add_ops(fft_ops(bins, real=True), scale=c),
              f"one inverse real FFT of {bins} per channel"),
        # _meddis per channel and model sample (worst-case branches):
        # s = v + A (1 add); k = g dt s / (s + B) if s > 0 (1 cmp, 1 add, 1 mul, 1 div);
        # replenish = y M dt - y dt q if q < M (1 cmp, 1 MAC); eject = k q (1 mul);
        # reprocess = x dt w (1 mul); q' = q + replenish - eject + reprocess (3 add);
        # c' = c + eject - (l + r) dt c (1 add, 1 MAC); w' = w + r dt c - reprocess (1 MAC, 1 add);
        # three clips at 0 (3 cmp); out = c h dt (1 mul)
        Stage("hair cell", ops(mac=3 * steps, mul=4 * steps, add=7 * steps, div=steps, cmp=5 * steps),
              "Meddis transmitter pools per channel and model sample: 3 MAC, 4 mul, 7 add, 1 div, "
              "5 cmp (worst-case branches)"),
        # _bushy per channel and model sample, the path with no fibre spike drawn:
        # ring buffer: busy -= fired (1 add); 1 uniform; binomial test u <= 1 - n p (1 mul,
        # 1 add, 1 cmp; n - busy: 1 add); counter and v_prev tests (2 cmp); v = v_prev decay
        # (1 mul); i_syn decay (1 mul); i_syn += k (1 add); v += i_syn gain (1 MAC); v > 1
        # (1 cmp); counter -= 1 (1 add)
        Stage("bushy cells", ops(random=steps, add=5 * steps, mul=3 * steps, mac=steps, cmp=4 * steps),
              f"{p.bushy_cell.n_convergence} fibres drawn as one Binomial per channel and model "
              "sample (1 uniform), refractory ring buffer, LIF: 1 MAC, 3 mul, 5 add, 4 cmp"),
    ]
    params = {"transfer matrix (complex128)": 16 * c * bins, "Hann ramps (float64)": 8 * n,
              "hair-cell constants (float64)": 8 * 10}
    state = {"clip buffer (float64)": 8 * n, "velocity (float64)": 8 * c * bins,
             "hair-cell pools (float64)": 8 * 3 * c,
             "bushy state: ring buffer (int64) + 4 float64": c * (8 * (dead + 1) + 8 * 4)}
    notes = ["offline in the data set's making: the model sees the cochlea's spikes",
             "the transfer matrix's evaluation (Hankel functions, once per clip length) is a "
             "constant, not counted per sample",
             "bushy cells: the binomial's inverse-CDF loop runs only when a fibre spike is drawn "
             "(1 exp, 1 log1p, ~5 ops per fibre); not counted (data-dependent): a lower bound"]
    if cochlea.sample_rate is not None and cochlea.sample_rate != sample_rate:
        notes.append("resampling to the cochlea's rate not counted")
    options = {"channels": c, "sample_rate": sample_rate, "clip_samples": n, "model_rate": sample_rate // 2,
               "rms_level": p.rms_level, "ramp_s": p.ramp_s,
               "n_convergence": p.bushy_cell.n_convergence}
    return EncoderCost("cochlea", options, "audio sample", float(n), stages, params, state, notes)


# ---------------------------------------------------------------------------------------
# Combining and attaching


def chain(name: str, parts: list[EncoderCost]) -> dict[str, Any]:
    """One block for encoders applied one after the other (e.g. cochlea, then binning):
    each part's block, and their per-sample sum where every part has one."""
    return combine(name, [p.to_json() for p in parts])


def combine(name: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`chain` over ready blocks (``to_json()`` or earlier ``combine`` results)."""
    totals = [b.get("ops_per_sample") for b in blocks]
    total = None if any(t is None for t in totals) else add_ops(*totals)  # type: ignore[arg-type]
    energies = [b["energy"] for b in blocks]
    joules = [e.get("value") for e in energies]
    return {"encoder": name, "parts": blocks,
            "ops_per_sample": total,
            "ops_per_sample_total": None if total is None else sum(total.values()),
            "footprint": {"total_bytes": sum(b["footprint"]["total_bytes"] for b in blocks)},
            "energy": ({"value": sum(joules), "unit": "J/sample (estimate)",
                        "profile": energies[0].get("profile"), "scope": "sum of the parts' estimates "
                        "(each part's scope applies)" + ("; a lower bound" if any(
                            "lower bound" in str(e.get("scope", "")) for e in energies) else "")}
                       if all(isinstance(j, (int, float)) for j in joules)
                       else {"value": "not estimated", "why": "a part is not estimated"})}


def front_end_block(source: Any) -> dict[str, Any] | None:
    """The ``details["front_end"]`` block of ``source`` (a data set, SUT or stream): its
    ``front_end_cost()`` (a :class:`EncoderCost`, a ready block, or None), else None."""
    method = getattr(source, "front_end_cost", None)
    if not callable(method):
        return None
    cost = method()
    if cost is None:
        return None
    return cost.to_json() if isinstance(cost, EncoderCost) else dict(cost)


def attach_front_end(results: Any, source: Any) -> None:
    """Record ``source``'s front-end cost under ``results.details["front_end"]`` (nothing
    when it has no encoder). The headline scores are not touched. When the model's energy
    is estimated (``energy_estimate``), the front end is priced with the same profiles too
    (``energy_by_profile``), so the two estimates sit side by side."""
    block = front_end_block(source)
    if block is None:
        return
    estimate = getattr(results, "scores", {}).get("energy_estimate")
    if estimate is not None and isinstance(estimate.value, dict):
        block["energy_by_profile"] = profile_energies(block, list(estimate.value))
    results.details["front_end"] = block


def profile_energies(block: Mapping[str, Any], profiles: list[str]) -> dict[str, Any]:
    """The block's ops per sample priced with each of ``profiles`` (registered names; a
    profile that is not registered, a user's YAML one, is said so)."""
    counts = block.get("ops_per_sample")
    out: dict[str, Any] = {}
    for name in profiles:
        if counts is None:
            out[name] = {"value": "not estimated", "why": "ops per sample not measured"}
            continue
        try:
            out[name] = price(counts, name)
        except ConfigError:
            out[name] = {"value": "not estimated", "why": f"profile {name!r} is not registered"}
    return out


def summary_line(block: Mapping[str, Any]) -> str:
    """One line for reports: encoder, ops per sample by kind, footprint, energy."""
    counts = block.get("ops_per_sample")
    if counts:
        ops_text = ", ".join(f"{_num(v)} {k}" for k, v in counts.items() if v) or "0 ops"
    else:
        ops_text = "ops per sample not measured"
    energy = block.get("energy") or {}
    value = energy.get("value")
    if isinstance(value, (int, float)):
        e_text = f"~{value:.3g} J/sample ({energy.get('profile')}"
        e_text += ", lower bound)" if "lower bound" in str(energy.get("scope", "")) else ")"
    else:
        e_text = f"energy not estimated ({energy.get('why', '')})"
    footprint = (block.get("footprint") or {}).get("total_bytes")
    return (f"front end {block.get('encoder')}: {ops_text} per sample; footprint "
            f"{_num(footprint) if footprint is not None else '?'} B; {e_text}; not in the model's figures")


def markdown_table(block: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the front end's ops per sample by kind, footprint and energy."""
    parts = block.get("parts") or [block]
    lines = ["Front end (the input encoder; not in the model's figures above):", "",
             "| encoder | ops per sample by kind | footprint | energy |", "|---|---|---|---|"]
    for part in parts:
        counts = part.get("ops_per_sample")
        text = ", ".join(f"{k} {v:,.0f}" for k, v in counts.items() if v) if counts else "not measured"
        energy = part.get("energy") or {}
        value = energy.get("value")
        e_text = (f"{value:.3g} J/sample ({energy.get('profile')})" if isinstance(value, (int, float))
                  else f"not estimated: {energy.get('why', '')}")
        if "lower bound" in str(energy.get("scope", "")):
            e_text += ", lower bound"
        total = (part.get("footprint") or {}).get("total_bytes")
        size = f"{total:,} B" if isinstance(total, int) else "?"
        lines.append(f"| {part.get('encoder')} | {text or '0'} | {size} | {e_text} |")
    return lines + ["", summary_line(block), ""]


def _num(v: float) -> str:
    v = float(v)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.4g}"
