"""The power meter check: the :class:`~neuromark.system.power.protocol.PowerMeter` contract.

:func:`check_meter` drives a meter the way the system track does (``start``, a ``mark``
before and after some work, ``stop``) and checks:

- the protocol: every method, ``measured`` a bool, ``metadata()`` with ``name``,
  ``measured`` (equal to the attribute), ``reason`` (text: why not measured, "" when
  measured), ``sample_rate_hz`` and ``components``;
- ``mark`` returns times on the clock of the latency timings
  (:func:`neuromark.system.timing.now_s`), increasing;
- a measuring meter: ``energy(t0, t1)`` a finite number of joules >= 0 (equal to
  ``expected_j`` within ``rel`` when given, for a meter fed a known trace),
  ``samples_in`` a count >= 0, ``timeline()`` with ``t_s`` (increasing) and ``power_w`` of
  one length; a reversed window is refused;
- a meter that does not measure (the null meter): ``energy`` raises
  :class:`~neuromark.errors.MetricError` saying "not measured" and the reason, never 0 J;
  no samples.

How a plugin author uses it in their own test::

    from neuromark.testing.meter import check_meter
    from my_plugin import MyBoardMeter

    def test_my_meter_keeps_the_contract():
        meter = MyBoardMeter(board=FakeBoard(watts=2.0))   # a fake instrument
        report = check_meter(meter, work=lambda: time.sleep(0.05))
        assert abs(report.power_w - 2.0) < 0.01
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from neuromark.errors import DataError, MetricError
from neuromark.system.power.protocol import PowerMeter
from neuromark.system.timing import now_s
from neuromark.testing.guard import Problems, contract_check, raised
from neuromark.testing.results import ContractError

METADATA_KEYS = ("name", "measured", "reason", "sample_rate_hz", "components")


@dataclass
class MeterCheck:
    """What :func:`check_meter` measured: the window ``[t0, t1]`` (s), its energy (J, None
    when not measured), the samples in it and the mean power (W, None when not measured)."""

    t0: float
    t1: float
    energy_j: float | None
    samples: int
    power_w: float | None


@contract_check
def check_meter(meter: Any, *, work: Callable[[], Any] | None = None,
                expected_j: float | None = None, rel: float = 1e-3) -> MeterCheck:
    """Check ``meter`` (see the module docstring); ``work`` runs between the two marks
    (default: sleep 50 ms); ``expected_j``: the energy the window must have (a meter fed
    a known trace). Returns what was measured. Whatever the meter raises is reported as a
    :class:`ContractError` naming the call, after every problem already found."""
    if not isinstance(meter, PowerMeter):
        missing = [m for m in ("start", "stop", "mark", "energy", "samples_in", "timeline",
                               "metadata") if not callable(getattr(meter, m, None))]
        raise ContractError(f"{type(meter).__name__} is not a PowerMeter: missing "
                            f"{', '.join(missing) or 'measured'}")
    problems = Problems(f"meter {type(meter).__name__}")
    if not isinstance(meter.measured, bool):
        problems.append(f"measured is {meter.measured!r}, not a bool")
    with problems.calling("metadata()"):
        meta = meter.metadata()
    if not isinstance(meta, Mapping):
        problems.append(f"metadata() returned a {type(meta).__name__}, not a mapping")
        problems.raise_if_any()
    problems.what = f"meter {meta.get('name', type(meter).__name__)!r}"
    missing = [k for k in METADATA_KEYS if k not in meta]
    if missing:
        problems.append(f"metadata() lacks {', '.join(missing)}")
    if meta.get("measured") != meter.measured:
        problems.append(f"metadata()['measured'] is {meta.get('measured')!r}, the attribute "
                        f"{meter.measured!r}")
    reason = meta.get("reason")
    if not isinstance(reason, str) or (not meter.measured and not reason):
        problems.append(f"metadata()['reason'] is {reason!r}: text, saying why when not measured")
    problems.raise_if_any()
    before = now_s()
    with problems.calling("start()"):
        meter.start()
    try:
        with problems.calling("mark('neuromark-testing-start')"):
            t0 = meter.mark("neuromark-testing-start")
        with problems.calling("the work between the marks"):
            (work or (lambda: time.sleep(0.05)))()
        with problems.calling("mark('neuromark-testing-end')"):
            t1 = meter.mark("neuromark-testing-end")
    finally:
        with problems.calling("stop()"):
            meter.stop()
    after = now_s()
    if not all(isinstance(t, float) for t in (t0, t1)) or not before <= t0 < t1 <= after:
        problems.append(f"mark() returned {t0!r} and {t1!r}; expected increasing times on "
                        f"neuromark.system.timing.now_s between {before} and {after}")
        problems.raise_if_any()
    with problems.calling("samples_in(t0, t1)"):
        samples = meter.samples_in(t0, t1)
    if not isinstance(samples, int) or samples < 0:
        problems.append(f"samples_in() is {samples!r}, not a count")
    if not meter.measured:
        try:
            got = meter.energy(t0, t1)
        except MetricError as exc:
            if "not measured" not in str(exc):
                problems.append(f"energy() of a meter that does not measure raised {exc!r}, "
                                f"without saying 'not measured'")
        except Exception as exc:  # noqa: BLE001 - any other error is a contract problem
            problems.append(f"energy() of a meter that does not measure: {raised('energy(t0, t1)', exc)}; "
                            f"it must raise MetricError('energy not measured: <reason>')")
        else:
            problems.append(f"energy() of a meter that does not measure returned {got!r}; it "
                            f"must raise MetricError('energy not measured: <reason>')")
        if samples:
            problems.append(f"a meter that does not measure has {samples} samples")
        problems.raise_if_any()
        return MeterCheck(t0, t1, None, samples, None)
    with problems.calling("energy(t0, t1)"):
        energy = meter.energy(t0, t1)
    if not isinstance(energy, float) or not math.isfinite(energy) or energy < 0:
        problems.append(f"energy() is {energy!r}; expected a finite float of joules >= 0")
    elif expected_j is not None and not math.isclose(energy, expected_j, rel_tol=rel):
        problems.append(f"energy() is {energy} J over [{t0}, {t1}] s, expected {expected_j} J")
    with problems.calling("timeline()"):
        timeline = meter.timeline()
        t, p = list(timeline.get("t_s", [])), list(timeline.get("power_w", []))
    if len(t) != len(p):
        problems.append(f"timeline() has {len(t)} times and {len(p)} powers")
    if any(b < a for a, b in zip(t, t[1:])):
        problems.append("timeline()['t_s'] is not increasing")
    try:
        meter.energy(t1, t0)
    except (MetricError, DataError):
        pass
    except Exception as exc:  # noqa: BLE001 - a refusal, but not the documented one
        problems.append(f"energy(t1, t0) of a reversed window: {raised('energy(t1, t0)', exc)}; "
                        f"it must raise MetricError or DataError")
    else:
        problems.append("energy(t1, t0) of a reversed window returned a value; it must raise")
    problems.raise_if_any()
    power = energy / (t1 - t0) if isinstance(energy, float) else None
    return MeterCheck(t0, t1, energy, samples, power)
