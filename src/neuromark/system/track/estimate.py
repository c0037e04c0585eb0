"""The system track's energy ESTIMATE, counted beside the measured energy, never in its place.

With ``estimate: {profiles: [...]}`` in a system config, the SUT's workload (the model it
runs and its samples, :attr:`neuromark.system.sut.BuiltSUT.workload`) goes once through the
harness with :class:`~neuromark.metrics.energy.EnergyEstimate`, after LoadGen and the power
windows (so it never disturbs them). The score ``energy_estimate`` (J per inference, one per
profile, unit "J/sample (estimate)") sits beside ``energy_per_inference`` (measured, or "not
measured"); the submission report prints both in one table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from neuromark.config import ConfigFile, StrictModel, resolve_path
from neuromark.context import RunContext
from neuromark.errors import ConfigError, NeuromarkError
from neuromark.metrics.energy import SHIPPED, EnergyEstimate
from neuromark.metrics.functional.energy_profiles import get_profile
from neuromark.results import Score
from neuromark.tasks.evaluation import evaluate


class EstimateSettings(StrictModel):
    """``estimate:``: the energy profiles to estimate with (registered names or profile YAML
    files, relative to the config's folder; default the four shipped Horowitz 45 nm
    profiles)."""

    profiles: list[str] = Field(default_factory=lambda: list(SHIPPED), min_length=1)

    def checked(self, config: ConfigFile | None) -> EstimateSettings:
        """These settings with profile files made absolute (from the config's folder); an
        unknown profile or a bad file is a ConfigError naming ``estimate.profiles[i]``."""
        where = (config or ConfigFile(data={})).where
        out: list[str] = []
        seen: dict[str, int] = {}  # profile name -> index of its first entry
        for i, name in enumerate(self.profiles):
            try:
                value = (str(resolve_path(name, config)) if name.endswith((".yaml", ".yml"))
                         else name)
                profile = get_profile(value)
            except NeuromarkError as exc:
                raise ConfigError(f"{where(('estimate', 'profiles', i))}: "
                                  f"estimate.profiles[{i}]: {exc}") from None
            if profile.name in seen:
                raise ConfigError(f"{where(('estimate', 'profiles', i))}: estimate.profiles[{i}]: "
                                  f"profile {profile.name!r} is already estimate.profiles"
                                  f"[{seen[profile.name]}]; list each profile once")
            seen[profile.name] = i
            out.append(value)
        return self.model_copy(update={"profiles": out})


def estimate_energy(workload: Callable[[], tuple[Any, Any]], settings: EstimateSettings,
                    ctx: RunContext | None = None) -> tuple[Score, dict[str, Any]]:
    """(``energy_estimate`` score, its details: counts per inference and each profile's
    label, source and caveats) for the SUT's ``workload() -> (model, batches)``; every
    sample of ``batches`` is one inference. ``ctx``: the run's context (coverage, counting
    path); None: the defaults."""
    model, batches = workload()
    metric = EnergyEstimate(settings.profiles)
    # counts only (an estimate of the SUT's energy): whether it is trained is the SUT's matter
    results = evaluate(ctx if ctx is not None else RunContext(), model, batches, [metric],
                       quiet=True, trained=True)
    details = {**results.details.get(metric.name, {}), "samples": results.details.get("samples")}
    return results.scores[metric.name], details


def estimate_from_counts(counts: dict[str, Any], settings: EstimateSettings
                         ) -> tuple[Score, dict[str, Any]]:
    """(``energy_estimate`` score, details) from operation counts per inference the SUT
    counted itself (``BuiltSUT.operation_counts``: ``macs``, ``acs``, ``neuron_updates``,
    ``source``), e.g. the synaptic events of a chip simulator: per profile
    ``macs x mac_j + acs x ac_j + neuron_updates x neuron_update_j`` (a profile without
    ``neuron_update_j`` prices a neuron update as 0 and says so). Arithmetic only, as the
    profiles are: an estimate, never a measurement."""
    values: dict[str, float] = {}
    profiles: dict[str, Any] = {}
    macs, acs = float(counts.get("macs", 0.0)), float(counts.get("acs", 0.0))
    updates = float(counts.get("neuron_updates", 0.0))
    for name in settings.profiles:
        profile = get_profile(name)
        values[profile.name] = (macs * profile.mac_j + acs * profile.ac_j
                                + updates * (profile.neuron_update_j or 0.0))
        profiles[profile.name] = {"label": profile.label(), "source": profile.source,
                                  "caveats": list(profile.caveats)
                                  + ([] if profile.neuron_update_j is not None else
                                     ["neuron updates priced at 0 (the profile has none)"])}
    details = {"counts_per_inference": {"macs": macs, "acs": acs, "neuron_updates": updates},
               "counted_by": counts.get("source", "the SUT"), "profiles": profiles,
               "formula": "macs x mac_j + acs x ac_j + neuron_updates x neuron_update_j"}
    return Score(values, unit="J/sample (estimate)", higher_is_better=False), details

