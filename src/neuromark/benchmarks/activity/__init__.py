"""Human activity recognition from a smartwatch (WISDM, NeuroBench 2.x NeHAR).

References: Weiss, "WISDM Smartphone and Smartwatch Activity and Biometrics Dataset", UCI
507 (2019); NeuroBench's NeHAR task and its SCNN/FFSNN baselines.

- :mod:`.wisdm`, :mod:`.wisdm_raw`: the raw UCI 507 release and NeuroBench's arrays;
  :mod:`.generator` writes the raw layout offline.
- :mod:`.models`: NeHAR's SCNN, FFSNN and ANN, and a window-statistics reference.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"wisdm": ".wisdm:WISDM"},
    "generators": {"wisdm": ".generator"},
    "models": {"nehar_scnn": ".models:NEHAR_SCNN", "nehar_ffsnn": ".models:NEHAR_FFSNN",
               "nehar_ann": ".models:NEHAR_ANN", "window_stats": ".models:WINDOW_STATS"},
}
