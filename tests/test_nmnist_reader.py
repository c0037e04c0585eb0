"""The N-MNIST event reader: hand-built 40-bit words (each field, edge values, bad input),
and event-for-event agreement with tonic's N-MNIST decoder on real recordings.

The words are written here from the published layout (Orchard et al. 2015; the data set's
page): byte 0 x, byte 1 y, byte 2 bit 7 polarity and bits 6..0 timestamp bits 22..16,
bytes 3-4 timestamp bits 15..0 (µs). tonic (``tonic.io.read_mnist_file``, after Orchard's
event-Python) is the independent decoder; its code is not ours.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.nmnist.dataset import SHIPPED_DIR
from neuromark.benchmarks.nmnist.reader import (
    MAX_TIME_US,
    decode_words,
    encode_events,
    read_recording,
    write_recording,
)
from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE, make_camera_events
from neuromark.errors import DataError


def _one(word: bytes) -> tuple[int, int, int, int]:
    (ev,) = decode_words(word)
    return int(ev["x"]), int(ev["y"]), int(ev["p"]), int(ev["t"])


def test_each_bit_field_lands_in_its_own_field():
    assert _one(bytes([0, 0, 0, 0, 0])) == (0, 0, 0, 0)
    assert _one(bytes([33, 0, 0, 0, 0])) == (33, 0, 0, 0)          # byte 0: x
    assert _one(bytes([0, 33, 0, 0, 0])) == (0, 33, 0, 0)          # byte 1: y
    assert _one(bytes([0, 0, 0x80, 0, 0])) == (0, 0, 1, 0)         # byte 2 bit 7: polarity, not time
    assert _one(bytes([0, 0, 0x01, 0, 0])) == (0, 0, 0, 1 << 16)   # byte 2 bit 0: t bit 16
    assert _one(bytes([0, 0, 0x40, 0, 0])) == (0, 0, 0, 1 << 22)   # byte 2 bit 6: t bit 22
    assert _one(bytes([0, 0, 0, 0x01, 0])) == (0, 0, 0, 1 << 8)    # byte 3: t bits 15..8
    assert _one(bytes([0, 0, 0, 0x80, 0])) == (0, 0, 0, 1 << 15)
    assert _one(bytes([0, 0, 0, 0, 0x01])) == (0, 0, 0, 1)         # byte 4: t bits 7..0
    assert _one(bytes([0, 0, 0, 0, 0xFF])) == (0, 0, 0, 255)


def test_edge_values_all_bits_set():
    assert _one(bytes([33, 33, 0xFF, 0xFF, 0xFF])) == (33, 33, 1, MAX_TIME_US)
    assert MAX_TIME_US == 8_388_607
    assert _one(bytes([5, 7, 0x7F, 0xFF, 0xFF])) == (5, 7, 0, MAX_TIME_US)  # all time bits, OFF
    # a worked word: x 12, y 30, ON, t = 0x05A1B2 = 369,074 us
    assert _one(bytes([12, 30, 0x85, 0xA1, 0xB2])) == (12, 30, 1, 0x05A1B2)
    assert 0x05A1B2 == 369_074


def test_several_words_decode_in_file_order_into_the_event_dtype():
    data = bytes([1, 2, 0x80, 0, 10, 3, 4, 0x00, 0, 10, 5, 6, 0x80, 1, 0])
    ev = decode_words(data)
    assert ev.dtype == CAMERA_EVENT_DTYPE
    assert ev["x"].tolist() == [1, 3, 5] and ev["y"].tolist() == [2, 4, 6]
    assert ev["p"].tolist() == [1, 0, 1] and ev["t"].tolist() == [10, 10, 256]  # equal times allowed
    assert len(decode_words(b"")) == 0


def test_encode_is_the_inverse_of_decode():
    rng = np.random.default_rng(3)
    ev = make_camera_events(np.sort(rng.integers(0, MAX_TIME_US + 1, 500)), rng.integers(0, 34, 500),
                            rng.integers(0, 34, 500), rng.integers(0, 2, 500))
    data = encode_events(ev)
    assert len(data) == 5 * 500
    back = decode_words(data)
    for field in ("t", "x", "y", "p"):
        assert np.array_equal(back[field], ev[field])
    with pytest.raises(ValueError, match="t must be 0..8388607"):
        encode_events(make_camera_events([MAX_TIME_US + 1], [0], [0], [0]))


def test_a_length_that_is_not_whole_words_names_file_and_byte_offset(tmp_path):
    path = tmp_path / "cut.bin"
    path.write_bytes(bytes([1, 2, 0, 0, 5, 3, 4]))
    with pytest.raises(DataError, match=r"cut\.bin: byte 5: 7 bytes is not a whole number of 5-byte") as info:
        read_recording(path)
    assert "2 byte(s) left over" in str(info.value)


@pytest.mark.parametrize(("word", "what"), [
    (bytes([34, 0, 0, 0, 9]), "x = 34 is outside the 34 x 34 sensor (x must be 0..33"),
    (bytes([0, 34, 0, 0, 9]), "y = 34 is outside"),
    (bytes([0, 240, 0, 0, 9]), "y = 240 is outside"),  # event-Python's overflow marker: not N-MNIST
    (bytes([255, 0, 0, 0, 9]), "x = 255 is outside"),
])
def test_out_of_range_addresses_name_file_and_byte_offset(tmp_path, word, what):
    path = tmp_path / "00007.bin"
    path.write_bytes(bytes([1, 1, 0, 0, 1, 2, 2, 0, 0, 2]) + word)
    with pytest.raises(DataError) as info:
        read_recording(path)
    message = str(info.value)
    assert message.startswith(f"{path}: byte 10: event 2: ") and what in message


def test_a_step_back_in_time_names_file_and_byte_offset(tmp_path):
    path = tmp_path / "back.bs2"
    path.write_bytes(bytes([0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 255]))  # 256, 512, 511
    with pytest.raises(DataError, match=r"back\.bs2: byte 10: event 2: timestamp 511 us is before "
                                        r"the previous event's 512 us"):
        read_recording(path)


def test_an_unreadable_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="cannot read the N-MNIST recording"):
        read_recording(tmp_path / "absent.bin")


def test_write_recording_round_trips(tmp_path):
    ev = make_camera_events([0, 5, 70_000], [0, 33, 7], [33, 0, 8], [1, 0, 1])
    back = read_recording(write_recording(tmp_path / "a" / "1.bin", ev))
    assert back.tolist() == ev.tolist()


def _tonic_events(path: Path) -> np.ndarray:
    tonic = pytest.importorskip("tonic", reason="tonic (the independent N-MNIST decoder) is not installed")
    from tonic.io import read_mnist_file

    return read_mnist_file(str(path), dtype=tonic.datasets.NMNIST.dtype)


def _same_as_tonic(files: list[Path]) -> int:
    total = 0
    for f in files:
        ours, theirs = read_recording(f), _tonic_events(f)
        assert len(ours) == len(theirs), f
        for field in ("t", "x", "y", "p"):
            assert np.array_equal(ours[field].astype(np.int64), theirs[field].astype(np.int64)), (f, field)
        total += len(ours)
    return total


def test_every_shipped_recording_equals_tonics_decoding_event_for_event():
    files = sorted(SHIPPED_DIR.glob("*.bs2"))
    assert len(files) == 40
    assert _same_as_tonic(files) > 100_000
