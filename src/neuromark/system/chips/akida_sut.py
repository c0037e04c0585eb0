"""SUT ``akida``: BrainChip's Akida SDK (``akida`` 2.19.3) as the system under test.

What runs:

1. neuromark trains a small float ReLU MLP on the spoken-digit corpus (spike counts of
   ``groups`` channel groups in ``time_bins`` bins, :mod:`~neuromark.system.chips.features`);
2. it is quantised onto Akida's integer ``Dense1D`` layers
   (:mod:`~neuromark.system.chips.akida_quant`) and built as an ``akida.Model``;
3. the SDK maps a copy onto the target device (``akida.SixNodesIPv2()`` etc., virtual) and
   reports the mapping (sequences, NPs, program size); a virtual device maps but cannot run
   inference (the SDK: "An actual hardware device is required"), so inference runs on the
   SDK's software engine (``model.forward``, CPU), one sample per query;
4. with ``target: hardware`` the model is mapped onto ``akida.devices()[hardware_index]``
   (a PCIe/USB Akida board) and inference runs on the chip; the ``akida_power`` meter
   (:mod:`~neuromark.system.chips.meters`) then records the SDK's power events.

Figures from the SDK: the integer outputs (hence the mapped accuracy), the mapping, MACs,
program size, and on a board the power events. Figures from neuromark: the float model and
its accuracy, the quantisation, latencies (LoadGen), the accuracy pass.

Config::

    sut: {name: akida, options: {device: SixNodesIPv2, hidden: 64, epochs: 200}}
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from neuromark.errors import ConfigError
from neuromark.system.chips import require
from neuromark.system.chips.akida_file import user_model_path
from neuromark.system.chips.akida_mapping import akida_info, device_info, mapping_report, open_hardware
from neuromark.system.chips.akida_quant import build_akida_mlp
from neuromark.system.chips.akida_user_file import akida_from_file
from neuromark.system.chips.cpu_sut import mlp_workload
from neuromark.system.chips.features import SPOKEN_DIGITS_8, chip_front_end, spoken_digit_counts, task_counts
from neuromark.system.chips.onnx_akida import read_onnx_mlp
from neuromark.system.chips.training import accuracy, float_accuracy_score, mlp_forward, train_mlp
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT

#: Virtual devices of akida 2.19.3 that take the Akida 2.0 (v2 IP) layers this SUT builds.
VirtualDevice = Literal["TwoNodesIPv2", "FourNodesIPv2", "SixNodesIPv2", "TwelveNodesIPv2"]


def _user_file(path: str, config_dir: Path | None) -> Path:
    return user_model_path(path, config_dir, option="onnx")


def _check_fits(layers: list[tuple[np.ndarray, np.ndarray]], inputs: int, classes: int,
                file: Path) -> None:
    """The user's MLP takes the task's ``inputs`` counts and gives ``classes`` scores."""
    if layers[0][0].shape[0] != inputs:
        raise ConfigError(f"sut.options.onnx: {file.name} takes {layers[0][0].shape[0]} inputs; "
                          f"the task's features are {inputs} spike counts")
    if layers[-1][0].shape[1] < classes:
        raise ConfigError(f"sut.options.onnx: {file.name} gives {layers[-1][0].shape[1]} scores; "
                          f"the task has {classes} classes")


def akida(*, target: Literal["virtual", "hardware"] = "virtual", device: VirtualDevice = "SixNodesIPv2",
          hardware_index: Annotated[int, Field(ge=0)] = 0,
          hidden: Annotated[int, Field(ge=1, le=4096)] = 64,
          groups: Annotated[int, Field(ge=1, le=700)] = 35,
          time_bins: Annotated[int, Field(ge=1, le=85)] = 5,
          epochs: Annotated[int, Field(ge=1)] = 200, lr: Annotated[float, Field(gt=0)] = 0.01,
          train_samples: Annotated[int, Field(ge=1)] | None = None,
          samples: Annotated[int, Field(ge=1)] | None = None,
          task: Literal["spoken_digits_20", "spoken_digits_8"] = "spoken_digits_20",
          onnx: str | None = None, model_file: str | None = None,
          seed: int = 0, config_dir: Path | None = None) -> BuiltSUT:
    """The ``akida`` entry of :data:`neuromark.registry.suts` (see the module).

    Args:
        target: "virtual" (map onto ``device``, infer on the SDK's software engine) or
            "hardware" (map onto and infer on ``akida.devices()[hardware_index]``).
        device: the virtual Akida 2.0 device mapped onto (also with ``target: hardware``,
            the board's own mapping is reported instead).
        hidden: units of the MLP's hidden layer.
        groups, time_bins: input features = spike counts of ``groups`` channel groups in
            ``time_bins`` bins of 0.85 s / time_bins (``groups * time_bins`` int8 inputs).
        epochs, lr: full-batch Adam steps and learning rate of the float MLP (seeded).
        train_samples, samples: first samples of the train / test split (None: all).
        task: ``spoken_digits_20`` (every class, the features ``groups`` x ``time_bins``
            above) or ``spoken_digits_8``, the one task every shipped system runs
            (:data:`~neuromark.system.chips.features.SPOKEN_DIGITS_8`: ``groups`` and
            ``time_bins`` are then unused).
        onnx: a user's own ONNX MLP (relative to the config's folder) deployed instead of
            training (:mod:`~neuromark.system.chips.onnx_akida`): it takes the task's counts
            as floats and gives one score per class; ``hidden``, ``epochs`` and ``lr`` are
            then unused.
        model_file: a user's own Akida model file (``.fbz``, relative to the config's
            folder) made by BrainChip's own path (``quantizeml`` + ``cnn2snn.convert``,
            :mod:`~neuromark.system.chips.akida_file`), deployed as it is; ``hidden``,
            ``epochs``, ``lr`` and ``train_samples`` are then unused.
    """
    sdk = require("akida")
    if onnx is not None and model_file is not None:
        raise ConfigError("sut.options: onnx and model_file both given; a SUT deploys one model")
    if model_file is not None:
        return akida_from_file(sdk, user_model_path(model_file, config_dir), task=task,
                               device=device, target=target, hardware_index=hardware_index,
                               groups=groups, time_bins=time_bins, samples=samples)
    import torch

    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        if task == SPOKEN_DIGITS_8.name:
            train, test, keys = task_counts(SPOKEN_DIGITS_8, train_samples=train_samples,
                                            test_samples=samples)
            dt_us, t_max_us, groups, clip = (SPOKEN_DIGITS_8.dt_us, SPOKEN_DIGITS_8.t_max_us,
                                             SPOKEN_DIGITS_8.groups, SPOKEN_DIGITS_8.clip)
        else:
            dt_us, t_max_us, clip = 850_000 // time_bins, 850_000, 127
            train, test, keys = spoken_digit_counts(dt_us=dt_us, t_max_us=t_max_us, groups=groups,
                                                    clip=clip, train_samples=train_samples,
                                                    test_samples=samples)
        x_train = train.x.reshape(len(train.x), -1)
        x_test = test.x.reshape(len(test.x), -1).astype(np.int8)
        if onnx is not None:
            file = _user_file(onnx, config_dir)
            layers = read_onnx_mlp(file)
            _check_fits(layers, x_train.shape[1], len(keys), file)
            in_scale = 1.0  # the user's model takes the counts as they are
        else:
            in_scale = 1.0 / max(1, int(x_train.max()))
            layers = train_mlp(x_train * in_scale, train.y, hidden=hidden, classes=len(keys),
                               epochs=epochs, lr=lr, seed=seed)
    finally:
        torch.set_num_threads(threads_before)
    try:
        model, weight_bits = build_akida_mlp(sdk, layers, x_train.shape[1], x_train, in_scale)
    except Exception as exc:  # the SDK's refusal of a layer: our error, naming it
        raise ConfigError(f"the Akida SDK refuses the model: {type(exc).__name__}: {exc} "
                          f"(layers {[w.shape for w, _ in layers]}; Akida 2.0 Dense1D)") from exc
    inputs = x_train.shape[1]
    engine_out = model.forward(x_test.reshape(-1, 1, 1, inputs)).reshape(len(x_test), -1)

    mapped = sdk.Model(layers=model.layers)
    virtual = getattr(sdk, device)()
    try:
        mapped.map(virtual)
    except Exception as exc:  # the SDK's mapping refusal, named
        raise ConfigError(f"the Akida SDK cannot map the model onto {device}: "
                          f"{type(exc).__name__}: {exc}") from exc
    report = mapping_report(sdk, mapped, virtual)
    report["weight_bits"] = weight_bits
    report["activation_bits"] = 8
    target_info = device_info(virtual, kind="virtual", name=device)
    runner = model
    if target == "hardware":
        board = open_hardware(sdk, hardware_index)
        runner = sdk.Model(layers=model.layers)
        runner.map(board)
        report = {**mapping_report(sdk, runner, board), "weight_bits": weight_bits,
                  "activation_bits": 8}
        target_info = device_info(board, kind="hardware", index=hardware_index)

    float_logits = mlp_forward(layers, x_test * in_scale).astype("<f4")  # the float reference
    float_acc = accuracy(float_logits, test.y)
    info: dict[str, Any] = {
        **akida_info(sdk, target=target, device=device, hardware_index=hardware_index,
                     target_info=target_info, report=report, classes=len(keys),
                     suffix=f"-{file.stem}" if onnx is not None else ""),
        "features": {"groups": groups, "time_bins": t_max_us // dt_us, "inputs": inputs,
                     "dtype": "int8", "clip": clip},
        **({"task": SPOKEN_DIGITS_8.describe()} if task == SPOKEN_DIGITS_8.name else {}),
        "model": {"kind": "onnx", "path": str(file.absolute()),
                  "layers": [list(w.shape) for w, _ in layers]} if onnx is not None else
                 {"kind": "mlp", "hidden": hidden, "epochs": epochs, "lr": lr,
                  "quantisation": "neuromark post-training, per-channel int8 weights, 8-bit "
                                  "activations (neuromark.system.chips.akida_quant)"},
        "weights": f"from {file.name}" if onnx is not None else "trained at build (seeded)",
        "float_accuracy": float_acc,
        "sdk_engine_accuracy": accuracy(engine_out, test.y),
        "float_reference_source": "neuromark's float MLP before quantisation, untimed",
        "quantized_reference_source": "the SDK's own quantised model on its software engine "
                                      "(akida Model.forward over the test batch at build, untimed)",
        "data_time_s": t_max_us * 1e-6,
    }

    def preprocess(x: np.ndarray) -> np.ndarray:
        return x.reshape(1, 1, 1, inputs)

    def infer(x: np.ndarray) -> np.ndarray:
        return runner.forward(x).reshape(-1).astype(np.float32)

    engine_ref = engine_out.astype("<f4")
    library = InMemoryLibrary("spoken-digits-test-counts", x_test.__getitem__, len(x_test))
    sut = StagedSUT(f"akida-{target}-mlp", library, preprocess, infer, response_dtype="<f4")
    return BuiltSUT(sut, library, test.y.copy(), info,
                    scores={"float_accuracy": float_accuracy_score(float_acc, len(test.y))},
                    metric="classification_accuracy",
                    reference=lambda indices: [float_logits[i] for i in indices],
                    quantized_reference=lambda indices: [engine_ref[i] for i in indices],
                    workload=mlp_workload(layers, x_test * in_scale, test.y),
                    front_end=chip_front_end(test, dt_us=dt_us, t_max_us=t_max_us,
                                             groups=groups, clip=clip))
