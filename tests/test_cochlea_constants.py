"""The cochlea's constant sets: lauscher's (default, unchanged) and Table II's as printed,
and the 30-ms Hann ramps of the paper's window, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.processors.cochlea.model import hann_ramps
from neuromark.processors.cochlea.params import CochleaParams, constants


def test_lauscher_is_the_default_and_paper_holds_table_ii():
    assert constants() == constants("lauscher") == CochleaParams()
    lau = constants("lauscher")
    assert (lau.hair_cell.g, lau.hair_cell.y, lau.hair_cell.l, lau.hair_cell.r, lau.hair_cell.x) == \
        (2000.0, 5.05, 2500.0, 6580.0, 66.3)
    assert lau.basilar_membrane.a == 3500.0 and lau.ramp_s is None
    paper = constants("paper")
    hc = paper.hair_cell
    assert (hc.g, hc.y, hc.l, hc.r, hc.x) == (1000.0, 11.11, 1250.0, 16667.0, 250.0)
    assert paper.basilar_membrane.a == 35.0 and paper.ramp_s == 0.03
    assert paper.bushy_cell == lau.bushy_cell  # Table II's weight is not taken (see params)
    assert constants("paper", channels=70).basilar_membrane.channels == 70
    with pytest.raises(ValueError, match="one of lauscher, paper"):
        constants("table2")


def test_ramps_of_a_given_length_by_hand():
    audio = np.ones(10)
    # 3-sample ramps: the first half of a 6-point Hann window, 0, 0.3455, 0.9045
    ramp = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(6) / 5)
    out = hann_ramps(audio, 3)
    assert np.allclose(out[:3], ramp[:3]) and np.allclose(out[-3:], ramp[:3][::-1])
    assert np.all(out[3:7] == 1.0)
    assert np.array_equal(hann_ramps(audio), hann_ramps(audio, None))
    assert np.array_equal(hann_ramps(audio, 50), hann_ramps(audio))  # at most half the clip


def test_constants_are_reachable_from_the_data_cli_and_checked_first(tmp_path, capsys):
    import h5py
    from test_cochlea_convert import _tone

    from neuromark.cli import main
    from neuromark.commands.data import add_cochlea_constants_option
    from neuromark.data.hdf5_spikes import read_shd_file
    from neuromark.errors import ConfigError
    from neuromark.processors.cochlea.convert import convert_directory
    from neuromark.processors.cochlea.params import CONSTANTS

    _tone(tmp_path / "in" / "a.wav", 1000)
    spikes = {}
    for name in CONSTANTS:
        out = tmp_path / f"{name}.h5"
        assert main(["data", "cochlea", str(tmp_path / "in"), str(out), "--jobs", "1",
                     "--constants", name]) == 0
        with h5py.File(out) as handle:
            assert handle.attrs["cochlea_constants"] == name
        spikes[name] = read_shd_file(out).spikes(0)
    assert spikes["lauscher"][0].size != spikes["paper"][0].size  # another set, other spikes
    with pytest.raises(SystemExit):  # argparse: invalid choice, before any file is read
        main(["data", "cochlea", str(tmp_path / "in"), str(tmp_path / "x.h5"), "--constants", "table2"])
    assert "invalid choice: 'table2'" in capsys.readouterr().err
    parser = __import__("argparse").ArgumentParser()
    add_cochlea_constants_option(parser)
    assert tuple(parser._option_string_actions["--constants"].choices) == CONSTANTS
    with pytest.raises(ConfigError, match="cochlea_constants: cochlea constants 'x'"):
        convert_directory(tmp_path / "missing", tmp_path / "y.h5", cochlea_constants="x")


def test_spoken_digit_synthesis_takes_the_constants_into_its_recipe(tmp_path):
    from neuromark.benchmarks.shd.entries import SpokenDigitsEntry
    from neuromark.benchmarks.shd.generator import SPEAKERS, _recipe
    from neuromark.errors import ConfigError

    assert "cochlea_constants" not in _recipe(SPEAKERS, range(10))  # the shipped corpus' recipe
    assert _recipe(SPEAKERS, range(10), "paper")["cochlea_constants"] == "paper"
    with pytest.raises(ConfigError, match="synthesize.constants: cochlea constants 'table2'"):
        SpokenDigitsEntry().synthesize(tmp_path / "sd", constants="table2")
    assert not (tmp_path / "sd").exists()  # refused before any work
