"""Mackey-Glass chaotic function prediction: sMAPE of an autoregressive forecast over
Lyapunov times, per delay tau (NeuroBench v1.0).

References: Mackey and Glass, Science 197 (1977); Yik et al. (NeuroBench), Methods; the
shipped series (``files/mackey_glass``) and their Lyapunov times, with provenance.

- :mod:`.series`: the shipped series and the data set entry.
- :mod:`.forecasters`: echo-state network and LSTM forecasters.
- :mod:`.task`, :mod:`.instances`: the task and its per-instance training and forecast;
  :mod:`.plot`: the sweep's sMAPE-vs-tau figure.
- :mod:`.sut`: the ESN as a system under test for the system track.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"mackey_glass": ".task:TASK"},
    "datasets": {"mackey_glass": ".series:MACKEY_GLASS"},
    "models": {"esn": ".forecasters:ESN"},
    "suts": {"esn": ".sut:esn"},
}
