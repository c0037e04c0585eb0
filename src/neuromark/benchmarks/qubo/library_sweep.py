"""``neuromark qubo library DIR``: every instance of a library folder x every solver.

A unit is one (instance, solver): ``--runs`` runs of ``--timeout`` seconds through the
same per-instance path as ``neuromark qubo solve`` (:func:`~.repeat.solve_runs`: each run's
solution checked for length and binarity, its energy recomputed from Q, independence
checked; TTS fields from its summary), against the instance's best-known value
(:func:`~.library_known.best_known_for`: the solution file beside it, checked, and the
known-value table matched by content). Each finished unit is saved at once as
``OUT/units/<instance>--<solver>.json`` (its runs and their histories; its best set as
``OUT/solutions/<solver>/<instance>.sol``; its QOBLIB submission folder
``OUT/submissions/<solver>/<instance>/``, written by
:func:`~.qoblib_submission.write_submission_dir` from every run's solution); a rerun into the
same ``OUT`` skips the saved units (resume) and refuses other ``--timeout/--runs/--seed``
than the folder's (``OUT/sweep.json``). A unit's row is computed from its saved runs each
time the table is written (:func:`unit_row`), so a resumed or ``--report-only`` table
follows the current definitions and best-known values.

One row per unit (:func:`unit_row`): n, m, best-known |S| with its source, whether proven,
the literature's best, the best |S| found, gap ``(best-known - found) / best-known``
(negative: better than the best-known), success probability at the best-known, TTS99 and
the tau giving it (``tau_opt_s`` where the summary has one), TTS99 at the timeout, and the
fraction of runs past the deadline (beyond :func:`~.solvers.base.allowed_overrun`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from neuromark.benchmarks.qubo.library import FORMATS, Instance, instance_name, load_instance
from neuromark.benchmarks.qubo.library_known import BestKnown, best_known_for, mismatch_note
from neuromark.benchmarks.qubo.qoblib_submission import check_submission_dir, write_submission_dir
from neuromark.errors import ConfigError, DataError
from neuromark.io_atomic import write_json_atomic

#: Version of the unit files' layout.
UNIT_VERSION = 1


@dataclass(frozen=True)
class SolverChoice:
    """A ``--solvers`` entry: ``name`` or ``name:key=value:key=value`` (values YAML)."""

    label: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return slug(self.label)


def slug(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def parse_options(pairs: list[str], where: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as solver options (values read as YAML: ``3``, ``0.5``, ``[1, 2]``,
    ``online_mis``); a pair without ``=`` or a key given twice is a :class:`ConfigError`
    naming ``where`` (the option or entry)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"{where}: option {pair!r} is not KEY=VALUE")
        if key in options:
            raise ConfigError(f"{where}: option {key!r} is given twice")
        try:
            options[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where}: option {pair!r}: the value is not readable "
                              f"({str(exc).splitlines()[0]})") from None
    return options


def parse_solvers(text: str) -> list[SolverChoice]:
    """The ``--solvers`` list (comma-separated; see :class:`SolverChoice`), checked."""
    choices: list[SolverChoice] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            raise ConfigError(f"--solvers {text!r}: an empty entry")
        name, *pairs = entry.split(":")
        options = parse_options(pairs, f"--solvers {entry!r}")
        if any(c.label == entry for c in choices):
            raise ConfigError(f"--solvers: {entry!r} is listed twice")
        choices.append(SolverChoice(entry, name, options))
    return choices


def make_choice(choice: SolverChoice) -> Any:
    """The solver of a ``--solvers`` entry (unknown names and options: ConfigError)."""
    from neuromark.benchmarks.qubo.config import SolverSpec
    from neuromark.benchmarks.qubo.task import make_solver

    return make_solver(SolverSpec(name=choice.name, options=choice.options),
                       loc=("--solvers", choice.label))


def is_instance_file(path: Path) -> bool:
    name = path.name[:-3] if path.name.endswith(".xz") else path.name
    return path.is_file() and Path(name).suffix.lower() in FORMATS


@dataclass
class LibraryEntry:
    """An instance of the swept folder and its best-known value."""

    path: Path
    instance: Instance
    known: BestKnown

    @property
    def name(self) -> str:
        return self.instance.name


def discover(folder: Path, max_nodes: int | None = None, only: list[str] | None = None
             ) -> tuple[list[LibraryEntry], list[tuple[str, str]]]:
    """(instances to sweep, [(file, why skipped)]): every instance file of ``folder``
    (sorted by n, then name) with a best-known value; all read and checked before any
    solving (a bad file is a :class:`DataError` naming it)."""
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder of instances")
    files = sorted(p for p in folder.iterdir() if is_instance_file(p))
    if only:
        unknown = sorted(set(only) - {instance_name(p) for p in files})
        if unknown:
            raise ConfigError(f"--only: no instance {', '.join(unknown)} in {folder}")
        files = [p for p in files if instance_name(p) in only]
    seen: dict[str, Path] = {}
    for path in files:
        if (first := seen.setdefault(instance_name(path), path)) is not path:
            raise ConfigError(f"{folder}: two instance files named {instance_name(path)!r} "
                              f"({first.name}, {path.name}); sweep them from separate folders")
    entries: list[LibraryEntry] = []
    skipped: list[tuple[str, str]] = []
    for path in files:
        instance = load_instance(path)
        if not instance.is_mis:
            skipped.append((path.name, "not a maximum-independent-set instance"))
        elif max_nodes is not None and instance.n > max_nodes:
            skipped.append((path.name, f"n = {instance.n} > --max-nodes {max_nodes}"))
        elif (known := best_known_for(path, instance)) is None:
            note = mismatch_note(instance)
            skipped.append((path.name, "no solution file beside it and no known value"
                            + (f" ({note})" if note else "")))
        else:
            entries.append(LibraryEntry(path, instance, known))
    if not files:
        raise ConfigError(f"{folder}: no instance files ({', '.join(sorted(FORMATS))}, "
                          f"optionally .xz)")
    entries.sort(key=lambda e: (e.instance.n, e.name))
    return entries, skipped


def check_settings(out: Path, settings: dict[str, Any]) -> None:
    """Record the sweep's settings in ``OUT/sweep.json``, or refuse a resume with others."""
    import json

    stored = out / "sweep.json"
    if stored.is_file():
        before = json.loads(stored.read_text(encoding="utf-8"))
        differ = {k: (before.get(k), v) for k, v in settings.items() if before.get(k) != v}
        if differ:
            said = "; ".join(f"{k}: folder {a!r}, now {b!r}" for k, (a, b) in differ.items())
            raise ConfigError(f"{out}: holds a sweep with other settings ({said}); use another "
                              f"--out or the same settings to resume")
    elif stored.exists():
        raise ConfigError(f"{stored}: exists and is not a file")
    else:
        write_json_atomic(stored, settings)


def unit_path(out: Path, entry: LibraryEntry, choice: SolverChoice) -> Path:
    return out / "units" / f"{slug(entry.name)}--{choice.slug}.json"


def known_energy(entry: LibraryEntry) -> float:
    """The energy of a set of the best-known size in the instance's own energy."""
    return float(entry.instance.Q[0, 0]) * entry.known.value + entry.instance.offset


def summarise_unit(entry: LibraryEntry, runs: list[dict[str, Any]], timeout_s: float,
                   seed: int) -> dict[str, Any]:
    """The summary of a unit's runs against the entry's best-known value (as
    :func:`~.repeat.solve_runs` makes it)."""
    from neuromark.benchmarks.qubo.repeat import summarise_runs

    return summarise_runs(entry.instance, runs, known_energy(entry), entry.known.source,
                          bootstrap_seed=seed, optimum_size=entry.known.value,
                          timeout_s=timeout_s, optimum_proven=entry.known.proven)


def unit_row(entry: LibraryEntry, choice: SolverChoice, result: dict[str, Any],
             timeout_s: float) -> dict[str, Any]:
    """The table row of a finished unit (see the module docstring), its figures computed
    from the unit's runs (``result["runs"]``) against the entry's best-known value now."""
    runs = result["runs"]
    summary = summarise_unit(entry, runs, timeout_s, int(result.get("seed", runs[0]["seed"])))
    best = summary.get("best_size")
    value = entry.known.value
    return {
        "instance": entry.name, "n": entry.instance.n, "m": len(entry.instance.edges),
        "solver": choice.label, "best_known": value, "best_known_source": entry.known.source,
        "best_known_reference": entry.known.reference,
        "best_known_proven": entry.known.proven, "literature_best": entry.known.literature,
        "best_found": best,
        "gap": None if best is None else (value - best) / value if value else 0.0,
        "improves_best_known": best is not None and best > value,
        "runs": len(runs), "feasible_runs": summary["feasible_runs"],
        "p_success": summary["p_success"], "tts99_s": summary.get("tts99_s"),
        "tau_opt_s": summary.get("tau_opt_s"),
        "tts99_at_timeout_s": summary.get("tts99_at_timeout_s"),
        "over_deadline_fraction": sum(not r["within_limit"] for r in runs) / len(runs),
        "mean_wall_s": sum(r["wall_s"] for r in runs) / len(runs), "timeout_s": timeout_s,
    }


def run_unit(entry: LibraryEntry, choice: SolverChoice, timeout_s: float, runs: int,
             seed: int) -> dict[str, Any]:
    """The result of :func:`~.repeat.solve_runs` against the best-known value, with
    ``keep_solutions`` (``best_x`` and every run's ``run_x``: not JSON)."""
    from neuromark.benchmarks.qubo.repeat import solve_runs

    solver = make_choice(choice)
    return solve_runs(solver, entry.instance, timeout_s, runs, seed,
                      optimum=known_energy(entry), optimum_source=entry.known.source,
                      optimum_size=entry.known.value, optimum_proven=entry.known.proven,
                      keep_solutions=True)


def submission_root(out: Path, choice: SolverChoice) -> Path:
    """``OUT/submissions/<solver>``: the solver's QOBLIB submission, a folder per instance."""
    return out / "submissions" / choice.slug


def check_submissions(out: Path, entries: list[LibraryEntry],
                      choices: list[SolverChoice]) -> None:
    """Before any solving: every unit's submission folder can be written (none holds an
    input; this command's own folders under ``OUT`` are replaced on a rerun of the unit)."""
    for choice in choices:
        for entry in entries:
            check_submission_dir(submission_root(out, choice), entry.name, [entry.path],
                                 overwrite=True, option="--out")


def sweep(entries: list[LibraryEntry], choices: list[SolverChoice], out: Path, *,
          timeout_s: float, runs: int, seed: int,
          on_unit: Callable[[dict[str, Any], bool], None] | None = None,
          solve_missing: bool = True, submitter: str = "N/A",
          command: str = "neuromark qubo library") -> list[dict[str, Any]]:
    """Run (or resume) every unit; returns the saved unit records in entry x solver order,
    each ``row`` computed now from its runs (:func:`unit_row`). ``on_unit(record,
    resumed)`` is called after each unit; ``solve_missing=False`` only reads the saved units
    (a unit not saved is left out). A unit solved here also gets its QOBLIB submission folder
    (``submitter``, and ``command`` as its Reference)."""
    import json

    from neuromark.benchmarks.qubo.library import write_solution

    records = []
    for entry in entries:
        for choice in choices:
            path = unit_path(out, entry, choice)
            if path.is_file():
                record = json.loads(path.read_text(encoding="utf-8"))
                if record.get("version") != UNIT_VERSION or record["row"]["solver"] != \
                        choice.label or record["row"]["instance"] != entry.name:
                    raise DataError(f"{path}: not a unit of this sweep (delete it to rerun)")
                record["row"] = unit_row(entry, choice, record["result"], timeout_s)
                records.append(record)
                if on_unit:
                    on_unit(record, True)
                continue
            if not solve_missing:
                continue
            result = run_unit(entry, choice, timeout_s, runs, seed)
            best_x = result.pop("best_x")
            write_submission_dir(submission_root(out, choice), entry.instance, result,
                                 solver=choice.label, submitter=submitter, reference=command,
                                 overwrite=True)
            result.pop("run_x")
            row = unit_row(entry, choice, result, timeout_s)
            write_solution(out / "solutions" / choice.slug / f"{slug(entry.name)}.sol", best_x,
                           comment=f"{entry.name}: best of {runs} run(s) of {choice.label}, "
                                   f"{timeout_s:g} s each, seeds {seed}..{seed + runs - 1}")
            record = {"version": UNIT_VERSION, "row": row, "result": result,
                      "instance_path": str(entry.path)}
            write_json_atomic(path, record)
            records.append(record)
            if on_unit:
                on_unit(record, False)
    return records


def fmt(value: Any, spec: str = ".3g") -> str:
    """A table cell: ``-`` for None/NaN, numbers by ``spec``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)
