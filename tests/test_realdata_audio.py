"""Speech Commands-style clips (tflite-micro's micro_speech test inputs: 1 s, 16 kHz, mono,
16-bit PCM) converted to SHD-layout spikes by ``neuromark data cochlea`` (issue 42).

The cochlea takes about 20 s per clip on one core, so this test is ``slow``
(``pytest -m slow tests/test_realdata_audio.py``).
"""

from __future__ import annotations

import wave

import numpy as np
import pytest

from tests.realdata import real_file


def test_real_clips_are_16_khz_mono_pcm(tmp_path):
    for name in ("yes", "no"):
        with wave.open(str(real_file(f"speech_commands/{name}_1000ms.wav", tmp_path))) as clip:
            assert (clip.getframerate(), clip.getnchannels(), clip.getsampwidth(),
                    clip.getnframes()) == (16000, 1, 2, 16000)


@pytest.mark.slow
def test_cochlea_converts_the_real_clips(tmp_path):
    from neuromark.cli import main
    from neuromark.data.hdf5_spikes import read_shd_file

    for name in ("yes", "no"):
        (tmp_path / "in" / name).mkdir(parents=True)
        real_file(f"speech_commands/{name}_1000ms.wav", tmp_path / "in" / name)
    out = tmp_path / "spikes.h5"
    assert main(["data", "cochlea", str(tmp_path / "in"), str(out), "--jobs", "1"]) == 0
    samples = read_shd_file(out, channels=700)
    assert list(samples.keys) == ["no", "yes"] and samples.labels.tolist() == [0, 1]
    # measured (lauscher 1.0.1's constants, 48 kHz, seeds 0 and 1): see docs/real_files.md
    assert samples.counts().tolist() == [6597, 6384]
    assert 0.0 <= float(samples.times.min()) and float(samples.times.max()) < 1.0
    assert int(samples.units.min()) == 0 and int(samples.units.max()) == 699
    assert np.isfinite(samples.times).all()
