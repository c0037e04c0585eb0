"""What the Akida SDK reports after mapping a model onto a device, and the device itself
(a virtual Akida 2.0 device or a board), shared by the ``akida`` SUT's paths
(:mod:`~neuromark.system.chips.akida_sut`, :mod:`~neuromark.system.chips.akida_user_file`)."""

from __future__ import annotations

from typing import Any

from neuromark.errors import ConfigError


def mapping_report(akida: Any, model: Any, device: Any) -> dict[str, Any]:
    """What the SDK reports after ``model.map(device)``: sequences and their backends, NPs
    used per layer and in all, component counts, program bytes, MACs."""
    layers = []
    for layer in model.layers[1:]:
        mapping = getattr(layer, "mapping", None)
        nps = [{"col": c.ident.col, "row": c.ident.row, "id": c.ident.id,
                "type": str(c.type).split(".")[-1], "neurons": int(c.filters)}
               for c in (mapping.nps if mapping is not None else [])]
        params = layer.parameters
        layers.append({"name": layer.name, "type": str(params.layer_type).split(".")[-1],
                       "nps": nps, "output_bits": int(params.get("output_bits"))
                       if params.has("output_bits") else None})
    components = {str(kind).split(".")[-1]: int(n) for kind, n in model.component_count.items()}
    return {"sequences": [{"name": s.name, "backend": str(s.backend).split(".")[-1]}
                          for s in model.sequences],
            "nps_used": int(sum(components.values())),
            "nps_available": len(device.mesh.nps),
            "components": components,
            "layers": layers,
            "program_bytes": int(sum(len(s.program) for s in model.sequences
                                     if s.program is not None)),
            "macs": int(model.macs)}


def open_hardware(akida: Any, index: int) -> Any:
    """``akida.devices()[index]``: a real Akida board, or :class:`ConfigError` listing those seen."""
    found = akida.devices()
    if index >= len(found):
        raise ConfigError(f"sut.options.hardware_index: {index}, but akida.devices() lists "
                          f"{len(found)} board(s) {[d.desc for d in found]}; use target: virtual "
                          "on a machine without an Akida board")
    return found[index]


def device_info(device: Any, **where: Any) -> dict[str, Any]:
    """What ``results.details.system`` records of an Akida device (a virtual one or a board):
    ``where`` (``kind``, and ``name`` or ``index``), its description, version and IP version."""
    return {**where, "desc": device.desc, "version": str(device.version),
            "ip_version": str(device.ip_version).split(".")[-1]}


def akida_info(akida: Any, *, target: str, device: str, hardware_index: int,
               target_info: dict[str, Any], report: dict[str, Any], classes: int,
               suffix: str = "") -> dict[str, Any]:
    """The part of an Akida SUT's ``info`` every model source shares: its label
    (``akida-<target>-<device or board index><suffix>``), the SDK, the target, the mapping
    report, where inference runs, the data and the number of classes."""
    return {
        "label": f"akida-{target}-{device if target == 'virtual' else hardware_index}{suffix}",
        "sdk": {"name": "akida", "package": "akida", "version": akida.__version__},
        "target": target_info,
        "mapping": report,
        "inference": ("on the Akida board" if target == "hardware" else
                      "the SDK's software engine on the CPU (a virtual device maps a model but "
                      "cannot run it)"),
        "data": "spoken_digits (shipped corpus, test split)", "classes": classes,
    }
