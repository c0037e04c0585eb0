"""Offline simulators that several benchmark families' generators share (run by
maintainers and by a data set's ``synthesize`` option, never inside a benchmark's timing):

- :mod:`neuromark.synth.events`: an event camera from per-pixel log-intensity thresholds
  (DVS Gesture and Gen4 detection write their layouts with it).

A family's own generator lives in its package (``neuromark.benchmarks.<family>.generator``).
"""
