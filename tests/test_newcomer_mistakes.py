"""The two mistakes of a researcher's first hour that gave wrong figures (issue 45), made as
a user makes them: a config without its ``checkpoint:`` line, and an snnTorch net handed to
``Benchmark`` without ``SNNTorchModel``. Plus the two routes giving one identity and the
same flags for the same model."""

from __future__ import annotations

import itertools
import json
import textwrap
import warnings

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.cli import main
from neuromark.errors import UnsupportedLayerError
from neuromark.metrics.complexity import SynapticOperations
from neuromark.metrics.correctness import ClassificationAccuracy
from neuromark.models import as_adapter
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel
from neuromark.models.untrained import UNTRAINED_FLAG, as_built
from neuromark.processors.decoding import ChooseMaxCount
from neuromark.registry import datasets
from neuromark.results import CustomBenchmarkWarning

snn = pytest.importorskip("snntorch")

BINNING = {"dt_us": 10_000, "t_max_us": 850_000, "pool": 10}  # (85 steps, 70 channels)
SHIPPED = "configs/shd/spoken_digits_snn.yaml"

NET_FILE = '''\
import torch
from torch import nn
import snntorch as snn


def build(hidden: int = 128):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(70, hidden), snn.Leaky(beta=0.9, init_hidden=True),
                         nn.Linear(hidden, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True))
'''


def issue_net(seed: int = 0) -> nn.Module:
    """The issue's net: 70 -> 128 Leaky -> 20 Leaky, one time step per call."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(70, 128), snn.Leaky(beta=0.9, init_hidden=True),
                         nn.Linear(128, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True))


@pytest.fixture(scope="module")
def test_split():
    return datasets.get("spoken_digits")("test", **BINNING)


def _run(model, split, batches: int | None = None):
    """Accuracy and synaptic operations of ``model`` on ``split`` (its first ``batches``
    batches of 32; None: all)."""
    return Benchmark(model, itertools.islice(split.loader(32), batches),
                     postprocessors=[ChooseMaxCount()],
                     metrics=[ClassificationAccuracy(), SynapticOperations()], quiet=True).run()


def test_bare_snntorch_net_gives_the_figures_of_snntorchmodel(test_split):
    net = issue_net()
    wrapped = as_adapter(net)
    assert isinstance(wrapped, SNNTorchModel)
    bare, explicit = _run(net, test_split, 2), _run(SNNTorchModel(issue_net()), test_split, 2)
    assert bare["classification_accuracy"] == explicit["classification_accuracy"]
    assert bare["synaptic_operations"] == explicit["synaptic_operations"]
    # all 85 steps counted, not one: 85 x (70 x 128 + 128 x 20) dense MACs per sample
    assert bare["synaptic_operations"]["Dense"] == 85 * (70 * 128 + 128 * 20)


def test_snntorch_net_whose_forward_loops_is_refused_naming_both_adapters():
    class Looping(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(70, 20)
            self.lif = snn.Leaky(beta=0.9)

        def forward(self, x):
            mem, spikes = self.lif.init_leaky(), []
            for t in range(x.shape[1]):
                spk, mem = self.lif(self.fc(x[:, t]), mem)
                spikes.append(spk)
            return torch.stack(spikes, 1)

    with pytest.raises(UnsupportedLayerError, match=r"SNNTorchModel\(net\).*TorchModel\(net\)"):
        Benchmark(Looping(), [])
    assert isinstance(as_adapter(TorchModel(Looping())), TorchModel)  # the user's choice stands


def test_other_frameworks_neurons_are_refused_naming_their_adapter():
    node = type("LIFNode", (type("BaseNode", (nn.Module,), {"__module__":
                "spikingjelly.activation_based.neuron"}),), {"__module__":
                "spikingjelly.activation_based.neuron"})
    net = nn.Sequential(nn.Linear(4, 4), node())
    with pytest.raises(UnsupportedLayerError, match=r"SpikingJelly neurons \('1': LIFNode.*"
                                                    r"SpikingJellyModel\(net\)"):
        as_adapter(net)


def test_untrained_net_is_flagged_and_a_trained_one_is_not(test_split, capsys):
    net = issue_net()
    assert as_built(net)
    results = _run(net, test_split, 1)
    assert UNTRAINED_FLAG in results.flags
    assert UNTRAINED_FLAG in capsys.readouterr().err
    optimiser, stepped = torch.optim.Adam(net.parameters(), lr=0.01), SNNTorchModel(net)
    for x, y in itertools.islice(datasets.get("spoken_digits")("train", **BINNING).loader(16), 2):
        stepped.reset_state()  # snnTorch's utils.reset: a fresh membrane per batch
        loss = nn.functional.cross_entropy(stepped(x).sum(1), y)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    assert not as_built(net)
    assert UNTRAINED_FLAG not in _run(net, test_split, 1).flags
    declared = Benchmark(issue_net(), itertools.islice(test_split.loader(32), 1), [], [ChooseMaxCount()],
                         [ClassificationAccuracy()], quiet=True, trained=False).run()
    assert UNTRAINED_FLAG not in declared.flags and declared.details["untrained"].startswith("declared")


def _config(tmp_path, model_block: str) -> str:
    (tmp_path / "my_net.py").write_text(NET_FILE)
    (tmp_path / "my_run.yaml").write_text(textwrap.dedent(f"""\
        task: classification
        benchmark: {{id: spoken-digits, version: "2.0", parent: shd-classification}}
        dataset: {{name: spoken_digits, options: {{dt_us: 10000, t_max_us: 850000, pool: 10}}}}
        model:
          name: python
          options: {{factory: "my_net.py:build"}}
          label: my-net
        {model_block}
        """))
    return str(tmp_path / "my_run.yaml")


def test_config_without_checkpoint_is_flagged_on_screen_in_results_and_leaderboard(tmp_path, capsys):
    config = _config(tmp_path, "")
    assert main(["run", config, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert UNTRAINED_FLAG in err and "no model.checkpoint" in err
    written = json.loads((tmp_path / "out" / "spoken-digits--my-net.json").read_text())
    assert UNTRAINED_FLAG in written["flags"]
    assert main(["leaderboard", str(tmp_path / "out"), "--out", str(tmp_path / "site")]) == 0
    assert UNTRAINED_FLAG in (tmp_path / "site" / "index.html").read_text()


def test_config_declared_untrained_is_not_flagged(tmp_path):
    config = _config(tmp_path, "  trained: false")
    assert main(["run", config, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    written = json.loads((tmp_path / "out" / "spoken-digits--my-net.json").read_text())
    assert UNTRAINED_FLAG not in written["flags"]
    assert written["details"]["untrained"].startswith("declared")


def test_both_routes_one_identity_and_the_same_flags(tmp_path, capsys):
    config = _config(tmp_path, "")
    assert main(["run", config, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    by_config = json.loads((tmp_path / "out" / "spoken-digits--my-net.json").read_text())
    by_api = Benchmark.from_config(SHIPPED, model=issue_net(), label="my-net").run()
    assert by_api.benchmark.key == ("spoken-digits", "2.0")
    assert by_api.model.label == "my-net"
    assert by_api.flags == by_config["flags"]  # untrained and the tie flag, alike
    assert any(f.startswith("decoding spike_count") for f in by_api.flags)
    for key in ("classification_accuracy", "footprint", "synaptic_operations"):
        assert by_api.scores[key].value == by_config["scores"][key]["value"], key


def test_saving_a_custom_result_warns(tmp_path, test_split):
    results = _run(SNNTorchModel(issue_net()), test_split, 1)
    assert results.benchmark.id == "custom"
    with pytest.warns(CustomBenchmarkWarning, match="Benchmark.from_config"):
        results.save(tmp_path / "custom--Sequential.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Benchmark.from_config(SHIPPED, model=issue_net(), label="mine").run().save(
            tmp_path / "spoken-digits--mine.json")


def _commands(parser, prefix: str = "neuromark") -> list[str]:
    """Every command and sub-command of the CLI, as ``neuromark data info``."""
    import argparse

    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(f"{prefix} {name}")
                found += _commands(sub, f"{prefix} {name}")
    return found


def test_readme_lists_every_command():
    from pathlib import Path

    from neuromark.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    missing = [c for c in _commands(build_parser()) if f"\n{c} " not in readme]
    assert not missing, f"README's command list lacks {missing}"


def test_from_config_with_a_task_that_takes_no_given_model_is_refused():
    from neuromark.errors import ConfigError

    with pytest.raises(ConfigError, match=r"esn\.yaml.*task.*classification.*'mackey_glass'"):
        Benchmark.from_config("configs/mackey_glass/esn.yaml", model=issue_net())
    with pytest.raises(ConfigError, match="config file not found"):
        Benchmark.from_config("configs/no_such.yaml", model=issue_net())


def test_leaderboard_marks_the_shipped_baseline_not_a_namesake(tmp_path):
    from neuromark.identity import BenchmarkIdentity, model_identity
    from neuromark.report.leaderboard import build_leaderboard
    from neuromark.report.runs import read_runs
    from neuromark.results import Results, Score

    folder = tmp_path / "results"
    folder.mkdir()
    for name in ("svm", "python"):  # the shipped svm, and a user's model labelled svm too
        Results(scores={"classification_accuracy": Score(0.2, error=0.03)},
                benchmark=BenchmarkIdentity("spoken-digits", "2.0"),
                model=model_identity(name, {}, None, "svm")).save(
                    folder / f"spoken-digits--svm-{name}.json")
    page = build_leaderboard(read_runs([folder]), tmp_path / "site").read_text()
    assert page.count("★ baseline</span>") == 1
    rows = page.split("<tbody>")[1].split("</tr>")
    assert sum("★ baseline" in row and ">svm<" in row for row in rows) == 1
