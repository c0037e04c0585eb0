"""Histogram and 6-channel time surface equal slow per-event references."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.data.event_dtypes import make_camera_events
from neuromark.processors.event_frames import EventTensor


def _events(n=4000, seed=0, t_max=320_000):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(-20_000, t_max, n))
    # hot pixels so that histogram cells clip at 1
    x = np.where(rng.random(n) < 0.2, 5, rng.integers(0, 70, n))
    y = np.where(rng.random(n) < 0.2, 3, rng.integers(0, 40, n))
    return make_camera_events(t, x, y, rng.integers(0, 2, n))


def _slow(ev, kind, start, dt, bins, h, w, ds, max_incr=5.0):
    c = 2 if kind == "histo" else 6
    out = np.zeros((bins, c, h, w), np.float64)
    counts = np.zeros_like(out)
    for t, x, y, p in zip(ev["t"].tolist(), ev["x"].tolist(), ev["y"].tolist(), ev["p"].tolist()):
        rel = t - start
        if rel < 0 or rel >= bins * dt:
            continue
        b, xi, yi = rel // dt, x >> ds, y >> ds
        if xi >= w or yi >= h:
            continue
        if kind == "histo":
            counts[b, p, yi, xi] += 1
        else:
            within = (rel - b * dt) * 3.0 / dt
            ub = min(int(within), 2)
            out[b, 2 * ub + p, yi, xi] = max(out[b, 2 * ub + p, yi, xi], within - ub)
    if kind == "histo":
        out = np.minimum(counts / (max_incr * 4 ** ds), 1.0)
    return out.astype(np.float32)


@pytest.mark.parametrize("kind", ["histo", "multi_channel_timesurface"])
@pytest.mark.parametrize("ds", [0, 1])
def test_equals_slow_reference(kind, ds):
    ev = _events()
    tensor = EventTensor(kind, delta_t_us=50_000, num_tbins=6, height=20, width=32, downsample=ds)
    got = tensor(ev, start_us=0)
    ref = _slow(ev, kind, 0, 50_000, 6, 20, 32, ds)
    assert got.shape == (6, tensor.channels, 20, 32) and got.dtype == np.float32
    np.testing.assert_array_equal(got, ref)
    assert got.max() <= 1.0 and got.any()
    if kind == "histo":
        assert (got == 1.0).any()  # clipping happened
    else:
        assert got.max() < 1.0
    # windows: the second half of the bins equals a call starting there
    np.testing.assert_array_equal(tensor(ev, start_us=150_000)[:3], got[3:])


def test_channel_order():
    ev = make_camera_events([0, 20_000, 40_000, 45_000], [0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0])
    tensor = EventTensor("multi_channel_timesurface", num_tbins=1, height=1, width=1, downsample=0)
    ts = tensor(ev, start_us=0)
    third = 50_000 / 3
    expected = [0, 0, 0, (20_000 - third) / third, (45_000 - 2 * third) / third, 0]
    np.testing.assert_allclose(ts[0, :, 0, 0], expected, rtol=1e-6)
