"""Energy estimates: hand arithmetic on the shipped Horowitz 45 nm profiles, user YAML
profiles validated with file:line, the metric on a hand-counted network."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.errors import ConfigError
from neuromark.metrics.complexity import SynapticOperations
from neuromark.metrics.energy import EnergyEstimate
from neuromark.metrics.functional.energy import energy_estimate
from neuromark.metrics.functional.energy_profiles import EnergyProfile, get_profile, load_profile
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.registry import energy_profiles, metrics

PJ = 1e-12


@pytest.mark.parametrize("name, mac_pj, ac_pj", [("horowitz45-fp32", 4.6, 0.9),
                                                  ("horowitz45-fp16", 1.5, 0.4),
                                                  ("horowitz45-int32", 3.2, 0.1),
                                                  ("horowitz45-int8", 0.23, 0.03)])
def test_shipped_profiles_hand_arithmetic(name, mac_pj, ac_pj):
    # 1000 MACs, 5000 ACs, 200 neuron ops (one add each)
    expected = (1000 * mac_pj + 5000 * ac_pj + 200 * ac_pj) * PJ
    assert energy_estimate(1000, 5000, name, neuron_updates=200) == pytest.approx(expected,
                                                                                 rel=1e-12)
    prof = get_profile(name)
    assert prof.memory_access_j is None and "Horowitz" in prof.source and prof.version == "1"
    assert "estimate" in prof.caveats[0]
    with pytest.raises(ValueError, match="no memory_access_j"):
        energy_estimate(1, 1, name, memory_accesses=10)
    assert set(energy_profiles.names()) >= {"horowitz45-fp32", "horowitz45-int8"}


def test_default_profile_and_bad_counts():
    assert energy_estimate(1e6, 2e6) == pytest.approx(1e6 * 4.6 * PJ + 2e6 * 0.9 * PJ)
    with pytest.raises(ValueError, match="eff_acs must be a finite count"):
        energy_estimate(1, -1)
    with pytest.raises(ConfigError, match="unknown energy_profile 'horowitz45-fp31'.*did you"):
        energy_estimate(1, 1, "horowitz45-fp31")


def test_user_yaml_profile_with_memory(tmp_path):
    path = tmp_path / "chip.yaml"
    path.write_text("name: chip\nversion: '2'\nsource: datasheet table 4\nmac_j: 2.0e-12\n"
                    "ac_j: 0.5e-12\nmemory_access_j: 10.0e-12\nmemory_source: CACTI 32 KB\n")
    prof = load_profile(path)
    assert prof.label() == "chip v2"
    # 10 MACs x 2 pJ + 4 ACs x 0.5 pJ + 3 accesses x 10 pJ = 52 pJ
    assert energy_estimate(10, 4, path, memory_accesses=3) == pytest.approx(52 * PJ)
    with pytest.raises(ValueError, match="neuron_updates=5 but profile chip v2 has no neuron"):
        energy_estimate(10, 4, prof, neuron_updates=5)


@pytest.mark.parametrize("text, line, message", [
    ("name: x\nversion: '1'\nsource: s\nmac_j: 1e-12\nac_j: -1e-12\n", 5,
     "ac_j: Value error, joules per operation must lie in [1e-21, 1e-06]"),
    ("name: x\nversion: '1'\nsource: s\nmac_j: 1e-12\nac_j: 1e-12\nmac: 3\n", 6,
     "mac: unknown key; did you mean mac_j"),
    ("name: x\nversion: '1'\nsource: s\nmac_j: 1e-12\nac_j: 1e-12\nmemory_access_j: 1e-12\n", 6,
     "memory_access_j needs memory_source"),
    ("name: x\nversion: '1'\nmac_j: 1e-12\nac_j: .nan\n", 4, "ac_j"),
])
def test_profile_schema_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert f"bad.yaml:{line}" in str(err.value) and message in str(err.value)
    if "source" not in text:
        assert "source: Field required" in str(err.value)


def test_metric_on_hand_counted_network():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel

    lin = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 0.0], [0.5, 0.0]]))
    net = nn.Sequential(lin, snn.Leaky(beta=0.5, threshold=100.0, init_hidden=True))
    x = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [2.0, 1.0]]])
    assert metrics.get("energy_estimate") is EnergyEstimate
    res = Benchmark(SNNTorchModel(net), [(x, torch.zeros(1))],
                    metrics=[EnergyEstimate(), SynapticOperations(), NeuronOperations()],
                    quiet=True).run()
    # spikes-only input with 1 and 2: MACs (2 is not in {-1,0,1}): step 1: x=(1,0): 2 ACs
    # (both weights of column 0 non-zero); step 3: x=(2,1): MACs, column 1 all zero: 2 MACs
    assert res["synaptic_operations"]["Effective_ACs"] == 2
    assert res["synaptic_operations"]["Effective_MACs"] == 2
    # membrane: step 1 both (fresh), steps 2, 3: both change (decay, input) -> 6 updates x 4
    assert res["neuron_operations"]["Effective_Neuron_Ops"] == 24
    energy = res.scores["energy_estimate"].value
    assert res.scores["energy_estimate"].unit == "J/sample (estimate)"
    assert energy["horowitz45-fp32"] == pytest.approx((2 * 4.6 + 2 * 0.9 + 24 * 0.9) * PJ)
    assert energy["horowitz45-int8"] == pytest.approx((2 * 0.23 + 2 * 0.03 + 24 * 0.03) * PJ)
    details = res.details["energy_estimate"]
    assert details["estimate"] is True and details["counts"]["Effective_Neuron_Ops"] == 24
    only = Benchmark(SNNTorchModel(net), [(x, torch.zeros(1))],
                     metrics=[EnergyEstimate(["horowitz45-fp32"], neurons=False)],
                     quiet=True).run()
    assert only["energy_estimate"] == {"horowitz45-fp32": pytest.approx(11.0 * PJ)}
    assert isinstance(get_profile("horowitz45-fp16"), EnergyProfile)
