"""Runs read back from results folders, with their scores flattened to named numbers; shared
by ``neuromark leaderboard`` and ``neuromark compare``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuromark.benchmark_settings import changes_from_shipped
from neuromark.errors import DataError
from neuromark.results import Results, unsupported_schema
from neuromark.results_versions import results_object


@dataclass
class Run:
    """One results file: ``label`` (the run: its folder's name), ``path``, ``results``."""

    label: str
    path: Path
    results: Results

    @property
    def id(self) -> str:
        return self.results.benchmark.id

    @property
    def key(self) -> tuple[str, str]:
        """The benchmark ``(id, version)``: runs with the same key are comparable."""
        return self.results.benchmark.key

    @property
    def model_label(self) -> str:
        """The model's label; a file without a model block (an old QUBO or system run)
        shows its benchmark id, which named the model then."""
        model = self.results.model
        return model.label if model is not None else self.id

    @property
    def model_name(self) -> str:
        """The model's registry (or class) name, or "—" without a model block."""
        return self.results.model.name if self.results.model is not None else "—"

    @property
    def checkpoint_short(self) -> str:
        """The checkpoint digest's first 12 hex digits, or "—"."""
        return self.results.model.checkpoint_short if self.results.model is not None else "—"


def benchmark_title(key: tuple[str, str]) -> str:
    """``"<id> (version <v>)"``: how a benchmark is named in tables and messages."""
    return f"{key[0]} (version {key[1]})"


@dataclass(frozen=True)
class Cell:
    """One flattened score: a number (or a text such as "not measured"), its standard
    error, unit and direction."""

    value: float | str
    error: float | None
    unit: str
    higher_is_better: bool | None
    #: Why the figure is impossible (not finite, a negative count, a negative standard
    #: error...), or None: shown flagged, never plotted or compared.
    problem: str | None = None


#: How the results writer stores non-finite floats (:func:`neuromark.io_atomic.to_jsonable`):
#: read back as the numbers they stand for (then flagged by :func:`impossible`), not as text.
NON_FINITE_TEXTS = ("NaN", "Infinity", "-Infinity")


def _number(value: Any) -> float | None:
    """``value`` as a float (NaN and inf kept: :func:`impossible` flags them), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):
        return None


#: Scores that are fractions in [0, 1] unless their unit says "%".
FRACTIONS = ("classification_accuracy", "session_average", "base_accuracy", "coco_map",
             "connection_sparsity", "activation_sparsity")


def impossible(name: str, value: float, error: float | None, unit: str) -> str | None:
    """Why ``value ± error`` cannot be a figure of score ``name``, or None."""
    if not math.isfinite(value):
        return f"{value} is not a finite number"
    if error is not None and not (math.isfinite(error) and error >= 0):
        return f"standard error {error:g} is negative or not finite"
    base = name.split(".")[0]
    if base in COMPLEXITY and value < 0:
        return f"{value:g} is negative: a count or size is not"
    if base in FRACTIONS and unit != "%" and not 0 <= value <= 1:
        return f"{value:g} is outside [0, 1]"
    return None


def flatten_scores(results: Results) -> dict[str, Cell]:
    """Every score as ``name`` or ``name.key`` (one level of dict values, e.g.
    ``synaptic_operations.Effective_MACs``); per-layer breakdowns (``*_by_layer``) are left
    out; a system result's ``details.energy_source`` (how its energy figure was obtained) is
    the text column ``energy_source``. Text values (e.g. "not measured") are kept as text;
    the writer's own "NaN", "Infinity" and "-Infinity" are numbers (flagged impossible)."""
    out: dict[str, Cell] = {}
    for name, score in results.scores.items():
        if name.endswith("_by_layer"):
            continue
        value, error = score.value, score.error
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, item in items:
            errors = error if isinstance(error, dict) else {}
            err = errors.get(key) if key is not None else error
            number = _number(item)
            if number is None and not isinstance(item, str):
                continue
            full = name if key is None else f"{name}.{key}"
            se = _number(err) if err is not None else None
            if number is None or isinstance(item, str) and not math.isfinite(number) \
                    and item not in NON_FINITE_TEXTS:  # a text ("inf" written by hand stays one)
                out[full] = Cell(str(item), se, score.unit, score.higher_is_better)
                continue
            out[full] = Cell(number, se, str(score.unit), score.higher_is_better,
                             impossible(full, number, se, str(score.unit)))
    source = (results.details or {}).get("energy_source")  # how the energy was obtained
    if isinstance(source, str) and source:
        out["energy_source"] = Cell(source, None, "", None)
    return out


#: The kernel's correctness scores in order of preference: a result's primary score is the
#: one its task declares (``details["primary_metric"]``: a system scenario's, a family's own
#: headline such as the QUBO sweep's first ``bks_gap``), else the first of these it holds.
CORRECTNESS = ("classification_accuracy", "sMAPE", "r2", "MSE")
#: Complexity scores (NeuroBench's), in the order the leaderboard shows them.
COMPLEXITY = ("footprint", "parameter_count", "connection_sparsity", "activation_sparsity",
              "synaptic_operations", "membrane_updates", "neuron_operations", "energy_estimate")


def primary_score(results: Results) -> str | None:
    """The name of the result's headline score (see :data:`CORRECTNESS`), or None."""
    declared = (results.details or {}).get("primary_metric")
    if isinstance(declared, str) and declared in results.scores:
        return declared
    return next((name for name in CORRECTNESS if name in results.scores), None)


def run_flags(results: Results) -> list[str]:
    """What a reader must see: scores that are text ("not measured"), and the run's
    ``flags`` and ``diverged``/``overruns`` details where a task records them."""
    cells = flatten_scores(results).items()
    flags = [f"{name}: {cell.value}" for name, cell in cells if isinstance(cell.value, str)]
    flags += [f"{name}: impossible value: {cell.problem}" for name, cell in cells if cell.problem]
    details = results.details or {}
    flags += [str(f) for f in results.flags]
    recorded = details.get("flags")  # a task's own mapping of named conditions
    if isinstance(recorded, dict):
        flags += [f"{k}: {v}" for k, v in recorded.items() if v not in (False, None, 0, "", [])]
    for key in ("diverged", "overruns", "timeouts"):
        value = details.get(key)
        if value not in (None, False, 0, [], {}):
            flags.append(f"{key}: {value if not isinstance(value, (list, dict)) else len(value)}")
    differs = settings_flag(results)
    if differs:
        flags.append(differs)
    return list(dict.fromkeys(flags))


def settings_flag(results: Results) -> str | None:
    """A flag for a result filed under a shipped benchmark id whose config (as written,
    ``results.requested``) changes what that id fixes (written before neuromark gave such
    configs their own id: :mod:`neuromark.benchmark_settings`), else None."""
    requested = results.requested
    bench = requested.get("benchmark") if isinstance(requested, dict) else None
    if not isinstance(bench, dict) or bench.get("id") != results.benchmark.id \
            or (results.details or {}).get("benchmark_derived"):
        return None
    try:
        shipped, changes = changes_from_shipped(requested)
    except Exception:  # noqa: BLE001 - a results file's config may be anything
        return None
    if shipped is None or not changes:
        return None
    return (f"settings differ from benchmark {shipped.key[0]} {shipped.key[1]}: "
            + "; ".join(c.describe() for c in changes[:3])
            + (f"; ... ({len(changes)} in all)" if len(changes) > 3 else "")
            + ": not comparable with its other results")


def derived_note(results: Results) -> str | None:
    """``derived from <id> <version>: <changes>`` for a result whose config changed what a
    shipped id fixes (:mod:`neuromark.benchmark_settings`), else None."""
    record = (results.details or {}).get("benchmark_derived")
    if not isinstance(record, dict):
        return None
    changes = [c for c in record.get("changes", []) if isinstance(c, dict)]
    shown = "; ".join(f"{c.get('setting')} = {c.get('given')!r} (shipped {c.get('shipped')!r})"
                      for c in changes[:4])
    return (f"derived from {record.get('shipped_id')} {record.get('shipped_version')}: {shown}"
            + (f"; ... ({len(changes)} in all)" if len(changes) > 4 else ""))


def _load(file: Path) -> tuple[Results | None, str | None]:
    """(the results of ``file``, None) or (None, why it is skipped: None for a JSON object
    that is no results file at all, such as a run folder's manifest)."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "JSON nested too deep to read"
    if not isinstance(data, dict):
        return None, f"holds a JSON {type(data).__name__}, not a results object"
    if not results_object(data):
        return None, None
    why = unsupported_schema(data)
    if why is not None:
        return None, why
    try:
        results = Results.load(file)
    except DataError as exc:  # names the file and field already: without the path again
        text = str(exc)
        return None, text.removeprefix(f"{file}: ")
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        return None, f"not a readable neuromark results file ({type(exc).__name__}: {exc})"
    b, model = results.benchmark, results.model
    for key, value in (("benchmark.id", b.id), ("benchmark.version", b.version),
                       ("model.label", model.label if model is not None else ""),
                       ("model.name", model.name if model is not None else "")):
        if not isinstance(value, str):
            return None, f"{key} is a {type(value).__name__}, not a text"
    if b.parent is not None and not isinstance(b.parent, str):
        return None, f"benchmark.parent is a {type(b.parent).__name__}, not a text"
    return results, None


def _results_in(folder: Path, skipped: list[str]) -> list[tuple[Path, Results]]:
    """The readable results files directly in ``folder`` (other JSON objects skipped; a
    malformed file skipped with a line in ``skipped`` naming it and why)."""
    found = []
    for file in sorted(folder.glob("*.json")):
        results, why = _load(file)
        if results is not None:
            found.append((file, results))
        elif why is not None:
            skipped.append(f"note: skipped {file}: {why}")
    return found


def read_runs(paths: list[str | Path], notes: list[str] | None = None) -> list[Run]:
    """The results files in ``paths``: results JSON files, run folders written by
    ``neuromark run``, or folders of run folders (such as ``results/``: a folder without
    results files of its own is read one level down). Folders without results are skipped,
    each with a line appended to ``notes``; DataError when a path is missing, a given file
    is not a results file, or nothing at all holds results."""
    runs: list[Run] = []
    labels: dict[str, int] = {}
    empty: list[Path] = []
    skipped: list[str] = []

    def add(base: str, file: Path, results: Results) -> None:
        model = results.model.label if results.model is not None else ""
        key = f"{base}\0{results.benchmark.id}\0{results.benchmark.version}\0{model}"
        labels[key] = labels.get(key, 0) + 1
        runs.append(Run(base if labels[key] == 1 else f"{base}#{labels[key]}", file, results))

    for given in paths:
        path = Path(given)
        if not path.exists():
            raise DataError(f"results path not found: {path}")
        if path.is_file():
            results, why = _load(path)
            if results is None:
                raise DataError(f"{path}: {why or 'not a neuromark results file'}")
            add(path.parent.name or str(path), path, results)
            continue
        own = _results_in(path, skipped)
        folders = [(path, own)] if own else [
            (sub, _results_in(sub, skipped)) for sub in sorted(p for p in path.iterdir() if p.is_dir())]
        for folder, found in folders:
            for file, results in found:
                add(folder.name or str(folder), file, results)
            if not found:
                empty.append(folder)
        if not own and not folders:
            empty.append(path)
    if not runs:
        shown = ", ".join(str(p) for p in (empty or [Path(p) for p in paths])[:4])
        raise DataError(f"{shown}: no neuromark results files (*.json written by `neuromark "
                        "run`), neither in the folder nor in its sub-folders"
                        + "".join(f"\n  {line}" for line in skipped[:10]))
    if notes is not None:
        notes += skipped + [f"note: skipped {folder}: no results files" for folder in empty]
    return runs
