"""One generic registry with lazy entries, plus the project's named registries.

Entries are either objects or lazy ``"module:attribute"`` strings, resolved on first use so
that ``import neuromark`` stays light. A registry may have a contract (what its entries must
offer, e.g. a task's ``name``, ``placement``, ``plan`` and ``run``): an object is checked when
it registers, a lazy entry when it is first resolved; a breach raises
:class:`RegistryContractError` naming the registry, the entry and what is missing. Third-party
packages add entries through the ``neuromark.plugins`` entry-point group:

- ``family.<name> = "pkg"``: a benchmark family, a package whose ``__init__`` holds a
  ``MANIFEST`` (registry kind -> entry name -> lazy ``"module:attr"``, relative to the package
  when it starts with a dot; see :func:`read_manifest`);
- ``families.<name> = "pkg"``: a package of families (every sub-package with a ``MANIFEST``);
  neuromark's own benchmarks are loaded this way, through its own ``pyproject.toml``;
- ``<registry>.<name> = "mypkg.metrics:MyMetric"``: one entry of that registry.

Every entry records the family it came from (``neuromark`` for the kernel's own), which
``neuromark list`` shows.

Example:
    >>> from neuromark.registry import metrics
    >>> metrics.get("footprint")  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import importlib
import os
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from neuromark.errors import NeuromarkError, UnknownNameError

T = TypeVar("T")


class DuplicateEntryError(NeuromarkError, ValueError):
    """A plugin entry point reuses a name that is already registered; names both entries."""


class RegistryContractError(NeuromarkError, TypeError):
    """A registry entry does not offer what its registry requires; names the registry, the
    entry and what is missing."""


#: Where a task runs under a distributed executor (``neuromark.tasks.base``).
TASK_PLACEMENTS = ("unit", "units", "driver")


def _callable_attrs(obj: Any, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if not callable(getattr(obj, n, None))]


def task_contract(obj: Any) -> str | None:
    """A task has a ``name`` (a non-empty str), a ``placement`` (one of
    :data:`TASK_PLACEMENTS`; absent: ``unit``) and callable ``plan`` and ``run``: the one
    check of the task protocol (this registry's contract; ``neuromark.tasks.base.require_task``
    and ``neuromark.testing.task_check`` call it)."""
    problems = []
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"a 'name' (a non-empty str, the config's task: value; got {name!r})")
    placement = getattr(obj, "placement", "unit")
    if placement not in TASK_PLACEMENTS:
        problems.append(f"a 'placement' in {', '.join(TASK_PLACEMENTS)} (got {placement!r})")
    missing = _callable_attrs(obj, ("plan", "run"))
    if missing:
        problems.append(f"callable 'plan' and 'run' (it lacks {' and '.join(missing)})")
    return "; ".join(problems) or None


def _callable(what: str) -> Callable[[Any], str | None]:
    def contract(obj: Any) -> str | None:
        return None if callable(obj) else f"it must be callable ({what}), got {type(obj).__name__}"

    contract.__doc__ = f"Callable: {what}."
    return contract


def _callables(kind: str, what: str) -> Registry[Any]:
    """A registry of ``kind`` whose entries must be callable (``what`` they are)."""
    return Registry(kind, contract=_callable(what))


def _class_with(what: str, methods: tuple[str, ...], *, classes_only: bool = False
                ) -> Callable[[Any], str | None]:
    def contract(obj: Any) -> str | None:
        if not callable(obj) or (classes_only and not isinstance(obj, type)):
            kind = "a class" if classes_only else "callable"
            return f"it must be {kind} ({what}), got {type(obj).__name__}"
        missing = _callable_attrs(obj, methods) if isinstance(obj, type) else []
        return f"{what} without {', '.join(missing)}" if missing else None

    contract.__doc__ = (f"{'A class' if classes_only else 'Callable'} ({what}); a class has "
                        f"{', '.join(methods)}.")
    return contract


def model_contract(obj: Any) -> str | None:
    """A model factory (callable, returning a network or an adapter) or a model family
    (with callable ``load`` or ``build``)."""
    if callable(obj) or not _callable_attrs(obj, ("load",)) or not _callable_attrs(obj, ("build",)):
        return None
    return (f"it must be a factory (callable) or a model family (with load() or build()), got "
            f"{type(obj).__name__}")


def _describe(obj: object) -> str:
    """``module:object`` of a registered entry (a lazy string is that already)."""
    if isinstance(obj, str):
        return obj
    module = getattr(obj, "__module__", None) or type(obj).__module__
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    return f"{module}:{name}"


def _family_of_origin(origin: str) -> str:
    """The family of an entry registered through the API, from its ``module:object``:
    :data:`KERNEL` for neuromark's own modules, else the top-level package it comes from."""
    module = origin.partition(":")[0]
    return KERNEL if module == KERNEL or module.startswith(KERNEL + ".") else module.split(".")[0]


def _entry_point_origin(ep: Any) -> str:
    """``entry point 'neuromark.plugins' NAME = VALUE of distribution D VERSION``."""
    dist = getattr(ep, "dist", None)
    where = (f"distribution {dist.metadata['Name']} {dist.version}" if dist is not None
             else "an unknown distribution")
    return f"entry point {ep.group!r} {ep.name} = {ep.value!r} of {where}"


#: The family name of the kernel's own entries (registered in this module).
KERNEL = "neuromark"
#: The entry point (of neuromark's own ``pyproject.toml``) that declares its built-in families.
BUILT_IN_FAMILIES = "families.neuromark"


class ManifestError(NeuromarkError, TypeError):
    """A family's ``MANIFEST`` is malformed; names the family, the key and what was expected."""


@dataclass(frozen=True)
class Family:
    """One benchmark family: ``name`` (its package's last name, or the entry point's),
    ``package`` (the import path), ``summary`` (its docstring's first sentence) and ``entries``
    (registry kind -> entry name -> absolute lazy ``"module:attr"``)."""

    name: str
    package: str
    summary: str
    entries: Mapping[str, Mapping[str, str]]


def _import_family(name: str, package: str, origin: str = "") -> Any:
    """``package`` imported; a failure raises :class:`ManifestError` naming the family, the
    package and the cause (the original exception chained)."""
    try:
        return importlib.import_module(package)
    except Exception as exc:  # a broken plugin must not surface as a bare ImportError
        raise ManifestError(f"family {name!r}: its package {package}{origin} cannot be imported: "
                            f"{type(exc).__name__}: {exc}") from exc


def read_manifest(name: str, package: str) -> Family:
    """The family of ``package`` (imported; its ``__init__`` must stay light) from its
    ``MANIFEST``: a mapping of registry kinds (the keys of :data:`REGISTRIES`) to mappings of
    entry names to lazy ``"module:attr"`` strings; a target starting with a dot is relative
    to the package (``".task:TASK"``). Raises :class:`ManifestError` naming what is wrong."""
    module = _import_family(name, package)
    manifest = getattr(module, "MANIFEST", None)
    where = f"family {name!r} ({package}.MANIFEST)"
    if not isinstance(manifest, Mapping):
        raise ManifestError(f"{where}: a family's __init__ defines MANIFEST, a mapping of registry "
                            f"kinds to entries; got {type(manifest).__name__}")
    entries: dict[str, dict[str, str]] = {}
    for kind, named in manifest.items():
        if kind not in REGISTRIES:
            close = difflib.get_close_matches(str(kind), REGISTRIES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ManifestError(f"{where}: unknown registry kind {kind!r}{hint}; known: "
                                f"{', '.join(sorted(REGISTRIES))}")
        if not isinstance(named, Mapping):
            raise ManifestError(f"{where}[{kind!r}]: a mapping of entry names to 'module:attr' "
                                f"strings; got {type(named).__name__}")
        for entry_name, target in named.items():
            if not isinstance(entry_name, str) or not entry_name or \
                    not isinstance(target, str) or not target.strip(". :"):
                raise ManifestError(f"{where}[{kind!r}][{entry_name!r}]: a non-empty name and a "
                                    f"'module:attr' string; got {target!r}")
        entries[kind] = {entry_name: f"{package}{target}" if target.startswith(".") else target
                         for entry_name, target in named.items()}
    return Family(name, package, _first_sentence(module.__doc__ or ""), entries)


def _first_sentence(doc: str) -> str:
    """The first sentence of ``doc``'s first paragraph, its lines joined."""
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


def _families_of(ep: Any) -> list[Family]:
    """The families an entry point declares: ``family.NAME`` one, ``families.NAME`` every
    sub-package of a package (each must hold a ``MANIFEST``: a sub-package without one is a
    :class:`ManifestError`, never a family silently left out)."""
    group, _, name = ep.name.partition(".")
    if group == "family":
        return [read_manifest(name, ep.value)]
    package = _import_family(name, ep.value, f" (of {_entry_point_origin(ep)})")
    return [read_manifest(info.name, f"{ep.value}.{info.name}")  # a package without one fails
            for info in sorted(pkgutil.iter_modules(getattr(package, "__path__", [])),
                               key=lambda m: m.name) if info.ispkg]


def families() -> list[Family]:
    """Every installed family, declared through ``neuromark.plugins`` entry points named
    ``family.NAME`` or ``families.NAME``, sorted by name; two families of one name raise
    :class:`DuplicateEntryError` naming both packages."""
    key = _path_state()
    points = plugin_entry_points(key)
    if not any(ep.name == BUILT_IN_FAMILIES for ep in points):
        raise NeuromarkError(
            f"neuromark's own benchmark families are declared by the entry point "
            f"{BUILT_IN_FAMILIES!r} of its installed metadata, and none was found: neuromark is "
            "imported from a source tree that is not installed; install it (pip install -e . in "
            "the checkout, or bash scripts/bootstrap.sh) instead of putting src/ on PYTHONPATH")
    cached = _FAMILIES.get(key)
    if cached is not None:
        return list(cached)
    found: dict[str, Family] = {}
    for ep in sorted(points, key=lambda e: e.name):
        if ep.name.partition(".")[0] not in ("family", "families"):
            continue
        for family in _families_of(ep):
            other = found.get(family.name)
            if other is not None and other.package != family.package:
                raise DuplicateEntryError(f"two families are named {family.name!r}: {other.package} "
                                          f"and {family.package} ({_entry_point_origin(ep)}); "
                                          "rename one of them")
            found[family.name] = family
    _FAMILIES.clear()  # one state of the paths at a time
    _FAMILIES[key] = tuple(found[k] for k in sorted(found))
    return list(_FAMILIES[key])


#: ``plugin_entry_points()`` and ``families()`` by the state of ``sys.path`` they were read in.
_ENTRY_POINTS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_FAMILIES: dict[tuple[Any, ...], tuple[Family, ...]] = {}


def _path_state() -> tuple[Any, ...]:
    """``sys.path`` with each folder's modification time: a distribution installed, or a
    ``.dist-info`` folder added to a folder on the path, changes it."""
    state = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


def plugin_entry_points(key: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
    """The ``neuromark.plugins`` entry points of the installed distributions, read once per
    state of the paths (``key``, default :func:`_path_state` now: scanning every
    distribution's metadata costs milliseconds, and each registry reads them on its first
    use)."""
    key = _path_state() if key is None else key
    cached = _ENTRY_POINTS.get(key)
    if cached is None:
        from importlib.metadata import entry_points

        cached = tuple(entry_points(group="neuromark.plugins"))
        _ENTRY_POINTS.clear()
        _ENTRY_POINTS[key] = cached
    return cached


class Registry(Generic[T]):
    """A named collection of objects of one kind, with close-match suggestions on misses."""

    def __init__(self, kind: str, hint: str = "",
                 contract: Callable[[Any], str | None] | None = None) -> None:
        self.kind = kind
        self.hint = hint  # how to add an entry, appended to the unknown-name message
        #: What an entry must offer: ``contract(obj)`` is None, else the problem (checked at
        #: ``register`` for objects, at first ``get`` for lazy strings).
        self.contract = contract
        self._entries: dict[str, T | str] = {}
        self._origins: dict[str, str] = {}  # name -> "module:object" as registered
        self._families: dict[str, str] = {}  # name -> the family that declared it
        self._plugins_loaded = False

    def register(self, name: str, obj: T | str | None = None) -> Any:
        """Register ``obj`` (or a lazy ``"module:attr"``) under ``name``; usable as decorator.
        An object that breaks the registry's contract raises :class:`RegistryContractError`."""
        if obj is not None:
            if not isinstance(obj, str):
                self.check(name, obj)
            self._entries[name] = obj
            self._origins[name] = _describe(obj)
            self._families[name] = _family_of_origin(self._origins[name])
            return obj

        def decorator(target: T) -> T:
            self.check(name, target)
            self._entries[name] = target
            self._origins[name] = _describe(target)
            self._families[name] = _family_of_origin(self._origins[name])
            return target

        return decorator

    def check(self, name: str, obj: Any, origin: str | None = None) -> None:
        """Raise :class:`RegistryContractError` unless ``obj`` (the entry ``name``) follows this
        registry's contract."""
        problem = self.contract(obj) if self.contract is not None else None
        if problem:
            raise RegistryContractError(f"{self.kind} entry {name!r} ({origin or _describe(obj)}) breaks "
                                f"the {self.kind} contract: {problem}")

    def register_many(self, entries: dict[str, T | str]) -> None:
        """Register several entries (objects or lazy ``"module:attr"`` strings) at once."""
        for name, obj in entries.items():
            self.register(name, obj)

    def _load_plugins(self) -> None:
        """Add this registry's entries of the installed families and its own
        ``neuromark.plugins`` entry points (once); a name that is already registered, or
        declared twice, raises naming both."""
        if self._plugins_loaded:
            return
        added: dict[str, tuple[str, str, str]] = {}  # name -> (target, family, where declared)
        for family in families():
            for entry_name, target in family.entries.get(self.kind, {}).items():
                added_here = added.get(entry_name)
                if added_here is not None and added_here[0] != target:
                    raise DuplicateEntryError(
                        f"{self.kind} entry {entry_name!r} is declared twice: by {added_here[2]} and "
                        f"by family {family.name!r} ({family.package}); rename one of them")
                added[entry_name] = (target, family.name, f"family {family.name!r} ({family.package})")
        for ep in plugin_entry_points():
            registry_name, _, entry_name = ep.name.partition(".")
            if registry_name != self.kind or not entry_name:
                continue
            if entry_name in added and added[entry_name][0] != ep.value:
                raise DuplicateEntryError(
                    f"{self.kind} entry {entry_name!r} is declared twice: by {added[entry_name][2]} "
                    f"and by {_entry_point_origin(ep)}; rename one of them")
            dist = getattr(ep, "dist", None)
            added[entry_name] = (ep.value, dist.metadata["Name"] if dist is not None else "plugin",
                                 _entry_point_origin(ep))
        for entry_name, (target, _, where) in added.items():
            existing = (self._origins.get(entry_name) or _describe(self._entries[entry_name])
                        if entry_name in self._entries else None)
            if existing is not None and existing != target:  # the same object twice is no clash
                which = "kernel" if self._families.get(entry_name) == KERNEL else "registered"
                raise DuplicateEntryError(
                    f"{self.kind} entry {entry_name!r} of {where} reuses the name of the {which} "
                    f"entry {existing}; rename the plugin's entry")
        for entry_name, (target, family_name, _) in added.items():
            if self._origins.get(entry_name) != target:
                self._entries[entry_name] = target
            self._origins[entry_name] = target
            self._families[entry_name] = family_name
        self._plugins_loaded = True

    def family_of(self, name: str) -> str:
        """The family that declared the entry ``name`` (``neuromark`` for the kernel's own,
        a distribution's name for a single plugin entry)."""
        self._load_plugins()
        if name not in self._entries:
            self.get(name)  # raises the unknown-name error
        return self._families.get(name, KERNEL)

    def names(self) -> list[str]:
        """All registered names, sorted."""
        self._load_plugins()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """Return the entry ``name``; unknown names raise with close-match suggestions."""
        self._load_plugins()
        if name not in self._entries:
            close = difflib.get_close_matches(name, self._entries, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownNameError(f"unknown {self.kind[:-1] if self.kind.endswith('s') else self.kind} "
                                   f"{name!r}{hint} (known: {known}){self.hint}")
        entry = self._entries[name]
        if isinstance(entry, str):  # "module:attr", or "module" for a whole module
            module_name, _, attr = entry.partition(":")
            module = importlib.import_module(module_name)
            entry = getattr(module, attr) if attr else module
            self.check(name, entry, self._entries[name])  # type: ignore[arg-type]
            self._entries[name] = entry
        return entry  # type: ignore[return-value]


# The kinds of entry. A benchmark family (a package under ``neuromark.benchmarks``, or a
# plugin's) adds entries of any kind through its MANIFEST; the kernel registers its own below.

#: Tasks: objects following :class:`neuromark.tasks.base.TaskProtocol` (``plan`` and ``run``).
tasks: Registry[Callable[..., Any]] = Registry("tasks", contract=task_contract)
metrics: Registry[type] = Registry("metrics", contract=_class_with(
    "a metric class", ("compute",), classes_only=True))
models: Registry[Any] = Registry("models", contract=model_contract, hint=(
    "; or a model of your own, from a Python file beside the config: model: {name: python, "
    "options: {factory: 'my_net.py:build', kwargs: {...}}}; or from a package of yours, "
    "through an entry point 'models.NAME' of the group 'neuromark.plugins' (docs/extending.md)"))
adapters: Registry[Any] = Registry("adapters", contract=_callable("an adapter class"))
#: Data set entries (``neuromark.data.entry.DatasetEntry``): ``download(root)``,
#: ``verify(root)`` and ``synthesize(root, **options)`` where an offline generator writes
#: the layout; called with ``split=`` and options, they build that split.
datasets: Registry[type] = _callables("datasets", "a data set entry, called with split= and options")
solvers: Registry[Any] = Registry("solvers", contract=_class_with(
    "a solver, constructed with the config's options", ("solve",)))
meters: Registry[Any] = Registry("meters", contract=_class_with(
    "a power meter, constructed with the config's options",
    ("start", "stop", "mark", "energy", "metadata")))
#: Systems under test (``neuromark.system.suts``): factories called with the config's
#: ``sut.options``, returning a built SUT with its sample library.
suts: Registry[Callable[..., Any]] = _callables("suts", "a SUT factory, called with sut.options")
#: Energy profiles (``neuromark.metrics.functional.energy_profiles.EnergyProfile``): joules
#: per operation for ``energy_estimate``; users add their own (or give a YAML file).
energy_profiles: Registry[Any] = Registry("energy_profiles")
#: Offline generators: modules that write a data set's published layout from a seeded model;
#: a dataset entry's ``synthesize`` looks its generator up here, so that readers never
#: import the generators that import them.
generators: Registry[Any] = Registry("generators")
#: Executors (``neuromark.executors``): where a run's units execute (``--executor NAME``).
executors: Registry[Callable[..., Any]] = Registry("executors", contract=_class_with(
    "an executor class", ("run", "cpus", "info", "close")))
#: Closed-loop environments: factories called with ``env.options``.
environments: Registry[Callable[..., Any]] = _callables(
    "environments", "an environment factory, called with env.options")
#: On-line learning rules of closed-loop agents.
learning_rules: Registry[Callable[..., Any]] = _callables("learning_rules", "a learning rule")
#: CLI verbs: ``register(subparsers)`` adds a top-level ``neuromark VERB``.
commands: Registry[Callable[..., Any]] = _callables(
    "commands", "register(subparsers), adding a neuromark verb")
#: ``neuromark data`` verbs: ``register(data_subparsers)`` adds ``neuromark data VERB``.
data_commands: Registry[Callable[..., Any]] = _callables(
    "data_commands", "register(data_subparsers), adding a neuromark data verb")
#: Submission-checker rules, by the ``task`` of the results they check: ``neuromark check``
#: (``neuromark.system.checker``) calls ``check(audit, file, data, official_seeds)`` once per
#: results file of that task in the submission folder, after the system-track rules:
#: ``audit.add(file, rule, message)`` records a finding (``rule``: ``"<task>/<what>"``),
#: ``file`` is the results file's path, ``data`` its parsed JSON (``data["details"]`` a dict),
#: ``official_seeds`` the submission profile's (True when it has none). A value of a type the
#: rule did not expect (TypeError, KeyError, ...) ends that file's audit with one
#: ``layout/schema`` finding.
checker_rules: Registry[Callable[..., Any]] = _callables(
    "checker_rules", "check(audit, file, data, official_seeds)")
#: Encoder (front-end) cost formulas: functions returning a
#: ``neuromark.processors.encoder_cost.EncoderCost`` for a family's input encoding.
encoder_costs: Registry[Callable[..., Any]] = _callables(
    "encoder_costs", "a cost formula returning an EncoderCost")

#: Every registry by its kind (the keys a family's MANIFEST may use).
REGISTRIES: dict[str, Registry[Any]] = {reg.kind: reg for reg in (
    tasks, metrics, models, adapters, datasets, solvers, meters, suts, energy_profiles,
    generators, executors, environments, learning_rules, commands, data_commands,
    checker_rules, encoder_costs)}

# --- the kernel's own entries -----------------------------------------------------------

metrics.register_many({
    "footprint": "neuromark.metrics.static:Footprint",
    "footprint_neurobench": "neuromark.metrics.static:FootprintNeurobench",
    "parameter_count": "neuromark.metrics.static:ParameterCount",
    "connection_sparsity": "neuromark.metrics.static:ConnectionSparsity",
    "classification_accuracy": "neuromark.metrics.correctness:ClassificationAccuracy",
    "MSE": "neuromark.metrics.correctness:MSE",
    "sMAPE": "neuromark.metrics.correctness:SMAPE",
    "r2": "neuromark.metrics.correctness:R2",
    "activation_sparsity": "neuromark.metrics.complexity:ActivationSparsity",
    "synaptic_operations": "neuromark.metrics.complexity:SynapticOperations",
    "membrane_updates": "neuromark.metrics.complexity:MembraneUpdates",
    "neuron_operations": "neuromark.metrics.neuron_ops:NeuronOperations",
    "energy_estimate": "neuromark.metrics.energy:EnergyEstimate",
})

#: Framework adapters (``neuromark.models``): wrap a framework's network for the harness.
adapters.register_many({
    "torch": "neuromark.models.torch_model:TorchModel",
    "snntorch": "neuromark.models.snntorch_model:SNNTorchModel",
    "spikingjelly": "neuromark.models.spikingjelly_model:SpikingJellyModel",
    "norse": "neuromark.models.norse_model:NorseModel",
    "sinabs": "neuromark.models.sinabs_model:SinabsModel",
    "rockpool": "neuromark.models.rockpool_model:RockpoolModel",
})

# Energy profiles: Horowitz ISSCC 2014, 45 nm, arithmetic only (no memory term).
energy_profiles.register_many({
    f"horowitz45-{p}": f"neuromark.metrics.functional.energy_profiles:HOROWITZ45_{p.upper()}"
    for p in ("fp32", "fp16", "int32", "int8")
})

# Power meters (``neuromark.system.power``), following the PowerMeter protocol.
meters.register_many({
    "akida_power": "neuromark.system.chips.meters:AkidaPowerMeter",
    "xylo_power": "neuromark.system.chips.meters:XyloPowerMeter",
    "rapl": "neuromark.system.power.rapl:RaplMeter",
    "nvml": "neuromark.system.power.nvml:NvmlMeter",
    "csv": "neuromark.system.power.csv_trace:CsvTraceMeter",
    "ptd": "neuromark.system.power.ptd:PtdMeter",
    "null": "neuromark.system.power.null:NullMeter",
})

# Executors (``neuromark.executors``): classes built by ``neuromark run --executor NAME``.
executors.register_many({
    "local": "neuromark.executors:LocalExecutor",
    "ray": "neuromark.executors.ray_executor:RayExecutor",
})

# The two generic tasks, the shared models and the generic systems under test: kernel
# entries of kinds that families extend.
tasks.register_many({
    "classification": "neuromark.tasks.classification:TASK",
    "system": "neuromark.system.track.task:TASK",
})
models.register_many({
    # spike classifiers shared by every spike-data family (the SHD paper's baselines)
    "snn": "neuromark.networks.spike_classifiers:SNN",
    "rsnn": "neuromark.networks.spike_classifiers:RSNN",
    "lstm": "neuromark.networks.spike_classifiers:LSTM",
    "svm": "neuromark.networks.spike_classifiers:SVM",
    "nir": "neuromark.models.nir_model:nir_model",
    "python": "neuromark.models.python_model:PYTHON_MODEL",  # your own file: runs your code
})
suts.register_many({
    "akida": "neuromark.system.chips.akida_sut:akida",
    "null": "neuromark.system.suts.null:null",
    "remote": "neuromark.system.suts.remote:remote",
    "sleep": "neuromark.system.suts.sleep:sleep",
    "spoken_digits_cpu": "neuromark.system.chips.cpu_sut:spoken_digits_cpu",
    "xylo": "neuromark.system.chips.xylo_sut:xylo",
})
generators.register("camera_events", "neuromark.synth.camera_events")
