"""Mackey-Glass data: shipped series, Lyapunov table, checksums, instance windows."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from neuromark.benchmarks.mackey_glass import series as mg
from neuromark.errors import ChecksumError, DataError


@pytest.fixture()
def data_copy(tmp_path):
    """A private copy of the shipped data folder, safe to corrupt."""
    root = tmp_path / "mg"
    shutil.copytree(mg.DATA_DIR, root)
    return root


def test_every_shipped_file_matches_sha256sums():
    sums = mg.read_sha256sums(mg.DATA_DIR / "SHA256SUMS")
    assert set(sums) == {"lyapunov.csv"} | {f"mackey_glass_tau{t}.npy" for t in range(17, 31)}
    for name in sums:
        mg.verify_file(mg.DATA_DIR / name)


def test_lyapunov_table_covers_tau_17_to_30():
    table = mg.lyapunov_table()
    assert sorted(table) == list(range(17, 31))
    row = table[17]
    # NeuroBench quotes L ~ 197 time units for tau = 17; ours is an independent estimate.
    assert 180 < row.lyapunov_time < 215
    assert row.lyapunov_time_source == "estimate"
    assert row.lyapunov_time == pytest.approx(1 / row.lyapunov_exponent)
    assert row.dt == pytest.approx(row.lyapunov_time / 75)
    assert row.n_points == 3750 and row.n_initial_conditions == len(row.lyapunov_initial_conditions)
    for entry in table.values():
        assert entry.lyapunov_time > 0 and entry.dt > 0
        assert entry.lyapunov_time_source in ("estimate", "interpolated")


def test_series_is_a_bounded_mackey_glass_trajectory():
    x = mg.load_series(17)
    assert x.shape == (3750,) and x.dtype == np.float64
    # The attractor of dx/dt = 0.2 x_tau / (1 + x_tau^10) - 0.1 x lies within (0.2, 1.5).
    assert 0.2 < x.min() < 0.6 and 1.1 < x.max() < 1.5
    # It satisfies the DDE: central differences vs the right-hand side (tau/dt samples back).
    dt = mg.entry(17).dt
    lag = 17 / dt
    i = np.arange(200, 3700)
    past = np.interp(i - lag, np.arange(3750), x)  # linear interpolation of x(t - tau)
    rhs = 0.2 * past / (1 + past**10) - 0.1 * x[i]
    deriv = (x[i + 1] - x[i - 1]) / (2 * dt)
    assert np.median(np.abs(deriv - rhs)) < 2e-3


def test_instance_start_rounds_half_a_lyapunov_time_to_the_nearest_sample():
    # 0.5 L = 37.5 samples: 0, 37.5 -> 38, 75, 112.5 -> 113
    assert [mg.instance_start(k, 0.5) for k in range(4)] == [0, 38, 75, 113]


def test_instance_splits_are_one_step_ahead_pairs():
    data = mg.MackeyGlass(tau=17, instance=2)
    series = mg.load_series(17)
    assert len(data) == 1500 and data.start == 75
    x_train, y_train = data.train_split()
    x_test, y_test = data.test_split()
    assert x_train.shape == y_train.shape == x_test.shape == y_test.shape == (750, 1)
    assert float(x_train[0, 0]) == series[75]
    assert float(y_train[0, 0]) == series[76]
    assert float(x_test[0, 0]) == float(y_train[-1, 0]) == series[75 + 750]
    assert float(y_test[-1, 0]) == series[75 + 1500]
    x0, y0 = data[0]
    assert x0.shape == (1,) and float(y0) == series[76]


def test_unknown_tau_names_the_tau_and_the_available_ones():
    with pytest.raises(DataError, match=r"tau=16.*available: 17, 18, .*30"):
        mg.MackeyGlass(tau=16)


def test_window_past_the_end_of_the_series_is_refused():
    # instance 60 starts at 60 * 37.5 = 2250 and needs 1501 samples: 3751 > 3750
    with pytest.raises(DataError, match=r"instance 60 needs samples 2250\.\.3750.*has 3750 samples"):
        mg.MackeyGlass(tau=17, instance=60)
    assert mg.MackeyGlass(tau=17, instance=59).start == 2213


@pytest.mark.parametrize("kwargs, key", [({"length": 0}, "length"), ({"length": -3}, "length"),
                                         ({"shift": -0.5}, "shift"), ({"instance": -1}, "instance")])
def test_non_positive_lengths_are_refused(kwargs, key):
    with pytest.raises(DataError, match=key):
        mg.MackeyGlass(tau=17, **kwargs)


def test_modified_series_fails_its_checksum_naming_the_file(data_copy):
    path = data_copy / "mackey_glass_tau17.npy"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01  # flip one bit of the last float
    path.write_bytes(bytes(raw))
    with pytest.raises(ChecksumError, match=r"mackey_glass_tau17\.npy: sha256 mismatch"):
        mg.load_series(17, data_copy)
    with pytest.raises(ChecksumError, match="mackey_glass_tau17.npy"):
        mg.MackeyGlass(tau=17, root=data_copy)
    mg.load_series(18, data_copy)  # the other files are still fine


def test_modified_table_fails_its_checksum(data_copy):
    table = data_copy / "lyapunov.csv"
    table.write_text(table.read_text() + "\n")  # one added newline changes the sha256
    with pytest.raises(ChecksumError, match=r"lyapunov\.csv: sha256 mismatch"):
        mg.lyapunov_table(data_copy)


def test_truncated_series_fails_its_checksum(data_copy):
    path = data_copy / "mackey_glass_tau20.npy"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ChecksumError, match="mackey_glass_tau20.npy"):
        mg.load_series(20, data_copy)


def test_malformed_manifest_line_is_named(data_copy):
    sums = data_copy / "SHA256SUMS"
    sums.write_text("not-a-hash  lyapunov.csv\n")
    with pytest.raises(DataError, match=r"SHA256SUMS:1: expected '<64 hex digits>"):
        mg.lyapunov_table(data_copy)
