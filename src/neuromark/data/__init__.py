"""The data layer every benchmark family reads through: the data set entry protocol and its
checks (:mod:`.entry`), downloads with checksum checks (:mod:`.download`), the event dtype
and event files (:mod:`.events`, :mod:`.event_contract`, :mod:`.event_info`, Prophesee
files), spike files and streams (:mod:`.hdf5_spikes`, :mod:`.spike_stream`), binning, clips
and splits. Each data set's own reader lives in its family's package under
``neuromark/benchmarks/``; import every name from the module that defines it."""
