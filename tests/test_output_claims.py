"""Writers never replace what they did not write (issue 59, item 1): every command that writes
a file the user names refuses an existing one unless --overwrite, before any work."""

from __future__ import annotations

import pytest

from neuromark.benchmarks.acoustic_scenes.model import main as train_asc


def test_asc_training_refuses_a_users_file_before_any_work(tmp_path, capsys):
    users = tmp_path / "weights.pt"
    users.write_bytes(b"my own weights")
    with pytest.raises(SystemExit) as exc:  # refused before reading the (absent) data set
        train_asc(["--root", str(tmp_path / "no-such-root"), "--out", str(users)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert str(users) in err and "--overwrite" in err
    assert users.read_bytes() == b"my own weights"


def test_asc_training_refuses_a_folder_as_out(tmp_path, capsys):
    with pytest.raises(SystemExit):
        train_asc(["--root", str(tmp_path), "--out", str(tmp_path)])
    assert "is a folder" in capsys.readouterr().err
