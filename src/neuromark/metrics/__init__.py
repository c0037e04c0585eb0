"""Metrics: pure functions in :mod:`.functional` plus thin static (:mod:`.static`) and
workload classes (:mod:`.correctness`, :mod:`.complexity`, :mod:`.neuron_ops`,
:mod:`.energy`) on the bases of :mod:`.base`. Import each name from the module that defines
it (e.g. ``from neuromark.metrics.static import Footprint``)."""
