"""SUTs served by ``neuromark.system.remote_server`` in the tests: standard library only,
as a device SDK's environment would have them (the tests run the server with ``python -S``,
without site-packages)."""

from __future__ import annotations

import os
import time


class Echo:
    """Staged: sample ``i`` is ``float(i)``; pre-processing scales it; inference answers a
    vector of ``classes`` zeros with ``1 + i * scale`` at the sample's label ``i % classes``."""

    name = "echo"
    response_dtype = "<f4"

    def __init__(self, scale: float = 2.0, samples: int = 16, classes: int = 4) -> None:
        self.scale, self.classes, self.total_count = scale, classes, samples
        self.labels = [i % classes for i in range(samples)]
        self.info = {"scale": scale, "classes": classes}
        self.loaded: set[int] = set()

    def load(self, indices):
        self.loaded.update(indices)

    def unload(self, indices):
        self.loaded.difference_update(indices)

    def get(self, index):
        if index not in self.loaded:
            raise KeyError(f"sample {index} was not loaded")
        return float(index)

    def preprocess(self, sample):
        return sample * self.scale

    def infer(self, features):
        out = [0.0] * self.classes
        out[int(round(features / self.scale)) % self.classes] = 1.0 + features
        return out


class Flaky:
    """Answers empty responses, but raises on sample ``bad``."""

    name = "flaky-board"
    total_count = 8

    def __init__(self, bad: int = 5) -> None:
        self.bad = bad

    def issue(self, indices):
        if self.bad in indices:
            raise ValueError(f"sensor saturated on sample {self.bad}")
        return [b""] * len(indices)


class Dies:
    """Exits the server process (``os._exit``) at its ``after``-th issue call, or hangs
    there for ``hang_s`` seconds when that is set: a device or server lost mid-run."""

    name = "dies"
    total_count = 8

    def __init__(self, after: int = 20, hang_s: float = 0.0) -> None:
        self.after, self.hang_s, self.calls = after, hang_s, 0

    def issue(self, indices):
        self.calls += 1
        if self.calls >= self.after:
            if not self.hang_s:
                os._exit(3)
            time.sleep(self.hang_s)
        return [b""] * len(indices)
