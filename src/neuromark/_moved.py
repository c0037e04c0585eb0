"""Import paths from before benchmark families had their own packages, kept working.

Modules moved into :mod:`neuromark.benchmarks` (one package per family), into
:mod:`neuromark.system.track` (the system task) or renamed (``baselines.shd_snn`` is
:mod:`neuromark.baselines.lif`) still import under their old names, which users' scripts,
configs' plugin paths and pickled checkpoints may name: ``import neuromark.data.shd`` gives
the very module object :mod:`neuromark.benchmarks.shd.datasets` (one object, two names, so a
monkeypatch through either is seen by both). :func:`install` adds the finder that does it;
``import neuromark`` calls it.

Nothing here imports a family: the table is strings, resolved on first use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

#: Old module path -> its module now.
MOVED: dict[str, str] = {
    "neuromark.baselines.asc_cnn": "neuromark.benchmarks.acoustic_scenes.model",
    "neuromark.baselines.closed_loop_agents": "neuromark.benchmarks.closed_loop.agents",
    "neuromark.baselines.closed_loop_families": "neuromark.benchmarks.closed_loop.families",
    "neuromark.baselines.closed_loop_train": "neuromark.benchmarks.closed_loop.train",
    "neuromark.baselines.dvs_gesture": "neuromark.benchmarks.dvs_gesture.model",
    "neuromark.baselines.eeg_mi": "neuromark.benchmarks.eeg_mi.models",
    "neuromark.baselines.event_detector": "neuromark.benchmarks.event_detection.model",
    "neuromark.baselines.event_detector_train": "neuromark.benchmarks.event_detection.train",
    "neuromark.baselines.gsc_family": "neuromark.benchmarks.keywords.gsc_family",
    "neuromark.baselines.keyword_data": "neuromark.benchmarks.keywords.entry",
    "neuromark.baselines.keyword_train": "neuromark.benchmarks.keywords.train",
    "neuromark.baselines.keywords": "neuromark.benchmarks.keywords.models",
    "neuromark.baselines.mackey_glass": "neuromark.benchmarks.mackey_glass.forecasters",
    "neuromark.baselines.nehar": "neuromark.benchmarks.activity.models",
    "neuromark.baselines.primate_reaching": "neuromark.benchmarks.primate_reaching.models",
    "neuromark.baselines.reach_encoders": "neuromark.benchmarks.primate_reaching.encoders",
    "neuromark.baselines.shd_reference": "neuromark.baselines.reference_classifiers",
    "neuromark.baselines.shd_snn": "neuromark.baselines.lif",
    "neuromark.baselines.shd_train": "neuromark.baselines.spike_training",
    "neuromark.closed_loop": "neuromark.benchmarks.closed_loop",
    "neuromark.closed_loop.env": "neuromark.benchmarks.closed_loop.env",
    "neuromark.closed_loop.gym_env": "neuromark.benchmarks.closed_loop.gym_env",
    "neuromark.closed_loop.ops": "neuromark.benchmarks.closed_loop.ops",
    "neuromark.closed_loop.plasticity": "neuromark.benchmarks.closed_loop.plasticity",
    "neuromark.closed_loop.references": "neuromark.benchmarks.closed_loop.references",
    "neuromark.closed_loop.scores": "neuromark.benchmarks.closed_loop.scores",
    "neuromark.data.binned": "neuromark.benchmarks.shd.entries",
    "neuromark.data.dcase_asc": "neuromark.benchmarks.acoustic_scenes.dcase",
    "neuromark.data.dvs_gesture": "neuromark.benchmarks.dvs_gesture.reader",
    "neuromark.data.eeg_mi": "neuromark.benchmarks.eeg_mi.reader",
    "neuromark.data.gen4": "neuromark.benchmarks.event_detection.gen4",
    "neuromark.data.lee2019": "neuromark.benchmarks.eeg_mi.lee2019",
    "neuromark.data.mackey_glass": "neuromark.benchmarks.mackey_glass.series",
    "neuromark.data.mswc": "neuromark.benchmarks.keywords.mswc",
    "neuromark.data.primate_contract": "neuromark.benchmarks.primate_reaching.contract",
    "neuromark.data.primate_entry": "neuromark.benchmarks.primate_reaching.entry",
    "neuromark.data.primate_reaching": "neuromark.benchmarks.primate_reaching.reader",
    "neuromark.data.shd": "neuromark.benchmarks.shd.datasets",
    "neuromark.data.speech_commands": "neuromark.benchmarks.keywords.speech_commands",
    "neuromark.data.spoken_digits": "neuromark.benchmarks.shd.spoken_digits",
    "neuromark.data.wisdm": "neuromark.benchmarks.activity.wisdm",
    "neuromark.data.wisdm_raw": "neuromark.benchmarks.activity.wisdm_raw",
    "neuromark.data.wisdm_splits": "neuromark.data.splits",
    "neuromark.report.system_report": "neuromark.system.track.submission",
    "neuromark.synth.eeg_mi": "neuromark.benchmarks.eeg_mi.generator",
    "neuromark.synth.gestures": "neuromark.benchmarks.dvs_gesture.generator",
    "neuromark.synth.keywords": "neuromark.benchmarks.keywords.generator",
    "neuromark.synth.primate": "neuromark.benchmarks.primate_reaching.generator",
    "neuromark.synth.spoken_digits": "neuromark.benchmarks.shd.generator",
    "neuromark.synth.wisdm": "neuromark.benchmarks.activity.generator",
    "neuromark.system.qubo": "neuromark.benchmarks.qubo",
    "neuromark.system.qubo.bks": "neuromark.benchmarks.qubo.bks",
    "neuromark.system.qubo.bks_auto": "neuromark.benchmarks.qubo.bks_auto",
    "neuromark.system.qubo.bks_runs": "neuromark.benchmarks.qubo.bks_runs",
    "neuromark.system.qubo.config": "neuromark.benchmarks.qubo.config",
    "neuromark.system.qubo.deadline": "neuromark.benchmarks.qubo.deadline",
    "neuromark.system.qubo.energy": "neuromark.benchmarks.qubo.energy",
    "neuromark.system.qubo.exact": "neuromark.benchmarks.qubo.exact",
    "neuromark.system.qubo.gap": "neuromark.benchmarks.qubo.gap",
    "neuromark.system.qubo.instance_sets": "neuromark.benchmarks.qubo.instance_sets",
    "neuromark.system.qubo.library": "neuromark.benchmarks.qubo.library",
    "neuromark.system.qubo.qoblib_submission": "neuromark.benchmarks.qubo.qoblib_submission",
    "neuromark.system.qubo.repeat": "neuromark.benchmarks.qubo.repeat",
    "neuromark.system.qubo.scenarios": "neuromark.benchmarks.qubo.scenarios",
    "neuromark.system.qubo.store": "neuromark.benchmarks.qubo.store",
    "neuromark.system.qubo.tts": "neuromark.benchmarks.qubo.tts",
    "neuromark.system.qubo.workloads": "neuromark.benchmarks.qubo.workloads",
    "neuromark.system.suts.asc": "neuromark.benchmarks.acoustic_scenes.sut",
    "neuromark.system.suts.esn": "neuromark.benchmarks.mackey_glass.sut",
    "neuromark.tasks.closed_loop": "neuromark.benchmarks.closed_loop.task",
    "neuromark.tasks.closed_loop_config": "neuromark.benchmarks.closed_loop.config",
    "neuromark.tasks.closed_loop_episodes": "neuromark.benchmarks.closed_loop.episodes",
    "neuromark.tasks.detection": "neuromark.benchmarks.event_detection.task",
    "neuromark.tasks.fscil": "neuromark.benchmarks.keywords.fscil",
    "neuromark.tasks.fscil_backbone": "neuromark.benchmarks.keywords.fscil_backbone",
    "neuromark.tasks.fscil_sessions": "neuromark.benchmarks.keywords.fscil_sessions",
    "neuromark.tasks.mackey_glass": "neuromark.benchmarks.mackey_glass.task",
    "neuromark.tasks.mackey_glass_instances": "neuromark.benchmarks.mackey_glass.instances",
    "neuromark.tasks.primate_decoders": "neuromark.benchmarks.primate_reaching.decoders",
    "neuromark.tasks.primate_dropped": "neuromark.benchmarks.primate_reaching.dropped",
    "neuromark.tasks.primate_reaching": "neuromark.benchmarks.primate_reaching.task",
    "neuromark.tasks.psth_predictivity": "neuromark.benchmarks.primate_reaching.psth_task",
    "neuromark.tasks.qubo": "neuromark.benchmarks.qubo.task",
    "neuromark.tasks.system": "neuromark.system.track.task",
    "neuromark.tasks.system_accuracy": "neuromark.system.track.accuracy",
    "neuromark.tasks.system_estimate": "neuromark.system.track.estimate",
    "neuromark.tasks.system_perf": "neuromark.system.track.perf",
    "neuromark.tasks.system_scores": "neuromark.system.track.scores",
}

#: Old package prefixes whose every submodule moved with them (sub-packages included).
MOVED_PACKAGES: dict[str, str] = {
    "neuromark.system.qubo": "neuromark.benchmarks.qubo",
    "neuromark.closed_loop": "neuromark.benchmarks.closed_loop",
}


def new_name(old: str) -> str | None:
    """The module path that ``old`` now is, or None when ``old`` did not move."""
    if old in MOVED:
        return MOVED[old]
    for prefix, target in MOVED_PACKAGES.items():
        if old.startswith(prefix + "."):
            return target + old[len(prefix):]
    return None


class _KeepsExports(ModuleType):
    """A package whose re-exported names survive the import system: after loading
    ``old.parent.child`` the import system sets ``child`` on the parent object, which for a
    moved package IS the new package; where the package re-exports a function of the same
    name as its submodule (``neuromark.benchmarks.qubo.energy``, the function, from the
    module ``energy``), that set would replace the function by the module. It is ignored."""

    def __setattr__(self, name: str, value: object) -> None:
        current = self.__dict__.get(name)
        if (isinstance(value, ModuleType) and current is not None
                and not isinstance(current, ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return
        super().__setattr__(name, value)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module object of its new name."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        parent = sys.modules.get(spec.name.rpartition(".")[0])
        if parent is not None and type(parent) is ModuleType:
            parent.__class__ = _KeepsExports  # a module's class may be set (Python >= 3.5)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target module is already executed."""


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds old names of moved modules (:data:`MOVED`, :data:`MOVED_PACKAGES`)."""

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put one :class:`MovedFinder` on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())  # before the path finder: an old package's
        # __path__ is the new folder, where the path finder would load a second copy
