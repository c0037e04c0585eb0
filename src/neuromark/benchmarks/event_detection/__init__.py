"""Event-camera object detection: Prophesee Gen4 automotive (1 Mpx), COCO mAP, streamed
sequentially over files (NeuroBench v1.0).

References: Perot et al., "Learning to detect objects with a 1 megapixel event camera",
NeurIPS 2020; Prophesee's file formats (shared readers in :mod:`neuromark.data.prophesee`).

- :mod:`.gen4`: the Gen4 layout (``.dat`` events with ``_bbox.npy`` labels), its entry and
  offline generator (:mod:`neuromark.synth.camera_events`).
- :mod:`.boxes`: the label pipeline (clip, 3 classes, box filter, 0.5-s skip, per-bin ground
  truth); :mod:`.stream`: sequential streaming of event files into event tensors.
- :mod:`.encoder_cost`: the event tensor's front-end cost (``event_tensor``).
- :mod:`.coco_map`: the ``coco_map`` metric (COCO AP@[.5:.95] per stream).
- :mod:`.model`, :mod:`.train`: the detector baseline and its recipe.
- :mod:`.task`: the ``detection`` task.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"detection": ".task:TASK"},
    "metrics": {"coco_map": ".coco_map:CocoMap"},
    "models": {"event_detector": ".train:EVENT_DETECTOR"},
    "encoder_costs": {"event_tensor": ".encoder_cost:event_tensor_cost"},
}
