"""SUT ``spoken_digits_cpu``: the CPU rows of the one task every shipped system runs (issue 57.2).

The task is :data:`~neuromark.system.chips.features.SPOKEN_DIGITS_8` (16 channel groups in
20-ms bins over 0.84 s, clipped at 15 events, the corpus's first 8 classes), the same
features and test samples as the ``akida`` and ``xylo`` SUTs with ``task: spoken_digits_8``.
neuromark trains the same float ReLU MLP the ``akida`` SUT trains (same options and seed:
the same weights) and runs it on the host CPU, one sample per query:

- ``precision: float``: the float MLP (numpy, float64 arithmetic, float32 responses);
- ``precision: int8``: the MLP quantised by neuromark onto 8-bit integers
  (:func:`~neuromark.system.chips.akida_quant.quantise_mlp`: per-channel int8 weights, 8-bit
  activations, the integer arithmetic Akida's SDK documents), run in numpy integers
  (:func:`~neuromark.system.chips.akida_quant.integer_forward`).

The float reference of the accuracy pass is the float MLP, the quantized reference the
integer MLP (both untimed, on the same samples). The workload (the float MLP as a torch
module over the test samples) gives the energy ESTIMATE from counted operations when no
meter is attached.

Config::

    sut: {name: spoken_digits_cpu, options: {precision: int8, hidden: 64, epochs: 200}}
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from neuromark.system.chips.akida_quant import integer_forward, quantise_mlp
from neuromark.system.chips.features import SPOKEN_DIGITS_8, chip_front_end, task_counts
from neuromark.system.chips.training import accuracy, float_accuracy_score, mlp_forward, train_mlp
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT


def mlp_workload(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray, labels: np.ndarray
                 ) -> Any:
    """``workload() -> (torch MLP, [(inputs, labels)])`` of the float MLP ``layers`` on the
    inputs ``x`` (N, F) (already scaled), for the energy estimate from counted operations."""

    def workload() -> tuple[Any, Any]:
        import torch

        mods: list[Any] = []
        for i, (w, b) in enumerate(layers):
            linear = torch.nn.Linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                linear.weight.copy_(torch.as_tensor(w.T))
                linear.bias.copy_(torch.as_tensor(b))
            mods.append(linear)
            if i < len(layers) - 1:
                mods.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*mods)
        return net, [(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(labels))]

    return workload


def spoken_digits_cpu(*, precision: Literal["float", "int8"] = "float",
                      hidden: Annotated[int, Field(ge=1, le=4096)] = 64,
                      epochs: Annotated[int, Field(ge=1)] = 200,
                      lr: Annotated[float, Field(gt=0)] = 0.01,
                      train_samples: Annotated[int, Field(ge=1)] | None = None,
                      samples: Annotated[int, Field(ge=1)] | None = None,
                      seed: int = 0) -> BuiltSUT:
    """The ``spoken_digits_cpu`` entry of :data:`neuromark.registry.suts` (see the module).

    Args:
        precision: "float" (the float MLP) or "int8" (neuromark's integer MLP).
        hidden, epochs, lr: the MLP's hidden units and its full-batch Adam training (seeded),
            as the ``akida`` SUT's.
        train_samples, samples: first samples of the train / test split before the class
            filter (None: all).
    """
    import torch

    task = SPOKEN_DIGITS_8
    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train, test, keys = task_counts(task, train_samples=train_samples, test_samples=samples)
        x_train = train.x.reshape(len(train.x), -1)
        x_test = test.x.reshape(len(test.x), -1).astype(np.int8)
        in_scale = 1.0 / max(1, int(x_train.max()))
        layers = train_mlp(x_train * in_scale, train.y, hidden=hidden, classes=len(keys),
                           epochs=epochs, lr=lr, seed=seed)
    finally:
        torch.set_num_threads(threads_before)
    ints = quantise_mlp(layers, x_train, in_scale)
    float_logits = mlp_forward(layers, x_test * in_scale).astype("<f4")
    int_logits = integer_forward(ints, x_test).astype("<f4")
    float_acc = accuracy(float_logits, test.y)
    info: dict[str, Any] = {
        "label": f"cpu-{precision}",
        "sdk": {"name": "numpy", "package": "numpy", "version": np.__version__},
        "target": {"kind": "host", "name": "the host CPU, one thread"},
        "inference": ("float64 numpy matmuls" if precision == "float"
                      else "int64 numpy arithmetic on int8 weights and 8-bit activations"),
        "data": "spoken_digits (shipped corpus, test split)",
        "task": task.describe(), "classes": {"count": len(keys), "names": keys},
        "model": {"kind": "mlp", "hidden": hidden, "epochs": epochs, "lr": lr,
                  "precision": precision,
                  **({"quantisation": "neuromark post-training, per-channel int8 weights, 8-bit "
                                      "activations (neuromark.system.chips.akida_quant)"}
                     if precision == "int8" else {})},
        "weights": "trained at build (seeded)",
        "float_accuracy": float_acc,
        "quantized_accuracy": accuracy(int_logits, test.y),
        "float_reference_source": "the float MLP (numpy), untimed",
        "quantized_reference_source": "neuromark's integer MLP (numpy), untimed",
        "data_time_s": task.t_max_us * 1e-6,
    }
    inputs = x_test.shape[1]

    def preprocess(x: np.ndarray) -> np.ndarray:
        return x.reshape(1, inputs)

    if precision == "float":
        def infer(x: np.ndarray) -> np.ndarray:
            return mlp_forward(layers, x * in_scale).reshape(-1).astype(np.float32)
    else:
        def infer(x: np.ndarray) -> np.ndarray:
            return integer_forward(ints, x).reshape(-1).astype(np.float32)

    library = InMemoryLibrary("spoken-digits-8-test-counts", x_test.__getitem__, len(x_test))
    sut = StagedSUT(f"cpu-{precision}-mlp", library, preprocess, infer, response_dtype="<f4")
    return BuiltSUT(sut, library, test.y.copy(), info,
                    scores={"float_accuracy": float_accuracy_score(float_acc, len(test.y))},
                    metric="classification_accuracy",
                    reference=lambda indices: [float_logits[i] for i in indices],
                    quantized_reference=lambda indices: [int_logits[i] for i in indices],
                    workload=mlp_workload(layers, x_test * in_scale, test.y),
                    front_end=chip_front_end(test, dt_us=task.dt_us, t_max_us=task.t_max_us,
                                             groups=task.groups, clip=task.clip))
