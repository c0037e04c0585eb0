"""Offline generators of shipped data (run by maintainers, never by a benchmark): they may use
the processors (e.g. the cochlea) and write files that :mod:`neuromark.data` then reads.

- :mod:`neuromark.synth.spoken_digits`: the espeak-ng spoken-digit corpus.
"""
