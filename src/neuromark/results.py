"""Scores, the results bundle, provenance, and atomic JSON writing.

Results file schema (``schema_version`` "1.3"; files of "1.0" to "1.2", neuromark's own of
before 0.2.0, still load until 2027-12-06: :mod:`neuromark.results_versions`), one JSON
object:

- ``schema_version``: "1.3".
- ``benchmark``: ``{"id": "<task/data/metric set>", "version", "parent", "citation"}``: the
  same for every model run on it (:class:`~neuromark.identity.BenchmarkIdentity`).
- ``model`` (new in 1.2): ``{"name", "options_digest", "checkpoint_sha256", "label"}``
  and, where the model was read in a way that departs from the plain path, ``notes``
  (:class:`~neuromark.identity.ModelIdentity`), or null where a run names no model. Files
  of 1.0/1.1 have none: :meth:`Results.load` derives it from ``details.model`` or
  ``config.model`` (name and label; options digest where options were recorded; never a
  checkpoint digest), else leaves it None
  (:func:`~neuromark.identity.derive_model_identity`).
- ``scores``: ``{name: {"value", "error", "unit", "higher_is_better", "raw", "ceiling",
  "ceiled", "ceiling_rule", "ceiling_error", "ceiled_error", "ceiled_unclipped"}}`` (the
  last four new in 1.1). ``value`` is a number or a dict of numbers (``synaptic_operations``);
  ``error`` is the standard error over samples where the metric is a mean, else null.
  ``ceiled`` follows ``ceiling_rule`` ("ratio": raw / ceiling; "explained_variance":
  raw² / ceiling, Brain-Score's corrected rule of 2026 (brain-score/vision PR #2169);
  "explained_variance_squared_ceiling": (raw / ceiling)², the rule before it; sign kept)
  clipped to [0, 1] (brain-score/vision issue #2112), the unclipped value beside it, and
  ``ceiling_formula`` states the rule as a formula. A score whose rule is
  "explained_variance" without ``ceiling_formula`` was written under the old rule and
  loads as "explained_variance_squared_ceiling". ``raw``
  may hold arrays: an array of more than :data:`INLINE_RAW` numbers is written to the
  sidecar ``<results>.raw.npz`` (named by ``raw_sidecar``) and summarised in the JSON as
  ``{"npz": key, "shape", "mean", "median", "min", "max"}``; :meth:`Results.load` reads it
  back and checks it against ``raw_sidecar_sha256``, the sidecar's digest (files written
  before the digest existed load unchecked). The sidecar follows the results file's rules
  (see :meth:`Results.save`): written atomically, never replacing a file its results file
  does not name unless told to, removed when the new results have no raw arrays.
- ``details``: task-specific extras (per-layer figures, per-instance values).
- ``flags`` (new in 1.3): warnings a reader must see beside the figures (a diverged
  instance, a tied decoding, an INVALID LoadGen run), as text; before 1.3 they were
  ``details.flags``, which :meth:`Results.load` moves here.
- ``artefacts`` (new in 1.3): files the run wrote beside its results (plots, logs), as
  paths relative to the run folder; before 1.3 ``details.plots``.
- ``config`` (1.3): ``{"requested": the config as written (the YAML's data), "effective":
  the settings the task ran with (defaults filled in, paths resolved)}``, as LoadGen keeps
  requested and effective settings apart; before 1.3 one mapping, loaded as both.
- ``seeds``: every seed used.
- ``provenance``: ``created`` (UTC ISO time), ``python``, ``packages`` (versions),
  ``machine`` (platform, CPU, cores, ``gpus`` present), ``git_commit``; runs of the
  algorithm-track loop add ``device`` (the device used: ``used``, ``type``, ``name``,
  ``requested``).

``dict(results)`` maps score names to plain JSON values, with the key names of the
``neurobench`` package (``footprint``, ``synaptic_operations``, ...).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.identity import (
    BenchmarkIdentity,
    ModelIdentity,
    derive_model_identity,
)
from neuromark.io_atomic import (
    atomic_path,
    sha256_file,
    to_jsonable,
    write_json_atomic,
)
from neuromark.provenance import (
    collect_provenance,
)
from neuromark.results_versions import CURRENT_SCHEMA, field_problems, unsupported_schema

#: The schema version :meth:`Results.save` writes.
SCHEMA_VERSION = CURRENT_SCHEMA

#: How a score is normalised by its ceiling.
CEILING_RULES = ("ratio", "explained_variance", "explained_variance_squared_ceiling")
#: Each rule as a formula of r = raw and c = ceiling (written beside the rule).
CEILING_FORMULAS = {"ratio": "r / c", "explained_variance": "sign(r) r^2 / c",
                    "explained_variance_squared_ceiling": "sign(r) (r / c)^2"}
#: Arrays in ``Score.raw`` up to this many numbers stay inline in the JSON.
INLINE_RAW = 64

#: Which rule each footprint score follows, for the tables that show them (leaderboard,
#: compare): ours and NeuroBench's are never set side by side unlabelled (docs/neurobench_v1.md).
FOOTPRINT_RULE_LABELS = {"footprint": "footprint, neuromark rule",
                         "footprint_neurobench": "footprint, NeuroBench rule"}


@dataclass
class Score:
    """One benchmark score.

    Attributes:
        value: the figure (a number, or a dict of numbers such as synaptic operations).
        error: standard error of ``value`` over samples when it is a mean, else None.
        unit: e.g. "bytes", "%", "ops/sample", "" for ratios.
        higher_is_better: direction of improvement.
        raw: the unnormalised figure when a ceiling applies, else equal to ``value``; may
            hold arrays (per split, per neuroid), kept compact in the file (see the module).
        ceiling: optional ceiling; ``ceiling_error`` its standard error.
        ceiling_rule: "ratio" (``raw / ceiling``, Brain-Score's ``ceil_score``),
            "explained_variance" (``raw² / ceiling`` with raw's sign, for a correlation raw
            and a Spearman-Brown ceiling, which is already a variance: Brain-Score's neural
            benchmarks since brain-score/vision PR #2169) or
            "explained_variance_squared_ceiling" (``(raw / ceiling)²``, their rule before
            it, kept to reproduce pre-2026 Brain-Score figures).
        ceiled_error: the ceiled value's error, propagated by whoever made the score
            (delta method or bootstrap), never copied from ``error``; None: not estimated.
        ceiled_value: the ceiled figure when it is not computed from ``raw`` (e.g. a
            median over neuroids of per-neuroid ceiled values); None: from ``raw``.
    """

    value: Any
    error: Any = None
    unit: str = ""
    higher_is_better: bool | None = None
    raw: Any = None
    ceiling: float | None = None
    ceiling_rule: str = "ratio"
    ceiling_error: float | None = None
    ceiled_error: float | None = None
    ceiled_value: float | None = None

    def __post_init__(self) -> None:
        if self.raw is None:
            self.raw = self.value
        if self.ceiling_rule not in CEILING_RULES:
            raise ValueError(f"ceiling_rule={self.ceiling_rule!r}: one of {', '.join(CEILING_RULES)}")

    @property
    def ceiled_unclipped(self) -> float | None:
        """The ceiled figure before clipping (see ``ceiling_rule``), or None without a
        ceiling or a numeric raw value."""
        if self.ceiled_value is not None:
            return float(self.ceiled_value)
        if self.ceiling is None or isinstance(self.raw, bool) or not isinstance(self.raw, (int, float)):
            return None
        raw, ceiling = float(self.raw), float(self.ceiling)
        if self.ceiling_rule == "ratio":
            return raw / ceiling
        if self.ceiling_rule == "explained_variance":
            return math.copysign(raw * raw, raw) / ceiling
        return math.copysign((raw / ceiling) ** 2, raw / ceiling)

    @property
    def ceiled(self) -> float | None:
        """:attr:`ceiled_unclipped` clipped to [0, 1]."""
        value = self.ceiled_unclipped
        return None if value is None else min(1.0, max(0.0, value))

    def to_json(self, sidecar: dict[str, Any] | None = None, key: str = "") -> dict[str, Any]:
        """The score as JSON; with ``sidecar``, large arrays of ``raw`` go there (under
        ``key``/...) and are summarised inline."""
        out = {
            "value": to_jsonable(self.value),
            "error": to_jsonable(self.error),
            "unit": self.unit,
            "higher_is_better": self.higher_is_better,
            "raw": _compact(self.raw, sidecar, key) if sidecar is not None else to_jsonable(self.raw),
            "ceiling": self.ceiling,
            "ceiled": self.ceiled,
        }
        if self.ceiling is not None:
            out.update({"ceiling_rule": self.ceiling_rule,
                        "ceiling_formula": CEILING_FORMULAS[self.ceiling_rule],
                        "ceiling_error": self.ceiling_error,
                        "ceiled_error": self.ceiled_error, "ceiled_unclipped": self.ceiled_unclipped})
            if self.ceiled_value is not None:
                out["ceiled_value"] = self.ceiled_value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], arrays: Mapping[str, Any] | None = None) -> Score:
        raw = _expand(data.get("raw"), arrays) if arrays is not None else data.get("raw")
        rule = data.get("ceiling_rule") or "ratio"
        if rule == "explained_variance" and "ceiling_formula" not in data:
            rule = "explained_variance_squared_ceiling"  # written before PR #2169's rule
        return cls(value=data["value"], error=data.get("error"), unit=data.get("unit", ""),
                   higher_is_better=data.get("higher_is_better"), raw=raw,
                   ceiling=data.get("ceiling"), ceiling_rule=rule,
                   ceiling_error=data.get("ceiling_error"), ceiled_error=data.get("ceiled_error"),
                   ceiled_value=data.get("ceiled_value"))


def format_value(score: Score) -> str:
    """``value ± error`` with 4 significant digits; dict values as ``k=v`` pairs (the
    text of a score in the terminal summary, ``report.md`` and a system submission)."""
    def fmt(x: object) -> str:
        return f"{x:.4g}" if isinstance(x, float) else str(x)

    value = score.value
    if isinstance(value, dict):  # e.g. synaptic_operations: the unit once, after the pairs
        return f"{', '.join(f'{k}={fmt(v)}' for k, v in value.items())} {score.unit}".rstrip()
    text = fmt(value)
    if isinstance(value, str):  # e.g. "not measured": a unit would read as a number
        return text
    if isinstance(score.error, (int, float)):
        text += f" ± {fmt(float(score.error))}"
    return f"{text} {score.unit}".rstrip()


def _compact(raw: Any, sidecar: dict[str, Any], key: str) -> Any:
    """``raw`` as JSON with arrays of more than :data:`INLINE_RAW` numbers moved into
    ``sidecar`` (keyed ``key`` or ``key/sub``) and summarised."""
    if isinstance(raw, Mapping):
        return {str(k): _compact(v, sidecar, f"{key}/{k}") for k, v in raw.items()}
    if hasattr(raw, "shape") and hasattr(raw, "tolist") and getattr(raw, "size", 0) > INLINE_RAW:
        import numpy as np

        arr = np.asarray(raw.detach().cpu() if hasattr(raw, "detach") else raw)
        sidecar[key] = arr
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        stats = ({"mean": float(finite.mean()), "median": float(np.median(finite)),
                  "min": float(finite.min()), "max": float(finite.max())} if finite.size else {})
        return {"npz": key, "shape": list(arr.shape), **stats}
    return to_jsonable(raw)


def _expand(raw: Any, arrays: Mapping[str, Any]) -> Any:
    """Inverse of :func:`_compact`: summaries replaced by their arrays from the sidecar."""
    if isinstance(raw, Mapping):
        if isinstance(raw.get("npz"), str) and "shape" in raw:
            if raw["npz"] not in arrays:
                raise DataError(f"raw array {raw['npz']!r} is missing from the sidecar .npz")
            return arrays[raw["npz"]]
        return {k: _expand(v, arrays) for k, v in raw.items()}
    return raw


#: The benchmark id of a Python-API run given no benchmark identity.
CUSTOM_BENCHMARK = "custom"


class CustomBenchmarkWarning(UserWarning):
    """Results of the identity-less benchmark ``custom`` are being saved."""


@dataclass
class Results(Mapping[str, Any]):
    """Scores of one benchmark run, with the benchmark's identity, the model's identity
    (``model``: None where a run names no model), config, seeds and provenance.

    ``config`` is the effective config (what the task ran with); ``requested`` the config as
    written, stamped by the suite. ``flags`` are warnings to show beside the figures;
    ``artefacts`` files written beside the results (paths relative to the run folder). A
    ``details["flags"]`` or ``details["plots"]`` list given at construction moves there.

    Behaves as a read-only mapping from score name to its plain JSON value.
    """

    scores: dict[str, Score]
    benchmark: BenchmarkIdentity = field(default_factory=lambda: BenchmarkIdentity("custom"))
    config: dict[str, Any] = field(default_factory=dict)
    seeds: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    model: ModelIdentity | None = None
    flags: list[str] = field(default_factory=list)
    artefacts: list[str] = field(default_factory=list)
    requested: dict[str, Any] = field(default_factory=dict)
    #: The results file this was read from (:meth:`load`), which relative artefact paths
    #: are resolved against; None for results made in this process. Not written.
    origin: Path | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for key, target in (("flags", self.flags), ("plots", self.artefacts)):
            moved = self.details.pop(key, None) if isinstance(self.details, dict) else None
            if isinstance(moved, list):
                target.extend(str(x) for x in moved)
            elif moved is not None:
                self.details[key] = moved  # not a list: a task's own detail, left as it is

    def flag(self, text: str) -> None:
        """Add a warning (once)."""
        if text not in self.flags:
            self.flags.append(text)

    def artefact_files(self) -> list[Path]:
        """The artefacts as paths: relative ones resolved against the folder of the file
        they were read from (:attr:`origin`; the working folder for results made here)."""
        base = self.origin.absolute().parent if self.origin is not None else None
        return [Path(a) if Path(a).is_absolute() or base is None else base / a
                for a in self.artefacts]

    def __getitem__(self, key: str) -> Any:
        return to_jsonable(self.scores[key].value)

    def __iter__(self) -> Iterator[str]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    def to_json(self, sidecar: dict[str, Any] | None = None) -> dict[str, Any]:
        """The results as JSON; with ``sidecar`` (a dict to fill), large raw arrays go
        there instead of inline (see :meth:`save`)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "benchmark": self.benchmark.to_json(),
            "model": self.model.to_json() if self.model is not None else None,
            "scores": {k: s.to_json(sidecar, k) for k, s in self.scores.items()},
            "details": to_jsonable(self.details),
            "flags": [str(f) for f in self.flags],
            "artefacts": [str(a) for a in self.artefacts],
            "config": {"requested": to_jsonable(self.requested),
                       "effective": to_jsonable(self.config)},
            "seeds": to_jsonable(self.seeds),
            "provenance": self.provenance or collect_provenance(),
        }

    def save(self, path: str | os.PathLike[str], *, replace: bool = False) -> Path:
        """Write the results as JSON atomically (temp file + rename); raw arrays of more
        than :data:`INLINE_RAW` numbers go to the sidecar ``<stem>.raw.npz`` beside it, its
        sha256 recorded in the JSON. Returns the JSON's path.

        The pair is written so that a failed write leaves both old files as they were: the
        sidecar goes to a temp file (fsynced), the JSON is written, then the sidecar is
        renamed into place; a crash between the two renames is caught by the digest at
        :meth:`load`. An existing ``<stem>.raw.npz`` is replaced (or, when the new results
        have no raw arrays, removed) only when the results file being replaced names it,
        or with ``replace`` (``--overwrite``); otherwise :class:`DataError` and nothing is
        written.

        Results of the benchmark ``custom`` (a :class:`~neuromark.runner.Benchmark` given no
        ``info``) are saved with a :class:`CustomBenchmarkWarning`: they have no benchmark
        identity, so they join no other model's leaderboard table."""
        if self.benchmark.id == CUSTOM_BENCHMARK:
            warnings.warn(
                f"saving {Path(path).name}: results of benchmark {CUSTOM_BENCHMARK!r} (no "
                "benchmark identity) join no shipped baseline's leaderboard table; run the "
                "model with Benchmark.from_config(CONFIG, model=net, label=...) to take a "
                "config's benchmark, or give Benchmark(..., info=BenchmarkIdentity(id, version))",
                CustomBenchmarkWarning, stacklevel=2)
        sidecar: dict[str, Any] = {}
        data = self.to_json(sidecar)
        target = Path(path)
        data["artefacts"] = [portable_artefact(a, target) for a in data["artefacts"]]
        npz = target.with_suffix(".raw.npz")
        ours = _named_sidecar(target) == npz.name
        if sidecar and npz.exists() and not (ours or replace):
            raise DataError(f"{npz}: exists and is not the raw sidecar of {target}; neuromark "
                            f"never replaces a file it did not write: move it away or pass "
                            f"--overwrite")
        if not sidecar:
            written = write_json_atomic(target, data)
            if ours and npz.is_file():
                npz.unlink()  # the old results' arrays, named by the file just replaced
            return written
        import numpy as np

        with atomic_path(npz) as tmp:
            with open(tmp, "wb") as handle:
                np.savez_compressed(handle, **sidecar)
                handle.flush()
                os.fsync(handle.fileno())
            data = {**data, "raw_sidecar": npz.name, "raw_sidecar_sha256": sha256_file(tmp)}
            written = write_json_atomic(target, data)
        return written

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read a results file written by :meth:`save` (schema 1.0 to 1.3; 1.0 to 1.2 until
        :data:`~neuromark.results_versions.OLD_SCHEMAS_READ_UNTIL`), with its
        sidecar; files before 1.2 get their model block derived, files before 1.3 their
        flags, artefacts and config moved to the 1.3 fields (see the module)."""
        try:  # JSON is UTF-8 (RFC 8259), whatever the locale
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: not a UTF-8 JSON file (byte offset {exc.start})") from None
        if not isinstance(data, dict):
            raise DataError(f"{path}: holds a JSON {type(data).__name__}, not a results object")
        if (why := unsupported_schema(data)) is not None:
            raise DataError(f"{path}: {why}")
        problems = field_problems(data)
        if problems:
            shown = "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)"
                                               if len(problems) > 5 else "")
            raise DataError(f"{path}: not a valid results file: {shown}")
        arrays = None
        if data.get("raw_sidecar"):
            import numpy as np

            npz = Path(path).parent / Path(data["raw_sidecar"]).name
            if not npz.is_file():
                raise DataError(f"{path}: its raw arrays' sidecar {npz} is missing")
            want = data.get("raw_sidecar_sha256")
            if want is not None and sha256_file(npz) != want:
                raise DataError(f"{npz}: its sha256 is not the one {path} records "
                                f"({str(want)[:12]}...): the sidecar was changed or belongs "
                                f"to another run")
            with np.load(npz) as saved:
                arrays = {k: saved[k] for k in saved.files}
        bench = data["benchmark"]
        model = (derive_model_identity(data) if data["schema_version"] in ("1.0", "1.1")
                 else None if data.get("model") is None
                 else ModelIdentity.from_json(data["model"], str(path)))
        config = data.get("config", {})
        split = data["schema_version"] not in ("1.0", "1.1", "1.2") and isinstance(config, dict) \
            and "effective" in config
        results = cls(
            scores={k: Score.from_json(v, arrays) for k, v in data["scores"].items()},
            benchmark=BenchmarkIdentity(bench["id"], bench.get("version", "1.0"),
                                    bench.get("parent"), bench.get("citation", "")),
            config=config.get("effective", {}) if split else config,
            requested=config.get("requested", {}) if split else config,
            seeds=data.get("seeds", {}),
            details=data.get("details", {}), provenance=data.get("provenance", {}),
            model=model, flags=list(data.get("flags", [])),
            artefacts=[a for a in (located_artefact(a, Path(path)) for a in
                                   data.get("artefacts", [])) if a is not None],
            origin=Path(path),
        )
        for given in data.get("artefacts", []):
            if located_artefact(given, Path(path)) is None:
                results.flag(f"artefact {given}: not in this run's folder (written by this run "
                             f"before its folder was moved?); not shown")
        return results


def portable_artefact(given: str, results_file: Path) -> str:
    """An artefact path as a results file stores it: relative to the results file's folder
    (POSIX separators) when it lies inside it, so that the run folder can be moved; a path
    outside it is kept as given."""
    path = Path(given)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(results_file.parent.resolve()).as_posix()
    except ValueError:
        return given


def located_artefact(given: str, results_file: Path) -> str | None:
    """A stored artefact path read back, relative to ``results_file``'s folder: a relative
    one as it is; an absolute one (files before paths were stored relative) inside that
    folder made relative, else found by its trailing components under the folder (the run
    folder was moved: ``/old/run/entry/latency.png`` -> ``entry/latency.png``); None when no
    such file lies in the folder, or a relative path climbs out of it (never another run's
    file, wherever it is)."""
    path = Path(given)
    base = results_file.parent
    if not path.is_absolute():  # one that climbs out of the folder is another run's file
        inside_base = (base / path).resolve().is_relative_to(base.resolve())
        return path.as_posix() if inside_base else None
    inside = portable_artefact(given, results_file)
    if not Path(inside).is_absolute():
        return inside
    parts = path.parts[1:]
    for start in range(len(parts)):
        candidate = Path(*parts[start:])
        if (base / candidate).is_file():
            return candidate.as_posix()
    return None


def effective_config(data: Mapping[str, Any]) -> dict[str, Any]:
    """The effective config of a results file's JSON ``data`` (schema 1.3:
    ``config.effective``; before, or without that key: ``config`` itself)."""
    config = data.get("config")
    if not isinstance(config, Mapping):
        return {}
    split = data.get("schema_version") not in ("1.0", "1.1", "1.2") and isinstance(
        config.get("effective"), Mapping)
    return dict(config["effective"]) if split else dict(config)


def _named_sidecar(path: Path) -> str | None:
    """The ``raw_sidecar`` named by the results file at ``path``, or None (no file, not
    JSON, no sidecar)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    name = data.get("raw_sidecar") if isinstance(data, dict) else None
    return Path(name).name if isinstance(name, str) else None
