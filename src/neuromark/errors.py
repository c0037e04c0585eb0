"""Exception types. Every error names the culprit (file, sample, config key, metric)."""

from __future__ import annotations


class NeuromarkError(Exception):
    """Base class of all neuromark errors."""


class ConfigError(NeuromarkError, ValueError):
    """A config file or setting is invalid (names the file, key and YAML line)."""


class BenchmarkVersionWarning(UserWarning):
    """A config names its benchmark (``benchmark: {id: ...}``) but not the benchmark's
    version: it is recorded as "1.0", which may not be the version the figures belong to."""


class UnknownNameError(NeuromarkError, KeyError):
    """A registry lookup failed; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DataError(NeuromarkError, ValueError):
    """A data file or sample is corrupt or out of range (names the file and sample)."""


class ChecksumError(DataError):
    """A file's sha256 does not match the expected one."""


class ModelOutputError(NeuromarkError, ValueError):
    """A model produced invalid output (NaN, wrong shape); names the batch."""


class MetricError(NeuromarkError, RuntimeError):
    """A metric failed while updating or computing; names the metric."""


class UnsupportedLayerError(NeuromarkError, TypeError):
    """A connection layer whose operations cannot be counted; names the module."""


class MissingExtraError(NeuromarkError, ImportError):
    """An optional dependency is absent; names the extra to install."""


def require(module: str, extra: str):
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install neuromark[extra]``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{module!r} is not installed; install it with: pip install 'neuromark[{extra}]'"
        ) from exc
