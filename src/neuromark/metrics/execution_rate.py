"""Model execution rate: how often the model is executed (forward passes per second of the
data's time), a static metric NeuroBench requires of every algorithm-track submission
(NeuroBench docs, ``metrics/static_metrics/model_execution_rate``; Yik et al. 2025, e.g.
250 Hz for 4-ms primate-reaching bins, 20 Hz for 50-ms event-camera frames).

It is attached to every result of every algorithm-track task in one place
(:meth:`neuromark.tasks.base.TaskBase.run` calls :func:`attach`), so a task reports it
without code of its own. The rate comes, first found:

1. from the task itself: a score ``model_execution_rate`` it already set (Mackey-Glass's
   ``execution_rate_hz``), kept as it is (source ``task``);
2. from the config: ``benchmark.execution_rate_hz`` (source ``config``);
3. from the data's time step: a settings model of the config (the config's own, or one of
   its fields, e.g. ``data``) that declares ``time_step_s() -> (seconds, derivation)``,
   one model step per that time (source ``data``);
4. else it is undefined (source ``undefined``): no score, and the result says why.

A task whose rate depends on more than its settings (Mackey-Glass: the dt of each tau's
series; classification: the data's bin and whether the model stepped once per bin) writes
``details.model_execution_rate`` itself (:func:`from_step`, :func:`per_step_rate`); it is
kept as written.

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


def from_step(seconds: float, how: str) -> dict[str, Any]:
    """The rate of one model step per ``seconds`` of data (source ``data``); ``how``: where
    the step comes from."""
    if not seconds > 0:
        raise ValueError(f"a time step must be > 0 s, got {seconds} ({how})")
    return {"value": 1.0 / seconds, "unit": "Hz", "source": "data",
            "derivation": f"one model step per {seconds:g} s of data ({how}): 1 / {seconds:g} s"}


def undefined(why: str) -> dict[str, Any]:
    """No rate (source ``undefined``), with the reason."""
    return {"value": None, "unit": "Hz", "source": "undefined", "derivation": why}


def stated_rate(benchmark: Any) -> dict[str, Any] | None:
    """``benchmark.execution_rate_hz`` as the config states it (source ``config``), or None."""
    stated = getattr(benchmark, "execution_rate_hz", None)
    if stated is None:
        return None
    return {"value": float(stated), "unit": "Hz", "source": "config",
            "derivation": "benchmark.execution_rate_hz, as the config states it"}


#: Decodings of a (B, T, K) output: the model gave one output per input time step.
PER_STEP_RULES = ("spike_count", "max_over_time", "mean_over_time")


def per_step_rate(data: Any, rule: str, benchmark: Any = None) -> dict[str, Any]:
    """The rate of a classification run: ``benchmark.execution_rate_hz`` if stated; else one
    model step per time step the data declare (``data.time_step_s()``: a spike file's bin
    ``dt_us``, a keyword feature's hop) when the output was decoded over time (``rule`` in
    :data:`PER_STEP_RULES`: one output per input step, so the model ran once per bin); else
    undefined, saying which is missing. It is the rate at which the model would run on the
    stream in real time, not a rate of decisions (one per clip)."""
    stated = stated_rate(benchmark)
    if stated is not None:
        return stated
    if rule not in PER_STEP_RULES:
        return undefined(f"the model gave one output per clip (decoded by {rule}), not one "
                         f"per time step: it runs once per clip, which has no rate in the "
                         f"data's time (set benchmark.execution_rate_hz)")
    step = declared_time_step(data)
    if step is None:
        return undefined("the data declare no time step (bin width or frame hop) "
                         "(set benchmark.execution_rate_hz)")
    rate = from_step(*step)
    rate["derivation"] += (f"; the output had one value per step (decoded by {rule}), so "
                           f"the model ran once per step")
    return rate


def execution_rate(settings: Any) -> dict[str, Any]:
    """The rate (see the module) of a task's validated settings (without a task's own score)."""
    stated = stated_rate(getattr(settings, "benchmark", None))
    if stated is not None:
        return stated
    step = declared_time_step(settings)
    if step is not None:
        return from_step(*step)
    return undefined("the data declare no time step and the config states no rate "
                     "(set benchmark.execution_rate_hz)")


def attach(results: Results, settings: Any) -> Results:
    """Add the execution rate to ``results`` (in place; returned): a rate the task wrote
    into ``details`` is kept (its score added when defined), a task's own score is kept
    (source ``task``), else the rate of :func:`execution_rate` is added."""
    own = results.scores.get(NAME)
    written = results.details.get(NAME)
    if isinstance(written, dict) and "value" in written:
        if written["value"] is not None and own is None:
            results.scores[NAME] = Score(float(written["value"]), None, "Hz", None)
        return results
    if own is not None:
        rate = {"value": own.value, "unit": own.unit or "Hz", "source": "task",
                "derivation": "reported by the task (its config's setting)"}
    else:
        rate = execution_rate(settings)
        if rate["value"] is not None:
            results.scores[NAME] = Score(rate["value"], None, "Hz", None)
    results.details[NAME] = rate
    return results
