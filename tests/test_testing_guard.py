"""neuromark.testing's checks raise ContractError whatever the component raises, naming the
component and the call, and keep every problem found before it (issue 59, item 6)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_testing_system import _library, _trace
from torch import nn

from neuromark.system.power.csv_trace import CsvTraceMeter
from neuromark.system.sut import BuiltSUT
from neuromark.system.suts.null import NullSUT
from neuromark.testing import check_adapter, check_meter, check_sut
from neuromark.testing.guard import Problems, contract_check
from neuromark.testing.results import ContractError


class NanThenBrokenTimeline(CsvTraceMeter):
    """Energy NaN (a problem), then timeline() raises: both must be reported."""

    def energy(self, t0, t1):
        if t1 < t0:
            return super().energy(t0, t1)
        return float("nan")

    def timeline(self):
        raise RuntimeError("trace buffer freed")


def test_a_meter_error_is_a_contract_error_listing_the_earlier_problem(tmp_path):
    meter = NanThenBrokenTimeline(_trace(tmp_path / "t.csv"), offset_s=0)
    with pytest.raises(ContractError) as info:
        check_meter(meter)
    text = str(info.value)
    assert "energy() is nan" in text  # the problem found first is not lost
    assert "timeline() raised RuntimeError: trace buffer freed" in text
    assert "2 contract problem(s)" in text
    assert isinstance(info.value.__cause__, RuntimeError)


class MarkTypeError(CsvTraceMeter):
    def mark(self, label):
        raise TypeError("mark() takes no label")


def test_a_meter_raising_in_mark_names_the_call(tmp_path):
    with pytest.raises(ContractError, match=r"mark\('neuromark-testing-start'\) raised TypeError"):
        check_meter(MarkTypeError(_trace(tmp_path / "t.csv"), offset_s=0))


class Refusing(nn.Module):
    def forward(self, x):
        raise ValueError("expected 7 features")


def test_a_model_error_is_a_contract_error_naming_the_forward_pass():
    with pytest.raises(ContractError, match="forward pass of a batch of 2 raised ValueError: "
                                            "expected 7 features"):
        check_adapter(Refusing(), torch.rand(4, 3, 5), batch_sizes=(1, 2))


class IssueFails(NullSUT):
    def issue(self, indices):
        raise RuntimeError("board unplugged")


def test_a_sut_error_is_a_contract_error_naming_the_call():
    closed = []
    built = BuiltSUT(IssueFails(), _library(), close=lambda: closed.append(1))
    with pytest.raises(ContractError, match=r"raised RuntimeError: board unplugged"):
        check_sut(built)
    assert closed == [1]


def test_a_sut_factory_error_names_the_factory():
    def my_board(**options):
        raise KeyError("port")

    named = r"(?s)SUT factory 'my_board'.*my_board\(\*\*options\) raised KeyError"
    with pytest.raises(ContractError, match=named):
        check_sut(my_board, {"samples": 4})


def test_problems_and_the_safety_net():
    problems = Problems("thing")
    problems.append("first problem")
    with pytest.raises(ContractError) as info, problems.calling("go()"):
        np.zeros(2)[5]
    assert "first problem" in str(info.value) and "go() raised IndexError" in str(info.value)

    @contract_check
    def check_thing():
        return {}["missing"]

    with pytest.raises(ContractError, match="check_thing: the checked component raised KeyError"):
        check_thing()
    clean = Problems("clean")
    with clean.calling("fine()"):
        pass
    clean.raise_if_any()  # no problem: nothing raised
