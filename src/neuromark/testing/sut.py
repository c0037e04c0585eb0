"""The system-under-test check: a SUT factory's :class:`~neuromark.system.sut.BuiltSUT`
through a small LoadGen-free harness.

:func:`check_sut` builds the SUT (a registry name of :data:`neuromark.registry.suts`, a
factory, or a ``BuiltSUT``) and checks what the system track relies on before and while
LoadGen drives it:

- the parts: ``sut`` with ``name``, ``response_dtype`` (a numpy dtype) and ``issue``; a
  library with ``total_count`` >= 1, ``performance_count`` in ``[1, total_count]``,
  ``load``/``unload``/``get``; ``labels`` None or one per sample
  (:func:`~neuromark.system.sut.check_labels`); ``info`` a JSON-able mapping; ``close``,
  ``workload`` and ``reference`` None or callable;
- the first responses (:func:`~neuromark.system.sut.check_first_response`, the check the
  system track runs before any timed run);
- the harness, as LoadGen's accuracy pass would: the first ``queries`` samples loaded,
  issued one per query (SingleStream) and then all in one query (Offline): one response
  per index, each of the declared dtype, C-contiguous and of one shape; for a SUT that
  keeps no state between queries (``sut.stateful`` None), the responses do not depend on
  how the samples were grouped into queries, nor on their order (as MLPerf's TEST01
  compares logged responses); after ``unload`` the library no longer hands the samples out;
- ``close`` called once at the end, also when a check fails.

How a plugin author uses it in their own test::

    from neuromark.testing.sut import check_sut
    from my_plugin import my_board_sut      # a factory: options -> BuiltSUT

    def test_my_sut_keeps_the_contract():
        check = check_sut(my_board_sut, {"samples": 8, "simulate": True})
        assert check.responses[0].shape == (10,)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neuromark.io_atomic import to_jsonable
from neuromark.registry import suts
from neuromark.system.sut import BuiltSUT, check_first_response, check_labels
from neuromark.testing.guard import Problems, contract_check
from neuromark.testing.results import ContractError


@dataclass
class SUTCheck:
    """What :func:`check_sut` saw: the SUT's name and its responses to the checked samples
    (one query each), in sample order."""

    name: str
    responses: list[np.ndarray] = field(default_factory=list)


def _built(sut: Any, options: Mapping[str, Any]) -> BuiltSUT:
    if isinstance(sut, BuiltSUT):
        return sut
    factory: Callable[..., Any] = suts.get(sut) if isinstance(sut, str) else sut
    label = getattr(factory, "__name__", repr(factory))
    with Problems(f"SUT factory {label!r}").calling(f"{label}(**options)"):
        built = factory(**dict(options))
    if not isinstance(built, BuiltSUT):
        raise ContractError(f"SUT factory {getattr(factory, '__name__', factory)!r} returned a "
                            f"{type(built).__name__}, not a neuromark.system.sut.BuiltSUT")
    return built


def parts_problems(built: BuiltSUT) -> list[str]:
    """What is wrong with the parts of ``built`` (see the module docstring)."""
    problems = []
    sut, library = built.sut, built.library
    if not isinstance(getattr(sut, "name", None), str) or not sut.name:
        problems.append(f"sut.name is {getattr(sut, 'name', None)!r}, not a non-empty string")
    try:
        np.dtype(getattr(sut, "response_dtype", None))
    except TypeError:
        problems.append(f"sut.response_dtype {getattr(sut, 'response_dtype', None)!r} is not a "
                        f"numpy dtype")
    if not callable(getattr(sut, "issue", None)):
        problems.append("sut has no issue(indices) method")
    for method in ("load", "unload", "get"):
        if not callable(getattr(library, method, None)):
            problems.append(f"the library has no {method}() method")
    total = getattr(library, "total_count", None)
    perf = getattr(library, "performance_count", None)
    if not isinstance(total, int) or total < 1:
        problems.append(f"library.total_count is {total!r}, not a count >= 1")
    elif not isinstance(perf, int) or not 1 <= perf <= total:
        problems.append(f"library.performance_count is {perf!r}, not in [1, {total}]")
    if not isinstance(built.info, Mapping):
        problems.append(f"info is a {type(built.info).__name__}, not a mapping")
    else:
        try:
            json.dumps(to_jsonable(built.info))
        except (TypeError, ValueError) as exc:
            problems.append(f"info cannot be written into the results: {exc}")
    for name in ("close", "workload", "reference"):
        part = getattr(built, name)
        if part is not None and not callable(part):
            problems.append(f"{name} is a {type(part).__name__}, not None or a callable")
    return problems


@contract_check
def check_sut(sut: Any, options: Mapping[str, Any] | None = None, *,
              queries: int = 8) -> SUTCheck:
    """Check a SUT (see the module docstring) on its first ``queries`` samples; returns
    the responses."""
    built = _built(sut, options or {})
    name = str(getattr(built.sut, "name", sut))
    problems = Problems(f"SUT {name!r}")
    try:
        problems.extend(parts_problems(built))
        problems.raise_if_any()
        library = built.library
        classes = built.labels is None or built.labels.dtype.kind in "iu"
        with problems.calling("the labels check"):
            check_labels(built.labels, name, library.total_count, classes)
        with problems.calling("the first responses (check_first_response)"):
            check_first_response(built, name, scored=built.labels is not None, classes=classes)
        return SUTCheck(name, _harness(built, name, min(queries, library.total_count), problems))
    finally:
        if built.close is not None:
            with problems.calling("close()"):
                built.close()


def _harness(built: BuiltSUT, name: str, n: int, problems: Problems) -> list[np.ndarray]:
    """Issue samples ``0..n-1`` one per query, then in one query, then (for a stateless
    SUT) in reverse order; check the responses (see the module docstring); ``problems``:
    those found so far, reported with any new one."""
    sut, library = built.sut, built.library
    dtype = np.dtype(sut.response_dtype)
    indices = list(range(n))
    with problems.calling(f"library.load({indices})"):
        library.load(indices)
    try:
        single = []
        for i in indices:
            with problems.calling(f"issue([{i}])"):
                outs = list(sut.issue([i]))
            if len(outs) != 1:
                problems.append(f"issue([{i}]) gave {len(outs)} responses")
                problems.raise_if_any()
            single.append(outs[0])
        with problems.calling(f"issue({indices}) (one query)"):
            batch = list(sut.issue(indices))
        with problems.calling("issue() of the samples in reverse order"):
            backward = list(sut.issue(indices[::-1]))[::-1]
    finally:
        with problems.calling(f"library.unload({indices})"):
            library.unload(indices)
    if len(batch) != n or len(backward) != n:
        problems.append(f"issue() of {n} samples in one query gave {len(batch)} responses")
    for k, out in enumerate(single + batch):
        if not isinstance(out, np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous:
            problems.append(f"response {k % n} is not a C-contiguous array of {dtype.str}")
            break
    shapes = {np.shape(o) for o in single + batch}
    if len(shapes) > 1:
        problems.append(f"responses have shapes {sorted(shapes)}; one shape for every sample")
    if getattr(sut, "stateful", None) is None and not problems:
        for how, other in (("in one query", batch), ("in reverse order", backward)):
            differ = [i for i in indices if not np.array_equal(single[i], other[i], equal_nan=True)]
            if differ:
                problems.append(f"the responses to samples {differ[:5]} differ when issued {how}: "
                                f"a SUT that keeps no state (sut.stateful None) must answer each "
                                f"sample alone (or set sut.stateful to why it keeps state)")
    try:
        library.get(0)
    except Exception:  # noqa: BLE001 - any refusal is right: the sample was unloaded
        pass
    else:
        problems.append("library.get(0) still answers after unload(): the library must drop "
                        "what LoadGen unloads")
    problems.raise_if_any()
    return single
