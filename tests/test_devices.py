"""Devices (issue 20, "Device everywhere" and "Training on the device"): device names checked
at config load with the file and line, ``--device`` overriding the configs, batches moved
through nested structures, the device used in the provenance (apart from the GPUs present),
and the device in a training recipe's identity. CUDA-only checks skip without CUDA."""

from __future__ import annotations

import json
from collections import OrderedDict, namedtuple
from pathlib import Path

import pytest
import torch
from test_shd_snn import make_corpus

from neuromark.cli import main
from neuromark.config import load_config
from neuromark.context import RunContext
from neuromark.devices import (
    DEVICE_ENV,
    config_device,
    deterministic_algorithms,
    device_problem,
    move_to,
    recipe_device,
    resolve_device,
)
from neuromark.errors import ConfigError
from neuromark.networks.spike_classifiers import TrainSettings, load_checkpoint
from neuromark.provenance import machine_info
from neuromark.runner import Benchmark
from neuromark.tasks.classification import TASK
from neuromark.training.checkpoints import recipe_hash

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
without_cuda = pytest.mark.skipif(CUDA, reason="checks the error where CUDA is absent")


@pytest.fixture(autouse=True)
def no_device_override(monkeypatch):
    """No ``$NEUROMARK_DEVICE`` default from the calling shell (the CLI never sets it)."""
    monkeypatch.delenv(DEVICE_ENV, raising=False)


def toy_config(folder: Path, device: str | None = None, kind: str = "snn", extra: str = "") -> Path:
    make_corpus(folder, n_train=12, n_test=6)
    path = folder / "c.yaml"
    path.write_text(f"""task: classification
benchmark: {{id: toy-{kind}}}
dataset:
  name: spike_files
  options: {{train: train.h5, test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}
model: {{name: {kind}, options: {{hidden: 8}}, checkpoint: {kind}.pt}}
train: {{epochs: 1, batch_size: 6, seed: 3{extra}}}
eval: {{batch_size: 6}}
""" + (f"device: {device}\n" if device is not None else ""))
    return path


# --- names and resolution ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cpu", "cuda", "cuda:0", "cuda:12", "auto"])
def test_device_names_accepted(name):
    assert device_problem(name) is None


@pytest.mark.parametrize("name", ["gpu", "CUDA", "cuda:", "cuda:x", "mps ", "", 0])
def test_unknown_device_names_refused(name):
    assert "is not a device: use cpu, cuda, cuda:N" in device_problem(name)


def test_auto_takes_cuda_when_present_else_cpu():
    assert resolve_device("auto", cuda_devices=0) == torch.device("cpu")
    assert resolve_device("auto", cuda_devices=2) == torch.device("cuda")
    assert resolve_device("cuda:1", cuda_devices=2) == torch.device("cuda:1")
    with pytest.raises(ConfigError, match=r"here:3: device: cuda:2: no such CUDA device \(2 present"):
        resolve_device("cuda:2", "here:3", cuda_devices=2)
    with pytest.raises(ConfigError, match=r"here:3: device: cuda: CUDA is not available"):
        resolve_device("cuda", "here:3", cuda_devices=0)


# --- config and command line errors ------------------------------------------------------------

def test_unknown_device_in_a_config_names_file_and_line(tmp_path):
    path = toy_config(tmp_path, "gpu")
    with pytest.raises(ConfigError, match=r"c\.yaml:9: device: .*'gpu' is not a device"):
        TASK.plan(load_config(path), RunContext.build())


@without_cuda
def test_cuda_without_cuda_names_file_and_line(tmp_path):
    path = toy_config(tmp_path, "cuda:0")
    with pytest.raises(ConfigError, match=r"c\.yaml:9: device: cuda:0: CUDA is not available"):
        TASK.plan(load_config(path), RunContext.build())


def test_auto_and_cpu_validate_without_cuda(tmp_path):
    ctx = RunContext.build()
    assert TASK.plan(load_config(toy_config(tmp_path, "auto")), ctx).device.type in ("cpu", "cuda")
    assert TASK.plan(load_config(toy_config(tmp_path)), ctx).device == torch.device("cpu")


#: One shipped config of every algorithm-track task.
TASK_CONFIGS = ["mackey_glass/esn.yaml", "primate_reaching/ridge.yaml",
                "primate_reaching/psth_ceiled.yaml", "keywords/mswc_fscil_m5_short.yaml",
                "event_detection/gen4_synthetic_short.yaml", "shd/spoken_digits_svm.yaml"]
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("name", ["gpu", pytest.param("cuda:0", marks=without_cuda)])
@pytest.mark.parametrize("shipped", TASK_CONFIGS)
def test_every_algorithm_task_checks_its_device_with_file_and_line(shipped, name):
    from neuromark.config import parse_yaml
    from neuromark.suite import task_of

    path = CONFIGS / shipped
    text = path.read_text().rstrip("\n") + f"\ndevice: {name}\n"
    config = parse_yaml(text, path)  # paths still resolve from the shipped config's folder
    line = text.count("\n")
    expected = "'gpu' is not a device" if name == "gpu" else "cuda:0: CUDA is not available"
    with pytest.raises(ConfigError, match=rf"{path.name}:{line}: device: .*{expected}"):
        task_of(config).plan(config, RunContext.build())
    task_of(config).plan(parse_yaml(text.replace(f"device: {name}", "device: auto"), path),
                         RunContext.build())


@without_cuda
@pytest.mark.parametrize("verb", ["run", "train"])
def test_device_flag_overrides_the_config(tmp_path, capsys, verb):
    path = toy_config(tmp_path, "cpu")
    assert main([verb, str(path), "--device", "cuda", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "--device cuda: device: cuda: CUDA is not available" in err and "Traceback" not in err
    assert not (tmp_path / "snn.pt").exists()  # refused before any training


def test_unknown_device_flag_is_a_clear_error(tmp_path, capsys):
    assert main(["run", str(toy_config(tmp_path)), "--device", "gpu"]) == 1
    assert "--device: 'gpu' is not a device: use cpu, cuda, cuda:N" in capsys.readouterr().err


def test_auto_says_which_device(tmp_path, capsys):
    device = config_device("cpu", "c.yaml:9", override="auto", label="toy", announce=True)
    assert capsys.readouterr().err.strip() == (
        f"toy: device auto -> {device} ({'CUDA available' if CUDA else 'no CUDA device'})")


# --- moving batches ------------------------------------------------------------------------

Pair = namedtuple("Pair", "data meta")


def test_move_to_reaches_every_tensor_of_nested_structures():
    batch = (Pair(torch.ones(2), {"h": [torch.zeros(1), (torch.zeros(3), 7)]}),
             OrderedDict(y=torch.arange(2)), "label", None)
    moved = move_to(batch, "meta")
    assert isinstance(moved, tuple) and isinstance(moved[0], Pair)
    assert isinstance(moved[1], OrderedDict)
    assert moved[0].data.is_meta and moved[0].meta["h"][0].is_meta and moved[0].meta["h"][1][0].is_meta
    assert moved[1]["y"].is_meta and moved[1]["y"].dtype == torch.int64
    assert moved[0].meta["h"][1][1] == 7 and moved[2:] == ("label", None)
    assert batch[0].data.device.type == "cpu"  # the input is left as it was


class Recorder(torch.nn.Module):
    """A linear readout that records the device of every input it sees."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.seen: list[torch.device] = []

    def forward(self, batch: dict) -> torch.Tensor:
        self.seen.append(batch["x"][0].device)
        return self.fc(batch["x"][0])


def test_runner_moves_model_and_nested_batches(monkeypatch):
    import neuromark.runner as runner

    calls = []

    def spy(data, device, **kw):
        calls.append((device, kw))
        return move_to(data, device, **kw)

    monkeypatch.setattr(runner, "move_to", spy)
    batches = [({"x": [torch.randn(4, 3)]}, torch.tensor([0, 1, 1, 0])) for _ in range(2)]
    from neuromark.metrics.correctness import ClassificationAccuracy

    model = Recorder()
    results = Benchmark(model, batches, postprocessors=[lambda out: out.argmax(-1)],
                        metrics=[ClassificationAccuracy()], device="cpu",
                        device_requested="auto").run(quiet=True)
    assert [c[0] for c in calls] == [torch.device("cpu")] * 2
    assert all(kw == {} for _, kw in calls)  # move_to's default: non_blocking=True
    assert model.seen == [torch.device("cpu")] * 2
    device = results.provenance["device"]
    assert device == {"used": "cpu", "type": "cpu", "name": "cpu", "requested": "auto"}


def test_without_a_device_the_runner_leaves_placement_alone(monkeypatch):
    import neuromark.runner as runner

    monkeypatch.setattr(runner, "move_to", lambda *a, **k: pytest.fail("moved a batch"))
    batches = [({"x": [torch.randn(2, 3)]}, torch.tensor([0, 1]))]
    results = Benchmark(Recorder(), batches, postprocessors=[lambda out: out.argmax(-1)]).run(quiet=True)
    assert results.provenance["device"]["used"] == "cpu"
    assert results.provenance["device"]["requested"] == "cpu"


# --- provenance ----------------------------------------------------------------------------

def test_machine_lists_gpus_present_not_a_device_used():
    info = machine_info()
    assert "gpu" not in info
    assert info["gpus"] == ([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
                            if CUDA else [])


# --- training: recipe identity, checkpoint records ----------------------------------------------

#: ``train:`` keys of a classification recipe before devices existed: their hashes must hold.
OLD_TRAIN_KEYS = {"epochs", "batch_size", "lr", "optimizer", "seed", "threads", "jitter_sigma",
                  "time_stretch", "readout", "schedule", "weight_decay", "regularisers"}


def test_cpu_recipes_keep_their_identity_and_other_devices_change_it(tmp_path):
    assert set(TrainSettings().recipe()) == OLD_TRAIN_KEYS
    assert TrainSettings(deterministic=True).recipe()["deterministic"] is True
    assert recipe_device(torch.device("cpu")) == {} and recipe_device("cpu") == {}
    assert recipe_device(torch.device("cuda:1")) == {"device": "cuda"} == recipe_device("cuda")
    file = tmp_path / "train.bin"
    file.write_bytes(b"spikes")
    base = {"model": {"name": "snn"}, "train": TrainSettings().recipe()}
    hashes = {recipe_hash({**base, **recipe_device(d)}, file) for d in ("cpu", "cuda", "cuda:1")}
    assert len(hashes) == 2  # the CPU's, and one for any CUDA device


def test_checkpoint_records_device_and_a_run_the_device_used(tmp_path, capsys, monkeypatch):
    path = toy_config(tmp_path)
    assert main(["train", str(path), "--quiet", "--device", "cpu"]) == 0
    _, meta = load_checkpoint(tmp_path / "snn.pt")
    assert meta["device"] == "cpu" and meta["torch_version"] == torch.__version__
    assert "device" not in meta["recipe"] and "deterministic" not in meta["recipe"]["train"]
    capsys.readouterr()
    import os

    assert DEVICE_ENV not in os.environ  # --device reached the run through its context only
    path = toy_config(tmp_path, "auto")  # CPU here: the same recipe, so the checkpoint serves
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    data = json.loads((tmp_path / "out" / "toy-snn--snn.json").read_text())
    device = data["provenance"]["device"]
    assert device["requested"] == "auto" and device["type"] == ("cuda" if CUDA else "cpu")
    assert data["details"]["trained_now"] is CUDA  # a CUDA run never takes the CPU's checkpoint
    assert "toy-snn: device auto -> " in capsys.readouterr().err


def test_deterministic_algorithms_restores_the_previous_setting():
    assert not torch.are_deterministic_algorithms_enabled()
    with deterministic_algorithms(True):
        assert torch.are_deterministic_algorithms_enabled()
    assert not torch.are_deterministic_algorithms_enabled()
    with deterministic_algorithms(False):
        assert not torch.are_deterministic_algorithms_enabled()


# --- on a CUDA device ----------------------------------------------------------------------

@needs_cuda
def test_cuda_run_places_model_and_batches(tmp_path):
    batches = [({"x": [torch.randn(4, 3)]}, torch.tensor([0, 1, 1, 0]))]
    model = Recorder()
    results = Benchmark(model, batches, postprocessors=[lambda out: out.argmax(-1)],
                        device="cuda").run(quiet=True)
    assert model.seen[0].type == "cuda" and model.fc.weight.device.type == "cuda"
    assert results.provenance["device"]["name"] == torch.cuda.get_device_name(0)


@needs_cuda
def test_spike_files_stream_pinned_batches_for_cuda(tmp_path):
    from neuromark.benchmarks.shd.entries import BinnedSpikes

    make_corpus(tmp_path, n_train=4, n_test=6)
    data = BinnedSpikes(tmp_path / "test.h5", dt_us=20000, t_max_us=200000, pool=10)
    pinned = list(data.loader(4, pin_memory=True))
    plain = list(data.loader(4))
    assert all(x.is_pinned() for x, _ in pinned)
    assert all(torch.equal(a, b) for (a, _), (b, _) in zip(pinned, plain))
