"""Round four (issue 59): ``neuromark.testing``'s checks on components that raise, and a
training script's output file. A contract check must answer with a ContractError naming the
component and the call (never the component's own exception), every earlier problem kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from hostile_common import CliError, case

T = "test_testing_guard.py::"


def _contract(check: Any) -> Any:
    """``check()``, a ContractError turned into the sweep's clear-error type (the message is
    what a plugin author reads); any other exception stays a crash."""
    from neuromark.testing.results import ContractError

    def act() -> Any:
        try:
            return check()
        except ContractError as exc:
            raise CliError(str(exc)) from exc
    return act


def _trace(path: Path) -> Path:
    from neuromark.system.timing import now_s

    t = now_s() + np.arange(-1.0, 10.0, 0.001)
    path.write_text("t_s,power_w\n" + "".join(f"{x:.6f},2.000\n" for x in t))
    return path


@case("meter-nan-energy-then-timeline-raises", "every problem found, then the call that raised",
      T + "test_a_meter_error_is_a_contract_error_listing_the_earlier_problem",
      needs=("energy() is nan", "timeline() raised RuntimeError"))
def _(tmp: Path) -> Any:
    from neuromark.system.power.csv_trace import CsvTraceMeter
    from neuromark.testing import check_meter

    class Meter(CsvTraceMeter):
        def energy(self, t0: float, t1: float) -> float:
            return super().energy(t0, t1) if t1 < t0 else float("nan")

        def timeline(self) -> dict:
            raise RuntimeError("trace buffer freed")

    trace = _trace(tmp / "t.csv")
    return _contract(lambda: check_meter(Meter(trace, offset_s=0)))


@case("meter-mark-raises-typeerror", "the call that raised is named",
      T + "test_a_meter_raising_in_mark_names_the_call",
      needs=("mark('neuromark-testing-start') raised TypeError",))
def _(tmp: Path) -> Any:
    from neuromark.system.power.csv_trace import CsvTraceMeter
    from neuromark.testing import check_meter

    class Meter(CsvTraceMeter):
        def mark(self, label: str) -> float:
            raise TypeError("mark() takes no label")

    trace = _trace(tmp / "t.csv")
    return _contract(lambda: check_meter(Meter(trace, offset_s=0)))


@case("adapter-forward-raises-valueerror", "the forward pass that raised is named",
      T + "test_a_model_error_is_a_contract_error_naming_the_forward_pass",
      needs=("forward pass", "raised ValueError", "expected 7 features"))
def _(tmp: Path) -> Any:
    import torch
    from torch import nn

    from neuromark.testing import check_adapter

    class Refusing(nn.Module):
        def forward(self, x: Any) -> Any:
            raise ValueError("expected 7 features")

    return _contract(lambda: check_adapter(Refusing(), torch.rand(4, 3, 5)))


@case("sut-issue-raises-runtimeerror", "the query that raised is named",
      T + "test_a_sut_error_is_a_contract_error_naming_the_call",
      needs=("SUT 'null'", "raised RuntimeError", "board unplugged"))
def _(tmp: Path) -> Any:
    from neuromark.system.sut import BuiltSUT, InMemoryLibrary
    from neuromark.system.suts.null import NullSUT
    from neuromark.testing import check_sut

    class Unplugged(NullSUT):
        def issue(self, indices: Any) -> Any:
            raise RuntimeError("board unplugged")

    library = InMemoryLibrary("t", lambda i: np.full(3, float(i), np.float32), 4)
    return _contract(lambda: check_sut(BuiltSUT(Unplugged(), library)))


@case("sut-factory-raises-keyerror", "the factory that raised is named",
      T + "test_a_sut_factory_error_names_the_factory",
      needs=("SUT factory 'my_board'", "raised KeyError"))
def _(tmp: Path) -> Any:
    from neuromark.testing import check_sut

    def my_board(**options: Any) -> Any:
        raise KeyError("port")

    return _contract(lambda: check_sut(my_board, {"samples": 4}))


@case("asc-training-out-over-a-users-file", "never replace a file it did not write",
      "test_output_claims.py::test_asc_training_refuses_a_users_file_before_any_work",
      needs=("weights.pt", "the file exists", "--overwrite"))
def _(tmp: Path) -> Any:
    from neuromark.benchmarks.acoustic_scenes.model import main

    (tmp / "weights.pt").write_bytes(b"my own weights")

    def act() -> Any:
        import contextlib
        import io

        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                main(["--root", str(tmp / "no-root"), "--out", str(tmp / "weights.pt")])
        except SystemExit as exc:
            raise CliError(err.getvalue()) from exc
    return act
