"""The primate-reaching surrogate: files the reader takes as real sessions, seeded, with
occupancy that matches the generating rates."""

from __future__ import annotations

import json

import numpy as np

from neuromark.benchmarks.primate_reaching.generator import (
    SurrogateSettings,
    latent_drive,
    load_truth,
    min_jerk,
    occupancy_probability,
    write_surrogate,
)
from neuromark.benchmarks.primate_reaching.reader import PrimateReaching, bin_session, read_session
from neuromark.cli import main

SESSIONS = ("indy_20160622_01", "loco_20170210_03")


def test_surrogate_reads_as_a_session(tmp_path):
    out = write_surrogate(tmp_path, SurrogateSettings(duration_s=20.0, seed=3, sessions=SESSIONS))
    assert (out / "indy_20160622_01.mat").read_bytes()[:19] == b"MATLAB 7.3 MAT-file"
    for name, channels in zip(SESSIONS, (96, 192)):
        test = PrimateReaching(out, name, "test")
        assert test.channels == channels and len(test) > 300
        x, y = test[0]
        assert x.shape == (1, channels) and y.shape == (2,)
        rec = read_session(out / f"{name}.mat")
        assert rec.t.size == 5000 and 0.5 <= rec.t[0] <= 2.0
        truth = load_truth(out, name)
        units, drive = truth["units"], latent_drive(rec.t.size, truth["seed"])
        assert [len(u) for u in units] == [sum(s.size > 0 for s in c) for c in rec.spikes]
        # occupancy per channel matches 1 - exp(-sum rate * 4 ms) (shifted one bin)
        occupied = bin_session(rec)[1:].mean(0)
        expected = np.array([occupancy_probability(u, rec.cursor, drive)[:-1].mean() for u in units])
        assert np.abs(occupied - expected).max() < 0.03
        assert abs(occupied.mean() - expected.mean()) < 0.005
    again = write_surrogate(tmp_path / "b", SurrogateSettings(duration_s=20.0, seed=3, sessions=SESSIONS))
    a, b = (read_session(d / "loco_20170210_03.mat") for d in (out, again))
    assert all(np.array_equal(u, v) for cu, cv in zip(a.spikes, b.spikes) for u, v in zip(cu, cv))
    other = write_surrogate(tmp_path / "c", SurrogateSettings(duration_s=20.0, seed=4, sessions=SESSIONS))
    assert not np.array_equal(read_session(other / "loco_20170210_03.mat").cursor, a.cursor)


def test_min_jerk_ends_at_rest():
    path = min_jerk(np.zeros(2), np.array([10.0, -5.0]), 101)
    v = np.gradient(path, axis=0)
    assert path[0].tolist() == [0, 0] and path[-1].tolist() == [10, -5]
    assert abs(v[0]).max() < 1e-3 and abs(v[-1]).max() < 1e-3 and np.argmax(v[:, 0]) == 50


def test_cli_writes_six_sessions(tmp_path, capsys):
    assert main(["data", "primate-surrogate", str(tmp_path), "--duration", "4"]) == 0
    manifest = json.loads((tmp_path / "surrogate.json").read_text())
    assert len(manifest["sessions"]) == 6 and manifest["recipe"]["duration_s"] == 4.0
    assert len(list(tmp_path.glob("*.mat"))) == 6
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.mat")}
    write_surrogate(tmp_path, SurrogateSettings(duration_s=4.0, sessions=SESSIONS))  # kept
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.mat")} == before
