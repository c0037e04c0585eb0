"""A user's own Keras model onto Akida through BrainChip's own path (issue 57.3).

Two steps, two environments (BrainChip's quantizeml / cnn2snn need TensorFlow 2.19, which
needs numpy < 2.2 and so cannot share neuromark's environment; docs/chips.md):

1. ``export`` (neuromark's environment): the ``spoken_digits_8`` task's counts, exactly as the
   ``akida`` SUT feeds them (train and test splits, (N, 42, 16) counts 0..15, labels 0..7),
   to an ``.npz``::

       PYTHONPATH=src .venv/bin/python scripts/akida_vendor_model.py export --out /tmp/sd8.npz

2. ``build`` (a scratch environment with MetaTF: ``python3 -m venv /tmp/akvenv &&
   /tmp/akvenv/bin/pip install "akida==2.19.3" "cnn2snn==2.19.3" "quantizeml" "numpy<2.2"``):
   a small Keras (``tf_keras``) convolutional network, not neuromark's model, trained briefly
   (seeded), quantised with ``quantizeml.models.quantize`` (``QuantizationParams``: 8-bit
   weights and activations, uint8 inputs, calibrated on the training counts), converted with
   ``cnn2snn.convert`` to an ``akida.Model`` and saved as ``.fbz``; beside it a sidecar
   ``<name>.json`` with the Keras float model's test accuracy (the SUT's float reference),
   the quantised Keras model's, the Akida model's and the versions used::

       /tmp/akvenv/bin/python scripts/akida_vendor_model.py build --features /tmp/sd8.npz \\
           --out configs/system/spoken_digits_8/user_models/keras_convnet.fbz

The network: input (42, 16, 1) = 42 time bins x 16 channel groups of spike counts, as uint8;
Conv2D 8 3x3 stride 2 + ReLU, Conv2D 16 3x3 stride 2 + ReLU, Flatten, Dense 8 (scores).
Nothing from BrainChip is copied; the script calls their packages' public functions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path


def export(out: Path) -> None:
    """Write the task's counts (neuromark's environment)."""
    import numpy as np

    from neuromark.system.chips.features import SPOKEN_DIGITS_8, task_counts

    train, test, keys = task_counts(SPOKEN_DIGITS_8)
    np.savez(out, x_train=train.x, y_train=train.y, x_test=test.x, y_test=test.y,
             classes=np.array(keys))
    print(f"{out}: train {train.x.shape}, test {test.x.shape}, classes {keys}")


def sample_sha256(counts) -> str:
    """sha256 of one sample's counts as little-endian int16 (the SUT keys the float
    reference's rows by it: ``neuromark.system.chips.akida_file``)."""
    import hashlib

    import numpy as np

    return hashlib.sha256(np.ascontiguousarray(counts, dtype="<i2").tobytes()).hexdigest()


def keras_convnet(keras, steps: int, groups: int, classes: int):
    """The user's small convolutional network (see the module)."""
    layers = keras.layers
    inputs = keras.Input(shape=(steps, groups, 1), name="counts")
    x = layers.Conv2D(8, 3, strides=2, padding="same", name="conv1")(inputs)
    x = layers.ReLU(name="relu1")(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same", name="conv2")(x)
    x = layers.ReLU(name="relu2")(x)
    x = layers.Flatten(name="flatten")(x)
    outputs = layers.Dense(classes, name="scores")(x)
    return keras.Model(inputs, outputs, name="users_convnet")


def build(features: Path, out: Path, epochs: int, seed: int) -> None:
    """Train, quantise, convert and save (the scratch environment)."""
    os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
    import akida
    import cnn2snn
    import numpy as np
    import quantizeml
    import tensorflow as tf
    import tf_keras as keras
    from quantizeml.layers import QuantizationParams
    from quantizeml.models import quantize

    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)

    data = np.load(features)
    x_train = data["x_train"][..., None].astype(np.float32)   # (N, 42, 16, 1) counts 0..15
    x_test = data["x_test"][..., None].astype(np.float32)
    y_train, y_test = data["y_train"], data["y_test"]
    classes = int(max(y_train.max(), y_test.max())) + 1

    model = keras_convnet(keras, x_train.shape[1], x_train.shape[2], classes)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=epochs, batch_size=16, shuffle=True, verbose=0)
    float_logits = model.predict(x_test, verbose=0)
    float_acc = float(np.mean(np.argmax(float_logits, -1) == y_test))

    qparams = QuantizationParams(input_weight_bits=8, weight_bits=8, activation_bits=8,
                                 input_dtype="uint8")
    quantized = quantize(model, qparams=qparams, samples=x_train, num_samples=len(x_train),
                         batch_size=len(x_train), epochs=1)
    q_acc = float(np.mean(np.argmax(quantized.predict(x_test, verbose=0), -1) == y_test))

    akida_model = cnn2snn.convert(quantized)
    # quantizeml puts an input Quantizer first (float counts in, x 16 -> uint8 on the engine)
    ak_out = akida_model.forward(x_test).reshape(len(x_test), -1)
    ak_acc = float(np.mean(np.argmax(ak_out, -1) == y_test))
    akida_model.summary()

    out.parent.mkdir(parents=True, exist_ok=True)
    akida_model.save(str(out))
    sidecar = {
        "model": "users_convnet: Conv2D 8 3x3/2 + ReLU, Conv2D 16 3x3/2 + ReLU, Flatten, Dense "
                 f"{classes} (tf_keras), input (42, 16, 1) spike counts 0..15 as float32 "
                 "(quantizeml's input Quantizer makes them uint8)",
        "trained": {"epochs": epochs, "batch_size": 16, "optimizer": "Adam 1e-3", "seed": seed,
                    "train_samples": int(len(y_train))},
        "float_accuracy": float_acc,
        "quantized_keras_accuracy": q_acc,
        "akida_accuracy": ak_acc,
        "test_samples": int(len(y_test)),
        "float_reference": {
            "what": "the Keras float model's scores on each test sample, keyed by the sha256 "
                    "of the sample's counts ((42, 16) little-endian int16, as exported)",
            "sample_sha256": [sample_sha256(x) for x in data["x_test"]],
            "labels": [int(v) for v in y_test],
            "scores": np.round(float_logits.astype(np.float64), 6).tolist()},
        "quantization": repr(qparams),
        "versions": {"python": sys.version.split()[0], "tensorflow": tf.__version__,
                     "tf_keras": keras.__version__, "quantizeml": quantizeml.__version__,
                     "cnn2snn": cnn2snn.__version__, "akida": akida.__version__,
                     "numpy": np.__version__},
        "command": "scripts/akida_vendor_model.py build --features FEATURES.npz "
                   f"--out {out.name} --epochs {epochs} --seed {seed}",
    }
    out.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")
    print(json.dumps({k: sidecar[k] for k in ("float_accuracy", "quantized_keras_accuracy",
                                              "akida_accuracy")}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    exp = sub.add_parser("export", help="the task's counts to an .npz (neuromark's environment)")
    exp.add_argument("--out", type=Path, required=True)
    bld = sub.add_parser("build", help="train, quantise, convert, save .fbz (MetaTF environment)")
    bld.add_argument("--features", type=Path, required=True)
    bld.add_argument("--out", type=Path, required=True)
    bld.add_argument("--epochs", type=int, default=60)
    bld.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.step == "export":
        export(args.out)
    else:
        build(args.features, args.out, args.epochs, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
