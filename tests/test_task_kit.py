"""The task kit (issue 46): the default ``plan()``, ``ctx.run_units``, ``ctx.artefact``, the
results helper ``task_results`` and the registries' contract checks."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import pytest

import neuromark.registry as registry
from neuromark.config import IdentitySettings, StrictModel, parse_yaml
from neuromark.context import RunContext
from neuromark.devices import device_provenance
from neuromark.errors import ConfigError
from neuromark.executors import LocalExecutor, Outcome, Unit, UnitFailed
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.registry import Registry, RegistryContractError, task_contract, tasks
from neuromark.results import Results, Score
from neuromark.tasks.base import (
    TaskBase,
    TaskPlan,
    out_dir_of,
    plan_and_run,
    require_task,
    task_results,
)
from neuromark.testing.results import task_results_problems

# --- the default plan() ----------------------------------------------------------------------


class KitSettings(StrictModel):
    task: Literal["kit"]
    benchmark: IdentitySettings
    size: int = 3
    device: str = "cpu"


class KitTask(TaskBase):
    name = "kit"
    settings_model = KitSettings

    def __init__(self) -> None:
        self.checked: list[Any] = []

    def check(self, settings: KitSettings, config: Any, ctx: RunContext) -> dict[str, Any]:
        self.checked.append(settings)
        if settings.size > 10:
            raise ConfigError(f"{config.where(('size',))}: size: at most 10")
        return {"doubled": 2 * settings.size}


def _config(tmp_path: Path, body: str) -> Any:
    path = tmp_path / "kit.yaml"
    path.write_text(body)
    return parse_yaml(body, path)


BODY = "task: kit\nbenchmark: {id: kit-test, version: '1'}\nsize: 4\n"


def test_default_plan_validates_checks_and_keeps_the_parts(tmp_path):
    task = KitTask()
    plan = task.plan(_config(tmp_path, BODY), RunContext())
    assert isinstance(plan, TaskPlan) and isinstance(plan.settings, KitSettings)
    assert plan.parts == {"doubled": 8} and plan.size == 4  # settings read through the plan
    assert task.checked == [plan.settings]  # check() got the validated settings, once
    assert plan.config.path == tmp_path / "kit.yaml"


def test_default_plan_refuses_an_old_key_as_any_unknown_key(tmp_path):
    """An old spelling (a top-level ``id:``, before ``benchmark: {id}``) is refused as any
    unknown key is, naming file, line and the keys allowed there, before the task's check."""
    task = KitTask()
    with pytest.raises(ConfigError, match=r"kit.yaml:3: id: unknown key \(allowed: task, benchmark, "
                                          r"size, device\)"):
        task.plan(_config(tmp_path, "task: kit\nbenchmark: {id: a}\nid: old\n"), RunContext())
    assert task.checked == []


def test_default_plan_names_file_and_line_of_a_bad_key(tmp_path):
    with pytest.raises(ConfigError, match=r"kit.yaml:3: size: Input should be a valid integer"):
        KitTask().plan(_config(tmp_path, BODY.replace("size: 4", "size: many")), RunContext())
    with pytest.raises(ConfigError, match=r"kit.yaml:3: size: at most 10"):  # the hook's own
        KitTask().plan(_config(tmp_path, BODY.replace("size: 4", "size: 11")), RunContext())


def test_default_plan_checks_the_device_with_file_and_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is present here: a config asking for it is valid")
    task = KitTask()
    with pytest.raises(ConfigError, match=r"kit.yaml:4: .*cuda"):
        task.plan(_config(tmp_path, BODY + "device: cuda\n"), RunContext())
    assert task.checked == []  # the device is checked before the task's own checks
    plan = task.plan(_config(tmp_path, BODY + "device: cuda\n"), RunContext(device="cpu"))
    assert plan.device == "cuda"  # --device cpu overrides it; the settings keep what was asked


def test_a_task_without_settings_model_must_plan_itself(tmp_path):
    class Bare(TaskBase):
        name = "bare"

    with pytest.raises(NotImplementedError, match="settings_model"):
        Bare().plan(_config(tmp_path, BODY), RunContext())


@pytest.mark.parametrize("name", tasks.names())
def test_every_task_plans_through_the_kit(name):
    """Every registered task, the kernel's classification included, uses the default plan()
    with a settings model."""
    task = tasks.get(name)
    assert type(task).plan is TaskBase.plan and task.settings_model is not None


# --- ctx.run_units ---------------------------------------------------------------------------


class Reversed:
    """An executor that yields outcomes in the reverse order of its units."""

    name = "reversed"

    def run(self, units):
        for unit in reversed(list(units)):
            yield Outcome(unit, unit.fn(*unit.args), "node-r", 0.0)


class Dropping(Reversed):
    """One that loses the last unit's outcome."""

    name = "dropping"

    def run(self, units):
        for unit in list(units)[:-1]:
            yield Outcome(unit, unit.fn(*unit.args), "node-d", 0.0)


def _units(n: int) -> list[Unit]:
    return [Unit(f"square {i}", "cfg.yaml:2", pow, (i, 2)) for i in range(n)]


def test_run_units_returns_values_in_unit_order():
    assert RunContext(executor=Reversed()).run_units(_units(4)) == [0, 1, 4, 9]
    assert RunContext().run_units(_units(3)) == [0, 1, 4]  # the local executor
    assert RunContext().run_units([]) == []


def test_run_units_aggregates_the_ordered_values():
    seen: list[list[int]] = []

    def total(values: list[int]) -> int:
        seen.append(values)
        return sum(values)

    assert RunContext(executor=Reversed()).run_units(_units(4), aggregate=total) == 14
    assert seen == [[0, 1, 4, 9]]


def test_run_units_uses_the_executor_given():
    ctx = RunContext(executor=Dropping())
    assert ctx.run_units(_units(3), executor=Reversed()) == [0, 1, 4]


def test_run_units_names_a_unit_without_outcome():
    with pytest.raises(UnitFailed, match=r"cfg.yaml:2: unit square 2 gave no outcome \(executor "
                                         r"dropping; 1 of 3 units missing\)"):
        RunContext(executor=Dropping()).run_units(_units(3))


def test_run_units_refuses_an_outcome_of_a_unit_not_given():
    class Stranger(Reversed):
        name = "stranger"

        def run(self, units):
            yield Outcome(Unit("other", "x.yaml", abs, (1,)), 1, "n", 0.0)

    with pytest.raises(UnitFailed, match="executor stranger: yielded the outcome of unit other"):
        RunContext(executor=Stranger()).run_units(_units(1))


def _fail(i: int) -> int:
    if i == 1:
        raise ConfigError(f"bad value {i}")
    return i


def test_a_failing_unit_stops_the_run_named_in_process():
    units = [Unit(f"unit {i}", "cfg.yaml:7", _fail, (i,)) for i in range(3)]
    with pytest.raises(ConfigError, match="bad value 1") as caught:  # its own type, kept
        RunContext(executor=LocalExecutor()).run_units(units)
    assert "in unit unit 1 of cfg.yaml:7 (local executor)" in caught.value.__notes__


def test_a_unit_failed_from_the_executor_propagates():
    class Failing(Reversed):
        name = "failing"

        def run(self, units):
            raise UnitFailed(f"{units[0].config}: unit {units[0].name} failed: boom")
            yield  # a generator

    with pytest.raises(UnitFailed, match=r"cfg.yaml:2: unit square 0 failed: boom"):
        RunContext(executor=Failing()).run_units(_units(2))


def test_run_units_shows_progress_unless_quiet(capsys):
    RunContext(quiet=False).run_units(_units(2), desc="kit squares", unit="square")
    assert "kit squares" in capsys.readouterr().err
    RunContext(quiet=True).run_units(_units(2), desc="kit squares", unit="square")
    assert capsys.readouterr().err == ""


# --- ctx.artefact ----------------------------------------------------------------------------


def test_artefact_is_a_path_under_out_dir_with_its_folder_made(tmp_path):
    ctx = RunContext(out_dir=tmp_path / "entry")
    path = ctx.artefact("plots/loss.png")
    assert path == tmp_path / "entry" / "plots" / "loss.png"
    assert path.parent.is_dir() and not path.exists()
    assert ctx.artefact(Path("log.txt")) == tmp_path / "entry" / "log.txt"


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.png", "plots/../../x.png", "", "."])
def test_artefact_refuses_names_outside_out_dir(tmp_path, name):
    with pytest.raises(ValueError, match=r"artefact .*: give a file name relative to the output"):
        RunContext(out_dir=tmp_path).artefact(name)


def test_artefact_refuses_a_link_out_of_out_dir(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=r"leads out of the output folder"):
        RunContext(out_dir=tmp_path / "out").artefact("link/x.png")


def test_artefact_without_out_dir_says_how_to_give_one():
    with pytest.raises(ValueError) as kit_error:
        RunContext().artefact("x.png")
    with pytest.raises(ValueError) as old_error:
        out_dir_of(RunContext())
    assert str(kit_error.value) == str(old_error.value)
    assert "RunContext.build(out_dir=...)" in str(kit_error.value)


# --- task_results ----------------------------------------------------------------------------


def test_task_results_records_model_device_and_effective_config(tmp_path):
    ctx = RunContext(device="cpu")
    device = ctx.device_record("cpu", "cuda")
    assert device == {**device_provenance("cpu"), "requested": "--device cpu"}
    settings = KitSettings.model_validate({"task": "kit", "benchmark": {"id": "kit-test"}})
    res = task_results({"acc": Score(0.5, None, "", True)}, benchmark=BenchmarkIdentity("kit-test"),
                       model=model_identity("snn", {"hidden": 8}), effective=settings,
                       device=device, seeds={"train": 0}, provenance={"extra": 1},
                       flags=["tie"], artefacts=["entry/plot.png"])
    assert isinstance(res, Results)
    assert task_results_problems(res, config={"task": "kit", "benchmark": {"id": "kit-test"}},
                                 settings=settings) == []  # neuromark.testing's contract
    assert res.config == settings.model_dump()
    assert res.provenance == {"extra": 1, "device": device}
    assert res.model is not None and res.model.name == "snn"
    assert (res.flags, res.artefacts, res.seeds) == (["tie"], ["entry/plot.png"], {"train": 0})
    res.requested = {"task": "kit"}  # what the suite stamps
    res.save(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["config"] == {"requested": {"task": "kit"}, "effective": settings.model_dump()}
    assert data["model"]["name"] == "snn" and data["provenance"]["device"] == device


def test_task_results_keeps_a_mapping_and_a_none_device():
    effective: dict[str, Any] = {"task": "kit", "size": 3}
    details: dict[str, Any] = {"n": 1}
    res = task_results({}, benchmark=BenchmarkIdentity("kit-test"), model=None, effective=effective,
                       device=None, details=details)
    assert res.config is effective and res.details is details  # kept, not copied
    assert res.provenance == {} and res.model is None


def test_task_results_cannot_leave_out_the_contract():
    with pytest.raises(TypeError, match="model"):
        task_results({}, benchmark=BenchmarkIdentity("k"), effective={}, device=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="effective must be the effective config"):
        task_results({}, benchmark=BenchmarkIdentity("k"), model=None, effective=[1], device=None)


# --- registry contracts ----------------------------------------------------------------------


class NoPlan:
    name = "no-plan"

    def run(self, plan, ctx):
        return []


def test_a_task_breaking_the_contract_is_refused_at_register():
    reg: Registry[Any] = Registry("tasks", contract=task_contract)
    with pytest.raises(RegistryContractError, match=r"tasks entry 'x' \(test_task_kit:NoPlan\) breaks the "
                                            r"tasks contract: callable 'plan' and 'run'"):
        reg.register("x", NoPlan)
    assert "x" not in reg

    class Misplaced(NoPlan):
        name = ""
        placement = "cluster"

        def plan(self, config, ctx):
            return None

    with pytest.raises(RegistryContractError, match=r"a 'name' \(a non-empty str.*got ''\); a 'placement' "
                                            r"in unit, units, driver \(got 'cluster'\)"):
        reg.register("y", Misplaced())
    with pytest.raises(RegistryContractError):
        reg.register("z")(NoPlan())  # the decorator form checks too


def test_a_lazy_entry_is_checked_when_first_resolved():
    reg: Registry[Any] = Registry("tasks", contract=task_contract)
    reg.register("lazy", "test_task_kit:NoPlan")  # not imported yet: no check
    for _ in range(2):  # refused every time, never cached
        with pytest.raises(RegistryContractError, match=r"tasks entry 'lazy' \(test_task_kit:NoPlan\)"):
            reg.get("lazy")


class FirstProtocol:
    """A task of the first protocol (``validate(config)``, ``run(config, out_dir)``), gone
    in 0.2.0."""

    name = "legacy"

    def validate(self, config):
        return config

    def run(self, config, out_dir, *, quiet=False):
        return []


def test_a_task_of_the_first_protocol_is_refused_naming_what_it_lacks(tmp_path):
    assert task_contract(KitTask()) is None
    assert "callable 'plan' and 'run'" in str(task_contract(FirstProtocol()))
    with pytest.raises(RegistryContractError, match=r"task 'legacy' \(test_task_kit.FirstProtocol\) "
                                                    r"breaks the tasks contract: it needs callable "
                                                    r"'plan' and 'run'"):
        require_task(FirstProtocol())
    assert require_task(KitTask()).name == "kit"
    with pytest.raises(RegistryContractError, match="task 'legacy'"):
        plan_and_run(FirstProtocol(), _config(tmp_path, BODY), tmp_path / "out")


def test_suite_refuses_a_registered_task_of_the_first_protocol(tmp_path):
    from neuromark.suite import task_of

    reg_name = "kit-first-protocol"
    tasks._entries[reg_name] = FirstProtocol()  # as an old plugin would have registered it
    try:
        with pytest.raises(RegistryContractError, match="it needs callable 'plan' and 'run'"):
            task_of(_config(tmp_path, f"task: {reg_name}\nbenchmark: {{id: a}}\n"))
    finally:
        tasks._entries.pop(reg_name, None)


def test_run_takes_a_plan_and_a_context_only(tmp_path):
    task = KitTask()
    config = _config(tmp_path, BODY)
    with pytest.raises(TypeError, match=r"kit.run\(plan, ctx\): ctx must be a RunContext"):
        task.run(config, tmp_path / "out")  # the first protocol's call
    assert not hasattr(task, "validate")


@pytest.mark.parametrize(("registry_name", "bad", "missing"), [
    ("metrics", lambda: None, "it must be a class (a metric class)"),
    ("solvers", type("NoSolve", (), {}), "a solver, constructed with the config's options "
                                         "without solve"),
    ("meters", type("HalfMeter", (), {"start": lambda self: None}),
     "without stop, mark, energy, metadata"),
    ("executors", type("NoRun", (), {}), "without run, cpus, info, close"),
    ("suts", 3, "it must be callable (a SUT factory"),
    ("models", object(), "a factory (callable) or a model family"),
])
def test_each_registry_names_what_an_entry_lacks(registry_name, bad, missing):
    reg = getattr(registry, registry_name)
    with pytest.raises(RegistryContractError, match=f"{registry_name} entry 'kit-bad' .* breaks the "
                                            f"{registry_name} contract: .*{re.escape(missing)}"):
        reg.register("kit-bad", bad)
    assert "kit-bad" not in reg


def _registries() -> list[tuple[str, Registry[Any]]]:
    return [(name, reg) for name, reg in vars(registry).items() if isinstance(reg, Registry)]


def _built_in_entries() -> list[tuple[str, str]]:
    """Every entry of neuromark's own (the kernel's and its families', loaded first)."""
    for _, reg in _registries():
        reg.names()
    return [(name, entry) for name, reg in _registries() for entry, origin in reg._origins.items()
            if origin.startswith("neuromark.")]


@pytest.mark.parametrize(("registry_name", "entry"), _built_in_entries())
def test_every_built_in_entry_follows_its_registry_contract(registry_name, entry):
    reg = getattr(registry, registry_name)
    origin = reg._origins[entry]
    module = origin.partition(":")[0]
    try:
        importlib.import_module(module)
    except ImportError as exc:  # an optional extra not installed here
        pytest.skip(f"{registry_name} entry {entry!r}: {module} needs {exc.name!r}, absent here")
    obj = reg.get(entry)  # resolving checks the contract
    if reg.contract is not None:
        assert reg.contract(obj) is None
