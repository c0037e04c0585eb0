"""SUT ``xylo``: SynSense Xylo Audio 2 through Rockpool (``rockpool`` 3.1.0) and XyloSim
(``xylosim`` 0.1.3, bit-accurate simulator of the Xylo SNN core).

What runs:

1. neuromark trains a LIF SNN built from Rockpool's own torch modules
   (:func:`~neuromark.system.chips.rockpool_xylo.lif_network`: 16 inputs -> ``hidden`` LIF ->
   ``classes`` LIF, Xylo's bitshift decays) on the spoken-digit corpus as 16 channel groups
   of spike counts per ``dt_us`` bin, clipped at 15 events; the readout is the output
   layer's synaptic current averaged over time;
2. Rockpool's Xylo mapper (``mapper(net.as_graph())``, design rules and neuron allocation)
   and quantiser (``global_quantize``: int8 weights, one scale for all so the outputs compare)
   turn it into a Xylo specification;
3. every query runs on ``XyloSim.from_specification(...)`` (``output_mode="Isyn"``), reset per
   sample; with ``target: hardware`` on a Xylo Audio 2 board through
   ``XyloSamna(config_from_specification(...))`` instead, and the ``xylo_power`` meter
   records the board's power rails.

Xylo Audio 2 holds at most 16 input channels, 1000 hidden and 8 output neurons (the mapper's
design rules), so the benchmark keeps the corpus's first ``classes`` (<= 8) classes:
``english-zero`` ... ``english-seven`` by default. The results say so (``details.sut.classes``).

Config::

    sut: {name: xylo, options: {hidden: 64, classes: 8, epochs: 150}}
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from neuromark.errors import ConfigError
from neuromark.system.chips.features import (
    SPOKEN_DIGITS_8,
    CountSplit,
    chip_front_end,
    keep_classes,
    spoken_digit_counts,
)
from neuromark.system.chips.nir_xylo import harness_counts, nir_to_xylo, xylo_to_nir
from neuromark.system.chips.rockpool_xylo import (
    MAX_HIDDEN,
    MAX_INPUTS,
    MAX_OUTPUTS,
    lif_network,
    output_isyn,
    train_lif,
    xylo_audio2,
)
from neuromark.system.chips.training import accuracy, float_accuracy_score
from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT

#: Largest count of input events per channel and time step fed to the chip (our clip).
MAX_INPUT_EVENTS = 15


_keep_classes = keep_classes


def simulate_all(a2: Any, quantised: dict[str, Any], dt_s: float, output_mode: str,
                 x: np.ndarray, reduce: Any) -> tuple[np.ndarray, dict[str, Any]]:
    """``(scores, operation counts)``: (N, outputs) float32, the quantised specification on a
    fresh ``XyloSim`` over every raster of ``x`` (N, T, 16), reset per sample, each output
    reduced by ``reduce``: the SDK's own quantised model in its simulator, run apart from the
    timed path (the accuracy pass's quantized reference); and the mean synaptic operations
    per inference it performed (:func:`xylo_operations`)."""
    sim = a2.XyloSim.from_specification(**quantised, dt=dt_s, output_mode=output_mode)
    out, spikes = [], []
    for raster in x:
        sim.reset_state()
        y, _, record = sim(raster.astype(np.int64), record=True)
        out.append(reduce(np.asarray(y, dtype=np.float64)))
        spikes.append(np.asarray(record["Spikes"], dtype=np.float64))
    return np.asarray(out, dtype=np.float32), xylo_operations(quantised, x, spikes)


def xylo_operations(quantised: dict[str, Any], x: np.ndarray, hidden_spikes: list[np.ndarray]
                    ) -> dict[str, Any]:
    """Mean operations per inference on the Xylo core, counted from the simulation: every
    input event accumulates into each hidden neuron its channel reaches (non-zero input
    weights), every hidden spike into each neuron its recurrent and output weights reach
    (accumulates, ``acs``); every hidden and output neuron updates once per time step
    (``neuron_updates``). No multiplies (``macs`` 0): Xylo's synapses add weights."""
    w_in = np.asarray(quantised["weights_in"])
    w_in = w_in.reshape(w_in.shape[0], -1)
    w_rec = np.asarray(quantised["weights_rec"])
    w_rec = w_rec.reshape(w_rec.shape[0], -1)
    w_out = np.asarray(quantised["weights_out"])
    fan_in = np.count_nonzero(w_in, axis=1)                        # (16,)
    fan_hidden = np.count_nonzero(w_rec, axis=1) + np.count_nonzero(w_out, axis=1)  # (hidden,)
    acs = [float((raster.sum(0) * fan_in).sum() + (spikes.sum(0) * fan_hidden).sum())
           for raster, spikes in zip(x, hidden_spikes)]
    steps, neurons = x.shape[1], w_rec.shape[0] + w_out.shape[1]  # hidden + output neurons
    return {"macs": 0.0, "acs": float(np.mean(acs)) if acs else 0.0,
            "neuron_updates": float(steps * neurons),
            "source": "XyloSim's recorded hidden spikes and the input events x the non-zero "
                      "weights they reach (neuromark.system.chips.xylo_sut.xylo_operations)"}


def mapping_report(quantised: dict[str, Any]) -> dict[str, Any]:
    """The Xylo resources Rockpool's mapper allocated and the quantised parameters' ranges."""
    w_in, w_rec, w_out = (np.asarray(quantised[k]) for k in ("weights_in", "weights_rec", "weights_out"))
    return {"input_channels": int(w_in.shape[0]), "input_channels_available": MAX_INPUTS,
            "hidden_neurons": int(w_in.shape[1]), "hidden_neurons_available": MAX_HIDDEN,
            "output_neurons": int(w_out.shape[1]), "output_neurons_available": MAX_OUTPUTS,
            "synapses_per_hidden_neuron": int(w_in.shape[2]) if w_in.ndim == 3 else 1,
            "nonzero_weights": {"input": int(np.count_nonzero(w_in)),
                                "recurrent": int(np.count_nonzero(w_rec)),
                                "output": int(np.count_nonzero(w_out))},
            "weight_bits": 8, "weight_range": [int(min(w_in.min(), w_out.min())),
                                               int(max(w_in.max(), w_out.max()))],
            "threshold": sorted({int(t) for t in np.asarray(quantised["threshold"]).ravel()}),
            "threshold_out": sorted({int(t) for t in np.asarray(quantised["threshold_out"]).ravel()}),
            "dash_mem": sorted({int(d) for d in np.asarray(quantised["dash_mem"]).ravel()}),
            "dash_syn": sorted({int(d) for d in np.asarray(quantised["dash_syn"]).ravel()}),
            "quantisation": "rockpool global_quantize (one scale for every weight and threshold)"}


def find_hdks() -> tuple[list[Any], list[Any], list[str]]:
    """Rockpool's ``find_xylo_hdks()`` (needs ``samna``, the board driver)."""
    from rockpool.devices.xylo import find_xylo_hdks

    return find_xylo_hdks()


def open_board(a2: Any, index: int, quantised: dict[str, Any], dt_s: float,
               output_mode: str = "Isyn") -> tuple[Any, dict[str, Any]]:
    """A ``XyloSamna`` module on Xylo Audio 2 board ``index`` configured with ``quantised``."""
    try:
        hdks, _, versions = find_hdks()
    except ImportError as exc:
        raise ConfigError(f"sut.options.target: hardware needs samna, the Xylo board driver "
                          f"({exc}); use target: simulator without a board") from exc
    if index >= len(hdks):
        raise ConfigError(f"sut.options.hardware_index: {index}, but find_xylo_hdks() found "
                          f"{len(hdks)} board(s) {versions}; use target: simulator without a board")
    if versions[index] != "syns61201":
        raise ConfigError(f"sut.options.hardware_index: board {index} is a {versions[index]}, "
                          "this SUT maps onto Xylo Audio 2 (syns61201)")
    config, valid, message = a2.config_from_specification(**quantised)
    if not valid:
        raise ConfigError(f"the Xylo configuration is not valid for the board: {message}")
    module = a2.XyloSamna(hdks[index], config, dt=dt_s, output_mode=output_mode)
    return module, {"kind": "hardware", "index": index, "version": versions[index]}


def _target(a2: Any, target: str, index: int, quantised: dict[str, Any], dt_s: float,
            output_mode: str) -> tuple[Any, dict[str, Any]]:
    """The module each query runs on: XyloSim, or XyloSamna on board ``index``."""
    if target == "hardware":
        return open_board(a2, index, quantised, dt_s, output_mode)
    module = a2.XyloSim.from_specification(**quantised, dt=dt_s, output_mode=output_mode)
    return module, {"kind": "simulator", "name": "XyloSim (Xylo Audio 2, SYNS61201 SNN core)",
                    "package": "xylosim", "version": _version("xylosim")}


def _sdk_info() -> dict[str, Any]:
    return {"name": "rockpool", "package": "rockpool", "version": _version("rockpool"),
            "simulator": f"xylosim {_version('xylosim')}"}


def _built(target: str, test: CountSplit, module: Any, reduce: Any, info: dict[str, Any],
           float_acc: float, float_scores: np.ndarray, dt_us: int, steps: int,
           quantized_scores: np.ndarray, counts: dict[str, Any]) -> BuiltSUT:
    """The built SUT: a library of the test rasters, and a SUT whose each query resets
    ``module`` and runs it, the response ``reduce(output (T, outputs))`` as float32; the float
    model's accuracy and per-sample scores (the reference of the accuracy pass); the
    chip's input front end (``steps`` bins of ``dt_us`` µs)."""

    def preprocess(raster: np.ndarray) -> np.ndarray:
        return raster.astype(np.int64)

    def infer(raster: np.ndarray) -> np.ndarray:
        module.reset_state()
        out, _, _ = module(raster)
        return reduce(np.asarray(out, dtype=np.float64)).astype(np.float32)

    library = InMemoryLibrary("spoken-digits-test-rasters", test.x.__getitem__, len(test.x))
    sut = StagedSUT(f"xylo-{target}-lif", library, preprocess, infer, response_dtype="<f4")
    return BuiltSUT(sut, library, test.y.copy(), info,
                    scores={"float_accuracy": float_accuracy_score(float_acc, len(test.y))},
                    metric="classification_accuracy",
                    reference=lambda indices: [float_scores[i] for i in indices],
                    quantized_reference=lambda indices: [quantized_scores[i] for i in indices],
                    operation_counts=counts,
                    front_end=chip_front_end(test, dt_us=dt_us, t_max_us=steps * dt_us, groups=MAX_INPUTS,
                                             clip=MAX_INPUT_EVENTS))


def nir_float_spikes(net: Any, x: np.ndarray) -> np.ndarray:
    """(N, T, outputs) output spikes of the float Rockpool network Rockpool imported from NIR
    (a nirtorch ``GraphExecutor``: its LIF modules are reset first) for rasters ``x``."""
    import torch

    for module in net.modules():
        if module is not net and hasattr(module, "reset_state"):
            module.reset_state()
    out = net(torch.as_tensor(x, dtype=torch.float32))
    out = out[0] if isinstance(out, tuple) else out
    return out.detach().numpy()


def _xylo_from_nir(path: str, config_dir: Path | None, *, target: str, hardware_index: int,
                   dt_us: int, train_samples: int | None, samples: int | None) -> BuiltSUT:
    """The ``nir:`` variant of :func:`xylo` (a NIR graph deployed, no training)."""
    import torch

    from neuromark.models.nir_model import read_graph

    file = Path(path).expanduser()
    if not file.is_absolute() and config_dir is not None:
        file = config_dir / file
    if not file.is_file():
        raise ConfigError(f"sut.options.nir: no such file {file.absolute()} (relative paths are "
                          "read from the config file's folder)")
    a2 = xylo_audio2()
    graph = read_graph(file)
    deployed = nir_to_xylo(graph, a2)
    if deployed.inputs != MAX_INPUTS:
        raise ConfigError(f"sut.options.nir: {file} takes {deployed.inputs} inputs; the spoken-digit "
                          f"rasters have {MAX_INPUTS} channels")
    steps = 840_000 // dt_us
    _, test, keys = spoken_digit_counts(dt_us=dt_us, t_max_us=steps * dt_us, groups=MAX_INPUTS,
                                        clip=MAX_INPUT_EVENTS, train_samples=train_samples,
                                        test_samples=samples)
    test = _keep_classes(test, deployed.outputs)
    if not len(test.y):
        raise ConfigError(f"sut.options: no test sample of the first {deployed.outputs} classes")
    with torch.no_grad():
        float_scores = nir_float_spikes(deployed.net, test.x).sum(1).astype(np.float32)
    module, target_info = _target(a2, target, hardware_index, deployed.quantised, deployed.dt_s, "Spike")
    back = xylo_to_nir(deployed.net, deployed.inputs, deployed.outputs)
    float_acc = accuracy(float_scores, test.y)
    quantized_scores, counts = simulate_all(a2, deployed.quantised, deployed.dt_s, "Spike", test.x,
                                            lambda out: out.sum(0))
    info: dict[str, Any] = {
        "label": f"xylo-{'xylosim' if target == 'simulator' else 'board'}-{file.stem}",
        "sdk": _sdk_info(), "target": target_info, **_references(),
        "mapping": mapping_report(deployed.quantised),
        "inference": ("on the Xylo board (XyloSamna)" if target == "hardware" else
                      "XyloSim, bit-accurate simulation of the Xylo SNN core, on the CPU"),
        "data": "spoken_digits (shipped corpus, test split)",
        "classes": {"count": deployed.outputs, "names": keys[:deployed.outputs],
                    "why": "the NIR graph's outputs: the first classes of the corpus"},
        "features": {"channels": MAX_INPUTS, "dt_us": dt_us, "steps": steps,
                     "max_events_per_step": MAX_INPUT_EVENTS},
        "model": {"kind": "nir", "path": str(file.absolute()),
                  "nodes": {n: type(v).__name__ for n, v in graph.nodes.items()},
                  "rockpool_dt_s": deployed.dt_s, "readout": "output spikes, summed over time"},
        "nir": {"exported": harness_counts(graph, deployed.dt_s),
                "round_trip": harness_counts(back, deployed.dt_s),
                "path": "NIR -> rockpool from_nir -> Xylo mapper -> XyloSim; rockpool to_nir -> "
                        "neuromark's NIR reader (counted)"},
        "weights": f"from {file.name}",
        "float_accuracy": float_acc,
        "data_time_s": steps * dt_us * 1e-6,
    }
    return _built(target, test, module, lambda out: out.sum(0), info, float_acc, float_scores,
                  dt_us, steps, quantized_scores, counts)


def xylo(*, target: Literal["simulator", "hardware"] = "simulator",
         hardware_index: Annotated[int, Field(ge=0)] = 0,
         hidden: Annotated[int, Field(ge=1, le=MAX_HIDDEN)] = 64,
         classes: Annotated[int, Field(ge=2, le=MAX_OUTPUTS)] = MAX_OUTPUTS,
         dt_us: Annotated[int, Field(ge=1000, le=850_000)] = 20_000,
         dash_mem: Annotated[int, Field(ge=1, le=15)] = 3,
         dash_syn: Annotated[int, Field(ge=1, le=15)] = 2,
         epochs: Annotated[int, Field(ge=1)] = 150, lr: Annotated[float, Field(gt=0)] = 0.005,
         train_samples: Annotated[int, Field(ge=1)] | None = None,
         samples: Annotated[int, Field(ge=1)] | None = None,
         nir: str | None = None,
         seed: int = 0, config_dir: Path | None = None) -> BuiltSUT:
    """The ``xylo`` entry of :data:`neuromark.registry.suts` (see the module).

    Args:
        target: "simulator" (XyloSim) or "hardware" (XyloSamna on board ``hardware_index``).
        hidden: hidden LIF neurons (Xylo Audio 2: <= 1000).
        classes: the corpus's first ``classes`` classes (Xylo Audio 2: <= 8 output neurons).
        dt_us: time step (bin width) in µs; 0.84 s of each utterance are fed.
        dash_mem, dash_syn: Xylo's bitshift decays (``alpha = 1 - 2**-dash``) of membrane and
            synaptic current, used by the float network too.
        epochs, lr: full-batch Adam steps and learning rate (seeded).
        train_samples, samples: first samples of the train / test split before the class
            filter (None: all).
        nir: a NIR graph file (relative to the config's folder), e.g. one ``neuromark export
            nir`` wrote: deployed instead of training (16 inputs; its outputs set the classes;
            readout: output spikes summed over time), through Rockpool's NIR import
            (:mod:`~neuromark.system.chips.nir_xylo`); ``hidden``, ``classes``, ``dash_*``,
            ``epochs`` and ``lr`` are then unused.
    """
    if nir is not None:
        return _xylo_from_nir(nir, config_dir, target=target, hardware_index=hardware_index,
                              dt_us=dt_us, train_samples=train_samples, samples=samples)
    a2 = xylo_audio2()
    import torch
    from rockpool.transform.quantize_methods import global_quantize

    steps = 840_000 // dt_us
    train, test, keys = spoken_digit_counts(dt_us=dt_us, t_max_us=steps * dt_us, groups=MAX_INPUTS,
                                            clip=MAX_INPUT_EVENTS, train_samples=train_samples,
                                            test_samples=samples)
    train, test = _keep_classes(train, classes), _keep_classes(test, classes)
    if not len(train.y) or not len(test.y):
        raise ConfigError(f"sut.options: no sample of the first {classes} classes in the first "
                          f"train_samples / samples of the corpus")
    dt_s = dt_us * 1e-6
    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        net = lif_network(MAX_INPUTS, hidden, classes, dash_mem=dash_mem, dash_syn=dash_syn,
                          dt_s=dt_s, seed=seed)
        losses = train_lif(net, torch.as_tensor(train.x, dtype=torch.float32), torch.as_tensor(train.y),
                           epochs=epochs, lr=lr, seed=seed)
        with torch.no_grad():
            float_scores = output_isyn(net, torch.as_tensor(test.x, dtype=torch.float32)).mean(1).numpy()
    finally:
        torch.set_num_threads(threads_before)
    spec = a2.mapper(net.as_graph(), weight_dtype="float", threshold_dtype="float", dash_dtype="float")
    quantised = dict(global_quantize(**spec))
    report = mapping_report(quantised)
    module, target_info = _target(a2, target, hardware_index, quantised, dt_s, "Isyn")

    float_acc = accuracy(float_scores, test.y)
    quantized_scores, counts = simulate_all(a2, quantised, dt_s, "Isyn", test.x,
                                            lambda out: out.mean(0))
    shared = (classes, dt_us, SPOKEN_DIGITS_8.steps * SPOKEN_DIGITS_8.dt_us) == (
        SPOKEN_DIGITS_8.classes, SPOKEN_DIGITS_8.dt_us, steps * dt_us)
    info: dict[str, Any] = {
        "label": f"xylo-{'xylosim' if target == 'simulator' else 'board'}",
        "sdk": _sdk_info(),
        "target": target_info, **_references(),
        **({"task": SPOKEN_DIGITS_8.describe()} if shared else {}),
        "mapping": report,
        "inference": ("on the Xylo board (XyloSamna)" if target == "hardware" else
                      "XyloSim, bit-accurate simulation of the Xylo SNN core, on the CPU"),
        "data": "spoken_digits (shipped corpus, test split)",
        "classes": {"count": classes, "names": keys[:classes],
                    "why": f"Xylo Audio 2 has {MAX_OUTPUTS} output neurons: the first {classes} "
                           f"of the corpus's {len(keys)} classes"},
        "features": {"channels": MAX_INPUTS, "dt_us": dt_us, "steps": steps,
                     "max_events_per_step": MAX_INPUT_EVENTS},
        "model": {"kind": "lif_snn (rockpool LinearTorch/LIFTorch)", "hidden": hidden,
                  "dash_mem": dash_mem, "dash_syn": dash_syn, "epochs": epochs, "lr": lr,
                  "final_loss": losses[-1], "readout": "output synaptic current, mean over time"},
        "weights": "trained at build (seeded)",
        "float_accuracy": float_acc,
        "data_time_s": steps * dt_s,
    }

    return _built(target, test, module, lambda out: out.mean(0), info, float_acc,
                  float_scores.astype(np.float32), dt_us, steps, quantized_scores, counts)


def _references() -> dict[str, str]:
    return {"float_reference_source": "the float Rockpool network (LIFTorch), untimed",
            "quantized_reference_source": "the SDK's own quantised specification on a fresh "
                                          "XyloSim over the test set at build, untimed (on a "
                                          "simulator target it is the mapped model itself: a "
                                          "gap shows the timed path departing from it)"}


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)
