"""Timing rules: stage timers, warm-up, latency statistics, raw-timing compression."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neuromark.errors import DataError
from neuromark.system.timing import (
    RAW_INLINE_LIMIT,
    StageTimer,
    decode_ns,
    encode_ns,
    latency_stats,
    timer_resolution_ns,
)


def test_latency_stats_hand_computed():
    # 1, 2, 3, 4 ms: mean 2.5 ms, sample std sqrt(5/3) ms, stderr = std / 2
    stats = latency_stats([1_000_000, 2_000_000, 3_000_000, 4_000_000])
    assert stats["n"] == 4
    assert stats["mean_s"] == pytest.approx(2.5e-3)
    assert stats["stderr_s"] == pytest.approx(math.sqrt(5 / 3) * 1e-3 / 2)
    assert stats["median_s"] == pytest.approx(2.5e-3)
    assert stats["p90_s"] == pytest.approx(3.7e-3)  # linear: 1 + 0.9*3 = 3.7
    assert stats["p99_s"] == pytest.approx(3.97e-3)
    assert (stats["min_s"], stats["max_s"]) == (pytest.approx(1e-3), pytest.approx(4e-3))


def test_latency_stats_single_and_empty():
    assert latency_stats([5])["stderr_s"] is None  # one sample: no error estimate, not 0
    with pytest.raises(DataError, match="inference: no timed samples"):
        latency_stats([], name="inference")


def test_stage_timer_warmup_and_total():
    timer = StageTimer(("preprocess", "inference"), warmup=2)
    for i in range(5):
        timer.add("preprocess", 100 * (i + 1))
        timer.add("inference", 1000)
    assert timer.warm["preprocess"] == [100, 200]
    assert timer.samples["preprocess"] == [300, 400, 500]
    stats = timer.stats()
    assert stats["total"]["mean_s"] == pytest.approx(1400e-9)
    assert stats["inference"]["stderr_s"] == 0.0
    with pytest.raises(DataError, match="warm-up count must be >= 0"):
        StageTimer(("a",), warmup=-1)


def test_raw_timings_roundtrip_compressed():
    small = list(range(10))
    assert encode_ns(small) == small
    big = np.arange(RAW_INLINE_LIMIT + 5, dtype=np.int64) * 7
    enc = encode_ns(big)
    assert enc["encoding"] == "zlib+base64" and enc["n"] == big.size
    np.testing.assert_array_equal(decode_ns(enc), big)
    with pytest.raises(DataError, match="unknown encoding"):
        decode_ns({"encoding": "gzip"})


def test_timer_resolution_is_positive_and_small():
    res = timer_resolution_ns(200)
    assert 0 < res["min_step_ns"] <= res["median_step_ns"] < 1e6
