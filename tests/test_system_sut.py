"""Ready-made SUTs and the sample library: stage timing, warm-up, errors naming samples."""

from __future__ import annotations

import time

import numpy as np
import pytest

from neuromark.errors import DataError, ModelOutputError
from neuromark.system.sut import InMemoryLibrary, StagedSUT
from neuromark.system.suts.null import NullSUT
from neuromark.system.suts.sleep import SleepSUT


def test_library_loads_untimed_and_names_missing_samples():
    fetched = []
    lib = InMemoryLibrary("toy", lambda i: fetched.append(i) or i * 10, 5)
    lib.load([1, 3])
    assert fetched == [1, 3] and lib.get(3) == 30
    lib.unload([3])
    with pytest.raises(DataError, match="sample library 'toy': sample 3 was not loaded"):
        lib.get(3)
    with pytest.raises(DataError, match="sample library 'empty' is empty"):
        InMemoryLibrary("empty", lambda i: i, 0)


def test_staged_sut_times_each_stage_separately():
    lib = InMemoryLibrary("toy", lambda i: np.full(3, i, dtype=np.float32), 4)
    lib.load(range(4))

    def slow_pre(x):
        time.sleep(0.02)
        return x * 2

    syncs = []
    sut = StagedSUT("toy", lib, slow_pre, lambda f: f + 1, response_dtype="<f4", warmup=1,
                    sync=lambda: syncs.append(1))
    out = sut.issue([0, 1, 2])
    np.testing.assert_array_equal(out[2], [5, 5, 5])
    assert out[0].dtype == np.dtype("<f4")
    assert len(sut.timer.warm["preprocess"]) == 1 and len(sut.timer.samples["preprocess"]) == 2
    stats = sut.timer.stats()
    assert stats["preprocess"]["min_s"] >= 0.02 > stats["inference"]["max_s"]
    assert len(syncs) == 6  # after each stage of each sample


def test_staged_sut_errors_name_the_sample():
    lib = InMemoryLibrary("toy", lambda i: i, 4)
    lib.load(range(4))

    def infer(x):
        if x == 2:
            raise RuntimeError("bad input")
        return np.array([np.nan if x == 3 else 1.0])

    sut = StagedSUT("toy", lib, lambda x: x, infer)
    with pytest.raises(ModelOutputError, match="SUT 'toy' failed on sample 2: RuntimeError: bad input"):
        sut.issue([0, 2])
    with pytest.raises(ModelOutputError, match="non-finite response to sample 3"):
        sut.issue([3])


def test_null_and_sleep_suts():
    assert [a.size for a in NullSUT().issue([1, 2, 3])] == [0, 0, 0]
    sut = SleepSUT(0.001)
    sut.issue([0, 1])
    assert sut.timer.stats()["inference"]["min_s"] >= 0.001
    with pytest.raises(DataError, match="sleep_s must be >= 0"):
        SleepSUT(-1)


def test_esn_forecast_step_sut_predicts_the_next_value():
    pytest.importorskip("torch")
    from neuromark.benchmarks.mackey_glass.sut import build_esn_pipeline, synthetic_series

    library, sut, info = build_esn_pipeline(data="synthetic", tau=17, samples=300, seed=0, threads=1)
    assert sut.response_dtype == "<f8" and info["train_points"] == 1000
    library.load(range(300))
    out = np.concatenate(sut.issue(list(range(300))))  # in order: teacher-forced one-step forecast
    test = synthetic_series(2000)[1000:1300]
    rmse = np.sqrt(np.mean((out[50:-1] - test[51:]) ** 2))
    persistence = np.sqrt(np.mean((test[50:-1] - test[51:]) ** 2))
    assert rmse < 0.01 * persistence
    assert sut.timer.stats()["inference"]["n"] == 300


def test_factory_options_are_checked_against_the_signature():
    from neuromark.components import ComponentSpec, accepted, check_options
    from neuromark.errors import ConfigError
    from neuromark.registry import Registry

    class Local:  # an annotation that does not resolve from the module: not type-checked
        pass

    def strict(*, n: int = 1, thing: Local | None = None, seed: int = 0):
        return n

    def loose(*, rate: float, **rest):
        return rate

    reg = Registry("suts")
    reg.register("strict", strict)
    reg.register("loose", loose)
    run = {"seed": "top-level seed"}
    checked = check_options(reg, ComponentSpec(name="strict", options={"n": "3"}), run_arguments=run)
    assert checked == {"n": 3, "thing": None}
    assert check_options(reg, ComponentSpec(name="strict", options={"thing": "x"}))["thing"] == "x"
    assert check_options(reg, ComponentSpec(name="loose", options={"rate": 2, "extra": [1]})) == {
        "rate": 2.0, "extra": [1]}
    with pytest.raises(ConfigError, match=r"s.options.rate: Field required"):
        check_options(reg, ComponentSpec(name="loose"), loc=("s",))
    with pytest.raises(ConfigError, match=r"s.options.seed: given by the run \(top-level seed\)"):
        check_options(reg, ComponentSpec(name="strict", options={"seed": 1}), loc=("s",),
                      run_arguments=run)
    assert accepted(strict, seed=1, config_dir="d") == {"seed": 1}
    assert accepted(loose, seed=1, config_dir="d") == {"seed": 1, "config_dir": "d"}
