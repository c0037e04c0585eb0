"""SUT ``esn``: the Mackey-Glass ESN forecast step.

One sample = one time step: pre-processing turns the observed value f(t) into the model's
input tensor (standardised with the training mean/std, shape (1, 1)); inference runs one
reservoir update and the linear readout
(:class:`~neuromark.benchmarks.mackey_glass.forecasters.EchoStateNetwork`,
teacher forcing) and returns the prediction of f(t+dt) as float64. The readout is fitted in
closed form on the first half of the series before the test (untimed).

The ESN is stateful and LoadGen issues samples in a seeded random order, so its outputs
are not a forecast of the series; the *latency* of a step does not depend on the order. The
SUT says so (``sut.stateful``), and MLPerf's TEST01 is then not applicable. With
``context: K > 0`` each query is self-contained instead: sample ``i`` carries its warm-up
window (the K values before f(t) and f(t)), and inference resets the reservoir and runs the
K + 1 steps, so responses no longer depend on the query order (TEST01 applies); a step then
costs K + 1 reservoir updates.
The accuracy pass scores the responses with sMAPE (``BuiltSUT.metric``) against f(t+dt)
(``BuiltSUT.labels``); ``BuiltSUT.reference`` is the float ESN stepped through the test
series in order from its fitted state, the forecast whose sMAPE the algorithm track reports.
A kept reservoir under LoadGen's shuffled order misses it by far; ``context: 60`` reaches it
(``bench/esn_accuracy_context.py``).
Data: the shipped Mackey-Glass series (``neuromark.benchmarks.mackey_glass.series``) or, with
``data: synthetic``, a two-sine series that needs no data files.

Config::

    sut: {name: esn, options: {data: mackey_glass, tau: 17, samples: 500, threads: 1}}
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, Field

from neuromark.benchmarks.mackey_glass.forecasters import EchoStateNetwork, ESNParams
from neuromark.benchmarks.mackey_glass.series import load_series
from neuromark.config import check_memory
from neuromark.errors import ConfigError
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT


def synthetic_series(n: int) -> np.ndarray:
    """``sin(0.1 t) + 0.5 sin(0.031 t)`` for t = 0..n-1 (float64)."""
    t = np.arange(n, dtype=np.float64)
    return np.sin(0.1 * t) + 0.5 * np.sin(0.031 * t)


def build_esn_pipeline(*, data: str, tau: int, samples: int, seed: int, threads: int,
                       reservoir_size: int | None = None, context: int = 0
                       ) -> tuple[InMemoryLibrary, StagedSUT, dict[str, Any]]:
    """``(library, sut, info)`` for the ESN forecast step; with ``context=0`` the SUT's
    ``workload`` attribute gives the model and steps whose operations are counted."""
    import torch

    torch.set_num_threads(threads)
    if data == "mackey_glass":
        series = load_series(tau)
    else:
        series = synthetic_series(max(2 * samples + 2, 2000))
    half = len(series) // 2
    train = series[:half]
    test = series[half:half + samples]
    targets = series[half + 1:half + 1 + len(test)]  # sample i forecasts f(t_i + dt)
    test = test[:len(targets)]
    mean, std = float(train.mean()), float(train.std()) or 1.0
    params = ESNParams(reservoir_size=reservoir_size) if reservoir_size else ESNParams()
    model = EchoStateNetwork(params, seed=seed)
    x = torch.as_tensor((train - mean) / std).reshape(-1, 1)
    model.fit(x[:-1], x[1:])
    model.forecast = False
    fitted = copy.deepcopy(model)  # the float reference, in its state after the fit

    if context > half:
        raise ConfigError(f"sut.options.context: {context} steps is longer than the training half "
                          f"of the series ({half} points)")
    if context:
        def fetch(i: int) -> np.ndarray:  # f(t - K) ... f(t): the sample carries its warm-up
            return series[half + i - context:half + i + 1].copy()

        def preprocess(window: np.ndarray) -> Any:
            return torch.as_tensor((window - mean) / std, dtype=torch.float64).reshape(-1, 1)

        def infer(inputs: Any) -> Any:
            with torch.inference_mode():
                model.clear_state()
                return model(inputs)[-1] * std + mean

        stateful = None
    else:
        def fetch(i: int) -> float:
            return float(test[i])

        def preprocess(value: float) -> Any:
            return torch.tensor([[(value - mean) / std]], dtype=torch.float64)

        def infer(inputs: Any) -> Any:
            with torch.inference_mode():
                return model(inputs)[0] * std + mean

        stateful = ("the ESN keeps its reservoir state between queries, so a response depends on "
                    "the samples issued before it (set sut.options.context for per-query resets)")
    def reference(indices: Sequence[int]) -> list[np.ndarray]:
        """The float ESN's one-step forecasts of the samples, untimed: a fresh copy of the
        fitted model stepped through the test series in index order (teacher forcing, the
        forecast the algorithm track scores), whatever order LoadGen issued them in and
        whatever ``context`` the SUT uses."""
        ref = copy.deepcopy(fitted)
        steps = torch.as_tensor((test - mean) / std, dtype=torch.float64).reshape(-1, 1)
        with torch.inference_mode():
            ref(x[-1:])  # the fit stopped before the last training value: step it first
            return [np.asarray(ref(steps[i:i + 1])[0] * std + mean, dtype="<f8").reshape(-1)
                    for i in indices]

    library = InMemoryLibrary(f"esn-{data}", fetch, len(test))
    sut = StagedSUT("esn-forecast-step", library, preprocess, infer, response_dtype="<f8",
                    stateful=stateful)
    info = {"data": data, "tau": tau if data == "mackey_glass" else None, "threads": threads,
            "reservoir_size": params.reservoir_size, "train_points": half, "test_points": len(test),
            "weights": "readout fitted by ridge regression on the first half of the series",
            "context": context, "state": (f"reset per query; each sample carries its {context}-step "
                                          "warm-up window") if context else "kept between queries",
            "accuracy_note": "one-step forecast: each query predicts f(t+dt) from the true f(t) "
                             "(teacher forcing), not the algorithm track's free-running sMAPE"}
    sut.targets = np.ascontiguousarray(targets, dtype=np.float64)
    sut.reference = reference
    if not context:
        def workload() -> tuple[Any, Any]:
            """A copy of the model over the test series, one step per sample (an inference
            is one step when the state is kept between queries)."""
            steps = torch.as_tensor((test - mean) / std, dtype=torch.float64).reshape(-1, 1)
            return copy.deepcopy(model), [(steps, torch.zeros(len(steps)))]

        sut.workload = workload
    return library, sut, info


def _reservoir_fits(size: int) -> int:
    check_memory(f"reservoir_size {size}", 5 * 8 * size ** 2)  # ~5 (size, size) float64 arrays
    return size


def _series_fits(samples: int) -> int:
    check_memory(f"samples {samples}", 4 * 8 * (2 * samples + 2))  # the series and its splits
    return samples


#: Option types checked against memory at validation (the signature is the schema).
ReservoirSize = Annotated[int, Field(ge=1), AfterValidator(_reservoir_fits)]
Samples = Annotated[int, Field(ge=1), AfterValidator(_series_fits)]


def esn(*, data: Literal["synthetic", "mackey_glass"] = "synthetic", tau: Annotated[int, Field(ge=1)] = 17,
        samples: Samples = 500,
        reservoir_size: ReservoirSize | None = None,
        threads: Annotated[int, Field(ge=1)] = 1, context: Annotated[int, Field(ge=0)] = 0,
        seed: int = 0) -> BuiltSUT:
    """The ``esn`` entry of :data:`neuromark.registry.suts`.

    Args:
        data: "synthetic" (two sines) or "mackey_glass" (the shipped series ``tau``).
        tau: Mackey-Glass delay of the shipped series.
        samples: test time steps in the library.
        reservoir_size: the ESN's reservoir (default: the baseline's).
        threads: ``torch.set_num_threads`` during the run (restored by ``close``).
        context: 0 keeps the reservoir state between queries (stateful); K > 0 resets it per
            query, each sample carrying its K-step warm-up window.
    """
    import torch

    threads_before = torch.get_num_threads()
    try:
        library, sut, info = build_esn_pipeline(data=data, tau=tau, samples=samples, seed=seed,
                                                threads=threads, reservoir_size=reservoir_size,
                                                context=context)
    except BaseException:
        torch.set_num_threads(threads_before)
        raise
    return BuiltSUT(sut, library, sut.targets, info,
                    close=lambda: torch.set_num_threads(threads_before),
                    workload=getattr(sut, "workload", None), metric="sMAPE",
                    reference=sut.reference)
