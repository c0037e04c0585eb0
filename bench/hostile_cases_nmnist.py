"""Cases of ``bench/hostile_sweep.py`` for the N-MNIST reader and folder layouts (issue 53):
recordings written here as raw 5-byte words, read as a run reads them (the data set split)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hostile_common import case

READER_TESTS = "test_nmnist_reader.py::"
LAYOUT_TEST = "test_nmnist.py::test_a_wrong_layout_names_the_folder_or_file_and_what_was_expected"


def _split(tmp: Path, data: bytes) -> Any:
    from neuromark.benchmarks.nmnist.dataset import NMNIST

    folder = tmp / "nm" / "Test" / "4"
    folder.mkdir(parents=True)
    (folder / "00009.bin").write_bytes(data)
    (tmp / "nm" / "Train").mkdir()
    return lambda: len(NMNIST(tmp / "nm", "test"))


_GOOD = bytes([1, 1, 0, 0, 1, 2, 2, 0, 0, 2])


@case("nmnist-cut-word", "whole 5-byte words",
      READER_TESTS + "test_a_length_that_is_not_whole_words_names_file_and_byte_offset",
      needs=("00009.bin", "byte 10", "whole number"))
def _cut(tmp: Path) -> Any:
    return _split(tmp, _GOOD + bytes([3, 3, 0]))


@case("nmnist-x-outside", "inside the sensor",
      READER_TESTS + "test_out_of_range_addresses_name_file_and_byte_offset",
      needs=("00009.bin", "byte 10", "x = 34"))
def _x(tmp: Path) -> Any:
    return _split(tmp, _GOOD + bytes([34, 0, 0, 0, 9]))


@case("nmnist-overflow-marker", "inside the sensor",
      READER_TESTS + "test_out_of_range_addresses_name_file_and_byte_offset",
      needs=("00009.bin", "byte 5", "y = 240"))
def _marker(tmp: Path) -> Any:
    return _split(tmp, _GOOD[:5] + bytes([0, 240, 0, 0, 9]))


@case("nmnist-time-back", "time order",
      READER_TESTS + "test_a_step_back_in_time_names_file_and_byte_offset",
      needs=("00009.bin", "byte 10", "before the previous"))
def _back(tmp: Path) -> Any:
    return _split(tmp, _GOOD + bytes([3, 3, 0, 0, 1]))


@case("nmnist-not-a-layout", "folder layout", LAYOUT_TEST, needs=("not an N-MNIST folder",))
def _layout(tmp: Path) -> Any:
    from neuromark.benchmarks.nmnist.dataset import NMNIST

    (tmp / "nm").mkdir()
    (tmp / "nm" / "readme.md").write_text("not data")
    return lambda: len(NMNIST(tmp / "nm", "test"))
