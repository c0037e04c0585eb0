"""Read system-track results written before the spec's power names (floor/total).

Old files called the configured-and-ready window ``idle`` and reported idle / active /
dynamic power: ``details.power.idle``, ``mean_power_w``, ``energy_per_inference_j`` per active
window and the scores ``idle_power``, ``<stage>_power``, ``<stage>_energy_per_inference``.
That ``idle`` window *is* the NeuroBench floor window (configured, not asleep), so it is read
as ``floor``; the results are flagged so that reports say which keys were read.
"""

from __future__ import annotations

from typing import Any

#: The flag added to results whose power section was read from the old keys.
OLD_KEYS_FLAG = ("old results file: power read from the old keys idle/active/dynamic "
                 "(idle = the configured-and-ready window = floor power; active = total power)")


def migrate_power(details: dict[str, Any], scores: dict[str, Any]) -> bool:
    """Rewrite an old ``details.power`` and its scores in place to the floor/total names;
    returns True when something was migrated (the caller then flags the results with
    :data:`OLD_KEYS_FLAG`). ``scores`` maps names to
    :class:`~neuromark.results.Score` (or anything); only keys are renamed."""
    power = details.get("power")
    if not isinstance(power, dict) or "floor" in power or "idle" not in power:
        return False
    floor = dict(power.pop("idle"))
    floor_w = floor.get("mean_power_w")
    floor["floor_power_w"] = floor_w
    power["floor"] = floor
    for stats in power.get("active", {}).values():
        stats["total_power_w"] = stats.get("mean_power_w")
        stats["floor_power_w"] = floor_w
        if "energy_per_inference_j" in stats:
            total = stats.pop("energy_per_inference_j")
            stats["total_energy_per_inference_j"] = total
            if isinstance(total, (int, float)) and floor_w and stats.get("mean_power_w"):
                stats["floor_energy_per_inference_j"] = floor_w * total / stats["mean_power_w"]
    power["format"] = 1
    power.setdefault("latency_rule", "measured")
    renames = {"idle_power": "floor_power"}
    for name in list(scores):
        for stage in power.get("active", {}):
            if name == f"{stage}_power":
                renames[name] = f"{stage}_total_power"
            elif name == f"{stage}_energy_per_inference":
                renames[name] = f"{stage}_total_energy_per_inference"
    for old, new in renames.items():
        if old in scores and new not in scores:
            scores[new] = scores.pop(old)
    return True
