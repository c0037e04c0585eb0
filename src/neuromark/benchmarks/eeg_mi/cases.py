"""The small cases neuromark's central tests run for the eeg_mi family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The 62 channel names of the fixture: 60 placeholders, then the two motor channels.
CHANNELS = [f"E{i}" for i in range(60)] + ["C3", "C4"]


def mat_struct(rng: Any, trials: int = 8, fs: float = 200.0, drop: tuple[str, ...] = (),
               **change: Any) -> dict[str, Any]:
    """One ``EEG_MI_train``/``EEG_MI_test`` struct of the Lee2019 files: ``x`` (samples, 62)
    float32 µV of seeded noise (``rng``: a numpy Generator), 1 s lead-in, ``trials`` onsets
    7 s apart, labels 1/2 alternating; ``change`` replaces fields, ``drop`` removes them."""
    import numpy as np

    onsets = (fs * (1 + 7 * np.arange(trials))).astype(float)
    n = int(onsets[-1] + 6 * fs)
    chan = np.empty((1, 62), dtype=object)
    chan[0, :] = CHANNELS
    struct = {"x": (10 * rng.normal(size=(n, 62))).astype(np.float32), "fs": fs, "chan": chan,
              "t": onsets[None], "y_dec": (1 + np.arange(trials) % 2)[None].astype(float)}
    struct.update(change)
    return {k: v for k, v in struct.items() if k not in drop}


def write_mat(root: Path, subject: int = 1, session: int = 1, rng: Any = None, **kw: Any) -> Path:
    """``session{S}/s{N}/sess{SS}_subj{NN}_EEG_MI.mat`` (MATLAB v5, as scipy.io writes it)
    with a training struct (:func:`mat_struct` with ``kw``) and a test one; returns its path."""
    import numpy as np
    import scipy.io as sio

    from neuromark.benchmarks.eeg_mi import lee2019

    rng = rng or np.random.default_rng(subject * 10 + session)
    path = root / f"session{session}" / f"s{subject}" / lee2019.mat_name(session, subject)
    path.parent.mkdir(parents=True, exist_ok=True)
    sio.savemat(path, {"EEG_MI_train": mat_struct(rng, **kw), "EEG_MI_test": mat_struct(rng)})
    return path


def write_two_subjects(root: Path) -> None:
    """Subjects 1 and 2, session 1, 8 trials each (:func:`write_mat`)."""
    for subject in (1, 2):
        write_mat(root, subject, trials=8)


TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "eeg_mi": {"write": write_two_subjects, "options": {"sessions": [1]}, "shape": (250, 62),
               "num_classes": 2, "damage": "session1/s2/sess01_subj02_EEG_MI.mat",
               "synth": {"subjects": 2, "sessions": 1, "trials": 8, "fs": 125, "fixation_s": 1,
                         "rest_s": 1, "layout": "both", "seed": 0}},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
