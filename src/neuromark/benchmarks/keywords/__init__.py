"""Spoken keywords: Google Speech Commands classification and keyword few-shot
class-incremental learning (FSCIL) on Multilingual Spoken Words (MSWC).

References: Warden, "Speech Commands", arXiv:1804.03209; Mazumder et al., "Multilingual
Spoken Words Corpus", NeurIPS 2021 Datasets; the FSCIL protocol and M5 backbone of
NeuroBench (Yik et al., Nature Communications 2025, Methods and Algorithm 1).

- :mod:`.speech_commands`, :mod:`.mswc`: readers of the published layouts;
  :mod:`.generator` writes both offline (espeak-ng keywords, :mod:`neuromark.synth.speech`).
- :mod:`.entry`: the ``speech_commands`` data set entry.
- :mod:`.features`: the input features (waveform, MFCC, delta-modulated log-mel spikes);
  :mod:`.encoder_cost`: their cost.
- :mod:`.models`, :mod:`.gsc_family`, :mod:`.train`: M5 and the LIF keyword nets, their
  families and training recipe.
- :mod:`.fscil`: the FSCIL task (protocol, run, results); :mod:`.fscil_config`: its
  options; :mod:`.fscil_backbone`: the corpus as features and the pre-trained backbone;
  :mod:`.fscil_sessions`: the sessions (prototypes, sampling, accuracy per session).
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"fscil": ".fscil:TASK"},
    "datasets": {"speech_commands": ".entry:SPEECH_COMMANDS"},
    "generators": {"keywords": ".generator"},
    "models": {"keyword_m5": ".models:M5", "keyword_lif": ".models:LIFNet",
               "gsc_m5": ".gsc_family:GSC_M5", "gsc_snn": ".gsc_family:GSC_SNN"},
    "encoder_costs": {"keyword_features": ".encoder_cost:keyword_features_cost"},
}
