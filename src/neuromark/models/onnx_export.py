"""ONNX export of a traceable model, checked with onnxruntime (extra ``onnx``).

:func:`export_onnx` traces ``module`` on an example batch with torch's TorchScript-based
exporter (``torch.onnx.export(..., dynamo=False)``: it needs the ``onnx`` package only;
the newer ``torch.export`` exporter would need ``onnxscript`` too), runs the file with
onnxruntime on the same batch and requires the outputs to equal the torch model's within
float tolerance (``|ort - torch| <= atol + rtol |torch|``, default 1e-5 and 1e-4).

A model that keeps state from one call to the next (a streaming spiking network: its
membranes carry over) cannot be traced as it is: a trace would freeze the state it held
at export as constants. It is detected by calling the model twice on the example after
``reset_state()``: the outputs must agree. Networks that loop over time inside one call
(state created in ``forward``) export fine. Given the sample's time ``steps``, a stateful
model is exported one step at a time instead, its state as explicit inputs and outputs
(:func:`neuromark.models.onnx_stateful.export_onnx_steps`); without them it is refused
with the reason.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError
from neuromark.io_atomic import temp_beside
from neuromark.models.onnx_stateful import _outputs, _reset, export_onnx_steps


def export_onnx(module: Any, example: Any, path: str | Path, *, atol: float = 1e-5,
                rtol: float = 1e-4, opset: int = 17, steps: list[Any] | None = None,
                whole: Any = None, time_dim: int = 1) -> dict[str, Any]:
    """Export ``module`` (an ``nn.Module``, eval mode) traced on ``example`` (a tensor)
    to ``path`` and check it with onnxruntime; returns ``{"path", "opset", "input_shape",
    "outputs", "max_abs_diff", "atol", "rtol", "onnxruntime"}``. A stateful model is
    exported one step at a time over ``steps`` (``whole``, ``time_dim``: see
    :func:`~neuromark.models.onnx_stateful.export_onnx_steps`, whose report it returns).
    Raises ConfigError for a stateful model without ``steps``, an untraceable one, or
    outputs that differ."""
    import numpy as np
    import torch

    try:
        import onnxruntime as ort
    except ImportError:
        raise ConfigError("ONNX export is checked with onnxruntime, which is not installed: "
                          "pip install 'neuromark[onnx]'") from None
    module = module.eval()
    with torch.no_grad():
        _reset(module)
        first = [t.detach().clone() for t in _outputs(module(example))]
        second = _outputs(module(example))
        _reset(module)
    if any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(first, second, strict=True)):
        if steps is not None:
            return export_onnx_steps(module, steps, path, whole=whole, time_dim=time_dim,
                                     atol=atol, rtol=rtol, opset=opset)
        raise ConfigError(f"{type(module).__name__} keeps state from one call to the next (two "
                          f"calls on the same batch differ): a trace would freeze that state "
                          f"as constants; give the sample's time steps to export it one step "
                          f"at a time with its state as inputs and outputs")
    path = Path(path)
    tmp = temp_beside(path)
    names = [f"output_{i}" for i in range(len(first))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the legacy exporter's deprecation and tracer notes
            torch.onnx.export(module, (example,), str(tmp), dynamo=False, opset_version=opset,
                              input_names=["input"], output_names=names,
                              dynamic_axes={"input": {0: "batch"}})
    except Exception as exc:  # noqa: BLE001 - any tracing failure is the model's, named here
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"{type(module).__name__} cannot be traced for ONNX: "
                          f"{type(exc).__name__}: {exc}") from None
    try:
        session = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
        got = session.run(None, {"input": example.detach().cpu().numpy()})
    except Exception as exc:  # noqa: BLE001 - the file the exporter wrote does not run
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"onnxruntime cannot run the exported {type(module).__name__}: "
                          f"{type(exc).__name__}: {exc}; nothing written to {path}") from None
    diffs = []
    for want, have in zip(first, got, strict=True):
        want = want.cpu().numpy()
        if want.shape != have.shape or not np.allclose(have, want, atol=atol, rtol=rtol):
            tmp.unlink(missing_ok=True)
            worst = float(np.abs(have - want).max()) if want.shape == have.shape else float("inf")
            raise ConfigError(f"the ONNX model's output differs from the torch model's "
                              f"(max |diff| {worst:.3g}, shapes {have.shape} vs {want.shape}); "
                              f"nothing written to {path}")
        diffs.append(float(np.abs(have - want).max()) if want.size else 0.0)
    tmp.replace(path)
    return {"path": str(path), "opset": opset, "input_shape": list(example.shape),
            "outputs": [list(t.shape) for t in first], "max_abs_diff": max(diffs),
            "atol": atol, "rtol": rtol, "onnxruntime": ort.__version__}
