"""Decoding checked against the task, a foreign checkpoint caught at ``validate`` with the
config's line (the same message at run time), and a bare net's wrapping said once and named
in the errors after it (issue 58, items 2, 3, 8)."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from torch import nn

from neuromark.cli import main
from neuromark.errors import DataError, ModelOutputError
from neuromark.metrics.correctness import ClassificationAccuracy
from neuromark.processors.decoding import Argmax, ChooseMaxCount, Decoder
from neuromark.runner import Benchmark

SPIKES = torch.zeros(4, 6, 3)  # (B, T, K) spike trains
SPIKES[:, 2, 1] = 1.0


def test_argmax_on_spike_trains_is_refused_naming_the_rule():
    with pytest.raises(ModelOutputError, match=r"'argmax' takes \(batch, classes\).*18 'classes'"
                                               r".*spike_count"):
        Decoder("argmax")(SPIKES)
    assert Decoder("argmax")(torch.zeros(4, 1, 3)).shape == (4,)  # a singleton axis is fine


@pytest.mark.parametrize("output", [(SPIKES, SPIKES), torch.zeros(4), torch.zeros(4, 3)])
def test_outputs_a_rule_cannot_decode(output):
    rule = "argmax" if isinstance(output, torch.Tensor) and output.dim() == 1 else "spike_count"
    with pytest.raises(ModelOutputError, match="decoding"):
        Decoder(rule)(output)


def test_predictions_outside_the_label_range_name_it():
    logits = torch.tensor([[0.0, 0.0, 0.0, 5.0], [1.0, 0.0, 0.0, 0.0]])
    with pytest.raises(ModelOutputError, match=r"predicts class 3 .*labels are 0 \.\. 2 \(3 classes\)"):
        Decoder("argmax", num_classes=3)(logits)
    with pytest.raises(ModelOutputError, match=r"gives 4 class scores.*labels are 0 \.\. 4"):
        Decoder("argmax", num_classes=5)(logits)
    assert Decoder("argmax", num_classes=4)(logits).tolist() == [3, 0]


def test_genuine_ties_keep_their_flag():
    decoder = Decoder("spike_count", num_classes=3)
    decoder(torch.zeros(4, 6, 3))  # no spikes: every class ties
    assert decoder.tied == 4 and "tied top class" in decoder.flag()


def _snn_net(out_features: int = 3):
    snn = pytest.importorskip("snntorch", reason="the wrapping note is about snnTorch nets")

    class TupleNet(nn.Module):
        """An snnTorch net whose forward returns (spk, mem), passed bare."""

        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(5, out_features)
            self.lif = snn.Leaky(beta=0.9)

        def forward(self, x):
            return self.lif(self.fc(x))

    return TupleNet()


def test_bare_net_wrapping_is_said_once_and_recorded(capsys):
    data = [(torch.rand(2, 4, 5), torch.tensor([0, 1]))] * 3
    results = Benchmark(_snn_net(), data, [], [ChooseMaxCount()], [ClassificationAccuracy()],
                        quiet=True, trained=False).run()
    err = capsys.readouterr().err
    assert err.count("runs wrapped in SNNTorchModel") == 1
    assert "its forward returned a tuple of 2 (tensor (2, 3), tensor (2, 3))" in err
    assert "here tensor (2, 4, 3)" in err
    assert results.details["adapter"]["name"] == "SNNTorchModel"
    assert results.details["adapter"]["net_returned"].startswith("a tuple of 2")


def test_errors_after_the_wrapping_name_it(capsys):
    data = [(torch.rand(2, 4, 5), torch.tensor([0, 1]))]
    with pytest.raises(ModelOutputError, match=r"'argmax' takes.*wrapped in SNNTorchModel.*"
                                               r"a tuple of 2"):
        Benchmark(_snn_net(), data, [], [Argmax()], [ClassificationAccuracy()], quiet=True).run()
    wrong = [(torch.rand(2, 4, 7), torch.tensor([0, 1]))]  # 7 features for a 5-input layer
    with pytest.raises(ModelOutputError, match=r"layer 'fc'.*wrapped in SNNTorchModel: each call "
                                               r"gets ONE time step"):
        Benchmark(_snn_net(), wrong, [], [ChooseMaxCount()], [ClassificationAccuracy()],
                  quiet=True).run()


NET_FILE = '''\
import torch
from torch import nn


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(70, 20)
        self.recurrent = nn.Linear(20, 20)
        self.alpha = nn.Parameter(torch.ones(20))

    def forward(self, x):  # (B, T, 70) -> (B, T, 20)
        return self.fc(x) * self.alpha


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(70, 20)


def build():
    return Recurrent()


def save_other(path):
    torch.save(Plain().state_dict(), path)
'''


def test_validate_loads_the_checkpoint_and_names_the_line(tmp_path, capsys):
    """A checkpoint of another model with the same layer shapes but without the recurrent
    and alpha keys: refused by validate (config file and line) and by the run, alike."""
    (tmp_path / "net.py").write_text(NET_FILE)
    namespace: dict = {}
    exec(compile(NET_FILE, "net.py", "exec"), namespace)
    namespace["save_other"](tmp_path / "other.pt")
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent("""\
        task: classification
        benchmark: {id: my-digits, version: "1.0"}
        dataset: {name: spoken_digits, options: {dt_us: 10000, t_max_us: 850000, pool: 10}}
        model:
          name: python
          options: {factory: "net.py:build"}
          checkpoint: other.pt
        """))
    assert main(["validate", str(config)]) != 0
    err = capsys.readouterr().err
    assert f"{config}:7: model.checkpoint:" in err
    assert "other.pt: weights do not fit the model (Recurrent)" in err
    assert "missing key(s)" in err and "recurrent.weight" in err and "alpha" in err
    assert "Traceback" not in err
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) != 0
    run_err = capsys.readouterr().err
    assert f"{config}:7: model.checkpoint:" in run_err and "recurrent.weight" in run_err
    # the model's own weights pass both
    torch.save(namespace["build"]().state_dict(), tmp_path / "other.pt")
    assert main(["validate", str(config)]) == 0
    assert "ok:" in capsys.readouterr().out


def test_load_state_dict_names_shapes(tmp_path):
    from neuromark.models.checkpoint import load_state_dict

    torch.save(nn.Linear(3, 2).state_dict(), tmp_path / "w.pt")
    with pytest.raises(DataError, match=r"shape mismatch.*weight: file \(2, 3\) vs model \(2, 4\)"):
        load_state_dict(nn.Linear(4, 2), tmp_path / "w.pt", "c.yaml:3")


def test_out_of_range_decoding_stops_a_config_run(tmp_path, capsys):
    """The issue's run: eval.postprocessor: argmax on a spiking net's (B, T, K) output gave
    accuracy 0 with rc 0; now an error naming the rule to use."""
    (tmp_path / "net.py").write_text(textwrap.dedent("""\
        from torch import nn

        def build():
            return nn.Sequential(nn.Linear(70, 20), nn.ReLU())
        """))
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent("""\
        task: classification
        benchmark: {id: my-digits, version: "1.0"}
        dataset: {name: spoken_digits, options: {dt_us: 10000, t_max_us: 850000, pool: 10}}
        model: {name: python, options: {factory: "net.py:build"}, trained: false}
        eval: {postprocessor: argmax, batch_size: 64}
        """))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "'argmax' takes (batch, classes) logits" in err and "spike_count" in err
    assert not list((tmp_path / "out").glob("*.json")) if (tmp_path / "out").exists() else True
    json.dumps(err)  # one message, no traceback
    assert "Traceback" not in err
