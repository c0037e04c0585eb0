"""Energy profiles (issue 32, point 6): a user profile may not take a built-in's name, every
figure lies in the physical range (Landauer's bound to 1 uJ per op), and a profile listed
twice is refused when the config is loaded, before LoadGen runs."""

from __future__ import annotations

import pytest

from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.metrics.energy import EnergyEstimate
from neuromark.metrics.functional.energy_profiles import MAX_J, MIN_J, load_profile

PROFILE = "name: {name}\nversion: '1'\nsource: datasheet table 4\nmac_j: {mac}\nac_j: 1.0e-12\n"
ESN = ("task: system\nsut:\n  name: esn\n  options: {samples: 40, threads: 1}\n"
       "timing:\n  warmup: 2\nloadgen:\n  min_query_count: 16\n  min_duration_s: 0\n"
       "  expected_latency_s: 0.001\n")


def _profile(tmp_path, name="chip", mac="2.0e-12"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(PROFILE.format(name=name, mac=mac))
    return path


def test_user_profile_may_not_take_a_builtin_name(tmp_path):
    path = _profile(tmp_path, "horowitz45-fp32", "4.6e-9")  # 1000x the built-in's figure
    with pytest.raises(ConfigError, match=rf"{path}:1: name: 'horowitz45-fp32' is a built-in "
                                          r"energy profile; give yours a name of its own"):
        load_profile(path)
    with pytest.raises(ConfigError, match="is a built-in energy profile"):
        EnergyEstimate([path])


@pytest.mark.parametrize("mac", ["1.0e+308", "0.0", "-1.0e-12", "1.0e-25", "2.0e-6", ".inf",
                                 ".nan"])
def test_profile_figure_outside_the_physical_range_is_refused(tmp_path, mac):
    path = _profile(tmp_path, mac=mac)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert f"{path}:4: mac_j:" in str(err.value)


def test_profile_figures_at_the_ends_of_the_range_are_accepted(tmp_path):
    assert load_profile(_profile(tmp_path, "low", repr(MIN_J))).mac_j == MIN_J
    assert load_profile(_profile(tmp_path, "high", repr(MAX_J))).mac_j == MAX_J


def test_shipped_profiles_lie_in_the_physical_range():
    for p in EnergyEstimate().profiles:
        for value in (p.mac_j, p.ac_j, p.neuron_update_j):
            assert MIN_J <= value <= MAX_J


def test_profile_listed_twice_is_refused_at_config_load(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.system.track.task import TASK

    text = ESN + "estimate:\n  profiles: [horowitz45-fp32, horowitz45-int8, horowitz45-fp32]\n"
    with pytest.raises(ConfigError, match=r"d\.yaml:12: estimate\.profiles\[2\]: profile "
                                          r"'horowitz45-fp32' is already estimate\.profiles\[0\]"):
        TASK.plan(parse_yaml(text, tmp_path / "d.yaml"), RunContext.build())


def test_two_files_of_one_profile_name_are_refused_at_config_load(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.system.track.task import TASK

    _profile(tmp_path, "chip")
    (tmp_path / "copy.yaml").write_text(PROFILE.format(name="chip", mac="3.0e-12"))
    text = ESN + "estimate:\n  profiles: [chip.yaml, copy.yaml]\n"
    with pytest.raises(ConfigError, match=r"estimate\.profiles\[1\]: profile 'chip' is already"):
        TASK.plan(parse_yaml(text, tmp_path / "d.yaml"), RunContext.build())


def test_metric_options_with_a_repeated_profile_are_a_config_error():
    with pytest.raises(ConfigError, match="profile names repeat"):
        EnergyEstimate(["horowitz45-int8", "horowitz45-int8"])
