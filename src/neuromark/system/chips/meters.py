"""The chips' own power recording as :data:`neuromark.registry.meters` entries.

- ``akida_power``: an Akida SoC's on-board power meter (``device.soc.power_meter``; the SDK's
  ``PowerEvent``: timestamp in ms on the device clock, power in mW). Events are placed on
  the host's monotonic clock by their device timestamps, anchored at the first poll that
  returns any (the offset's error is one polling interval at most).
- ``xylo_power``: a Xylo HDK's power monitor as Rockpool sets it up
  (``set_power_measure(hdk, frequency)`` of the board's ``*_devkit_utils``: events with a
  ``channel`` (IO, SNN core, AFE ...) and a ``value`` in W). Each poll adds one sample: the sum
  over channels of the mean of that channel's events since the previous poll, at the
  poll's host time.

Both poll in a background thread every ``interval_s`` and at ``start``/``stop``/``mark``;
energy is the trapezoid integral of the samples (:func:`~neuromark.system.power.protocol.integrate_power`).
Opening the board is one method (``open_board``), so tests replace it with a fake of the
board's interface; on a machine without a board it raises :class:`DataError` naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuromark.errors import DataError
from neuromark.system.chips import require
from neuromark.system.power.polling import PollingMeter
from neuromark.system.power.protocol import PowerSamples
from neuromark.system.timing import now_s


class PolledPowerMeter(PowerSamples, PollingMeter):
    """Base class: subclasses set ``name``/``components`` and implement ``open_board()`` and
    ``read(t_host) -> list[(t_s or None, power_w)]`` (None: stamped with the poll's host time
    ``t_host``)."""

    name = "polled"
    measured = True
    point: str | None = "dut"
    components: list[str] = []

    def __init__(self, interval_s: float = 0.05) -> None:
        super().__init__(interval_s)
        self.t: list[float] = []
        self.p: list[float] = []
        self.board: Any = None

    def open_board(self) -> Any:
        raise NotImplementedError

    def read(self, t_host: float) -> list[tuple[float | None, float]]:
        raise NotImplementedError

    def _poll_once(self) -> float:
        with self._lock:
            t_host = now_s()
            for t, p in self.read(t_host):
                self.t.append(t_host if t is None else t)
                self.p.append(p)
        return t_host

    def start(self) -> None:
        if self.board is None:
            self.board = self.open_board()
        super().start()

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            t, p = np.asarray(self.t, dtype=np.float64), np.asarray(self.p, dtype=np.float64)
        order = np.argsort(t, kind="stable")
        return t[order], p[order]

    def _source(self) -> str:
        return f"{self.name} meter"

    def _marks(self) -> list[tuple[str, float]]:
        return self.marks

    def metadata(self) -> dict[str, Any]:
        return {"name": self.name, "measured": True, "reason": "", "point": self.point,
                "components": self.components, "sample_rate_hz": 1.0 / self.interval_s}


class AkidaPowerMeter(PolledPowerMeter):
    """``akida_power``: the power events of ``akida.devices()[device]``'s SoC (see the module).

    Args:
        device: index in ``akida.devices()`` (the board the ``akida`` SUT maps onto with
            ``target: hardware, hardware_index: ...``).
        interval_s: polling interval of ``power_meter.events()``.
    """

    name = "akida_power"
    components = ["Akida SoC (on-board power meter: voltage x current of the chip's supply)"]

    def __init__(self, device: int = 0, interval_s: float = 0.05) -> None:
        super().__init__(interval_s)
        self.device = device
        self._anchor: tuple[float, float] | None = None  # (host s, device ms)
        self.floor_w: float | None = None

    def open_board(self) -> Any:
        sdk = require("akida")
        found = sdk.devices()
        if self.device >= len(found):
            raise DataError(f"meter akida_power: device {self.device}, but akida.devices() lists "
                            f"{len(found)} board(s); use meter: null (with its reason) without a board")
        soc = found[self.device].soc
        if soc is None:
            raise DataError(f"meter akida_power: {found[self.device].desc} is not an Akida SoC and "
                            "has no power meter")
        soc.power_measurement_enabled = True
        soc.power_meter.events()  # drop what was logged before the run
        return soc.power_meter

    def read(self, t_host: float) -> list[tuple[float | None, float]]:
        events = list(self.board.events())
        if not events:
            return []
        if self._anchor is None:
            self._anchor = (t_host, float(events[-1].ts))
        host, device_ms = self._anchor
        return [(host + (float(e.ts) - device_ms) / 1e3, float(e.power) / 1e3) for e in events]

    def stop(self) -> None:
        super().stop()
        floor = getattr(self.board, "floor", None)
        self.floor_w = None if floor is None else float(floor) / 1e3

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "device": self.device, "floor_w": self.floor_w,
                "source": "akida SoC PowerMeter events (mW), device timestamps (ms)"}


class XyloPowerMeter(PolledPowerMeter):
    """``xylo_power``: a Xylo HDK's power monitor through Rockpool (see the module).

    Args:
        hdk: index in ``rockpool.devices.xylo.find_xylo_hdks()``.
        frequency_hz: the monitor's sampling frequency (Rockpool's ``power_frequency``).
        interval_s: polling interval of the event buffer.
    """

    name = "xylo_power"
    components = ["Xylo HDK power rails (IO, SNN core, AFE), summed"]

    def __init__(self, hdk: int = 0, frequency_hz: float = 20.0, interval_s: float = 0.05) -> None:
        super().__init__(interval_s)
        if frequency_hz <= 0:
            raise DataError(f"meter xylo_power: frequency_hz must be > 0, got {frequency_hz}")
        self.hdk, self.frequency_hz = hdk, frequency_hz
        self._monitor: Any = None

    def open_board(self) -> Any:
        require("xylo")
        try:
            from rockpool.devices.xylo import find_xylo_hdks
        except ImportError as exc:
            raise DataError(f"meter xylo_power needs samna, the Xylo board driver ({exc}); use "
                            "meter: null (with its reason) without a board") from exc
        hdks, modules, versions = find_xylo_hdks()
        if self.hdk >= len(hdks):
            raise DataError(f"meter xylo_power: hdk {self.hdk}, but find_xylo_hdks() found "
                            f"{len(hdks)} board(s) {versions}; use meter: null (with its reason) "
                            "without a board")
        utils = [getattr(modules[self.hdk], n) for n in dir(modules[self.hdk])
                 if n.endswith("_devkit_utils")]
        if not utils or not hasattr(utils[0], "set_power_measure"):
            raise DataError(f"meter xylo_power: Rockpool has no power measurement for the "
                            f"{versions[self.hdk]} board")
        buffer, self._monitor = utils[0].set_power_measure(hdks[self.hdk], self.frequency_hz)
        buffer.get_events()  # drop what was logged before the run
        return buffer

    def read(self, t_host: float) -> list[tuple[float | None, float]]:
        events = list(self.board.get_events())
        if not events:
            return []
        by_channel: dict[int, list[float]] = {}
        for e in events:
            by_channel.setdefault(int(e.channel), []).append(float(e.value))
        return [(None, float(sum(np.mean(v) for v in by_channel.values())))]

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "hdk": self.hdk, "frequency_hz": self.frequency_hz,
                "source": "Xylo HDK power monitor (Rockpool set_power_measure), W per rail"}
