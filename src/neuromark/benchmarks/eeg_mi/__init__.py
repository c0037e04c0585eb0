"""EEG motor imagery (ThorEEGMI): left- versus right-hand imagery from 62-channel EEG.

References: Lee et al., "EEG dataset and OpenBMI toolbox", GigaScience 2019 (Lee2019);
NeuroBench 2.x's ThorEEGMI task.

- :mod:`.reader`, :mod:`.lee2019`: the challenge's arrays and the Lee2019 ``.mat`` files;
  :mod:`.generator` writes them offline; :mod:`.encoder_cost`: the Lee2019 preprocessing's
  front-end cost (``band_pass_resample``).
- :mod:`.models`: the EEG SNN and the CSP + LDA reference.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"eeg_mi": ".reader:EEG_MI"},
    "generators": {"eeg_mi": ".generator"},
    "models": {"eeg_snn": ".models:EEG_SNN", "csp_lda": ".models:CSP_LDA"},
    "encoder_costs": {"band_pass_resample": ".encoder_cost:band_pass_resample_cost"},
}
