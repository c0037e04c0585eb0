"""Cases of ``bench/hostile_sweep.py`` (issue 59, readers): Prophesee ``.raw`` / ``.dat``
headers that disagree, state an encoding neuromark does not decode or a field that is not a
number, junk and mislabelled words, files cut mid-word; NIR graphs with an unknown node;
the untrained flag on runs whose weights come from a file. The ``.raw`` files are written
word by word from Prophesee's published layouts (no other tool's encoder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from hostile_common import case, cli

T = "test_prophesee_validation.py::"
GEOMETRY = "% geometry 1280x720\n"


def _evt3_words() -> np.ndarray:
    """TIME_HIGH 7, TIME_LOW 5, row 10, three single events and a VECT_12 of two pixels;
    then TIME_LOW 9 and one more event: 6 events at 28,677 and 28,681 µs."""
    return np.array([0x8007, 0x6005, 0x000A, 0x2001, 0x2802, 0x2003, 0x3064, 0x4005,
                     0x6009, 0x2004], np.uint16)


def _evt2_words() -> np.ndarray:
    """TIME_HIGH 100, then CD_ON / CD_OFF events (x 1..4, y 2)."""
    cd = [(on << 28) | (k << 22) | (x << 11) | 2 for on, k, x in ((1, 1, 1), (0, 2, 2),
                                                                   (1, 3, 3), (0, 4, 4))]
    return np.array([(0x8 << 28) | 100, *cd], np.uint32)


def _raw(path: Path, header: str, words: np.ndarray, tail: bytes = b"") -> Path:
    path.write_bytes(header.encode("ascii") + words.tobytes() + tail)
    return path


def _info(path: Path) -> Any:
    return lambda: json.loads(cli("data", "info", path, "--json").out)


@case("raw-evt-and-format-disagree", "header fields must agree",
      T + "test_header_fields_that_disagree_refuse_the_file",
      needs=("a.raw", "% evt 2.0", "% format EVT3", "refused"))
def _(tmp: Path) -> Any:
    header = "% evt 2.0\n% format EVT3;height=720;width=1280\n"
    return _info(_raw(tmp / "a.raw", header, _evt3_words()))


@case("raw-evt21-unsupported", "an encoding not decoded is named, with what to do",
      T + "test_unsupported_encodings_are_named", needs=("a.raw", "EVT 2.1", "does not decode",
                                                         "Metavision"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", "% evt 2.1\n" + GEOMETRY, _evt2_words()))


@case("raw-format-evt21", "an encoding not decoded is named, with what to do",
      T + "test_unsupported_encodings_are_named", needs=("a.raw", "EVT 2.1", "EVT21"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", "% format EVT21;height=720;width=1280\n", _evt2_words()))


@case("raw-no-encoding-cli", "no encoding: say what the user can do (no CLI option)",
      T + "test_no_encoding_says_what_to_do", needs=("a.raw", "states no encoding", "% evt 3.0"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", GEOMETRY, _evt3_words()))


@case("raw-evt3-reserved-word", "junk words: our error naming the byte offset",
      T + "test_junk_and_mislabelled_words_name_the_byte", needs=("a.raw", "byte 50", "reserved"))
def _(tmp: Path) -> Any:
    words = np.concatenate([_evt3_words(), np.array([0xC123], np.uint16)])
    return _info(_raw(tmp / "a.raw", "% evt 3.0\n" + GEOMETRY, words))


@case("raw-evt2-labelled-evt3", "mislabelled encoding: our error naming the byte offset",
      T + "test_junk_and_mislabelled_words_name_the_byte", needs=("a.raw", "byte", "EVT3",
                                                                  "reserved"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", "% evt 3.0\n" + GEOMETRY, _evt2_words()))


@case("raw-evt2-cut-mid-word", "a truncated final word is reported",
      T + "test_a_file_cut_mid_word_is_refused_or_dropped_and_recorded",
      needs=("a.raw", "3 byte(s)", "cut off"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", "% evt 2.0\n" + GEOMETRY, _evt2_words(), b"\x01\x02\x03"))


@case("raw-evt3-cut-mid-word-drop", "a dropped partial word is recorded",
      T + "test_a_file_cut_mid_word_is_refused_or_dropped_and_recorded", expect="result",
      check=lambda v: v == (6, {"truncated final word": 1}, 1) or "not recorded")
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw_file

    path = _raw(tmp / "a.raw", "% evt 3.0\n" + GEOMETRY, _evt3_words(), b"\x07")

    def act() -> Any:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = read_raw_file(path, on_invalid="drop")
        return len(got.events), got.counts, got.truncated_bytes
    return act


@case("raw-evt3-time-low-step-back", "a TIME_LOW step back is not an overflow",
      "test_prophesee_evt.py::test_evt3_time_low_step_back_is_not_an_overflow",
      expect="result", check=lambda v: v == [28677, 28677, 28677, 28677, 28677, 28675] or
      "times outside TIME_HIGH 7")
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee_evt import decode_evt3

    words = _evt3_words()
    words[8] = 0x6003  # TIME_LOW 3 after 5, no TIME_HIGH between: a step back of 2 µs
    return lambda: decode_evt3(words).t.tolist()


@case("raw-geometry-zero", "header sizes are positive numbers",
      T + "test_header_fields_that_disagree_refuse_the_file",
      needs=("a.raw", "% geometry 0x720", "positive"))
def _(tmp: Path) -> Any:
    return _info(_raw(tmp / "a.raw", "% evt 3.0\n% geometry 0x720\n", _evt3_words()))


@case("dat-version-2.0", "a .dat '% Version 2.0' is handled",
      T + "test_dat_version_written_as_a_decimal", expect="result",
      check=lambda v: v == 3 or "wrong count")
def _(tmp: Path) -> Any:
    rec = np.array([(10, 1 | (2 << 14)), (20, 3 | (4 << 14) | (1 << 28)), (30, 5)],
                   [("t", "<u4"), ("w", "<u4")])
    path = tmp / "a_td.dat"
    path.write_bytes(b"% Version 2.0\n% Height 10\n% Width 10\n" + bytes([12, 8]) + rec.tobytes())
    return lambda: _info(path)()["events"]


@case("dat-version-text", "header fields parsed with clear messages",
      T + "test_dat_version_written_as_a_decimal", needs=("a_td.dat", "% Version two"))
def _(tmp: Path) -> Any:
    path = tmp / "a_td.dat"
    path.write_bytes(b"% Version two\n% Height 10\n% Width 10\n" + bytes([12, 8]) + bytes(8))
    return _info(path)


@case("nirfile-unknown-node-type", "an unknown NIR node is named with its type",
      "test_nir_readback.py::test_an_unknown_node_type_is_named",
      needs=("g.nir", "Wobble", "'mystery'"))
def _(tmp: Path) -> Any:
    from test_nir_readback import unknown_node_graph

    from neuromark.models.nir_model import from_nir

    path = unknown_node_graph(tmp / "g.nir")
    return lambda: from_nir(path)


@case("nirrun-flagged-untrained", "flags tell the truth: a NIR file's weights are not a factory's",
      "test_nir_readback.py::test_a_nir_model_run_is_not_flagged_untrained", expect="result",
      check=lambda v: v is True or "flagged untrained")
def _(tmp: Path) -> Any:
    from test_nir import write_small_nir

    from neuromark.data.hdf5_spikes import write_shd_file

    write_small_nir(tmp / "net.nir")
    write_shd_file(tmp / "test.h5", [[0.001, 0.012, 0.03]] * 4, [[0, 1, 3]] * 4, [0, 1, 0, 1])
    (tmp / "nir.yaml").write_text(f"""task: classification
benchmark: {{id: spikes-nir, version: "1.0"}}
dataset: {{name: spike_files, options: {{test: {tmp / 'test.h5'}, channels: 4, dt_us: 10000,
                                          t_max_us: 50000}}}}
model: {{name: nir, options: {{path: {tmp / 'net.nir'}}}}}
eval: {{postprocessor: spike_count, metrics: [classification_accuracy]}}
""")

    def act() -> Any:
        run = cli("run", tmp / "nir.yaml", "--out", tmp / "out")
        results = json.loads(next((tmp / "out").glob("spikes-nir--*.json")).read_text())
        return "untrained" not in run.err and "untrained" not in json.dumps(results.get("flags"))
    return act


@case("nirexport-shared-beta", "NIR export of a baseline with one shared beta",
      "test_nir_readback.py::test_shipped_baselines_export_and_snntorch_reads_them_back_equal",
      expect="result", check=lambda v: v == 3 or "not exported per neuron")
def _(tmp: Path) -> Any:
    import torch

    from neuromark.benchmarks.eeg_mi.models import EEGSNN
    from neuromark.models.nir_model import to_nir

    def act() -> Any:
        graph = to_nir(EEGSNN().eval(), torch.zeros(62))
        return sum(type(n).__name__ == "LIF" and n.tau.size > 1 for n in graph.nodes.values())
    return act


@case("raw-header-not-ascii", "header fields parsed with clear messages",
      T + "test_a_header_line_that_is_not_ascii_is_named",
      needs=("a.raw", "byte 30", "not ASCII"))
def _(tmp: Path) -> Any:
    path = tmp / "a.raw"
    path.write_bytes(b"% evt 3.0\n% geometry 1280x720\n% serial \xff\xfe\n"
                     + _evt3_words().tobytes())
    return _info(path)
