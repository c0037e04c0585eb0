"""A custom SUT's answers are checked on the first query, before LoadGen runs (issue 33,
point 3): labels given as a list, a response that is a list, a wrong shape and NaN each fail
at once with a message naming the SUT and the field, and no LoadGen test starts."""

from __future__ import annotations

import re

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.registry import suts
from neuromark.system.sut import BuiltSUT, InMemoryLibrary

pytest.importorskip("mlperf_loadgen")


class Custom:
    """A user's SUT: ``issue`` answers each index with ``answer(index)``; counts queries."""

    name = "custom"
    response_dtype = "<f4"

    def __init__(self, answer):
        self.answer = answer
        self.queries = 0

    def issue(self, indices):
        self.queries += 1
        return [self.answer(i) for i in indices]


def logits(i):
    out = np.zeros(4, "<f4")
    out[i % 4] = 1.0
    return out


CASES = {
    "labels-list": (logits, [0, 1, 2, 3, 0, 1, 2, 3],
                    "SUT 'custom-sut': BuiltSUT.labels is a list; give a numpy array of 8 class "
                    "indices"),
    "response-list": (lambda i: [0.0, 1.0, 0.0, 0.0], np.arange(8) % 4,
                      r"SUT 'custom-sut': issue\(\[0\]\): the response is a list; expected a "
                      "numpy array of the declared response_dtype <f4"),
    "wrong-shape": (lambda i: logits(i)[:2], np.arange(8) % 4,
                    r"SUT 'custom-sut': the response has shape \(2,\); scored against labels up "
                    "to 3 it must be 1-D with at least 4 class scores"),
    "nan": (lambda i: np.full(4, np.nan, "<f4"), np.arange(8) % 4,
            r"SUT 'custom-sut': issue\(\[0\]\): the response holds non-finite values"),
    "wrong-dtype": (lambda i: logits(i).astype("<f8"), np.arange(8) % 4,
                    r"issue\(\[0\]\): the response has dtype <f8, expected the declared "
                    "response_dtype <f4"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_custom_sut_fails_on_the_first_query_before_loadgen(tmp_path, capsys, case):
    answer, labels, message = CASES[case]
    made = []

    def factory(samples: int = 8) -> BuiltSUT:
        sut = Custom(answer)
        made.append(sut)
        return BuiltSUT(sut, InMemoryLibrary("values", float, samples), labels=labels)

    suts.register("custom-sut", factory)
    try:
        config = tmp_path / "c.yaml"
        config.write_text("task: system\nbenchmark: {id: custom}\nsut: {name: custom-sut}\n"
                          "accuracy: true\ntiming: {warmup: 0}\nloadgen:\n  min_query_count: 64\n"
                          "  min_duration_s: 5\n")
        out = tmp_path / "out"
        assert main(["run", str(config), "--out", str(out), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert re.search(message, err), err
        assert "Traceback" not in err
        assert made[0].queries <= 2  # the first queries only: LoadGen never ran
        assert not list(out.rglob("mlperf_log_*"))
    finally:
        suts._entries.pop("custom-sut")


def test_good_custom_sut_passes_the_first_query_check(tmp_path):
    from neuromark.system.sut import check_first_response

    sut = Custom(logits)
    built = BuiltSUT(sut, InMemoryLibrary("values", float, 8), labels=np.arange(8) % 4)
    check_first_response(built, "custom-sut", scored=True)
    assert sut.queries == 2 and built.library.cache == {}  # samples 0 and 1, unloaded after
