"""NVIDIA GPU energy through NVML (``nvidia-ml-py``, import ``pynvml``).

Uses ``nvmlDeviceGetTotalEnergyConsumption`` (mJ since the driver loaded; Volta and newer)
and differences of that counter, not instantaneous power readings, which NVML averages over
an undocumented window. See https://docs.nvidia.com/deploy/nvml-api/.
"""

from __future__ import annotations

from typing import Any

from neuromark.errors import DataError, require
from neuromark.system.power.counter import CounterMeter


class NvmlMeter(CounterMeter):
    """GPU ``index``'s board energy counter, polled every ``interval_s``."""

    name = "nvml"
    point = "board"

    def __init__(self, index: int = 0, interval_s: float = 0.01, nvml: Any = None) -> None:
        super().__init__(interval_s)
        self.nvml = nvml or require("pynvml", "system")
        try:
            self.nvml.nvmlInit()
            self.handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
            device = self.nvml.nvmlDeviceGetName(self.handle)
        except Exception as exc:  # pynvml raises NVMLError subclasses
            raise DataError(f"NVML: cannot open GPU {index}: {exc} (is an NVIDIA driver "
                            "installed and the GPU visible?)") from None
        self.device = device.decode() if isinstance(device, bytes) else str(device)
        self.domains = [f"gpu{index}"]
        self.components = [f"GPU {index} board ({self.device})"]
        self._base_mj: int | None = None
        self.read_j()

    def read_j(self) -> dict[str, float]:
        try:
            mj = int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except Exception as exc:
            raise DataError(f"NVML: energy counter unavailable on {self.device}: {exc} "
                            "(needs a Volta or newer GPU)") from None
        if self._base_mj is None:
            self._base_mj = mj
        return {self.domains[0]: (mj - self._base_mj) * 1e-3}

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "device": self.device}
