"""The registered ``speech_commands`` data set: the data set entry of
:mod:`neuromark.benchmarks.keywords.speech_commands` (download, verify, synthesize), called to build a
split's keyword features (:func:`neuromark.benchmarks.keywords.models.speech_commands`)."""

from __future__ import annotations

from typing import Any

from neuromark.benchmarks.keywords.speech_commands import SpeechCommandsEntry


class SpeechCommandsDataset(SpeechCommandsEntry):
    """``speech_commands`` of :data:`neuromark.registry.datasets`."""

    def __call__(self, split: str = "test", root: str = "", features: str = "waveform",
                 synthesize: dict[str, int | list[str]] | None = None,
                 cache_dir: str | None = None) -> Any:
        """See :func:`neuromark.benchmarks.keywords.models.speech_commands`."""
        from neuromark.benchmarks.keywords.models import speech_commands

        return speech_commands(split, root, features, synthesize, cache_dir)


SPEECH_COMMANDS = SpeechCommandsDataset()
