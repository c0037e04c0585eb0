"""Audio to spikes: the cochlea model of the Heidelberg spiking data sets (Cramer et al. 2020):
the model in :mod:`.model`, its parameters in :mod:`.params`.

Example:
    >>> from neuromark.processors.cochlea.model import Cochlea, read_audio
    >>> audio, rate = read_audio("digit.flac")      # doctest: +SKIP
    >>> spikes = Cochlea()(audio, rate, seed=0)     # doctest: +SKIP
"""
