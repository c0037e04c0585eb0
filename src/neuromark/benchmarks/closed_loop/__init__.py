"""Closed-loop benchmarks: environments, episode scores and on-line learning counts.

- :mod:`.env`: the environment protocol (``reset(seed)``, ``step(action)``), action spaces
  and per-episode seeds.
- :mod:`.ops`: the online prosthesis simulator (NeuroBench's OPS, re-implemented).
- :mod:`.gym_env`: gymnasium environments (extra ``neuromark[control]``).
- :mod:`.references`: reference policies without a network (oracle, zero, random, balance).
- :mod:`.scores`: success rate, time to target, reward mean/std/risk with their errors.
- :mod:`.plasticity`: the on-line learning hook and its counts.

The task that runs them is :mod:`neuromark.benchmarks.closed_loop.task`.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"closed_loop": ".task:TASK"},
    "models": {"loop_ann": ".families:LOOP_ANN", "loop_snn": ".families:LOOP_SNN",
               "loop_wiener": ".families:LOOP_WIENER"},
    "environments": {"ops": ".ops:ops", "gymnasium": ".gym_env:gymnasium_env"},
    "learning_rules": {"delta": ".plasticity:delta"},
}
