"""The run context reaches every task (issue 27, done-when: "``--coverage``, ``--device``,
``--cache-dir`` and ``--executor`` reach every task, with a test per task; no
``os.environ[...] =`` in ``src/neuromark``").

Each registered task runs a tiny config through the real CLI with every flag: the case its
family's ``cases.TASK_CASES`` declares (the kernel's tasks: ``tests/family_cases.py``), whose
``flags`` say what the run must show. A test checks that (a) every results file records the
flags under ``provenance.run``; (b) the flags were used inside the task, not only recorded:
the contexts the task handed to
``RunContext.device_for`` and to ``evaluate`` carry them, the metrics that check coverage got
``warn``, the device resolved and the model evaluated on is the CPU although the configs
ask for ``device: cuda`` (without CUDA, a flag that did not arrive fails the run), and the
units of tasks that have them ran on the run's executor (a recording stand-in for the local
one), and every results file keeps the results contract of :mod:`neuromark.testing.results`;
(c) the ``cache:`` paths, checkpoints, corpora and tables went to ``--cache-dir``
while the default cache (``$NEUROMARK_CACHE_DIR``, ``$XDG_CACHE_HOME``) stayed empty; and
that no ``NEUROMARK_*`` variable was set or changed, during the task or after it.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
from family_cases import run_task_case, task_cases

import neuromark
import neuromark.suite as suite
import neuromark.tasks
from neuromark.cli import main
from neuromark.config import load_config
from neuromark.context import RunContext
from neuromark.executors import LocalExecutor
from neuromark.registry import tasks
from neuromark.results import Results
from neuromark.tasks import evaluation
from neuromark.testing.results import raise_problems, task_results_problems, written_results_problems

SRC = Path(neuromark.__file__).resolve().parent


def neuromark_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("NEUROMARK_")}


class RecordingExecutor(LocalExecutor):
    """The local executor, recording every unit handed to it."""

    def __init__(self, log: list[Any]) -> None:
        super().__init__()
        self.log = log

    def run(self, units):
        units = list(units)
        self.log.extend(units)
        yield from super().run(units)


@dataclass
class Run:
    """What one CLI run left: results, and what the spies saw inside the task."""

    out: Path
    cache: Path
    default_caches: tuple[Path, ...]
    results: list[dict[str, Any]] = field(default_factory=list)
    device_for: list[tuple[RunContext, str, Any]] = field(default_factory=list)
    evaluate: list[tuple[RunContext, Any, list[str]]] = field(default_factory=list)
    units: list[Any] = field(default_factory=list)
    executors: list[str] = field(default_factory=list)
    env_inside: list[dict[str, str]] = field(default_factory=list)

    def check_contexts(self, *, device: bool = True, evaluated: bool = True) -> None:
        """(b): the contexts the task used carry the flags."""
        assert self.executors == ["local"]
        if device:
            assert self.device_for, "the task never resolved its device through the context"
        for ctx, configured, resolved in self.device_for:
            assert ctx.device == "cpu" and ctx.coverage == "warn" and ctx.cache_dir == self.cache
            assert (configured, resolved) == ("cuda", torch.device("cpu"))  # --device overrides
        if evaluated:
            assert self.evaluate, "the task never evaluated through evaluate(ctx, ...)"
        for ctx, on, coverages in self.evaluate:
            assert ctx.device == "cpu" and ctx.coverage == "warn" and ctx.cache_dir == self.cache
            assert ctx.coverage_for() == "warn"
            assert set(coverages) <= {"warn"}  # every metric that checks coverage got warn
            assert on is None or torch.device(on) == torch.device("cpu")

    def check_caches(self, *expected: str) -> None:
        """(c): ``expected`` paths lie in --cache-dir; the default cache stayed empty."""
        for rel in expected:
            assert (self.cache / rel).exists(), f"{rel} is not in --cache-dir {self.cache}"
        for default in self.default_caches:
            assert not default.exists() or not any(default.rglob("*")), \
                f"the default cache {default} was written: {sorted(default.rglob('*'))}"

    def check_device_requested(self) -> None:
        for res in self.results:
            assert res["provenance"]["device"]["requested"] == "--device cpu"


@pytest.fixture
def run_cli(tmp_path, monkeypatch):
    """``run_cli(config) -> Run``: ``neuromark run CONFIG`` with every flag, spied on."""
    defaults = (tmp_path / "default-cache", tmp_path / "xdg" / "neuromark")
    for name in neuromark_env():
        monkeypatch.delenv(name)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(defaults[0]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(defaults[1].parent))  # matplotlib's lies there too
    cache = tmp_path / "given-cache"
    counter = iter(range(100))

    def go(config: Path) -> Run:
        run = Run(tmp_path / f"out{next(counter)}", cache.absolute(), defaults)
        env_before = neuromark_env()

        def device_for(self, configured, where, **kw):
            resolved = original_device_for(self, configured, where, **kw)
            run.device_for.append((self, configured, resolved))
            run.env_inside.append(neuromark_env())
            return resolved

        def spy_evaluate(ctx, model, data, metrics, **kw):
            metrics = list(metrics)
            results = original_evaluate(ctx, model, data, metrics, **kw)
            run.evaluate.append((ctx, kw.get("device"),
                                 [m.coverage for m in metrics if hasattr(m, "coverage")]))
            run.env_inside.append(neuromark_env())
            return results

        def make_executor(name, address=None):
            run.executors.append(name)
            assert address is None
            return RecordingExecutor(run.units)

        original_device_for = RunContext.device_for
        original_evaluate = evaluation.evaluate
        with monkeypatch.context() as patch:
            patch.setattr(RunContext, "device_for", device_for)
            for module in _modules_binding(original_evaluate):
                patch.setattr(module, "evaluate", spy_evaluate)
            patch.setattr(suite, "make_executor", make_executor)  # the suite makes it
            code = main(["run", str(config), "--out", str(run.out), "--quiet", "--coverage",
                         "warn", "--device", "cpu", "--cache-dir", str(cache),
                         "--executor", "local"])
        assert code == 0
        # no NEUROMARK_* variable set or changed by the CLI, during the task or after it
        assert neuromark_env() == env_before
        assert all(seen == env_before for seen in run.env_inside)
        # (a) every results file records the flags, and keeps the results contract
        written = load_config(config)
        track = getattr(tasks.get(written.data["task"]), "track", "algorithm")
        for path in sorted(run.out.glob("*.json")):
            data = json.loads(path.read_text())
            if "scores" in data and "benchmark" in data:
                raise_problems(str(path), written_results_problems(path, config=written) + [
                    *task_results_problems(Results.load(path), config=written, track=track)])
                run.results.append(data)
                ran = data["provenance"]["run"]
                assert (ran["coverage"], ran["device"], ran["executor"]) == ("warn", "cpu", "local")
                assert ran["cache_dir"] == str(run.cache)
        assert run.results, f"no results file in {run.out}"
        return run

    return go


def _modules_binding(function: Any) -> list[Any]:
    """Every loaded neuromark module whose ``evaluate`` is ``function`` (task modules import
    it by name), the task modules (the kernel's and every registered task's) imported first."""
    for info in pkgutil.iter_modules(neuromark.tasks.__path__, "neuromark.tasks."):
        importlib.import_module(info.name)
    for name in tasks.names():
        tasks.get(name)
    return [m for name, m in list(sys.modules.items())
            if name.startswith("neuromark") and getattr(m, "evaluate", None) is function]


# --- one case per task ----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(task_cases()))
def test_every_task_gets_the_flags(name, tmp_path, run_cli, monkeypatch):
    cache = tmp_path / "given-cache"
    case = run_task_case(name, tmp_path, cache, monkeypatch)
    flags = case["flags"]
    config = case["config"]
    if isinstance(config, Path):  # a YAML file: the copy asking for CUDA lies beside it
        path = config.with_name(f"flags-{config.name}")
        path.write_text(config.read_text() + ("device: cuda\n" if flags.get("device", True) else ""))
    else:
        path = tmp_path / f"{name}-flags.yaml"
        path.write_text(json.dumps({**config, **({"device": "cuda"} if flags.get("device", True) else {})}))
    run = run_cli(path)  # --device cpu overrides the config's cuda
    run.check_contexts(device=flags.get("device", True), evaluated=flags.get("evaluated", True))
    if flags.get("coverage"):  # a metric that checks coverage got --coverage warn
        assert any(coverages for _, _, coverages in run.evaluate)
    if flags.get("units") is not None:  # on the run's executor
        assert len(run.units) == flags["units"]
    if flags.get("evaluations") is not None:  # each under the run's context
        assert len(run.evaluate) == flags["evaluations"]
    if flags.get("device", True):
        run.check_device_requested()
    run.check_caches(*flags.get("caches", ()))
    if flags.get("check") is not None:
        flags["check"](run.results, run.cache)


# --- no environment writes ------------------------------------------------------------------

def test_the_cli_leaves_no_neuromark_variable_behind(tmp_path, monkeypatch):
    for name in neuromark_env():
        monkeypatch.delenv(name)
    config = tmp_path / "mg.yaml"
    config.write_text("task: mackey_glass\ndata: {taus: [17], instances: 1}\n"
                      "models:\n  - {name: esn, seed: 0}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet", "--coverage",
                 "warn", "--device", "cpu", "--cache-dir", str(tmp_path / "cache"),
                 "--executor", "local"]) == 0
    assert neuromark_env() == {}


ENV_WRITES = re.compile(r"os\.environ\s*\[[^\]]*\]\s*=(?!=)|os\.environ\.(update|setdefault|pop)"
                        r"\b|\bdel\s+os\.environ\b|os\.(putenv|unsetenv)\b|from\s+os\s+import"
                        r"[^\n]*\benviron\b")


def test_no_environment_writes_in_the_package():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if ENV_WRITES.search(line):
                rel = path.relative_to(SRC).as_posix()
                if rel == "devices.py" and "CUBLAS_WORKSPACE_CONFIG" in line:
                    continue  # deterministic CUDA needs it (issue 27 exempts it)
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "environment written in src/neuromark:\n" + "\n".join(found)
    assert ENV_WRITES.search('os.environ["NEUROMARK_DEVICE"] = args.device')  # the rule bites
    assert ENV_WRITES.search("os.environ.update(NEUROMARK_COVERAGE='warn')")
    assert not ENV_WRITES.search('if os.environ["X"] == "1":')


def test_coverage_reaches_the_energy_estimates_inner_count():
    """An unconsumed parameter fails energy_estimate's inner synaptic count under the
    default (error) and is reported under --coverage warn (the runner resets the metric
    first, which must not restore the inner count's default)."""
    import pytest
    import torch

    from neuromark.context import RunContext
    from neuromark.errors import MetricError
    from neuromark.metrics.energy import EnergyEstimate
    from neuromark.tasks.evaluation import evaluate

    class Unused(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)
            self.spare = torch.nn.Parameter(torch.ones(4))  # consumed by no operation

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(x)

    batches = [(torch.ones(2, 3), torch.zeros(2))]
    with pytest.raises(MetricError, match="spare"):
        evaluate(RunContext.build(environ={}), Unused(), batches, [EnergyEstimate(neurons=False)],
                 quiet=True)
    res = evaluate(RunContext.build(coverage="warn", environ={}), Unused(), batches,
                   [EnergyEstimate(neurons=False)], quiet=True)
    assert res.scores["energy_estimate"].value
