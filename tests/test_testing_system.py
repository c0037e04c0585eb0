"""Every registered SUT and power meter passes the checks of :mod:`neuromark.testing` that
plugin authors run on theirs (issue 46, item 3), a family's SUT with the options of its
``cases.SUT_CASES``; those needing a chip's SDK skip, saying so, where it is absent. The
checks can fail: a broken SUT or meter is refused, naming why."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from family_cases import SUT_KEYS, gather, skip_without
from test_system_ptd import fake_ptd  # noqa: F401 - the fake PTDaemon fixture

from neuromark.errors import ConfigError
from neuromark.registry import meters, suts
from neuromark.system.power.csv_trace import CsvTraceMeter
from neuromark.system.power.null import NullMeter
from neuromark.system.sut import BuiltSUT, InMemoryLibrary
from neuromark.system.suts.null import NullSUT
from neuromark.system.timing import now_s
from neuromark.testing import check_meter, check_sut
from neuromark.testing.results import ContractError

#: Options of each kernel SUT's smallest build (those of the system tests); a family's SUTs
#: have theirs in its ``cases.SUT_CASES``.
KERNEL_SUT_OPTIONS: dict[str, dict[str, Any]] = {
    "null": {"samples": 8},
    "sleep": {"samples": 4, "sleep_s": 0.0005},
    "akida": {"hidden": 16, "groups": 10, "time_bins": 2, "epochs": 15, "train_samples": 60,
              "samples": 12},  # test_chip_akida.TINY
    "xylo": {"hidden": 8, "classes": 4, "dt_us": 40_000, "epochs": 5, "train_samples": 80,
             "samples": 8},  # test_chip_xylo.TINY
    "remote": {},
    "spoken_digits_cpu": {"precision": "int8", "hidden": 8, "epochs": 5, "train_samples": 80,
                          "samples": 24},  # test_chip_shared_task
}
SUT_CASES = gather("SUT_CASES", {name: {"options": opts} for name, opts in KERNEL_SUT_OPTIONS.items()})
SDK = {"akida": "akida", "xylo": "xylo"}


def test_every_sut_and_meter_has_a_case():
    assert set(suts.names()) == set(SUT_CASES)
    assert set(meters.names()) == set(METER_CASES)
    for name, found in SUT_CASES.items():
        assert set(found.case) <= SUT_KEYS, f"SUT case {name!r} ({found.family}): keys {sorted(found.case)}"


@pytest.mark.parametrize("name", sorted(SUT_CASES))
def test_every_sut_passes_the_check(name):
    case = SUT_CASES[name].case
    skip_without(case.get("needs", ()))
    if name in SDK:
        from neuromark.system.chips import require

        try:
            require(SDK[name])
        except ConfigError as exc:
            pytest.skip(f"{name}: {exc}")
    if name == "remote":
        from test_system_remote import server

        with server("null") as address:
            check = check_sut("remote", {"address": address, "samples": 8, "calibration": 2})
    else:
        check = check_sut(name, case["options"])
    assert check.responses and all(isinstance(r, np.ndarray) for r in check.responses)


def _library(n: int = 6) -> InMemoryLibrary:
    return InMemoryLibrary("t", lambda i: np.full(3, float(i), np.float32), n)


class Counting:
    """A SUT that (wrongly) keeps state: each answer counts the queries so far."""

    name, response_dtype, stateful = "counting", "<f4", None

    def __init__(self) -> None:
        self.calls = 0

    def issue(self, indices):
        out = []
        for _ in indices:
            self.calls += 1
            out.append(np.array([self.calls], np.float32))
        return out


def test_a_broken_sut_is_refused_naming_why():
    closed = []
    built = BuiltSUT(Counting(), _library(), close=lambda: closed.append(1))
    with pytest.raises(ContractError, match="differ when issued in one query"):
        check_sut(built)
    assert closed == [1]  # closed also when the check fails
    built.sut.stateful = "counts every query"  # declared: the order may change its answers
    assert check_sut(built).name == "counting"
    with pytest.raises(ContractError, match="performance_count"):
        lib = _library()
        lib.performance_count = 0
        check_sut(BuiltSUT(NullSUT(), lib))
    with pytest.raises(ContractError, match="returned a dict"):
        check_sut(lambda: {"sut": NullSUT()})


# --- meters -------------------------------------------------------------------------------

def _trace(path, watts: float = 2.5):
    """A CSV trace on the host clock (offset 0) from 1 s ago to 10 s ahead, 1 kHz."""
    t = now_s() + np.arange(-1.0, 10.0, 0.001)
    path.write_text("t_s,power_w\n" + "".join(f"{x:.6f},{watts:.3f}\n" for x in t))
    return path


def _null(tmp_path, request):
    return NullMeter("no instrument here"), None, None


def _csv(tmp_path, request):
    return CsvTraceMeter(_trace(tmp_path / "trace.csv"), offset_s=0), None, 2.5


def _rapl(tmp_path, request):
    from test_system_power import make_rapl

    from neuromark.system.power.rapl import RaplMeter

    make_rapl(tmp_path, max_uj=10**12)
    counter = tmp_path / "intel-rapl:0/energy_uj"

    def work():  # the fake package counter advances 0.5 J during the window
        time.sleep(0.01)
        counter.write_text("500000\n")
        time.sleep(0.01)

    return RaplMeter(tmp_path, domains=("package",), interval_s=0.002), work, None


def _nvml(tmp_path, request):
    from test_system_power import FakeNvml

    from neuromark.system.power.nvml import NvmlMeter

    return NvmlMeter(0, nvml=FakeNvml()), None, None


def _ptd(tmp_path, request):
    from neuromark.system.power.ptd import PtdMeter

    ptd = request.getfixturevalue("fake_ptd")
    return (PtdMeter(ptd.log, address=ptd.address, interval_ms=20, settle_s=0),
            lambda: time.sleep(0.3), 40.0)


class FakeBoard:
    """A chip's power readout at a constant power: Akida's SoC events (``events()``: device
    time in ms, power in mW) or Xylo's power buffer (``get_events()``: rail, watts)."""

    def __init__(self, milliwatts: float) -> None:
        self.mw = milliwatts
        self.floor = 0.0

    def events(self):
        return [SimpleNamespace(ts=now_s() * 1000.0, power=self.mw)]

    def get_events(self):  # two rails: IO and the SNN core, half each
        half = self.mw / 2000
        return [SimpleNamespace(channel=0, value=half), SimpleNamespace(channel=1, value=half)]


def _chip(extra: str, meter: str):
    def case(tmp_path, request):
        from neuromark.system.chips import require

        try:
            require(extra)
        except ConfigError as exc:
            pytest.skip(f"{meter}: {exc}")
        built = meters.get(meter)(interval_s=0.005)
        built.open_board = lambda: FakeBoard(500.0)
        return built, lambda: time.sleep(0.1), 0.5

    return case


METER_CASES = {"null": _null, "csv": _csv, "rapl": _rapl, "nvml": _nvml, "ptd": _ptd,
               "akida_power": _chip("akida", "akida_power"), "xylo_power": _chip("xylo", "xylo_power")}


@pytest.mark.parametrize("name", sorted(METER_CASES))
def test_built_in_meter_passes_the_check(name, tmp_path, request):
    meter, work, watts = METER_CASES[name](tmp_path, request)
    check = check_meter(meter, work=work)
    if name == "null":
        assert check.energy_j is None and check.samples == 0
    if watts is not None:  # a known constant power: the mean over the window is it
        assert check.power_w == pytest.approx(watts, rel=0.02)


class ZeroMeter(NullMeter):
    """Says it does not measure but answers 0 J: the silent zero the contract forbids."""

    def energy(self, t0, t1):
        return 0.0


def test_a_broken_meter_is_refused_naming_why(tmp_path):
    with pytest.raises(ContractError, match="must raise MetricError"):
        check_meter(ZeroMeter())
    meter = CsvTraceMeter(_trace(tmp_path / "t.csv", 2.0), offset_s=0)
    with pytest.raises(ContractError, match=r"energy\(\) is .* J over"):
        check_meter(meter, expected_j=123.0)
    with pytest.raises(ContractError, match="not a PowerMeter"):
        check_meter(object())
