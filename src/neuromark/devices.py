"""Devices: the ``device:`` key of algorithm-track configs, ``--device``, and moving batches.

A device is named ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when torch sees a CUDA
device, else the CPU; the choice is printed once and recorded in the results' provenance).
``neuromark run --device`` and ``neuromark train --device`` override every config's
``device:`` (through the run context, :class:`neuromark.context.RunContext`). Asking for
CUDA where torch has none is a
:class:`~neuromark.errors.ConfigError` naming the config file and line (or ``--device``).

Example:
    >>> device_problem("gpu")
    "'gpu' is not a device: use cpu, cuda, cuda:N (N a device index) or auto"
    >>> move_to({"x": [1, (2,)]}, "cpu")
    {'x': [1, (2,)]}
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator

from neuromark.errors import ConfigError

#: The environment variable whose value is the default of ``--device`` (read only when the
#: run context is built, :meth:`neuromark.context.RunContext.build`).
DEVICE_ENV = "NEUROMARK_DEVICE"
#: Device names a config or ``--device`` accepts.
DEVICE_NAMES = ("cpu", "cuda", "cuda:N", "auto")
_DEVICE_PATTERN = re.compile(r"cpu|auto|cuda(:[0-9]+)?")


def device_problem(value: object) -> str | None:
    """Why ``value`` is not a device name (:data:`DEVICE_NAMES`), or None."""
    if isinstance(value, str) and _DEVICE_PATTERN.fullmatch(value):
        return None
    return f"{value!r} is not a device: use cpu, cuda, cuda:N (N a device index) or auto"


def _check_device_name(value: str) -> str:
    problem = device_problem(value)
    if problem:
        raise ValueError(problem)
    return value


#: A config field holding a device name, checked at validation (``device: cuda:1``).
DeviceName = Annotated[str, AfterValidator(_check_device_name)]


def requested_device(configured: str, where: str, override: str | None = None) -> tuple[str, str]:
    """(device name, where it was asked for): ``override`` (``--device``, from the run
    context) when given, else ``configured`` at ``where`` (a config's ``file:line``)."""
    if override:
        problem = device_problem(override)
        if problem:
            raise ConfigError(f"--device: {problem}")
        return override, f"--device {override}"
    return configured, where


def resolve_device(name: str, where: str = "device", *, cuda_devices: int | None = None) -> Any:
    """The ``torch.device`` for a device name (``auto``: CUDA when available, else CPU).

    Args:
        name: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.
        where: what asked for it (``file:line`` or ``--device``), for the error message.
        cuda_devices: CUDA devices present (default: ``torch.cuda.device_count()`` when
            CUDA is available, else 0); tests pass it to act as another machine.

    Raises:
        ConfigError: an unknown name, CUDA asked for without CUDA, or an index past the
            devices present, naming ``where``.
    """
    import torch

    problem = device_problem(name)
    if problem:
        raise ConfigError(f"{where}: device: {problem}")
    if cuda_devices is None:
        cuda_devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if name == "auto":
        return torch.device("cuda" if cuda_devices > 0 else "cpu")
    device = torch.device(name)
    if device.type == "cuda":
        if cuda_devices == 0:
            build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
            raise ConfigError(f"{where}: device: {name}: CUDA is not available here (torch "
                              f"{torch.__version__}, {build}, no CUDA device visible); use "
                              "device: cpu, or auto to take CUDA only where present")
        if device.index is not None and device.index >= cuda_devices:
            raise ConfigError(f"{where}: device: {name}: no such CUDA device ({cuda_devices} "
                              f"present: cuda:0..cuda:{cuda_devices - 1})")
    return device


def config_device(configured: str, where: str, *, override: str | None = None, label: str = "",
                  announce: bool = False) -> Any:
    """The ``torch.device`` a task config runs on: ``configured`` (its ``device:`` key at
    ``where``) unless ``override`` (``--device``) is given (:func:`requested_device`). With
    ``announce``, ``auto`` prints which device it chose (one line on stderr)."""
    name, asked_at = requested_device(configured, where, override)
    device = resolve_device(name, asked_at)
    if announce and name == "auto":
        why = "CUDA available" if device.type == "cuda" else "no CUDA device"
        print(f"{label + ': ' if label else ''}device auto -> {device} ({why})", file=sys.stderr)
    return device


def move_to(data: Any, device: Any, *, non_blocking: bool = True) -> Any:
    """``data`` with every tensor moved to ``device``, through tuples (named tuples too),
    lists and mappings (rebuilt with the same type); other values are returned as they are.
    ``non_blocking`` lets a copy from pinned host memory overlap with the GPU's work."""
    import torch

    if isinstance(data, torch.Tensor):
        return data.to(device, non_blocking=non_blocking)
    if isinstance(data, tuple):
        moved = [move_to(item, device, non_blocking=non_blocking) for item in data]
        return type(data)(*moved) if hasattr(data, "_fields") else type(data)(moved)
    if isinstance(data, list):
        return [move_to(item, device, non_blocking=non_blocking) for item in data]
    if isinstance(data, Mapping):
        items = {key: move_to(value, device, non_blocking=non_blocking) for key, value in data.items()}
        try:
            return type(data)(items)
        except TypeError:  # a mapping type that cannot be built from a dict
            return items
    return data


def module_device(module: Any) -> Any:
    """The device of ``module``'s first parameter or buffer (CPU when it has none)."""
    import torch

    for tensor in (*module.parameters(), *module.buffers()) if isinstance(module, torch.nn.Module) else ():
        return tensor.device
    return torch.device("cpu")


def device_provenance(device: Any, requested: str | None = None) -> dict[str, Any]:
    """The provenance of the device a run used: ``{"used", "type", "name", "requested"}``;
    ``name`` is the GPU's name for CUDA, ``"cpu"`` otherwise."""
    import torch

    device = torch.device(device)
    name = device.type
    if device.type == "cuda" and torch.cuda.is_available():
        if device.index is None:  # "cuda": the current CUDA device
            device = torch.device("cuda", torch.cuda.current_device())
        name = torch.cuda.get_device_name(device)
    return {"used": str(device), "type": device.type, "name": name,
            "requested": requested if requested is not None else str(device)}


def recipe_device(device: Any) -> dict[str, str]:
    """The device's part of a training recipe's identity: ``{}`` on the CPU (so checkpoints
    cached before devices existed keep their hash), else ``{"device": type}`` (``cuda``;
    the index is left out: any GPU of one kind trains the same recipe)."""
    kind = getattr(device, "type", str(device).split(":")[0])
    return {} if kind == "cpu" else {"device": kind}


def checkpoint_device_meta(device: Any) -> dict[str, str]:
    """What a checkpoint records of its training: ``{"device", "torch_version"}``."""
    import torch

    return {"device": str(device), "torch_version": str(torch.__version__)}


@contextlib.contextmanager
def deterministic_algorithms(enabled: bool) -> Iterator[None]:
    """With ``enabled``, ``torch.use_deterministic_algorithms(True)`` inside the block (and
    ``CUBLAS_WORKSPACE_CONFIG=:4096:8``, which cuBLAS needs for it); the previous settings
    come back after. An op without a deterministic version then raises."""
    if not enabled:
        yield
        return
    import torch

    before = torch.are_deterministic_algorithms_enabled()
    workspace = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)
        if workspace is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
