"""NeuroBench's two Speech Commands baselines (its trained checkpoints) through our GSC pipeline.

- ``m5``: the M5 ANN on the waveform resampled from 16 to 8 kHz (:class:`KeywordFeatures`
  ``waveform``, our polyphase resampler), class = argmax of its 35 log-probabilities.
- ``s2s_snn``: the Speech2Spikes snnTorch SNN on delta-modulated log-mel spikes
  (:class:`KeywordFeatures` ``delta_mel`` with ``delta_rule="speech2spikes"``: 20 HTK mels
  over 20-4000 Hz, 512-point FFT, hop 80 samples = 5 ms, so 200 steps a second), one step
  per call from a reset network; class = the output neuron with most spikes (the first
  such on a tie, as ``argmax`` does).

The clips are decoded by :func:`neuromark.data.clips.decode_clip` (16 kHz mono, int16 /
32768), one second each; a longer recording is cut into whole seconds
(:func:`one_second_clips`), as the keyword-a-second streams of Arm's samples are laid out.
The architectures are :mod:`neuromark.networks.neurobench_v1`'s; the checkpoints ship in
``configs/neurobench_v1/checkpoints/gsc/model_data``. Class indices follow :data:`LABELS`
(the 35 words sorted, as NeuroBench's ``SpeechCommands`` numbers them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuromark.benchmarks.keywords.features import KeywordFeatures
from neuromark.benchmarks.keywords.speech_commands import LABELS, SAMPLE_RATE
from neuromark.data.clips import decode_clip
from neuromark.errors import DataError, require

#: The input features each baseline was trained on (NeuroBench's examples/gsc).
FEATURES = {
    "m5": KeywordFeatures("waveform", SAMPLE_RATE, target_rate=8_000),
    "s2s_snn": KeywordFeatures("delta_mel", SAMPLE_RATE, hop_length=80, delta_rule="speech2spikes"),
}


def one_second_clips(path: str | Path) -> np.ndarray:
    """The recording at ``path`` cut into whole seconds: (seconds, 16000) float32 (a clip
    shorter than a second is zero-padded to one)."""
    sf = require("soundfile", "audio")
    try:
        frames = int(sf.info(str(path)).frames)
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types
        raise DataError(f"{path}: cannot read the audio header: {exc}") from None
    seconds = max(1, frames // SAMPLE_RATE)
    audio = decode_clip(Path(path), SAMPLE_RATE, seconds * SAMPLE_RATE, "truncate")
    return audio.reshape(seconds, SAMPLE_RATE)


def predict(architecture: str, checkpoint: str | Path, clips: np.ndarray) -> np.ndarray:
    """Class indices (N,) of ``clips`` (N, 16000) float32 at 16 kHz by NeuroBench's
    ``architecture`` (``m5`` or ``s2s_snn``) loaded from ``checkpoint``."""
    import torch

    from neuromark.networks.neurobench_v1 import load_baseline

    if architecture not in FEATURES:
        raise DataError(f"NeuroBench GSC baseline {architecture!r}: one of {', '.join(FEATURES)}")
    clips = np.asarray(clips, dtype=np.float32)
    if clips.ndim != 2 or clips.shape[1] != SAMPLE_RATE:
        raise DataError(f"clips must be (N, {SAMPLE_RATE}) at {SAMPLE_RATE} Hz, got {clips.shape}")
    net = load_baseline(architecture, checkpoint)
    features = FEATURES[architecture](clips)
    with torch.inference_mode():
        if architecture == "m5":
            return net(features).argmax(dim=-1).reshape(-1).numpy()
        return spike_counts(net, features).argmax(dim=-1).numpy()


def spike_counts(net: object, spikes: object) -> object:
    """Output spikes of a step-wise snnTorch network summed over time: (B, T, F) -> (B, classes)."""
    import torch
    from snntorch import utils

    utils.reset(net)
    total = None
    for t in range(spikes.shape[1]):
        out, _ = net(spikes[:, t])
        total = out if total is None else total + out
    return total if total is not None else torch.zeros(spikes.shape[0], 0)


def words(indices: np.ndarray) -> list[str]:
    """The Speech Commands words of class ``indices``."""
    return [LABELS[int(i)] for i in indices]


#: The real clips shipped with the tests (relative to ``tests/fixtures/realdata/speech_commands``)
#: and the words spoken in each second, as their sources name them.
TEST_CLIPS = {"yes_1000ms.wav": ["yes"], "no_1000ms.wav": ["no"], "armkit/down.wav": ["down"],
              "armkit/yes.wav": ["yes"], "armkit/right_left_up.wav": ["right", "left", "up"],
              "armkit/yes_no_go_stop.wav": ["yes", "no", "go", "stop"]}


def report(root: str | Path | None = None) -> str:
    """A Markdown table of both baselines' predictions on :data:`TEST_CLIPS` under ``root``
    (default: this checkout's ``tests/fixtures/realdata/speech_commands``); printed and returned."""
    here = Path(__file__).resolve().parents[4]
    clips_dir = Path(root) if root else here / "tests" / "fixtures" / "realdata" / "speech_commands"
    checkpoints = here / "configs" / "neurobench_v1" / "checkpoints" / "gsc" / "model_data"
    names, spoken, audio = [], [], []
    for name, said in TEST_CLIPS.items():
        seconds = one_second_clips(clips_dir / name)
        for i, word in enumerate(said):
            names.append(f"{name} [{i} s]" if len(said) > 1 else name)
            spoken.append(word)
            audio.append(seconds[i])
    clips = np.stack(audio)
    m5 = words(predict("m5", checkpoints / "m5_ann", clips))
    s2s = words(predict("s2s_snn", checkpoints / "s2s_gsc_snntorch", clips))
    lines = ["| clip | spoken | M5 ANN | S2S SNN |", "|---|---|---|---|"]
    lines += [f"| {n} | {w} | {a} | {b} |" for n, w, a, b in zip(names, spoken, m5, s2s, strict=True)]
    lines.append(f"| correct | | {sum(a == w for a, w in zip(m5, spoken, strict=True))} / {len(spoken)} "
                 f"| {sum(b == w for b, w in zip(s2s, spoken, strict=True))} / {len(spoken)} |")
    text = "\n".join(lines)
    print(text)
    return text
