"""ONNX export of a model that keeps state from one call to the next (a streaming spiking
network, a decoder with input history), one time step at a time, its state as explicit
inputs and outputs, checked with onnxruntime over a whole sample.

The state is found, not declared: after ``reset_state()`` the tensor (or ``None``)
attributes and buffers of every submodule are read (SpikingJelly's ``_memories`` too),
the model is called on the first step, and every such attribute that then holds another
tensor is a state slot (a membrane, a synaptic current, an input history). The exported
graph is ``(input, state_0, ..., state_{k-1}) -> (output_0, ..., state_out_0, ...)``: it
sets the slots to the state inputs, runs one step, and returns the outputs and the slots'
new values. torch's exporter leaves out a state input the step never reads (a slot the
step overwrites first), so the inputs are NOT always ``(input, state_0, ..., state_{k-1})``
by position: the file names them in its ``metadata_props`` (:func:`write_state_metadata`:
``neuromark.state_inputs``, ``neuromark.state_feeds_back``: which ``state_out_i`` feeds
which ``state_i``), and outputs are fed back by name. A slot empty after a reset
(``None``, or a placeholder of another shape that the model replaces by zeros on its first
step) starts from zeros shaped as after the first step (``neuromark.state_inputs`` gives
each state's shape and whether it starts from zeros; the report gives the same); all
zeros unless a reset leaves a tensor of the stepped shape, which is then used.
This is how recurrent models are commonly exported to ONNX (the state as graph
inputs and outputs, as ONNX's own RNN/LSTM/GRU operators take ``initial_h`` and return
``Y_h``).

The check: from the reset state, torch's step-by-step outputs and onnxruntime's (its state
outputs fed back) must agree at every step within ``atol + rtol |torch|``; where the model
normally takes the whole sample in one call (steps are slices of the time axis), the
stepped outputs joined along time must also agree with that one call's. The batch size is
fixed at the example's (states are traced with it).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError
from neuromark.io_atomic import temp_beside

Slot = tuple[Any, str]  # (submodule, attribute name)

#: ``metadata_props`` keys a stepped ONNX file carries (JSON values): its state inputs
#: (graph input name -> the model attribute, shape and initial value), which state output
#: feeds which input at the next step, the model outputs, and how to run it.
STATE_INPUTS_KEY = "neuromark.state_inputs"
FEEDS_BACK_KEY = "neuromark.state_feeds_back"
OUTPUTS_KEY = "neuromark.outputs"
HOW_KEY = "neuromark.stepping"


def write_state_metadata(path: Path, names: list[str], initial: list[Any], n_out: int
                         ) -> dict[str, str]:
    """Name the state inputs and outputs of the stepped ONNX file at ``path`` in its
    ``metadata_props`` (see the keys above) and return them. A state input the traced step
    never reads (the step overwrites that slot first) is left out of the graph by torch's
    exporter: it is listed with ``"in_graph": false`` and its output feeds nothing, so
    feeding outputs back by name (never by position) always works."""
    import onnx

    model = onnx.load(str(path))
    in_graph = {i.name for i in model.graph.input}
    state_inputs, feeds_back = {}, {}
    for i, (name, value) in enumerate(zip(names, initial, strict=True)):
        key = f"state_{i}"
        state_inputs[key] = {"slot": name, "shape": list(value.shape),
                             "initial": "zeros" if not value.any() else "as reset_state leaves it",
                             "in_graph": key in in_graph}
        if key in in_graph:
            feeds_back[f"state_out_{i}"] = key
    meta = {STATE_INPUTS_KEY: json.dumps(state_inputs),
            FEEDS_BACK_KEY: json.dumps(feeds_back),
            OUTPUTS_KEY: json.dumps([f"output_{i}" for i in range(n_out)]),
            HOW_KEY: ("one time step per run: feed 'input' (one step) and each state input "
                      "listed in neuromark.state_inputs with in_graph true (zeros at the first "
                      "step); after each run feed every output named in "
                      "neuromark.state_feeds_back to the input it names; match by name, never "
                      "by position (inputs the step never reads are not in the graph)")}
    onnx.helper.set_model_props(model, meta)
    onnx.save(model, str(path))
    return meta


def _reset(module: Any) -> None:
    """``reset_state()``, failing that ``reset_mem()`` (snnTorch), on every submodule that
    defines one, as the runner's adapters reset a network."""
    for sub in module.modules():
        for method in ("reset_state", "reset_mem"):
            reset = getattr(sub, method, None)
            if callable(reset):
                reset()
                break


def _outputs(value: Any) -> list[Any]:
    """The tensors of a model's output (a tensor, or a tuple/list of them), flattened."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _outputs(v)]
    raise ConfigError(f"the model returns {type(value).__name__}: ONNX export needs a tensor "
                      f"or a tuple of tensors")


def _slot_names(sub: Any) -> list[str]:
    """Names of ``sub``'s own tensor or None attributes, buffers and SpikingJelly memories."""
    import torch

    names = [k for k, v in vars(sub).items()
             if not k.startswith("_") and (v is None or isinstance(v, torch.Tensor))]
    names += [k for k in getattr(sub, "_buffers", {}) if k not in names]
    memories = vars(sub).get("_memories")
    if isinstance(memories, dict):
        names += [k for k in memories if k not in names]
    return names


def find_state(module: Any, first_step: Any, reset: Any) -> tuple[list[Slot], list[str], list[Any]]:
    """The state slots of ``module`` (see the module notes): ``(slots, dotted names,
    initial values)``, found by calling it once on ``first_step`` after ``reset()``; the
    model is reset again before returning."""
    import torch

    subs = dict(module.named_modules())
    with torch.no_grad():
        reset()
        before = {(name, attr): getattr(sub, attr, None) for name, sub in subs.items()
                  for attr in _slot_names(sub)}
        module(first_step)
    slots, names, initial = [], [], []
    for (name, attr), old in before.items():
        new = getattr(subs[name], attr, None)
        if isinstance(new, torch.Tensor) and new is not old:
            slots.append((subs[name], attr))
            names.append(f"{name}.{attr}" if name else attr)
            same = isinstance(old, torch.Tensor) and old.shape == new.shape
            initial.append(old.detach().clone() if same else torch.zeros_like(new))
    reset()
    return slots, names, initial


def step_module(module: Any, slots: list[Slot]) -> Any:
    """An ``nn.Module`` running one step of ``module`` with its state slots as arguments:
    ``forward(x, *state) -> (*outputs, *new state)``."""
    from torch import nn

    class Step(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module

        def forward(self, x: Any, *state: Any) -> tuple[Any, ...]:
            for (sub, attr), value in zip(slots, state, strict=True):
                setattr(sub, attr, value)
            outputs = _outputs(self.inner(x))
            return (*outputs, *[getattr(sub, attr) for sub, attr in slots])

    return Step()


def _run_torch(module: Any, steps: list[Any], reset: Any) -> list[list[Any]]:
    """Per step, the flattened outputs of ``module`` stepped from its reset state."""
    import torch

    reset()
    with torch.no_grad():
        out = [[t.detach().cpu().numpy() for t in _outputs(module(s))] for s in steps]
    reset()
    return out


def export_onnx_steps(module: Any, steps: list[Any], path: str | Path, *, whole: Any = None,
                      time_dim: int = 1, atol: float = 1e-5, rtol: float = 1e-4,
                      opset: int = 17) -> dict[str, Any]:
    """Export one step of the stateful ``module`` (eval mode) to ``path``, traced on
    ``steps[0]``, and check it with onnxruntime over all ``steps`` (one sample's time steps,
    as the model is fed them); ``whole``: the sample as one call, when the model takes it
    so (its outputs joined along ``time_dim`` are compared too). Raises ConfigError when
    no state is found, the step cannot be traced, or the outputs differ (nothing written)."""
    import numpy as np
    import onnxruntime as ort
    import torch

    module = module.eval()

    def reset() -> None:
        _reset(module)

    slots, names, initial = find_state(module, steps[0], reset)
    if not slots:
        raise ConfigError(f"{type(module).__name__} keeps state across calls, but no tensor "
                          "attribute or buffer changed on a step: its state cannot be made an "
                          "explicit ONNX input")
    want = _run_torch(module, steps, reset)
    n_out = len(want[0])
    path = Path(path)
    tmp = temp_beside(path)
    inputs = ["input", *[f"state_{i}" for i in range(len(slots))]]
    outputs = [*[f"output_{i}" for i in range(n_out)], *[f"state_out_{i}" for i in range(len(slots))]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(step_module(module, slots), (steps[0], *initial), str(tmp),
                              dynamo=False, opset_version=opset, input_names=inputs,
                              output_names=outputs)
    except Exception as exc:  # noqa: BLE001 - any tracing failure is the model's, named here
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"one step of {type(module).__name__} cannot be traced for ONNX: "
                          f"{type(exc).__name__}: {exc}") from None
    finally:
        reset()
    meta = write_state_metadata(tmp, names, initial, n_out)
    session = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
    fed = {i.name for i in session.get_inputs()}
    feeds_back = json.loads(meta[FEEDS_BACK_KEY])  # state output -> the input it feeds
    state = {f"state_{i}": t.cpu().numpy() for i, t in enumerate(initial) if f"state_{i}" in fed}
    worst, got_steps = 0.0, []
    for n, step in enumerate(steps):
        got = session.run(outputs, {"input": step.cpu().numpy(), **state})
        named = dict(zip(outputs, got, strict=True))
        state = {feeds_back[k]: named[k] for k in feeds_back}  # fed back by name
        got_steps.append(got[:n_out])
        for have, ref in zip(got[:n_out], want[n], strict=True):
            if have.shape != ref.shape or not np.allclose(have, ref, atol=atol, rtol=rtol):
                tmp.unlink(missing_ok=True)
                diff = float(np.abs(have - ref).max()) if have.shape == ref.shape else float("inf")
                raise ConfigError(f"the ONNX step's output differs from the torch model's at "
                                  f"step {n} (max |diff| {diff:.3g}); nothing written to {path}")
            worst = max(worst, float(np.abs(have - ref).max()) if ref.size else 0.0)
    report: dict[str, Any] = {
        "path": str(path), "opset": opset, "stepped": True, "steps_checked": len(steps),
        "step_input_shape": list(steps[0].shape), "state": dict(zip(names, [list(t.shape) for t in initial])),
        "initial_state": {n: "zeros" if not t.any() else "the value reset_state leaves (not zeros; "
                          "not stored in the file)" for n, t in zip(names, initial)},
        "outputs": [list(o.shape) for o in want[0]], "max_abs_diff": worst, "atol": atol,
        "rtol": rtol, "batch": "fixed at the example's", "onnxruntime": ort.__version__,
        "state_inputs_in_graph": sorted(state), "state_feeds_back": feeds_back,
        "metadata_props": sorted(meta)}
    if whole is not None:
        report["max_abs_diff_whole_call"] = _whole_diff(module, whole, got_steps, time_dim, reset,
                                                        atol, rtol, tmp, path)
    tmp.replace(path)
    return report


def _whole_diff(module: Any, whole: Any, got_steps: list[list[Any]], time_dim: int, reset: Any,
                atol: float, rtol: float, tmp: Path, path: Path) -> float:
    """Max |diff| between the stepped ONNX outputs joined along ``time_dim`` and the torch
    model's outputs on the whole sample in one call (ConfigError, file removed, beyond
    tolerance)."""
    import numpy as np

    whole_out = _run_torch(module, [whole], reset)[0]
    worst = 0.0
    for i, ref in enumerate(whole_out):
        have = np.concatenate([g[i] for g in got_steps], axis=time_dim)
        if have.shape != ref.shape or not np.allclose(have, ref, atol=atol, rtol=rtol):
            tmp.unlink(missing_ok=True)
            raise ConfigError(f"the ONNX steps joined along time differ from the torch model's "
                              f"one call on the whole sample (shapes {have.shape} vs {ref.shape}); "
                              f"nothing written to {path}")
        worst = max(worst, float(np.abs(have - ref).max()) if ref.size else 0.0)
    return worst
