"""Audio to spikes: the cochlea model of the Heidelberg spiking data sets (Cramer et al. 2020).

Example:
    >>> from neuromark.processors.cochlea import Cochlea, read_audio
    >>> audio, rate = read_audio("digit.flac")      # doctest: +SKIP
    >>> spikes = Cochlea()(audio, rate, seed=0)     # doctest: +SKIP
"""

from neuromark.processors.cochlea.model import Cochlea, CochleaSpikes, read_audio
from neuromark.processors.cochlea.params import (
    BasilarMembraneParams,
    BushyCellParams,
    CochleaParams,
    HairCellParams,
)

__all__ = [
    "BasilarMembraneParams",
    "BushyCellParams",
    "Cochlea",
    "CochleaParams",
    "CochleaSpikes",
    "HairCellParams",
    "read_audio",
]
