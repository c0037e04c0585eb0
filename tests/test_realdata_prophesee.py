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

pytest.importorskip("expelliarmus")


def test_evt3_sample_equals_the_reference_expelliarmus_ships(tmp_path):
    from neuromark.data.prophesee import read_raw

    raw = real_file("prophesee/evt3_sample.raw", tmp_path)
    reference = np.load(real_file("prophesee/evt3_sample.npy", tmp_path))
    events = read_raw(raw)  # encoding from '% evt 3.0', 1280x720 from hal_plugin_gen41_evk3
    assert len(events) == len(reference) == 219_596
    for name in ("t", "x", "y", "p"):
        np.testing.assert_array_equal(events[name], reference[name])
    assert (events["t"][0], events["t"][-1]) == (11_718_656, 11_772_513)
    assert events["x"].max() == 1279 and events["y"].max() == 719


def test_evt2_sample_reads_from_its_header_alone(tmp_path):
    from neuromark.data.prophesee import read_raw
    from neuromark.data.prophesee_raw import raw_sensor_size, read_raw_header

    raw = real_file("prophesee/evt2_sample.raw", tmp_path)
    header = read_raw_header(raw)
    assert (header.encoding, header.sensor, header.sensor_source) == ("evt2", "gen3", "plugin_name")
    assert raw_sensor_size(raw, header, None, None)[:2] == (640, 480)
    events = read_raw(raw)
    assert len(events) == 539_481
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
    for line in lines[1:3] + lines[5:8]:  # format, sensor, events, time span, rate
        assert f"`{line}`" in doc, line
