"""Speech synthesised with espeak-ng, for the offline spoken-word corpora (the spoken
digits, the keyword corpora): one utterance per call, then its silence trimmed.

- :func:`espeak_binary`, :func:`espeak_version`: the ``espeak-ng`` program (Debian/Ubuntu:
  ``sudo apt-get install -y espeak-ng``), its absence a :class:`MissingExtraError` saying so.
- :func:`speak`: ``text`` spoken by an espeak-ng voice (``language+variant``) at a pitch
  (0-99) and speed (words per minute): float64 mono samples at espeak-ng's rate (22050 Hz).
- :func:`trim_silence`: the utterance without its leading and trailing silence.

The same espeak-ng and libsndfile versions give the same samples.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from neuromark.errors import DataError, MissingExtraError, require

#: Leading and trailing samples below this fraction of the peak amplitude are silence.
SILENCE_FRACTION = 0.01
#: Audio kept around the trimmed utterance, in seconds.
MARGIN_S = 0.01


def espeak_binary(needed_by: str = "synthesised speech", otherwise: str | None = None) -> str:
    """Path of ``espeak-ng``; raises :class:`MissingExtraError` saying how to install it.

    Args:
        needed_by: what needs it, for the message (e.g. "the spoken-digit corpus").
        otherwise: an alternative to installing it, appended to the message (e.g. "use the
            shipped files").
    """
    path = shutil.which("espeak-ng")
    if path is None:
        alternative = f", or {otherwise}" if otherwise else ""
        raise MissingExtraError(
            f"espeak-ng is not installed; {needed_by} needs it. Install it with: "
            f"sudo apt-get install -y espeak-ng (Debian/Ubuntu){alternative}"
        )
    return path


def espeak_version() -> str:
    """``espeak-ng --version``, as printed (recorded beside a corpus: it sets the samples)."""
    out = subprocess.run([espeak_binary(), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def speak(text: str, voice: str, *, pitch: int, speed: int) -> tuple[np.ndarray, int]:
    """Speak ``text`` with espeak-ng: (float64 mono samples (n,), rate in Hz, 22050 for espeak-ng).

    Args:
        text: what is said.
        voice: the espeak-ng voice, ``language+variant`` (e.g. ``en+m1``).
        pitch: 0-99 (espeak-ng's ``-p``).
        speed: words per minute (espeak-ng's ``-s``).
    Raises :class:`DataError` when espeak-ng fails or writes no audio.
    """
    soundfile = require("soundfile", "audio")
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "utterance.wav"
        cmd = [espeak_binary(), "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(wav), text]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 or not wav.is_file():
            raise DataError(f"espeak-ng failed for voice {voice!r} (pitch {pitch}, speed {speed}), "
                            f"text {text!r}: {result.stderr.strip()}")
        audio, rate = soundfile.read(str(wav), dtype="float64")
    if audio.ndim != 1 or audio.size == 0 or not np.any(audio):
        raise DataError(f"espeak-ng produced no audio for voice {voice!r} (pitch {pitch}, speed {speed}), "
                        f"text {text!r}")
    return audio, int(rate)


def trim_silence(audio: np.ndarray, rate: int) -> np.ndarray:
    """``audio`` (n,) without its leading and trailing samples below 1% of the peak
    (:data:`SILENCE_FRACTION`), keeping a 10-ms margin (:data:`MARGIN_S`) of ``rate`` Hz."""
    loud = np.flatnonzero(np.abs(audio) > SILENCE_FRACTION * np.max(np.abs(audio)))
    margin = int(MARGIN_S * rate)
    return audio[max(loud[0] - margin, 0) : loud[-1] + 1 + margin]
