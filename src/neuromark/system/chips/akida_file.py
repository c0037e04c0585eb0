"""A user's own Akida model file (``.fbz``) on the ``akida`` SUT: BrainChip's own path (issue 57.3).

The user builds the model with BrainChip's tools in an environment of their own (a Keras or
ONNX model, quantised by ``quantizeml``, converted by ``cnn2snn.convert``, saved with
``akida.Model.save``; ``scripts/akida_vendor_model.py``, docs/chips.md); neuromark loads the
file with ``akida.Model(path)`` alone (no TensorFlow), checks it against the task before any
work, and runs it as the shipped model runs (mapped onto the virtual device, inference on the
SDK's software engine).

Rules, each refusal naming the file, the layer and the rule (:class:`ConfigError`):

- the model is for Akida 2.0 (IP v2): the virtual devices this SUT maps onto are v2;
- its input (the first layer) is the task's counts: ``(steps, groups, 1)`` (the raster, time
  bins x channel groups) or ``(1, 1, steps * groups)`` (flattened, time-major);
- its output (the last layer) is one score per class: ``(1, 1, classes)``.

The input dtype follows the first layer: quantizeml's input ``Quantizer`` takes float32 counts
(and quantises them itself); an ``InputData`` / ``InputConv2D`` / ... layer takes integers
(uint8, or int8 where ``input_signed``). The float reference: the model's float scores on the
test samples, recorded at conversion in a sidecar ``<file>.json`` beside the ``.fbz``
(``float_reference``: per-sample sha256 of the counts, labels, scores); absent sidecar: no
float reference.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import ConfigError, ModelOutputError


def sample_sha256(counts: np.ndarray) -> str:
    """sha256 of one sample's counts as little-endian int16 (the sidecar's row key)."""
    return hashlib.sha256(np.ascontiguousarray(counts, dtype="<i2").tobytes()).hexdigest()


def user_model_path(path: str, config_dir: Path | None, option: str = "model_file") -> Path:
    """``path`` (relative: to the config's folder) or :class:`ConfigError` naming the option."""
    file = Path(path).expanduser()
    if not file.is_absolute() and config_dir is not None:
        file = config_dir / file
    if not file.is_file():
        raise ConfigError(f"sut.options.{option}: no such file {file.absolute()} (relative paths "
                          "are read from the config file's folder)")
    return file


@dataclass(frozen=True)
class AkidaFile:
    """A loaded user model: ``model`` (``akida.Model``), the shape one sample takes
    (``input_shape``, (H, W, C)) and its dtype, and the float reference's scores per test
    sample hash (None: no sidecar)."""

    path: Path
    model: Any
    input_shape: tuple[int, int, int]
    input_dtype: type
    float_scores: dict[str, np.ndarray] | None
    sidecar: dict[str, Any] | None


def _layer(model: Any, index: int) -> str:
    layer = model.layers[index]
    return f"layer '{layer.name}' ({str(layer.parameters.layer_type).split('.')[-1]})"


def input_dtype(model: Any) -> type:
    """float32 for quantizeml's input ``Quantizer``; else uint8 / int8 per ``input_signed``."""
    params = model.layers[0].parameters
    if str(params.layer_type).split(".")[-1] == "Quantizer":
        return np.float32
    return np.int8 if params.has("input_signed") and params.get("input_signed") else np.uint8


def load_akida_file(sdk: Any, file: Path, *, steps: int, groups: int, classes: int) -> AkidaFile:
    """Load ``file`` with ``akida.Model`` and check it against the task (see the module)."""
    where = f"sut.options.model_file: {file.name}"
    try:
        model = sdk.Model(str(file))
    except Exception as exc:  # not an Akida model file, or one of another SDK version
        raise ConfigError(f"{where}: the Akida SDK {sdk.__version__} cannot read it as a model "
                          f"({type(exc).__name__}: {exc}); save it with akida.Model.save "
                          "(cnn2snn.convert's result)") from None
    if not model.layers:
        raise ConfigError(f"{where}: the model has no layers")
    ip = str(model.ip_version).split(".")[-1]
    if ip != "v2":
        raise ConfigError(f"{where}: the model is for Akida IP {ip}; the virtual devices this SUT "
                          "maps onto are Akida 2.0 (IP v2): convert it with cnn2snn for 2.0 "
                          "(cnn2snn.set_akida_version(AkidaVersion.v2))")
    shape = tuple(int(v) for v in model.input_shape)
    takes = {(steps, groups, 1): "the raster (time bins, channel groups, 1)",
             (1, 1, steps * groups): "the counts flattened (1, 1, time bins x channel groups)"}
    if shape not in takes:
        raise ConfigError(f"{where}: {_layer(model, 0)} takes input {list(shape)}; the task's "
                          f"features are {steps} time bins x {groups} channel groups of spike "
                          f"counts: the model must take {list(takes)} (rule: input = the task's "
                          "counts)")
    out = tuple(int(v) for v in model.output_shape)
    if out != (1, 1, classes):
        raise ConfigError(f"{where}: {_layer(model, -1)} gives output {list(out)}; the task has "
                          f"{classes} classes: the model must give [1, 1, {classes}] (rule: one "
                          "score per class)")
    sidecar, scores = read_sidecar(file, classes)
    return AkidaFile(file, model, shape, input_dtype(model), scores, sidecar)  # type: ignore[arg-type]


def read_sidecar(file: Path, classes: int) -> tuple[dict[str, Any] | None, dict[str, np.ndarray] | None]:
    """The sidecar ``<file>.json`` and its float scores by sample hash (None, None: absent)."""
    side = file.with_suffix(".json")
    if not side.is_file():
        return None, None
    where = f"sut.options.model_file: {side.name}"
    try:
        data = json.loads(side.read_text())
        ref = data["float_reference"]
        keys, rows = ref["sample_sha256"], np.asarray(ref["scores"], dtype=np.float64)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where}: not a readable sidecar (float_reference: sample_sha256, "
                          f"scores): {type(exc).__name__}: {exc}") from None
    if rows.ndim != 2 or rows.shape != (len(keys), classes):
        raise ConfigError(f"{where}: float_reference.scores has shape {list(rows.shape)}; "
                          f"need one row of {classes} scores per sample_sha256 ({len(keys)})")
    return data, dict(zip(keys, rows))


def float_reference_scores(loaded: AkidaFile, test_counts: np.ndarray) -> np.ndarray | None:
    """(N, classes) float scores of the test samples from the sidecar (None: no sidecar);
    :class:`ConfigError` when the sidecar lacks one of them (made on other data)."""
    if loaded.float_scores is None:
        return None
    keys = [sample_sha256(x) for x in test_counts]
    missing = [i for i, k in enumerate(keys) if k not in loaded.float_scores]
    if missing:
        raise ConfigError(f"sut.options.model_file: {loaded.path.with_suffix('.json').name}: "
                          f"its float reference lacks {len(missing)} of the {len(keys)} test "
                          f"samples (first: test sample {missing[0]}): it was made on other data "
                          "(rule: the float reference scores the same test samples)")
    return np.stack([loaded.float_scores[k] for k in keys])


def as_model_input(loaded: AkidaFile, counts: np.ndarray) -> np.ndarray:
    """(N, H, W, C) input of the model from counts (N, steps, groups) (see the module)."""
    return np.ascontiguousarray(counts.reshape((len(counts), *loaded.input_shape)),
                                dtype=loaded.input_dtype)


def forward(loaded: AkidaFile, model: Any, x: np.ndarray) -> np.ndarray:
    """(N, classes) float32 scores of ``model`` on ``x``; the SDK's refusal as
    :class:`ModelOutputError` naming the file and the first layer."""
    try:
        out = model.forward(x)
    except Exception as exc:
        raise ModelOutputError(f"{loaded.path.name}: the Akida engine refuses input "
                               f"{list(x.shape)} {x.dtype} at {_layer(model, 0)}: "
                               f"{type(exc).__name__}: {exc}") from exc
    return np.asarray(out, dtype=np.float32).reshape(len(x), -1)
