"""The ``akida`` SUT with ``sut.options.model_file``: a user's own ``.fbz`` (BrainChip's path,
:mod:`~neuromark.system.chips.akida_file`) on the shared task, mapped and run as the shipped
model is (:mod:`~neuromark.system.chips.akida_sut`).

Figures from the SDK: the model's outputs on its software engine (the mapped accuracy), the
quantized reference (the same model's ``forward`` over the test batch at build, untimed), the
mapping and the model's MACs (``akida.Model.macs``, which price the energy estimate). From
the user's conversion: the float reference (the Keras float model's scores, recorded in the
sidecar JSON by the conversion script). From neuromark: the data, latencies, the accuracy pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import ConfigError
from neuromark.system.chips.akida_file import as_model_input, float_reference_scores, forward, load_akida_file
from neuromark.system.chips.akida_mapping import akida_info, device_info, mapping_report, open_hardware
from neuromark.system.chips.features import SPOKEN_DIGITS_8, chip_front_end, spoken_digit_counts, task_counts
from neuromark.system.chips.training import accuracy, float_accuracy_score
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT


def _map(sdk: Any, file: Path, device: Any, name: str) -> tuple[Any, dict[str, Any]]:
    """A fresh copy of the model mapped onto ``device``; the SDK's refusal named."""
    mapped = sdk.Model(str(file))
    try:
        mapped.map(device)
    except Exception as exc:
        layers = [f"{layer.name} ({str(layer.parameters.layer_type).split('.')[-1]})"
                  for layer in mapped.layers]
        raise ConfigError(f"sut.options.model_file: {file.name}: the Akida SDK cannot map the "
                          f"model onto {name}: {type(exc).__name__}: {exc} (layers: "
                          f"{', '.join(layers)})") from exc
    report = mapping_report(sdk, mapped, device)
    software = [s.name for s in mapped.sequences if "Software" in str(s.backend)]
    report["software_sequences"] = software
    return mapped, report


def akida_from_file(sdk: Any, file: Path, *, task: str, device: str, target: str,
                    hardware_index: int, groups: int, time_bins: int,
                    samples: int | None) -> BuiltSUT:
    """The ``akida`` SUT deploying the user's ``file`` (see the module and
    :func:`~neuromark.system.chips.akida_sut.akida` for the options)."""
    if task == SPOKEN_DIGITS_8.name:
        _, test, keys = task_counts(SPOKEN_DIGITS_8, test_samples=samples)
        dt_us, t_max_us, groups, clip = (SPOKEN_DIGITS_8.dt_us, SPOKEN_DIGITS_8.t_max_us,
                                         SPOKEN_DIGITS_8.groups, SPOKEN_DIGITS_8.clip)
    else:
        dt_us, t_max_us, clip = 850_000 // time_bins, 850_000, 127
        _, test, keys = spoken_digit_counts(dt_us=dt_us, t_max_us=t_max_us, groups=groups,
                                            clip=clip, train_samples=1, test_samples=samples)
    steps = t_max_us // dt_us
    loaded = load_akida_file(sdk, file, steps=steps, groups=groups, classes=len(keys))
    x_test = as_model_input(loaded, test.x)
    float_logits = float_reference_scores(loaded, test.x)
    engine_out = forward(loaded, loaded.model, x_test)  # the quantized reference, untimed

    virtual = getattr(sdk, device)()
    _, report = _map(sdk, file, virtual, device)
    target_info = device_info(virtual, kind="virtual", name=device)
    runner = loaded.model
    if target == "hardware":
        board = open_hardware(sdk, hardware_index)
        runner, report = _map(sdk, file, board, board.desc)
        target_info = device_info(board, kind="hardware", index=hardware_index)
    sidecar = loaded.sidecar or {}
    info: dict[str, Any] = {
        **akida_info(sdk, target=target, device=device, hardware_index=hardware_index,
                     target_info=target_info, report=report, classes=len(keys),
                     suffix=f"-{file.stem}"),
        "features": {"groups": groups, "time_bins": steps, "inputs": steps * groups,
                     "dtype": np.dtype(loaded.input_dtype).name, "clip": clip,
                     "model_input": list(loaded.input_shape)},
        **({"task": SPOKEN_DIGITS_8.describe()} if task == SPOKEN_DIGITS_8.name else {}),
        "model": {"kind": "akida_fbz", "path": str(file.absolute()),
                  "layers": [{"name": layer.name,
                              "type": str(layer.parameters.layer_type).split(".")[-1]}
                             for layer in loaded.model.layers],
                  "made_by": sidecar.get("versions"), "description": sidecar.get("model")},
        "weights": f"from {file.name} (quantised by the user's quantizeml, converted by cnn2snn)",
        "sdk_engine_accuracy": accuracy(engine_out, test.y),
        "quantized_reference_source": "the SDK's own model from the file on its software engine "
                                      "(akida Model.forward over the test batch at build, untimed)",
        "data_time_s": t_max_us * 1e-6,
    }
    scores = {}
    if float_logits is not None:
        float_acc = accuracy(float_logits, test.y)
        info["float_accuracy"] = float_acc
        info["float_reference_source"] = (f"the user's float model's scores recorded at "
                                          f"conversion in {file.with_suffix('.json').name}")
        scores["float_accuracy"] = float_accuracy_score(float_acc, len(test.y))
    shape = (1, *loaded.input_shape)

    def preprocess(x: np.ndarray) -> np.ndarray:
        return x.reshape(shape)

    def infer(x: np.ndarray) -> np.ndarray:
        return forward(loaded, runner, x).reshape(-1)

    engine_ref = engine_out.astype("<f4")
    library = InMemoryLibrary("spoken-digits-test-counts", x_test.__getitem__, len(x_test))
    sut = StagedSUT(f"akida-{target}-{file.stem}", library, preprocess, infer, response_dtype="<f4")
    float_ref = None if float_logits is None else \
        (lambda indices: [float_logits[i].astype("<f4") for i in indices])
    return BuiltSUT(sut, library, test.y.copy(), info, scores=scores,
                    metric="classification_accuracy", reference=float_ref,
                    quantized_reference=lambda indices: [engine_ref[i] for i in indices],
                    operation_counts={"macs": float(loaded.model.macs), "acs": 0.0,
                                      "neuron_updates": 0.0,
                                      "source": "akida Model.macs (the SDK's count per inference)"},
                    front_end=chip_front_end(test, dt_us=dt_us, t_max_us=t_max_us,
                                             groups=groups, clip=clip))
