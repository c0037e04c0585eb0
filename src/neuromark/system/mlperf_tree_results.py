"""The MLPerf submission tree of a ``neuromark system run`` folder: what
:func:`~neuromark.system.mlperf_tree.write_tree` is given, read from the folder's manifest
(``submission.json``) and results files.

Names: the benchmark is the result's benchmark id; the system is the result's ``system``
block's name where the results carry one, else the SUT's label (both can be given instead:
``--benchmark-name``, ``--system-name``). The system description JSON holds the fields
MLPerf's checker requires (``SYSTEM_DESC_REQUIRED_FIELDS`` of its ``constants.py``), filled
from the run's provenance (CPU, cores, packages) and the optional ``--system`` YAML; what
neither states is written as ``not stated`` rather than guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neuromark import __version__
from neuromark.errors import DataError
from neuromark.system.mlperf_tree import CHECKER_VERSION, TreeResult, check_name, write_tree

MANIFEST = "submission.json"
NOT_STATED = "not stated"
#: The system description fields MLPerf's checker requires, ours where we know them.
SYSTEM_FIELDS = (
    "status", "system_name", "number_of_nodes", "host_processor_model_name",
    "host_processors_per_node", "host_processor_core_count", "host_memory_capacity",
    "host_storage_capacity", "host_storage_type", "accelerators_per_node",
    "accelerator_model_name", "accelerator_memory_capacity", "framework", "operating_system",
    "system_type", "other_software_stack", "host_processor_frequency", "host_processor_caches",
    "host_memory_configuration", "host_processor_interconnect", "host_networking",
    "host_networking_topology", "accelerator_frequency", "accelerator_host_interconnect",
    "accelerator_interconnect", "accelerator_interconnect_topology",
    "accelerator_memory_configuration", "accelerator_on-chip_memories", "cooling", "hw_notes",
    "sw_notes", "host_network_card_count", "system_type_detail")


def _load(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise DataError(f"{file}: not a readable JSON file ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise DataError(f"{file}: expected a JSON object")
    return data


def system_name_of(data: dict[str, Any]) -> str:
    """The system's name in a results file: its ``system`` block's ``name`` (or ``label``)
    where it has one, else the SUT's label (``model.label`` / ``model.name``)."""
    block = data.get("system")
    if isinstance(block, dict):
        for key in ("name", "label", "id"):
            if isinstance(block.get(key), str) and block[key]:
                return block[key]
    model = data.get("model") or {}
    return str(model.get("label") or model.get("name") or "system")


def system_description(data: dict[str, Any], stated: dict[str, Any] | None = None,
                       system_type: str = "edge") -> dict[str, Any]:
    """MLPerf's system description fields from a results file's provenance and the fields
    the submitter ``stated`` (which win)."""
    prov = data.get("provenance") or {}
    machine = prov.get("machine") or {}
    packages = prov.get("packages") or {}
    desc: dict[str, Any] = {k: NOT_STATED for k in SYSTEM_FIELDS}
    desc.update({
        # counts as text: MLPerf's checker reads a 0 as an empty answer
        "status": "rdi", "system_type": system_type, "number_of_nodes": "1",
        "host_processor_model_name": machine.get("cpu") or NOT_STATED,
        "host_processors_per_node": "1",
        "host_processor_core_count": str(machine.get("cores") or NOT_STATED),
        "accelerators_per_node": "0", "accelerator_model_name": "none (see the SUT in README.md)",
        "accelerator_memory_capacity": "none", "accelerator_host_interconnect": "none",
        "accelerator_memory_configuration": "none", "accelerator_interconnect": "none",
        "framework": f"neuromark {packages.get('neuromark', __version__)}",
        "operating_system": machine.get("platform") or NOT_STATED,
        "other_software_stack": ", ".join(f"{k} {v}" for k, v in sorted(packages.items()))
        or NOT_STATED,
        "host_network_card_count": "0", "host_networking": "none", "host_networking_topology": "none",
        "cooling": NOT_STATED,
        "sw_notes": "written by neuromark from the run's provenance; open division",
        "hw_notes": f"SUT: {system_name_of(data)}"})
    desc.update(stated or {})
    return desc


def _readme(data: dict[str, Any], entry: dict[str, Any], file: Path) -> str:
    bench = data.get("benchmark") or {}
    acc = entry.get("accuracy") or {}
    seeds = ((data.get("config") or {}).get("effective") or {}).get("loadgen", {}).get("seeds", {})
    return "\n".join([
        f"# {bench.get('id')} {entry.get('scenario')} on {system_name_of(data)}", "",
        f"Measured with neuromark {__version__} (system track, MLPerf LoadGen); results file "
        f"`{file.name}` of the run folder, benchmark version {bench.get('version')}.",
        f"Profile `{(data.get('details') or {}).get('profile', entry.get('profile', 'test'))}`; "
        f"LoadGen seeds {json.dumps(seeds)} (LoadGen takes seeds from mlperf.conf only, so "
        "they are stated here, not in user.conf).",
        f"Accuracy: {acc.get('metric')} = {acc.get('value')}." if acc else "Accuracy: none recorded.",
        "", f"Laid out for MLPerf's submission checker ({CHECKER_VERSION} paths), open "
        "division; what it still refuses and why: neuromark docs/system_track.md.", ""])


def _measurements(data: dict[str, Any]) -> dict[str, Any]:
    model = data.get("model") or {}
    weights = model.get("checkpoint_sha256")
    return {"input_data_types": "as the SUT's data loader gives them (README.md)",
            "retraining": "no",
            "starting_weights_filename": (f"checkpoint sha256 {weights}" if weights else
                                          f"weights as SUT {model.get('name')!r} builds them "
                                          f"(options digest {model.get('options_digest')})"),
            "weight_data_types": "as the SUT stores them (README.md)",
            "weight_transformations": "none"}


def tree_results(run_dir: str | Path, benchmark_name: str | None = None,
                 system_name: str | None = None) -> tuple[str, list[dict[str, Any]], list[TreeResult]]:
    """``(system name, results data, TreeResults)`` of a ``neuromark system run`` folder,
    from its ``submission.json``; every result must be of one system."""
    run = Path(run_dir)
    if not (run / MANIFEST).is_file():
        raise DataError(f"{run}: no {MANIFEST}; write the tree from a 'neuromark system run' folder")
    manifest = _load(run / MANIFEST)
    entries = manifest.get("benchmarks")
    if not isinstance(entries, list) or not entries:
        raise DataError(f"{run / MANIFEST}: 'benchmarks' lists no result")
    names, datas, out = set(), [], []
    for entry in entries:
        file = run / str(entry.get("results"))
        data = _load(file)
        names.add(system_name or system_name_of(data))
        logs = entry.get("loadgen_logs") or {}
        if "PerformanceOnly" not in logs:
            raise DataError(f"{run / MANIFEST}: {entry.get('results')} has no PerformanceOnly logs")
        perf = run / logs["PerformanceOnly"]
        stem = run / Path(logs["PerformanceOnly"]).parts[0]
        details = data.get("details") or {}
        acc = details.get("accuracy") or {}
        compliance = {t: stem / "compliance" / t for t in (details.get("compliance") or {})}
        verdicts = {t: f"{t} {v.get('verdict')}: {v.get('reason') or ''}".rstrip(": ")
                    for t, v in (details.get("compliance") or {}).items() if isinstance(v, dict)}
        power = details.get("mlperf_power")
        out.append(TreeResult(
            benchmark=check_name(benchmark_name or str((data.get("benchmark") or {}).get("id")),
                                 "benchmark name"),
            scenario=str(entry.get("scenario")), performance_dir=perf,
            accuracy_dir=run / logs["AccuracyOnly"] if "AccuracyOnly" in logs else None,
            accuracy=(str(acc["metric"]), float(acc["value"]))
            if isinstance(acc.get("value"), (int, float)) else None,
            power_dir=stem / str(power.get("folder", "mlperf_power")) if isinstance(power, dict) else None,
            compliance=compliance, verdicts=verdicts,
            measurements=_measurements(data), readme=_readme(data, entry, file)))
        datas.append(data)
    if len(names) != 1:
        raise DataError(f"{run}: results of several systems {sorted(names)}; an MLPerf tree is "
                        "written per system (--system-name names one)")
    return names.pop(), datas, out


def write_run_tree(run_dir: str | Path, tree: str | Path, submitter: str,
                   system_name: str | None = None, benchmark_name: str | None = None,
                   stated: dict[str, Any] | None = None, system_type: str = "edge") -> Path:
    """Write the MLPerf tree of a ``neuromark system run`` folder (:func:`tree_results`,
    :func:`~neuromark.system.mlperf_tree.write_tree`); returns the submitter's folder."""
    name, datas, results = tree_results(run_dir, benchmark_name, system_name)
    return write_tree(tree, submitter, name, system_description(datas[0], stated, system_type),
                      results)
