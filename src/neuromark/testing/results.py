"""The results contract: what every :class:`~neuromark.results.Results` a task returns must
hold, checked the same way for the built-in benchmarks and for a plugin's.

Two levels, because the suite completes what a task returns (:func:`neuromark.suite.run_configs`
stamps ``provenance`` and ``requested`` when it writes the file):

- :func:`task_results_problems`: what the *task* is responsible for, on the object it
  returned: scores, the benchmark identity, the model identity (where the run scores a
  model), the device the model ran on (algorithm track), the effective config (the
  settings it ran with, not the raw YAML), seeds, artefact paths;
- :func:`written_results_problems`: what a results *file* holds after the suite wrote it:
  all of the above plus ``config.requested`` (the YAML as written), the provenance block
  (time, versions, machine, commit) and ``provenance.run`` (the run context).

Each returns a list of problems (empty: the contract holds); :func:`check_task_results`
and :func:`check_written_results` raise :class:`ContractError` listing them.

How a plugin author uses it in their own test (pytest, or any runner)::

    from neuromark.testing.results import check_task_results

    def test_my_results_keep_the_contract():
        res = my_task.run(plan, ctx)[0]
        check_task_results(res, config=plan.config, settings=plan.settings)

Usually :func:`neuromark.testing.task_check.check_task` calls these for you.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from neuromark.identity import ModelIdentity, id_problem
from neuromark.io_atomic import to_jsonable
from neuromark.results import CUSTOM_BENCHMARK, Results, Score
from neuromark.testing.guard import ContractError, contract_check, raise_problems

__all__ = ["ContractError", "raise_problems"]

#: Scores that measure a model (its size or its work): a result holding one names the model.
MODEL_SCORES = ("footprint", "synaptic_operations", "activation_sparsity", "connection_sparsity",
                "neuron_operations", "parameter_count", "energy_estimate")
#: Config keys that name the model(s) a run evaluates.
MODEL_KEYS = ("model", "models", "agent", "sut")
#: The one text a score's value may be: a figure the run could not measure (no power meter).
NOT_MEASURED = "not measured"
#: Keys :func:`~neuromark.results.collect_provenance` writes into every results file.
PROVENANCE_KEYS = ("created", "python", "packages", "machine", "git_commit")


def _data_of(config: Any) -> Mapping[str, Any] | None:
    """The YAML data of a :class:`~neuromark.config.ConfigFile` (or a mapping), else None."""
    data = getattr(config, "data", config)
    return data if isinstance(data, Mapping) else None


def names_a_model(results: Results, config: Any = None) -> bool:
    """Whether ``results`` score a model: its config names one (:data:`MODEL_KEYS`) or it
    holds a score of a model's size or work (:data:`MODEL_SCORES`)."""
    data = _data_of(config)
    return (data is not None and any(k in data for k in MODEL_KEYS)) or \
        any(name in MODEL_SCORES for name in results.scores)


def _json_problem(value: Any, where: str) -> str | None:
    try:
        json.dumps(to_jsonable(value), allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"{where} cannot be written as JSON: {exc}"
    return None


def _score_problems(name: str, score: Any) -> list[str]:
    if not isinstance(score, Score):
        return [f"scores[{name!r}] is a {type(score).__name__}, not a neuromark.results.Score"]
    problems = []
    value = score.value
    numbers = list(value.values()) if isinstance(value, Mapping) else [value]
    for v in numbers:
        if v is None or isinstance(v, str) and v.startswith(NOT_MEASURED):
            continue  # text only as the report's "not measured" (with the reason in flags)
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "item"):
            problems.append(f"scores[{name!r}].value holds {v!r}; a score is a number (NaN "
                            f"allowed, said in flags), a mapping of numbers, or {NOT_MEASURED!r}")
            break
    if score.higher_is_better is not None and not isinstance(score.higher_is_better, bool):
        problems.append(f"scores[{name!r}].higher_is_better is {score.higher_is_better!r}, "
                        f"not True, False or None")
    if not isinstance(score.unit, str):
        problems.append(f"scores[{name!r}].unit is {score.unit!r}, not a string")
    return problems


def task_results_problems(results: Any, *, config: Any = None, settings: Any = None,
                          track: str = "algorithm", model: bool | None = None) -> list[str]:
    """What is wrong with ``results`` as a task returns it (before the suite writes it).

    Args:
        results: one item of ``task.run(plan, ctx)``.
        config: the :class:`~neuromark.config.ConfigFile` (or its data) the plan came from;
            None: the checks that compare with it are skipped.
        settings: the typed settings the task validated (``plan.settings``, a pydantic
            model); with ``config``, the effective config must not be the raw YAML when the
            settings fill in anything the YAML left out.
        track: the task's track (``"algorithm"``: every result that scores a model
            records the device it ran on under ``provenance.device``; ``"system"``: the
            devices are the SUT's, recorded by the system track).
        model: whether the result scores a model (its identity required); None: decided by
            :func:`names_a_model`.
    """
    if not isinstance(results, Results):
        return [f"a task returns neuromark.results.Results, got a {type(results).__name__}"]
    problems: list[str] = []
    if not isinstance(results.scores, Mapping) or not results.scores:
        problems.append("no scores: a result holds at least one Score")
    else:
        for name, score in results.scores.items():
            if not isinstance(name, str) or not name:
                problems.append(f"score name {name!r} is not a non-empty string")
            problems += _score_problems(str(name), score)
    bench = results.benchmark
    if (why := id_problem(getattr(bench, "id", None))) is not None:
        problems.append(f"benchmark.id: {why}")
    elif bench.id == CUSTOM_BENCHMARK:
        problems.append("benchmark.id is 'custom' (no benchmark identity): take it from the "
                        "config's benchmark: block, IdentitySettings.info()")
    if not isinstance(getattr(bench, "version", None), str) or not bench.version:
        problems.append(f"benchmark.version is {getattr(bench, 'version', None)!r}, not a "
                        f"non-empty string")
    scores_a_model = names_a_model(results, config) if model is None else model
    if scores_a_model:
        if not isinstance(results.model, ModelIdentity):
            problems.append("no model identity (results.model is None) although the result "
                            "scores a model: record model_identity(name, options, checkpoint, "
                            "label), so that results of different models never share a file")
        if track == "algorithm":
            device = results.provenance.get("device") if isinstance(results.provenance, Mapping) \
                else None
            if not isinstance(device, Mapping) or not device.get("used"):
                problems.append("no provenance.device ({'used', 'type', 'name', 'requested'}): "
                                "the device the model ran on is not recorded "
                                "(neuromark.runner.device_provenance, or evaluate(ctx, ...))")
            elif "requested" not in device:
                problems.append("provenance.device has no 'requested': how the device was asked "
                                "for (ctx.device_requested(configured))")
    if not isinstance(results.config, Mapping):
        problems.append(f"config (the effective one) is a {type(results.config).__name__}, "
                        f"not a mapping")
    else:
        if (why := _json_problem(results.config, "the effective config")) is not None:
            problems.append(why)
        data = _data_of(config)
        if data is not None and not results.config:
            problems.append("the effective config is empty: record the settings the task ran "
                            "with (settings.model_dump(mode='json'))")
        dump = getattr(settings, "model_dump", None)
        if data is not None and callable(dump) and results.config:
            filled = to_jsonable(dump(mode="json"))
            if filled != to_jsonable(data) and to_jsonable(results.config) == to_jsonable(data):
                problems.append("the effective config is the raw config as written: record the "
                                "settings the task ran with, defaults filled in "
                                "(settings.model_dump(mode='json')); the suite records the raw "
                                "one as config.requested")
    if not isinstance(results.seeds, Mapping):
        problems.append(f"seeds is a {type(results.seeds).__name__}, not a mapping")
    elif (why := _json_problem(results.seeds, "seeds")) is not None:
        problems.append(why)
    if (why := _json_problem(results.details, "details")) is not None:
        problems.append(why)
    for artefact in results.artefacts:
        if not isinstance(artefact, str) or not artefact:
            problems.append(f"artefact {artefact!r} is not a path string")
    for flag in results.flags:
        if not isinstance(flag, str):
            problems.append(f"flag {flag!r} is not text")
    return problems


def written_results_problems(path: str | Path, *, config: Any = None,
                             run: Mapping[str, Any] | None = None) -> list[str]:
    """What is wrong with the results file at ``path`` as the suite wrote it: it loads
    (:meth:`Results.load`), ``config.requested`` is the config as written (``config``),
    the provenance block is complete, ``provenance.run`` is ``run`` (the context's
    :meth:`~neuromark.context.RunContext.provenance`), and every artefact it names exists
    beside it."""
    path = Path(path)
    problems: list[str] = []
    try:
        loaded = Results.load(path)
    except Exception as exc:  # noqa: BLE001 - any failure to read is the problem reported
        return [f"{path.name}: does not load: {type(exc).__name__}: {exc}"]
    raw = json.loads(path.read_text(encoding="utf-8"))
    data = _data_of(config)
    if data is not None and raw["config"].get("requested") != to_jsonable(data):
        problems.append(f"{path.name}: config.requested is not the config as written")
    provenance = raw.get("provenance") or {}
    missing = [k for k in PROVENANCE_KEYS if k not in provenance]
    if missing:
        problems.append(f"{path.name}: provenance lacks {', '.join(missing)}")
    if run is not None and provenance.get("run") != to_jsonable(run):
        problems.append(f"{path.name}: provenance.run is {provenance.get('run')!r}, not the run "
                        f"context's {dict(run)!r}")
    for file in loaded.artefact_files():
        if not file.is_file():
            problems.append(f"{path.name}: artefact {file} does not exist")
        elif not file.resolve().is_relative_to(path.parent.resolve()):
            problems.append(f"{path.name}: artefact {file} lies outside the run folder")
    return problems


def same_json(a: Any, b: Any) -> bool:
    """Whether two values are equal as a results file writes them (NaN equals NaN, arrays
    compared by their values)."""
    return json.dumps(to_jsonable(a), sort_keys=True) == json.dumps(to_jsonable(b), sort_keys=True)


def round_trip_problems(results: Results, path: str | Path) -> list[str]:
    """What differs between ``results`` (as the suite saved them) and the file read back
    (:meth:`Results.load`): benchmark, model, every score field, details, flags, config,
    requested, seeds and provenance; artefacts by count (their paths are rewritten relative
    to the file)."""
    loaded = Results.load(path)
    problems = []
    pairs: list[tuple[str, Any, Any]] = [
        ("benchmark", results.benchmark.to_json(), loaded.benchmark.to_json()),
        ("model", results.model.to_json() if results.model else None,
         loaded.model.to_json() if loaded.model else None),
        ("details", results.details, loaded.details), ("flags", results.flags, loaded.flags),
        ("config", results.config, loaded.config), ("requested", results.requested, loaded.requested),
        ("seeds", results.seeds, loaded.seeds), ("provenance", results.provenance, loaded.provenance),
        ("score names", sorted(results.scores), sorted(loaded.scores)),
        ("artefact count", len(results.artefacts), len(loaded.artefacts)),
    ]
    for name in set(results.scores) & set(loaded.scores):
        a, b = results.scores[name], loaded.scores[name]
        for attr in ("value", "error", "unit", "higher_is_better", "raw", "ceiling",
                     "ceiling_rule", "ceiling_error", "ceiled_error", "ceiled_value"):
            pairs.append((f"scores[{name!r}].{attr}", getattr(a, attr), getattr(b, attr)))
    for what, a, b in pairs:
        if not same_json(a, b):
            problems.append(f"{Path(path).name}: {what} differs after writing and reading back: "
                            f"{_short(a)} vs {_short(b)}")
    return problems


def _short(value: Any, n: int = 120) -> str:
    text = json.dumps(to_jsonable(value), sort_keys=True)
    return text if len(text) <= n else text[:n] + "..."


@contract_check
def check_task_results(results: Any, **kwargs: Any) -> None:
    """:func:`task_results_problems`, raising :class:`ContractError` when there are any."""
    raise_problems("results", task_results_problems(results, **kwargs))


@contract_check
def check_written_results(path: str | Path, **kwargs: Any) -> None:
    """:func:`written_results_problems`, raising :class:`ContractError` when there are any."""
    raise_problems(str(path), written_results_problems(path, **kwargs))
