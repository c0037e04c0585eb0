"""IBM DVS128 Gesture: classification of event-camera recordings (11 gestures).

References: Amir et al., "A low power, fully event-based gesture recognition system",
CVPR 2017; tonic 1.7.0's preprocessed layout; NeuroBench's example network.

- :mod:`.reader`: the published (tonic) layout and the frames NeuroBench's example feeds;
  :mod:`.generator` writes that layout offline from our event-camera simulator
  (:mod:`neuromark.synth.camera_events`).
- :mod:`.transforms`: tonic's ``Denoise``, ``Downsample`` and ``ToFrame`` kernels, compiled;
  :mod:`.encoder_cost`: the frames' front-end cost (``dvs_frames``).
- :mod:`.model`: the convolutional SNN baseline and its training recipe.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"dvs_gesture": ".reader:DVS_GESTURE"},
    "generators": {"gestures": ".generator"},
    "models": {"dvs_gesture_snn": ".model:DVS_GESTURE_SNN"},
    "encoder_costs": {"dvs_frames": ".encoder_cost:dvs_frames_cost"},
}
