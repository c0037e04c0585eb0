"""One generic registry with lazy entries, plus the project's named registries.

Entries are either objects or lazy ``"module:attribute"`` strings, resolved on first use so
that ``import neuromark`` stays light. A registry may have a contract (what its entries must
offer, e.g. a task's ``name``, ``placement``, ``plan`` and ``run``): an object is checked when
it registers, a lazy entry when it is first resolved; a breach raises
:class:`RegistryContractError` naming the registry, the entry and what is missing. Third-party
packages add entries through the ``neuromark.plugins`` entry-point group; an entry point
named ``<registry>.<name>`` (for example ``metrics.my_metric = "mypkg.metrics:MyMetric"``)
lands in that registry.

Example:
    >>> from neuromark.registry import metrics
    >>> metrics.get("footprint")  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
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
    :data:`TASK_PLACEMENTS`; absent: ``unit``) and callable ``plan`` and ``run`` (or the
    first protocol's ``validate`` and ``run``)."""
    problems = []
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"a 'name' (a non-empty str, the config's task: value; got {name!r})")
    placement = getattr(obj, "placement", "unit")
    if placement not in TASK_PLACEMENTS:
        problems.append(f"a 'placement' in {', '.join(TASK_PLACEMENTS)} (got {placement!r})")
    if not callable(getattr(obj, "run", None)) or not (
            callable(getattr(obj, "plan", None)) or callable(getattr(obj, "validate", None))):
        problems.append("callable 'plan' and 'run' (or the first protocol's 'validate' and 'run')")
    return "; ".join(problems) or None


def _callable(what: str) -> Callable[[Any], str | None]:
    def contract(obj: Any) -> str | None:
        return None if callable(obj) else f"it must be callable ({what}), got {type(obj).__name__}"

    contract.__doc__ = f"Callable: {what}."
    return contract


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


def _entry_point_origin(ep: Any) -> str:
    """``entry point 'neuromark.plugins' NAME = VALUE of distribution D VERSION``."""
    dist = getattr(ep, "dist", None)
    where = (f"distribution {dist.metadata['Name']} {dist.version}" if dist is not None
             else "an unknown distribution")
    return f"entry point {ep.group!r} {ep.name} = {ep.value!r} of {where}"


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
        self._plugins_loaded = False

    def register(self, name: str, obj: T | str | None = None) -> Any:
        """Register ``obj`` (or a lazy ``"module:attr"``) under ``name``; usable as decorator.
        An object that breaks the registry's contract raises :class:`RegistryContractError`."""
        if obj is not None:
            if not isinstance(obj, str):
                self.check(name, obj)
            self._entries[name] = obj
            self._origins[name] = _describe(obj)
            return obj

        def decorator(target: T) -> T:
            self.check(name, target)
            self._entries[name] = target
            self._origins[name] = _describe(target)
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
        """Add this registry's ``neuromark.plugins`` entry points (once); a name that is
        already registered, or declared by two entry points, raises naming both."""
        if self._plugins_loaded:
            return
        from importlib.metadata import entry_points

        added: dict[str, Any] = {}
        for ep in entry_points(group="neuromark.plugins"):
            registry_name, _, entry_name = ep.name.partition(".")
            if registry_name != self.kind or not entry_name:
                continue
            if entry_name in added:
                raise DuplicateEntryError(
                    f"{self.kind} entry {entry_name!r} is declared twice: by "
                    f"{_entry_point_origin(added[entry_name])} and by {_entry_point_origin(ep)}; "
                    "rename one of them")
            existing = (self._origins.get(entry_name) or _describe(self._entries[entry_name])
                        if entry_name in self._entries else None)
            if existing is not None and existing != ep.value:  # the same object twice is no clash
                which = "built-in" if existing.startswith("neuromark.") else "registered"
                raise DuplicateEntryError(
                    f"{self.kind} entry {entry_name!r} of {_entry_point_origin(ep)} reuses the name "
                    f"of the {which} entry {existing}; rename the plugin's entry point")
            added[entry_name] = ep
        for entry_name, ep in added.items():
            self._entries[entry_name] = ep.value
            self._origins[entry_name] = ep.value
        self._plugins_loaded = True

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


#: Tasks: objects following :class:`neuromark.suite.Task` (``validate`` and ``run``).
tasks: Registry[Callable[..., Any]] = Registry("tasks", contract=task_contract)
metrics: Registry[type] = Registry("metrics", contract=_class_with(
    "a metric class", ("compute",), classes_only=True))
models: Registry[Any] = Registry("models", contract=model_contract, hint=(
    "; or a model of your own, from a Python file beside the config: model: {name: python, "
    "options: {factory: 'my_net.py:build', kwargs: {...}}}; or from a package of yours, "
    "through an entry point 'models.NAME' of the group 'neuromark.plugins' (docs/extending.md)"))
adapters: Registry[Any] = Registry("adapters", contract=_callable("an adapter class"))
datasets: Registry[type] = Registry("datasets", contract=_callable(
    "a data set entry, called with split= and options"))
solvers: Registry[Any] = Registry("solvers", contract=_class_with(
    "a solver, constructed with the config's options", ("solve",)))
meters: Registry[Any] = Registry("meters", contract=_class_with(
    "a power meter, constructed with the config's options",
    ("start", "stop", "mark", "energy", "metadata")))
#: Systems under test (``neuromark.system.suts``): factories called with the config's
#: ``sut.options``, returning a built SUT with its sample library.
suts: Registry[Callable[..., Any]] = Registry("suts", contract=_callable(
    "a SUT factory, called with sut.options"))
#: Energy profiles (``neuromark.metrics.functional.energy_profiles.EnergyProfile``): joules
#: per operation for ``energy_estimate``; users add their own (or give a YAML file).
energy_profiles: Registry[Any] = Registry("energy_profiles")
#: Offline generators (``neuromark.synth``): modules that write a data set's published layout
#: from a seeded model; a dataset entry's ``synthesize`` looks its generator up here, so the
#: readers (``neuromark.data``) never import the generators that import them.
generators: Registry[Any] = Registry("generators")
#: Executors (``neuromark.executors``): where a run's units execute (``--executor NAME``).
executors: Registry[Callable[..., Any]] = Registry("executors", contract=_class_with(
    "an executor class", ("run", "cpus", "info", "close")))
#: Closed-loop environments (``neuromark.benchmarks.closed_loop``): factories called with ``env.options``.
environments: Registry[Callable[..., Any]] = Registry("environments", contract=_callable(
    "an environment factory, called with env.options"))
#: On-line learning rules of closed-loop agents (``neuromark.benchmarks.closed_loop.plasticity``).
learning_rules: Registry[Callable[..., Any]] = Registry("learning_rules", contract=_callable(
    "a learning rule"))

metrics.register_many({
    "footprint": "neuromark.metrics.static:Footprint",
    "parameter_count": "neuromark.metrics.static:ParameterCount",
    "connection_sparsity": "neuromark.metrics.static:ConnectionSparsity",
    "classification_accuracy": "neuromark.metrics.correctness:ClassificationAccuracy",
    "MSE": "neuromark.metrics.correctness:MSE",
    "sMAPE": "neuromark.metrics.correctness:SMAPE",
    "r2": "neuromark.metrics.correctness:R2",
    "activation_sparsity": "neuromark.metrics.complexity:ActivationSparsity",
    "synaptic_operations": "neuromark.metrics.complexity:SynapticOperations",
    "membrane_updates": "neuromark.metrics.complexity:MembraneUpdates",
    "coco_map": "neuromark.metrics.detection:CocoMap",
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

# Models a config names (``model: {name, options}``): factories returning a torch module or
# an adapter, or model families with a training recipe (``neuromark.training.ModelFamily``),
# or Mackey-Glass forecasters (``neuromark.benchmarks.mackey_glass.forecasters.Forecaster``).
models.register_many({
    "snn": "neuromark.baselines.spike_classifiers:SNN",
    "rsnn": "neuromark.baselines.spike_classifiers:RSNN",
    "lstm": "neuromark.baselines.spike_classifiers:LSTM",
    "svm": "neuromark.baselines.spike_classifiers:SVM",
    # streaming velocity decoders for primate_reaching (model families: neuromark train)
    "ridge_decoder": "neuromark.benchmarks.primate_reaching.models:RIDGE",
    "ann2d": "neuromark.benchmarks.primate_reaching.models:ANN2D_FAMILY",
    "snn2": "neuromark.benchmarks.primate_reaching.models:SNN2_FAMILY",
    # closed-loop agents trained by DAgger on their environment (model families: neuromark train)
    "loop_ann": "neuromark.benchmarks.closed_loop.families:LOOP_ANN",
    "loop_snn": "neuromark.benchmarks.closed_loop.families:LOOP_SNN",
    "loop_wiener": "neuromark.benchmarks.closed_loop.families:LOOP_WIENER",
    "keyword_m5": "neuromark.benchmarks.keywords.models:M5",
    "keyword_lif": "neuromark.benchmarks.keywords.models:LIFNet",
    "gsc_m5": "neuromark.benchmarks.keywords.gsc_family:GSC_M5",
    "gsc_snn": "neuromark.benchmarks.keywords.gsc_family:GSC_SNN",
    "event_detector": "neuromark.benchmarks.event_detection.train:EVENT_DETECTOR",
    "esn": "neuromark.benchmarks.mackey_glass.forecasters:ESN",
    "dvs_gesture_snn": "neuromark.benchmarks.dvs_gesture.model:DVS_GESTURE_SNN",
    "nir": "neuromark.models.nir_model:nir_model",
    "python": "neuromark.models.python_model:PYTHON_MODEL",  # your own file: runs your code
    # NeHAR (WISDM) and ThorEEGMI (EEG motor imagery) baselines (model families)
    "nehar_scnn": "neuromark.benchmarks.activity.models:NEHAR_SCNN",
    "nehar_ffsnn": "neuromark.benchmarks.activity.models:NEHAR_FFSNN",
    "nehar_ann": "neuromark.benchmarks.activity.models:NEHAR_ANN",
    "window_stats": "neuromark.benchmarks.activity.models:WINDOW_STATS",
    "eeg_snn": "neuromark.benchmarks.eeg_mi.models:EEG_SNN",
    "csp_lda": "neuromark.benchmarks.eeg_mi.models:CSP_LDA",
})

# Tasks; each module defines ``TASK`` following :class:`neuromark.suite.Task`.
tasks.register_many({
    "mackey_glass": "neuromark.benchmarks.mackey_glass.task:TASK",
    "classification": "neuromark.tasks.classification:TASK",
    "system": "neuromark.system.track.task:TASK",
    "qubo": "neuromark.benchmarks.qubo.task:TASK",
    "primate_reaching": "neuromark.benchmarks.primate_reaching.task:TASK",
    "psth_predictivity": "neuromark.benchmarks.primate_reaching.psth_task:TASK",
    "fscil": "neuromark.benchmarks.keywords.fscil:TASK",
    "detection": "neuromark.benchmarks.event_detection.task:TASK",
    "closed_loop": "neuromark.benchmarks.closed_loop.task:TASK",
})

# QUBO solvers (``neuromark.benchmarks.qubo.solvers``); classes constructed with config options.
solvers.register_many({
    "neuromark-sa": "neuromark.benchmarks.qubo.solvers.anneal:Annealer",
    "neuromark-tabu": "neuromark.benchmarks.qubo.solvers.tabu:TabuSearch",
    "dwave-tabu": "neuromark.benchmarks.qubo.solvers.dwave:DWaveTabu",
    "dwave-sa": "neuromark.benchmarks.qubo.solvers.dwave:DWaveSA",
})

# Systems under test (``neuromark.system.suts``): factories returning a BuiltSUT.
suts.register_many({
    "akida": "neuromark.system.chips.akida_sut:akida",
    "asc_cnn": "neuromark.benchmarks.acoustic_scenes.sut:asc_cnn",
    "esn": "neuromark.benchmarks.mackey_glass.sut:esn",
    "null": "neuromark.system.suts.null:null",
    "remote": "neuromark.system.suts.remote:remote",
    "sleep": "neuromark.system.suts.sleep:sleep",
    "xylo": "neuromark.system.chips.xylo_sut:xylo",
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

# Datasets (``neuromark.data``).
# Every entry is a ``neuromark.data.entry.DatasetEntry`` (download(root), verify(root), and
# synthesize(root, **options) where an offline generator writes the layout); called with
# split= and options, it builds that split, yielding (input, label) per sample.
datasets.register_many({
    "spoken_digits": "neuromark.benchmarks.shd.entries:SPOKEN_DIGITS",
    "shd": "neuromark.benchmarks.shd.entries:SHD_ENTRY",
    "ssc": "neuromark.benchmarks.shd.entries:SSC_ENTRY",
    "spike_files": "neuromark.benchmarks.shd.entries:SPIKE_FILES",
    "mackey_glass": "neuromark.benchmarks.mackey_glass.series:MACKEY_GLASS",
    "dcase2020_asc": "neuromark.benchmarks.acoustic_scenes.dcase:DCASE_ASC",
    # real layout, or the surrogate (synthesize)
    "dvs_gesture": "neuromark.benchmarks.dvs_gesture.reader:DVS_GESTURE",
    "speech_commands": "neuromark.benchmarks.keywords.entry:SPEECH_COMMANDS",
    "primate_reaching": "neuromark.benchmarks.primate_reaching.entry:PRIMATE_REACHING",
    # smartwatch activity (NeHAR), raw UCI 507 or arrays
    "wisdm": "neuromark.benchmarks.activity.wisdm:WISDM",
    # motor imagery (ThorEEGMI), Lee2019 .mat or arrays
    "eeg_mi": "neuromark.benchmarks.eeg_mi.reader:EEG_MI",
})

# Executors (``neuromark.executors``): classes built by ``neuromark run --executor NAME``.
executors.register_many({
    "local": "neuromark.executors:LocalExecutor",
    "ray": "neuromark.executors.ray_executor:RayExecutor",
})

generators.register_many({
    "spoken_digits": "neuromark.benchmarks.shd.generator",
    "gestures": "neuromark.benchmarks.dvs_gesture.generator",
    "events": "neuromark.synth.events",
    "keywords": "neuromark.benchmarks.keywords.generator",
    "primate": "neuromark.benchmarks.primate_reaching.generator",
    "wisdm": "neuromark.benchmarks.activity.generator",
    "eeg_mi": "neuromark.benchmarks.eeg_mi.generator",
})

environments.register_many({
    "ops": "neuromark.benchmarks.closed_loop.ops:ops",  # NeuroBench's online prosthesis simulator
    "gymnasium": "neuromark.benchmarks.closed_loop.gym_env:gymnasium_env",  # extra neuromark[control]
})
learning_rules.register_many({"delta": "neuromark.benchmarks.closed_loop.plasticity:delta"})
