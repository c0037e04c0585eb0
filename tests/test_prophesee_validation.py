"""Every Prophesee reader validates before it decodes (issue 59): header fields that disagree,
encodings neuromark does not decode, junk and mislabelled words, files cut mid-word, and
``.dat`` versions written as decimals; ``neuromark data info`` gives a clear message and a
non-zero exit on each, never a traceback. The ``.raw`` files are written word by word."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from neuromark.data.prophesee import read_dat, read_raw, read_raw_file
from neuromark.errors import DataError

GEOMETRY = "% geometry 1280x720\n"
EVT3 = np.array([0x8007, 0x6005, 0x000A, 0x2001, 0x2802, 0x2003, 0x3064, 0x4005, 0x6009,
                 0x2004], np.uint16)  # 6 events at TIME_HIGH 7
EVT2 = np.array([(0x8 << 28) | 100, (1 << 28) | (1 << 22) | (1 << 11) | 2,
                 (2 << 22) | (2 << 11) | 2], np.uint32)  # 2 events


def _raw(path, header, words, tail=b""):
    path.write_bytes(header.encode("ascii") + words.tobytes() + tail)
    return path


def _cli_refuses(path, capsys, *texts):
    from neuromark.cli import main

    code = main(["data", "info", str(path)])
    out = capsys.readouterr()
    assert code != 0 and "Traceback" not in out.err + out.out
    for text in texts:
        assert text in out.err, (text, out.err)
    assert "pass encoding=" not in out.err
    return out.err


def test_header_fields_that_disagree_refuse_the_file(tmp_path, capsys):
    path = _raw(tmp_path / "a.raw", "% evt 2.0\n% format EVT3;height=720;width=1280\n", EVT3)
    with pytest.raises(DataError, match=r"'% evt 2\.0' \(evt2\) and '% format EVT3;height=720;"
                                        r"width=1280' \(evt3\); the file is refused"):
        read_raw(path)
    _cli_refuses(path, capsys, "a.raw", "% evt 2.0", "% format EVT3")
    both = _raw(tmp_path / "b.raw", "% evt 3.0\n% format EVT3;height=720;width=1280\n", EVT3)
    assert len(read_raw(both)) == 6  # agreeing fields are fine
    sizes = _raw(tmp_path / "c.raw", "% format EVT3;height=720;width=1280\n% geometry 640x480\n",
                 EVT3)
    with pytest.raises(DataError, match="'% geometry' states 640x480, '% format' 1280x720"):
        read_raw(sizes)
    zero = _raw(tmp_path / "d.raw", "% evt 3.0\n% geometry 0x720\n", EVT3)
    _cli_refuses(zero, capsys, "d.raw", "% geometry 0x720", "positive")


@pytest.mark.parametrize("line", ["% evt 2.1", "% format EVT21;height=720;width=1280"])
def test_unsupported_encodings_are_named(tmp_path, capsys, line):
    path = _raw(tmp_path / "a.raw", line + "\n" + GEOMETRY, EVT2)
    err = _cli_refuses(path, capsys, "a.raw", "EVT 2.1", "does not decode", "Metavision")
    assert line.split(";")[0] in err
    unknown = _raw(tmp_path / "u.raw", "% evt 9.9\n" + GEOMETRY, EVT2)
    _cli_refuses(unknown, capsys, "u.raw", "'% evt 9.9' is not an encoding neuromark knows")


def test_no_encoding_says_what_to_do(tmp_path, capsys):
    path = _raw(tmp_path / "a.raw", GEOMETRY, EVT3)
    _cli_refuses(path, capsys, "a.raw", "states no encoding", "'% evt 3.0'",
                 "read_raw(path, encoding='evt3')")
    assert len(read_raw(path, "evt3")) == 6


def test_junk_and_mislabelled_words_name_the_byte(tmp_path, capsys):
    header = "% evt 3.0\n" + GEOMETRY
    junk = _raw(tmp_path / "a.raw", header, np.concatenate([EVT3, [0xC123]]).astype(np.uint16))
    offset = len(header)  # first event word
    with pytest.raises(DataError, match=rf"a\.raw: byte {offset + 20}: word 10 has type 0b1100, "
                                        "reserved in EVT3"):
        read_raw(junk)
    _cli_refuses(junk, capsys, f"byte {offset + 20}", "reserved")
    # EVT 2.0 words labelled EVT 3.0: the CD_ON word's high half has type 0001 (reserved)
    mislabelled = _raw(tmp_path / "b.raw", header, EVT2)
    _cli_refuses(mislabelled, capsys, "b.raw", f"byte {offset + 6}", "reserved in EVT3",
                 "an encoding other than the header's EVT3")


@pytest.mark.parametrize(("header", "words", "extra"), [("% evt 2.0\n", EVT2, b"\x01\x02\x03"),
                                                        ("% evt 3.0\n", EVT3, b"\x07")])
def test_a_file_cut_mid_word_is_refused_or_dropped_and_recorded(tmp_path, capsys, header, words,
                                                                 extra):
    path = _raw(tmp_path / "a.raw", header + GEOMETRY, words, extra)
    data_end = len(header + GEOMETRY) + words.nbytes
    with pytest.raises(DataError, match=rf"the last {len(extra)} byte\(s\), from byte {data_end}, "
                                        "are part of a word cut off"):
        read_raw(path)
    _cli_refuses(path, capsys, "a.raw", f"{len(extra)} byte(s)", "on_invalid: drop")
    with pytest.warns(UserWarning, match=rf"dropped \({len(extra)} bytes\)"):
        got = read_raw_file(path, on_invalid="drop")
    assert got.truncated_bytes == len(extra) and got.counts == {"truncated final word": 1}
    assert len(got.events) == len(read_raw(_raw(tmp_path / "whole.raw", header + GEOMETRY, words)))


def test_dat_version_written_as_a_decimal(tmp_path, capsys):
    from neuromark.cli import main

    rec = np.array([(10, 1 | (2 << 14)), (20, 3 | (4 << 14) | (1 << 28))],
                   [("t", "<u4"), ("w", "<u4")])
    body = b"% Height 10\n% Width 10\n" + bytes([12, 8]) + rec.tobytes()
    path = tmp_path / "a_td.dat"
    path.write_bytes(b"% Version 2.0\n" + body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        events = read_dat(path, backend="numpy")
    assert events["x"].tolist() == [1, 3] and events["p"].tolist() == [0, 1]
    assert main(["data", "info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"].startswith("Prophesee .dat v2")
    for text in ("two", "2.5", "7"):
        path.write_bytes(f"% Version {text}\n".encode() + body)
        _cli_refuses(path, capsys, "a_td.dat", f"% Version {text}", "not a .dat version")


def test_an_empty_event_section_reads_as_no_events(tmp_path, capsys):
    from neuromark.cli import main

    path = _raw(tmp_path / "a.raw", "% evt 3.0\n" + GEOMETRY, np.zeros(0, np.uint16))
    assert main(["data", "info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] == 0


def test_a_header_line_that_is_not_ascii_is_named(tmp_path, capsys):
    path = tmp_path / "a.raw"
    path.write_bytes(b"% evt 3.0\n% geometry 1280x720\n% serial \xff\xfe\n" + EVT3.tobytes())
    _cli_refuses(path, capsys, "a.raw", "header line at byte 30 is not ASCII")
    # an event word whose low byte is '%' right after the header is data, not a header line
    words = np.concatenate([[0x8025], EVT3[1:]]).astype(np.uint16)  # TIME_HIGH 0x025
    data = tmp_path / "b.raw"
    data.write_bytes(b"% evt 3.0\n% geometry 1280x720\n" + words.tobytes())
    assert read_raw(data)["t"].min() == (0x025 << 12) + 5
