"""The system track's task: a system under test measured under MLPerf-style load
(LoadGen scenarios), with power and energy per inference, accuracy against a declared
quality target, and the submission it writes.

- :mod:`.task`: the ``system`` task (config, plan, run).
- :mod:`.perf`, :mod:`.scores`, :mod:`.estimate`, :mod:`.accuracy`: the performance run,
  its scores, the run-length estimate, and the accuracy run.
"""
