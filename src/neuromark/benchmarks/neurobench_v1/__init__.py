"""NeuroBench v1.0's published rows: its own trained baselines, their figures beside the published ones.

The figures: footprint under our rule and NeuroBench's, parameter count, connection sparsity,
Dense on a data-free example input; the published ones: Yik and others, NeuroBench (2025),
its ``leaderboard.rst``.

- :mod:`.models`: the baselines' architectures (:mod:`neuromark.networks.neurobench_v1`) as
  registered models, ``neurobench_<architecture>``, with how each is stepped.
- :mod:`.task`: the ``neurobench_v1_row`` task (one row config of ``configs/neurobench_v1/``).
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"neurobench_v1_row": ".task:TASK"},
    "models": {
        "neurobench_ann2d": ".models:ann2d", "neurobench_ann3d": ".models:ann3d",
        "neurobench_snn2": ".models:snn2", "neurobench_snn_flat": ".models:snn_flat",
        "neurobench_m5": ".models:m5", "neurobench_s2s_snn": ".models:s2s_snn",
        "neurobench_gesture_csnn": ".models:gesture_csnn", "neurobench_eeg_snn": ".models:eeg_snn",
        "neurobench_scnn": ".models:scnn",
    },
}
