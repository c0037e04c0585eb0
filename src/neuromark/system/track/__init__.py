"""The system track's task: a system under test measured under MLPerf-style load
(LoadGen scenarios), with power and energy per inference, accuracy against a declared
quality target, and the submission it writes.

- :mod:`.config`: the config's schema and checks (what a user writes);
- :mod:`.task`: the ``system`` task (plan, and the run in order);
- :mod:`.perf`: the performance runs (calibration, search, final runs, the scenario figure);
- :mod:`.accuracy`: the accuracy rule's check, the AccuracyOnly run, its score and verdict;
- :mod:`.scores`: the timing, LoadGen and power scores;
- :mod:`.estimate`: the energy estimate from operation counts, beside the measured energy;
- :mod:`.identity`: the system's identity (``details.system``), named apart from the benchmark;
- :mod:`.load`: the machine's load around the timed runs.
"""
