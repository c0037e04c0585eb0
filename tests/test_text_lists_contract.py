"""Text files of the keyword readers are decoded as UTF-8 (issue 32, point 1): the MSWC split
CSVs and Speech Commands' split lists, written here in the real layouts; a Latin-1 file is
refused before any clip is read, naming the file and the line of the first undecodable byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuromark.benchmarks.keywords.mswc import KEYWORDS, MSWC, read_list
from neuromark.benchmarks.keywords.speech_commands import SpeechCommands
from neuromark.errors import DataError

WORD = KEYWORDS[0]


def mswc_lists(root: Path, encoding: str = "utf-8", bad_line: int = 3) -> Path:
    """``root/MSWC/base_*.csv`` and ``fr/evaluation.csv``; row ``bad_line`` holds an é."""
    folder = root / "MSWC"
    (folder / "fr").mkdir(parents=True)
    for name in ("base_train.csv", "base_val.csv", "base_test.csv", "fr/evaluation.csv"):
        lang = "fr" if name.startswith("fr/") else "en"
        rows = ["LINK,WORD,LANG"] + [f"{lang}/clips/{WORD}/c{i}.opus,{WORD},{lang}" for i in range(4)]
        rows[bad_line - 1] = f"{lang}/clips/{WORD}/caf\u00e9.opus,{WORD},{lang}"
        (folder / name).write_bytes(("\n".join(rows) + "\n").encode(encoding))
    return folder


@pytest.mark.parametrize("subset", ["base_train", "base_val", "base_test", "evaluation"])
def test_utf8_mswc_latin1_list_names_file_and_line(tmp_path, subset):
    folder = mswc_lists(tmp_path, "latin-1", bad_line=3)
    name = "fr/evaluation.csv" if subset == "evaluation" else f"{subset}.csv"
    offset = (folder / name).read_bytes().index(b"\xe9")
    with pytest.raises(DataError, match=rf"{name}:3: MSWC list is not UTF-8 text \(byte 0xe9 at "
                                        rf"offset {offset}\); save it as UTF-8"):
        MSWC(tmp_path, subset, language="fr" if subset == "evaluation" else None)


def test_utf8_mswc_list_with_bom_and_accents_read(tmp_path):
    folder = mswc_lists(tmp_path, "utf-8")
    path = folder / "base_test.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    rows = read_list(path)
    assert len(rows) == 4 and rows[1].path.endswith("caf\u00e9.opus") and rows[0].line == 2


def test_utf8_bom_then_latin1_counts_the_offset_in_the_file(tmp_path):
    path = tmp_path / "base_test.csv"
    path.write_bytes(b"\xef\xbb\xbfLINK,WORD,LANG\nen/clips/x/caf\xe9.opus,x,en\n")
    with pytest.raises(DataError, match=r"base_test\.csv:2: MSWC list is not UTF-8 text \(byte 0xe9 "
                                        r"at offset 32\)"):
        read_list(path)


def speech_commands(root: Path, list_name: str, encoding: str) -> Path:
    """A Speech Commands folder with two clips (empty files: lists are read first)."""
    folder = root / "speech_commands"
    (folder / "yes").mkdir(parents=True)
    for name in ("a_nohash_0.wav", "b_nohash_0.wav", "caf\u00e9_nohash_0.wav"):
        (folder / "yes" / name).write_bytes(b"")
    lists = {"testing_list.txt": "yes/a_nohash_0.wav\n", "validation_list.txt": "yes/b_nohash_0.wav\n"}
    lists[list_name] += "yes/caf\u00e9_nohash_0.wav\n"
    for name, text in lists.items():
        (folder / name).write_bytes(text.encode(encoding if name == list_name else "utf-8"))
    return folder


@pytest.mark.parametrize("list_name", ["testing_list.txt", "validation_list.txt"])
@pytest.mark.parametrize("subset", ["testing", "validation", "training"])
def test_utf8_speech_commands_latin1_list_names_file_and_line(tmp_path, list_name, subset):
    folder = speech_commands(tmp_path, list_name, "latin-1")
    with pytest.raises(DataError, match=rf"{list_name}:2: split list is not UTF-8 text \(byte 0xe9 "
                                        rf"at offset 26\)"):
        SpeechCommands(folder, subset)


def test_utf8_speech_commands_list_read(tmp_path):
    folder = speech_commands(tmp_path, "testing_list.txt", "utf-8")
    assert sorted(SpeechCommands(folder, "testing").files) == ["yes/a_nohash_0.wav",
                                                               "yes/caf\u00e9_nohash_0.wav"]


# ---- checksum files and tables: UTF-8 too ------------------------------------------------------

LATIN1_SUMS = ("0" * 64 + "  train.h5\n" + "1" * 64 + "  caf\u00e9.h5\n").encode("latin-1")


@pytest.mark.parametrize("reader", ["entry", "mackey_glass", "spoken_digits"])
def test_utf8_checksum_file_latin1_names_file_and_line(tmp_path, reader):
    """SHA256SUMS files were read in the locale's encoding: a Latin-1 name crashed with
    UnicodeDecodeError (or was misread); now one line naming the file and line."""
    from neuromark.benchmarks.mackey_glass import series as mackey_glass
    from neuromark.benchmarks.shd import spoken_digits
    from neuromark.data import entry

    sums = tmp_path / "SHA256SUMS"
    sums.write_bytes(LATIN1_SUMS)
    read = {"entry": lambda: entry.read_sums(sums),
            "mackey_glass": lambda: mackey_glass.read_sha256sums(sums),
            "spoken_digits": lambda: spoken_digits.verify(tmp_path)}[reader]
    with pytest.raises(DataError, match=r"SHA256SUMS:2: checksum (file|manifest) is not UTF-8 text "
                                        r"\(byte 0xe9 at offset 144\)"):
        read()


def test_utf8_lyapunov_table_latin1_names_file_and_line(tmp_path):
    import hashlib

    from neuromark.benchmarks.mackey_glass.series import SUMS_FILE, TABLE_FILE, _table

    table = tmp_path / TABLE_FILE
    table.write_bytes("tau,note\n17,caf\u00e9\n".encode("latin-1"))
    digest = hashlib.sha256(table.read_bytes()).hexdigest()
    (tmp_path / SUMS_FILE).write_text(f"{digest}  {TABLE_FILE}\n")
    with pytest.raises(DataError, match=r"lyapunov\.csv:2: Lyapunov table is not UTF-8 text"):
        _table(tmp_path)


def test_utf8_asc_setup_file_latin1_names_file_and_line(tmp_path):
    from neuromark.benchmarks.acoustic_scenes.dcase import read_setup_csv

    path = tmp_path / "fold1_train.csv"
    path.write_bytes("filename\tscene_label\naudio/caf\u00e9-a.wav\tpark\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"fold1_train\.csv:2: ASC setup file is not UTF-8 text"):
        read_setup_csv(path)
    path.write_bytes(b"\xef\xbb\xbffilename\tscene_label\naudio/a.wav\tpark\n")  # a BOM is fine
    assert read_setup_csv(path) == [("audio/a.wav", "park")]
