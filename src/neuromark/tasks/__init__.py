"""The task kit: the protocol every benchmark task implements and the base that implements
it once (:mod:`.base`: the default plan, the results helper, the protocol check), the
evaluation around the runner (:mod:`.evaluation`), and the generic ``classification`` task
that the classification families (SHD, DVS Gesture, keywords, activity, EEG, ASC) share.
Each family's own task lives in its package under ``neuromark/benchmarks/``."""
