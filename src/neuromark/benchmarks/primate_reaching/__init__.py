"""Primate reaching: cursor-velocity decoding from motor-cortex threshold crossings (R² per
session), and PSTH predictivity of a model's units against recorded rates.

References: O'Doherty, Cardoso, Makin and Sabes, Zenodo 583331 (the recordings);
NeuroBench v1.0 motor prediction (Yik et al.); Brain-Score's ceiling rule for the
predictivity.

- :mod:`.reader`, :mod:`.contract`, :mod:`.entry`: the published ``.mat`` layout, its
  contract and data set entry; :mod:`.generator` writes it offline from cosine-tuned
  Poisson units.
- :mod:`.models`, :mod:`.encoders`, :mod:`.decoders`, :mod:`.dropped`: decoder families
  (ridge, ANN2D, SNN2; the ridge decoder is :mod:`neuromark.networks.ridge_decoder`'s),
  input encoders, the trained checkpoints, dropped-bin handling; :mod:`.encoder_cost`: the
  inputs' front-end cost.
- :mod:`.task`: the ``primate_reaching`` task, its sessions fed side by side by
  :mod:`.parallel_streams`; :mod:`.psth_task`: ``psth_predictivity``, its reaches aligned
  by :mod:`.psth`.
- :mod:`.data_command`: ``neuromark data primate-surrogate``.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"primate_reaching": ".task:TASK", "psth_predictivity": ".psth_task:TASK"},
    "datasets": {"primate_reaching": ".entry:PRIMATE_REACHING"},
    "generators": {"primate": ".generator"},
    "models": {"ridge_decoder": ".models:RIDGE", "ann2d": ".models:ANN2D_FAMILY",
               "snn2": ".models:SNN2_FAMILY"},
    "data_commands": {"primate-surrogate": ".data_command:register"},
    "encoder_costs": {"spike_window_counts": ".encoder_cost:window_counts_cost",
                      "kinematic_features": ".encoder_cost:kinematic_features_cost",
                      "controller_inputs": ".encoder_cost:controller_inputs_cost"},
}
