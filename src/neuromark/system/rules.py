"""Scenario rules per submission profile, for ``neuromark check``.

- ``submission``: MLPerf's minimums as LoadGen 6.0.17 ships them in its built-in
  ``mlperf.conf``: ``min_duration = 600000`` ms for every scenario; ``min_query_count = 662``
  for MultiStream; for Offline LoadGen maps the query count to a sample count of 24576
  (capped at the data set size); SingleStream and Server keep ``TestSettings``' default of
  100 queries. Target latency percentiles 90 % (SingleStream), 99 % (MultiStream, Server);
  the official ``qsl_rng_seed``, ``sample_index_rng_seed`` and ``schedule_rng_seed``.
- ``test``: short minimums for tests and the default suite (32 queries, no minimum
  duration, any seeds); the same percentiles. A ``test`` submission is not an MLPerf-valid
  result and the checker says so.
"""

from __future__ import annotations

from dataclasses import dataclass

#: LoadGen 6.0.17 ``mlperf.conf`` official seeds (``*.*.<name>``).
OFFICIAL_SEEDS = {"qsl_rng_seed": 2085463073848966840,
                  "sample_index_rng_seed": 2747215439041700203,
                  "schedule_rng_seed": 16159082839903944936}

#: The target latency percentile of each scenario (mlperf.conf; Offline has none that counts).
PERCENTILE = {"SingleStream": 0.90, "MultiStream": 0.99, "Server": 0.99, "Offline": None}


@dataclass(frozen=True)
class ScenarioRule:
    """Minimums of one scenario: queries (samples for Offline) and duration (s)."""

    min_query_count: int
    min_duration_s: float


@dataclass(frozen=True)
class Profile:
    name: str
    rules: dict[str, ScenarioRule]
    official_seeds: bool
    note: str

    def rule(self, scenario: str) -> ScenarioRule:
        return self.rules[scenario]


PROFILES = {
    "submission": Profile(
        "submission",
        {"SingleStream": ScenarioRule(100, 600.0), "MultiStream": ScenarioRule(662, 600.0),
         "Server": ScenarioRule(100, 600.0), "Offline": ScenarioRule(24576, 600.0)},
        official_seeds=True,
        note="MLPerf minimums of LoadGen 6.0.17 mlperf.conf: 600 s per scenario; queries "
             "SingleStream 100, MultiStream 662, Server 100, Offline 24576 samples (or the "
             "whole data set when smaller); official seeds"),
    "test": Profile(
        "test",
        {s: ScenarioRule(32, 0.0) for s in PERCENTILE},
        official_seeds=False,
        note="short minimums for tests and the default suite: 32 queries, no minimum "
             "duration, any seeds; NOT an MLPerf-valid submission"),
}


#: What to run for an MLPerf-valid submission (the ``submission`` profile's rules).
VALID_RUN = ("set `profile: submission` in each config (MLPerf's minimums: 600 s per scenario, "
             "official seeds; with `compliance: true`), run `neuromark system run CONFIG --out DIR` "
             "and `neuromark check DIR`")


def verdict(profile: Profile | None, findings: int) -> str:
    """The one line ``neuromark check`` ends with: whether the folder passed, under which
    profile, and what to run next (never "passes" beside "not valid" without saying how
    the two fit)."""
    if profile is None:
        return (f"verdict: FAILS: {findings} finding(s) above, and no readable profile; fix them, "
                "then run `neuromark check` again")
    if findings:
        tail = (f"; for an MLPerf-valid submission, {VALID_RUN}" if profile.name != "submission"
                else "; fix them and run the benchmarks again")
        return (f"verdict: FAILS: {findings} finding(s) above under the {profile.name!r} profile"
                + tail)
    if profile.name == "submission":
        return ("verdict: passes every check of the 'submission' profile (MLPerf's minimums, "
                "official seeds); `neuromark system run --submission-tree DIR` lays it out for "
                "MLPerf's own submission checker")
    return (f"verdict: passes every check of the {profile.name!r} profile, which is NOT an "
            f"MLPerf-valid submission (short minimums, any seeds); for one, {VALID_RUN}")
