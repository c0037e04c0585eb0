"""Prophesee files that Prophesee's cameras wrote, read as a user would (issue 42).

The files (``tests/fixtures/realdata/prophesee``, provenance in its ``PROVENANCE.md``):
expelliarmus' EVT 2.0 sample (Gen3, ``hal_plugin_gen3_fx3``), its EVT 3.0 sample (Gen4.1,
``hal_plugin_gen41_evk3``) with the decoded reference expelliarmus ships beside it, and
tonic's N-CARS ``.dat`` sample (ATIS). None of their headers states a sensor size.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.errors import DataError
from tests.realdata import real_file

EVT3_OFFSET = 166  # bytes of the sample's 7 header lines


def _evt3_words(path):
    return np.fromfile(path, "<u2", offset=EVT3_OFFSET)


def test_evt3_sample_times_lie_in_the_range_its_time_high_words_state(tmp_path):
    """By Prophesee's EVT 3.0 layout, time = (TIME_HIGH << 12) | TIME_LOW: the sample's
    TIME_HIGH words are 2861..2863 only, so every time lies in 11,718,656..11,730,943 µs;
    the event count is the file's ADDR_X words plus the bits set in its vectors (VECT_12:
    12 bits, VECT_8: 8 bits), counted here from the words themselves."""
    from neuromark.data.prophesee import read_raw

    raw = real_file("prophesee/evt3_sample.raw", tmp_path)
    words = _evt3_words(raw).astype(np.int64)
    kind = words >> 12
    assert np.unique(words[kind == 0x8] & 0xFFF).tolist() == [2861, 2862, 2863]
    low, high = 2861 << 12, (2864 << 12) - 1
    assert (low, high) == (11_718_656, 11_730_943)
    popcount = np.vectorize(lambda v: bin(int(v)).count("1"))
    expected = int((kind == 0x2).sum() + popcount(words[kind == 0x4] & 0xFFF).sum()
                   + popcount(words[kind == 0x5] & 0xFF).sum())
    events = read_raw(raw)  # encoding from '% evt 3.0', 1280x720 from hal_plugin_gen41_evk3
    assert len(events) == expected == 219_596
    assert low <= events["t"].min() and events["t"].max() <= high
    assert (int(events["t"][0]), int(events["t"][-1])) == (11_718_656, 11_727_457)
    assert np.all(np.diff(events["t"]) >= 0)
    assert events["x"].max() == 1279 and events["y"].max() == 719


def test_evt3_sample_differs_from_expelliarmus_only_in_its_times(tmp_path):
    """Cross-check (optional): expelliarmus' decoded sample has the same pixels and
    polarities event for event; its times are later by 4,096 µs per TIME_LOW decrease it
    reads as an overflow (its issue #19), outside the range the TIME_HIGH words state."""
    pytest.importorskip("expelliarmus", reason="expelliarmus (events extra) not installed")
    from neuromark.data.prophesee import read_raw

    events = read_raw(real_file("prophesee/evt3_sample.raw", tmp_path))
    theirs = np.load(real_file("prophesee/evt3_sample.npy", tmp_path))
    for name in ("x", "y", "p"):
        np.testing.assert_array_equal(events[name], theirs[name])
    late = theirs["t"] - events["t"]
    assert set(np.unique(late // 4096).tolist()) == set(range(12)) and np.all(late % 4096 == 0)
    assert int((late > 0).sum()) == 199_475 and int(theirs["t"].max()) == 11_772_513


@pytest.mark.parametrize("encoding", ["evt2"])
def test_evt2_sample_equals_expelliarmus_event_for_event(tmp_path, encoding):
    """Cross-check (optional): EVT 2.0 decodes the same with expelliarmus."""
    expelliarmus = pytest.importorskip("expelliarmus",
                                       reason="expelliarmus (events extra) not installed")
    from neuromark.data.prophesee import read_raw

    raw = real_file("prophesee/evt2_sample.raw", tmp_path)
    theirs = expelliarmus.Wizard(encoding=encoding).read(str(raw))
    ours = read_raw(raw)
    for name in ("t", "x", "y", "p"):
        np.testing.assert_array_equal(ours[name], theirs[name])


def test_evt2_sample_reads_from_its_header_alone(tmp_path):
    from neuromark.data.prophesee import read_raw
    from neuromark.data.prophesee_raw import raw_sensor_size, read_raw_header

    raw = real_file("prophesee/evt2_sample.raw", tmp_path)
    header = read_raw_header(raw)
    assert (header.encoding, header.sensor, header.sensor_source) == ("evt2", "gen3", "plugin_name")
    assert raw_sensor_size(raw, header, None, None)[:2] == (640, 480)
    events = read_raw(raw)
    words = np.fromfile(raw, "<u4", offset=164)  # bytes of the 7 header lines
    assert len(events) == int(((words >> 28) <= 1).sum()) == 539_481  # CD_OFF + CD_ON words
    high = words[(words >> 28) == 0x8] & 0x0FFFFFFF
    assert int(high.min()) << 6 <= events["t"].min()
    assert events["t"].max() < (int(high.max()) + 1) << 6
    assert (int(events["x"].min()), int(events["x"].max())) == (60, 599)
    assert (int(events["y"].min()), int(events["y"].max())) == (18, 475)
    # an explicit size overrides the table: a sensor too small for the events is refused
    with pytest.raises(DataError, match="inside the sensor"):
        read_raw(raw, width=320, height=240)
    with pytest.raises(DataError, match="states encoding 'evt2', the call 'evt3'"):
        read_raw(raw, "evt3")


def test_ncars_dat_sample(tmp_path):
    from neuromark.data.prophesee import read_dat

    events = read_dat(real_file("prophesee/sample_ncars.dat", tmp_path))
    assert len(events) == 2009
    assert (int(events["x"].max()), int(events["y"].max())) == (77, 41)
    assert set(np.unique(events["p"]).tolist()) == {0, 1}
    assert (int(events["t"][0]), int(events["t"][-1])) == (0, 99_952)


@pytest.mark.parametrize(("name", "fmt", "sensor", "events"), [
    ("prophesee/evt2_sample.raw", "Prophesee .raw EVT2", "640x480", 539_481),
    ("prophesee/evt3_sample.raw", "Prophesee .raw EVT3", "1280x720", 219_596),
    ("prophesee/sample_ncars.dat", "Prophesee .dat v2 (CD events, type 0)", None, 2009),
    ("prophesee/evt3_sample.npy", "events .npy (t µs, x, y, p)", None, 219_596),
])
def test_data_info_describes_each_real_file(tmp_path, capsys, name, fmt, sensor, events):
    from neuromark.cli import main

    path = real_file(name, tmp_path)
    assert main(["data", "info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["format"], info["sensor"], info["events"]) == (fmt, sensor, events)
    assert info["rate_ev_per_s"] == pytest.approx(events / (info["span_us"] * 1e-6))
    assert main(["data", "info", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"events: {events}" in text and "rate: " in text and "time span: " in text


def test_the_docs_quote_what_data_info_prints(tmp_path, capsys):
    from pathlib import Path

    from neuromark.cli import main

    assert main(["data", "info", str(real_file("prophesee/evt3_sample.raw", tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    doc = (Path(__file__).parents[1] / "docs" / "real_files.md").read_text().replace("\n", " ")
    quoted = ("format:", "sensor:", "time words:", "events:", "time span:", "rate:")
    for line in [ln for ln in lines if ln.startswith(quoted)]:
        assert f"`{line}`" in doc, line
