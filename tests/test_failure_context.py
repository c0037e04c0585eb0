"""Failures say where they happened (issue 22, section 3): model and loader exceptions carry
the batch and benchmark (chained), a shape error names the layer, ``--traceback`` shows the
chain, SIGTERM ends a run like SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import OrderedDict
from pathlib import Path

import pytest
import torch
from torch import nn

from neuromark.cli import main
from neuromark.errors import ConfigError, DataError, ModelOutputError
from neuromark.identity import BenchmarkIdentity
from neuromark.metrics.correctness import ClassificationAccuracy
from neuromark.runner import Benchmark
from neuromark.tasks.base import TaskBase

SRC = Path(__file__).resolve().parents[1] / "src"


def _bench(model, loader, bench_id="ctx-bench"):
    return Benchmark(model, loader, [], [lambda out: out.argmax(-1)], [ClassificationAccuracy()],
                     quiet=True, info=BenchmarkIdentity(bench_id))


def _batches(n=3, width=4):
    return [(torch.ones(2, width), torch.tensor([0, 1])) for _ in range(n)]


class FailsOnThird(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("device lost")
        return self.fc(x)


def test_model_exception_names_batch_and_benchmark_and_chains():
    with pytest.raises(ModelOutputError) as info:
        _bench(FailsOnThird(), _batches()).run()
    message = str(info.value)
    assert "benchmark ctx-bench: batch 2: the model raised RuntimeError" in message
    assert "device lost" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_shape_error_names_the_layer_and_the_input_shape():
    model = nn.Sequential(OrderedDict(fc1=nn.Linear(4, 8), act=nn.ReLU(), fc2=nn.Linear(5, 2)))
    with pytest.raises(ModelOutputError) as info:
        _bench(model, _batches()).run()
    message = str(info.value)
    assert "batch 0" in message and "in layer 'fc2'" in message
    assert "on input of shape (2, 4)" in message and "mat1 and mat2" in message


def test_nested_layer_is_named_by_its_path():
    inner = nn.Sequential(OrderedDict(proj=nn.Linear(3, 2)))
    model = nn.Sequential(OrderedDict(block=inner))
    with pytest.raises(ModelOutputError, match=r"in layer 'block\.proj'"):
        _bench(model, _batches()).run()


def test_loader_exception_names_the_batch_and_chains():
    def loader():
        yield torch.ones(2, 4), torch.tensor([0, 1])
        raise OSError("disk read failed")

    with pytest.raises(DataError) as info:
        _bench(nn.Linear(4, 2), loader()).run()
    assert "benchmark ctx-bench: batch 1: the data loader raised OSError: disk read failed" in \
        str(info.value)
    assert isinstance(info.value.__cause__, OSError)


def test_a_good_run_is_unchanged_by_the_wrapping():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    result = _bench(model, _batches()).run()
    expected = float((model(torch.ones(2, 4)).argmax(-1) == torch.tensor([0, 1])).float().mean())
    assert result["classification_accuracy"] == pytest.approx(expected)
    assert result.details["samples"] == 6


# --- the command line ------------------------------------------------------------------------

class _Task(TaskBase):
    name = "ctx_test"

    def __init__(self, error):
        self.error = error

    def plan(self, config, ctx):
        raise self.error

    def execute(self, plan, ctx):  # pragma: no cover
        return []


def _chained_error():
    try:
        raise ValueError("inner cause")
    except ValueError as exc:
        try:
            raise ConfigError("outer message") from exc
        except ConfigError as outer:
            return outer


def test_error_prints_one_message_without_traceback(tmp_path, capsys, monkeypatch):
    from neuromark.registry import tasks

    monkeypatch.setitem(tasks._entries, "ctx_test", _Task(_chained_error()))
    path = tmp_path / "c.yaml"
    path.write_text("task: ctx_test\n")
    assert main(["validate", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "outer message" in err and "Traceback" not in out + err


@pytest.mark.parametrize("where", ["before", "after"])
def test_traceback_flag_shows_the_chain(tmp_path, capsys, monkeypatch, where):
    from neuromark.registry import tasks

    monkeypatch.setitem(tasks._entries, "ctx_test", _Task(_chained_error()))
    path = tmp_path / "c.yaml"
    path.write_text("task: ctx_test\n")
    argv = ["--traceback", "validate", str(path)] if where == "before" else \
        ["validate", str(path), "--traceback"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "inner cause" in err
    assert "direct cause of the following exception" in err
    assert err.rstrip().endswith("neuromark validate: error: outer message")


SLOW_RUN = textwrap.dedent("""\
    import faulthandler, signal, sys, time
    faulthandler.register(signal.SIGUSR1)  # the test asks for every thread's stack on a hang
    # Ctrl-C as from a terminal: a test run started in the background (`cmd &`, nohup) hands
    # its children SIGINT ignored, and Python then keeps ignoring it (no KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from neuromark.registry import tasks
    from neuromark.results import BenchmarkIdentity, Results, Score
    from neuromark.cli import main
    from neuromark.tasks.base import TaskBase, TaskPlan

    class Fast(TaskBase):
        name = "fast"
        def plan(self, config, ctx):
            return TaskPlan(config, None)
        def execute(self, plan, ctx):
            return [Results(scores={"x": Score(1.5)}, benchmark=BenchmarkIdentity("fast-one"))]

    class Slow(TaskBase):
        name = "slow"
        def plan(self, config, ctx):
            return TaskPlan(config, None)
        def execute(self, plan, ctx):
            print("started", flush=True)
            time.sleep(60)
            return []

    tasks.register("fast", Fast())
    tasks.register("slow", Slow())
    sys.exit(main(["run", *sys.argv[1:-1], "--out", sys.argv[-1], "--quiet"]))
""")


def _start_slow(tmp_path: Path) -> subprocess.Popen:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_RUN)
    fast = tmp_path / "fast.yaml"
    fast.write_text("task: fast\n")
    config = tmp_path / "slow.yaml"
    config.write_text("task: slow\n")
    env = {**os.environ,  # keep a PYTHONPATH the caller needs (packages carried beside site)
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, str(script), str(fast), str(config), str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert "started" in proc.stdout.readline()
    return proc


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                           (signal.SIGINT, 130, "interrupted")])
def test_sigterm_ends_a_run_like_sigint(tmp_path, sig, code, word):
    proc = _start_slow(tmp_path)
    time.sleep(0.2)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # say where the run was when the signal did not end it
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the run did not end within 30 s of {sig.name} "
                    f"(SIGINT disposition here: {signal.getsignal(signal.SIGINT)}); stderr:\n{err}")
    assert proc.returncode == code
    assert word in err and "completed entries are saved" in err
    assert "Traceback" not in err
    # the benchmark that finished is saved and the report describes it (not stale)
    assert (tmp_path / "out" / "fast-one.json").is_file()
    assert "fast-one" in (tmp_path / "out" / "report.md").read_text()


def _tiny_classification(tmp_path, monkeypatch, width_in_model: int) -> Path:
    from neuromark.registry import datasets, models

    def tiny(split: str = "test"):
        return [(torch.ones(3), 0), (torch.ones(3), 1), (torch.ones(3), 0)]

    def build(*, width: int = 3):
        return nn.Sequential(OrderedDict(hidden=nn.Linear(width, 4), out=nn.Linear(4, 2)))

    monkeypatch.setitem(datasets._entries, "ctx_tiny", tiny)
    monkeypatch.setitem(models._entries, "ctx_model", build)
    path = tmp_path / "cls.yaml"
    path.write_text(f"task: classification\nbenchmark: {{id: ctx-cls}}\ndataset: {{name: ctx_tiny}}\n"
                    f"model: {{name: ctx_model, options: {{width: {width_in_model}}}}}\n"
                    "eval: {batch_size: 2, postprocessor: argmax, metrics: [classification_accuracy]}\n")
    return path


def test_run_with_a_wrong_input_shape_names_benchmark_batch_and_layer(tmp_path, capsys, monkeypatch):
    path = _tiny_classification(tmp_path, monkeypatch, width_in_model=5)
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "benchmark ctx-cls: batch 0: the model raised RuntimeError in layer 'hidden'" in err
    assert "on input of shape (2, 3)" in err


def test_the_same_run_with_a_fitting_model_succeeds(tmp_path, capsys, monkeypatch):
    from neuromark.results import Results

    path = _tiny_classification(tmp_path, monkeypatch, width_in_model=3)
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    result = Results.load(tmp_path / "o" / "ctx-cls--ctx_model.json")
    assert result.details["samples"] == 3
    assert result["classification_accuracy"] in (pytest.approx(1 / 3), pytest.approx(2 / 3))


def test_a_forked_worker_is_not_turned_into_an_interrupt():
    from neuromark.cli import sigterm_as_interrupt

    with sigterm_as_interrupt():
        pid = os.fork()
        if pid == 0:  # the worker: SIGTERM must end it as by default, not raise
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
