"""Model execution rate: how often the model is executed (forward passes per second of the
data's time), a static metric NeuroBench requires of every algorithm-track submission
(NeuroBench docs, ``metrics/static_metrics/model_execution_rate``; Yik et al. 2025, e.g.
250 Hz for 4-ms primate-reaching bins, 20 Hz for 50-ms event-camera frames).

It is attached to every result of every algorithm-track task in one place
(:meth:`neuromark.tasks.base.BenchmarkTask.run` calls :func:`attach`), so a task reports it
without code of its own. The rate comes, first found:

1. from the task itself: a score ``model_execution_rate`` it already set (Mackey-Glass's
   ``execution_rate_hz``), kept as it is (source ``task``);
2. from the config: ``benchmark.execution_rate_hz`` (source ``config``);
3. from the data's time step: a settings model of the config (the config's own, or one of
   its fields, e.g. ``data``) that declares ``time_step_s() -> (seconds, derivation)``,
   one model step per that time (source ``data``);
4. else it is undefined (source ``undefined``): no score, and the result says why.

``details.model_execution_rate`` holds ``{"value" (Hz or None), "unit": "Hz", "source",
"derivation"}`` in every case; the score ``model_execution_rate`` (unit Hz) exists when
the rate is defined.
"""

from __future__ import annotations

from typing import Any

from neuromark.results import Results, Score

NAME = "model_execution_rate"


def declared_time_step(settings: Any) -> tuple[float, str] | None:
    """``(seconds, derivation)`` from the first of ``settings`` and its fields that declares
    ``time_step_s()`` and returns one, else None."""
    if settings is None:
        return None
    candidates = [settings, *(getattr(settings, name) for name in getattr(type(settings),
                                                                          "model_fields", {}))]
    for item in candidates:
        declare = getattr(item, "time_step_s", None)
        if callable(declare):
            found = declare()
            if found is not None:
                step, how = found
                if not step > 0:
                    raise ValueError(f"{type(item).__name__}.time_step_s() gave {step} s: "
                                     f"a time step must be > 0")
                return float(step), how
    return None


def execution_rate(settings: Any) -> dict[str, Any]:
    """The rate (see the module) of a task's validated settings (without a task's own score)."""
    benchmark = getattr(settings, "benchmark", None)
    stated = getattr(benchmark, "execution_rate_hz", None)
    if stated is not None:
        return {"value": float(stated), "unit": "Hz", "source": "config",
                "derivation": "benchmark.execution_rate_hz, as the config states it"}
    step = declared_time_step(settings)
    if step is not None:
        seconds, how = step
        return {"value": 1.0 / seconds, "unit": "Hz", "source": "data",
                "derivation": f"one model step per {seconds:g} s of data ({how}): 1 / {seconds:g} s"}
    return {"value": None, "unit": "Hz", "source": "undefined",
            "derivation": "the data declare no time step and the config states no rate "
                          "(set benchmark.execution_rate_hz)"}


def attach(results: Results, settings: Any) -> Results:
    """Add the execution rate to ``results`` (in place; returned): a task's own score is
    kept (source ``task``), else the rate of :func:`execution_rate` is added."""
    own = results.scores.get(NAME)
    if own is not None:
        rate = {"value": own.value, "unit": own.unit or "Hz", "source": "task",
                "derivation": "reported by the task (its config's setting)"}
    else:
        rate = execution_rate(settings)
        if rate["value"] is not None:
            results.scores[NAME] = Score(rate["value"], None, "Hz", None)
    results.details[NAME] = rate
    return results
