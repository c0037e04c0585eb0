"""The speaker analysis as a workload metric: accuracy per speaker, and held-out vs seen
speakers (:mod:`neuromark.metrics.functional.speakers`).

The speaker ids come from the test file (``extra/speaker``), in file order, so the loader
must yield the whole split in that order (no shuffle, no ``drop_last``); :meth:`compute`
checks that the number of samples seen matches.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.functional.correctness import per_sample_correct
from neuromark.metrics.functional.speakers import binomial_error, speaker_accuracy
from neuromark.results import Score


class SpeakerAccuracy(WorkloadMetric):
    """Scores ``accuracy_per_speaker`` (speaker id -> accuracy, SE over that speaker's
    samples), ``speaker_accuracy_spread`` (mean, std, min, max over speakers) and, when the
    training speakers are known, ``held_out_speaker_accuracy`` / ``seen_speaker_accuracy``
    (pooled over their samples, SE over samples) for each group present in the test split.

    Args:
        speakers: (N,) speaker id of each test sample, in loader order.
        seen: speaker ids of the training file, or None when there is none.
    """

    name = "speaker_accuracy"
    higher_is_better = True
    uses_predictions = True

    correct: list[np.ndarray]

    def __init__(self, speakers: Any, seen: Iterable[int] | None = None) -> None:
        self.speakers = np.asarray(speakers).reshape(-1)
        self.seen = None if seen is None else sorted({int(s) for s in seen})
        super().__init__()
        self.add_state("correct", [], merge="cat")  # per batch: (B,) 0/1 hits, in loader order

    def update(self, step: Step) -> None:
        hits = per_sample_correct(torch.as_tensor(step.predictions), torch.as_tensor(step.targets))
        self.correct.append(hits.detach().cpu().numpy().astype(np.int64).reshape(-1))

    def compute(self) -> dict[str, Score]:
        correct = np.concatenate(self.correct) if self.correct else np.zeros(0, np.int64)
        if correct.size != self.speakers.size:
            raise ValueError(f"saw {correct.size} samples but the test file has "
                             f"{self.speakers.size} speaker ids; the speaker analysis needs the "
                             "whole split in file order (no shuffle, no drop_last)")
        result = speaker_accuracy(correct, self.speakers, self.seen)
        per = {str(k): c / n for k, (c, n) in result.per_speaker.items()}
        errors = {str(k): binomial_error(c, n) for k, (c, n) in result.per_speaker.items()}
        scores = {
            "accuracy_per_speaker": Score(per, errors, higher_is_better=True),
            "speaker_accuracy_spread": Score(result.spread(), higher_is_better=None),
        }
        for key, group in (("held_out", result.held_out), ("seen", result.seen)):
            if group is not None and group[1] > 0:
                scores[f"{key}_speaker_accuracy"] = Score(group[0] / group[1], binomial_error(*group),
                                                          higher_is_better=True)
        return scores
