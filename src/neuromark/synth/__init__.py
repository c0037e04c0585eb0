"""Offline simulators that several benchmark families' generators share (run by
maintainers and by a data set's ``synthesize`` option, never inside a benchmark's timing):

- :mod:`neuromark.synth.camera_events`: an event camera from per-pixel log-intensity thresholds
  (DVS Gesture and Gen4 detection write their layouts with it).
- :mod:`neuromark.synth.speech`: speech from espeak-ng, its silence trimmed (the spoken-digit
  corpus and the keyword corpora are spoken with it).

A family's own generator lives in its package (its ``generator`` module, declared under
``generators`` in its MANIFEST).
"""
