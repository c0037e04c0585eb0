"""Keyword-spotting baselines: M5 (Dai et al. 2017) and feed-forward LIF networks, with a
plain training recipe and the feature/embedding split the FSCIL prototypes need.

- :class:`M5`: conv1d(k=``input_kernel``, stride) -> 3 x conv1d(k=3), each followed by
  batch norm, ReLU and max-pooling by ``pool_kernel``; global average pooling; an optional
  dropout; the ``output`` Linear. NeuroBench's GSC ANN is ``M5(1, 35)`` on the 8-kHz
  waveform (32 channels, k=80, stride 16, pool 4; Dense 1,880,256 per sample); its MSWC
  backbone is ``M5(20, 200, stride=2, n_channel=256, input_kernel=4, pool_kernel=2)`` on
  MFCC (20, 201) (Dense 25,919,488).
- :class:`LIFNet`: Linear -> Leaky LIF layers (``mem = beta mem + I``, spike when
  ``mem >= 1``, reset by subtraction; the leaky integrate-and-fire of snnTorch's
  ``Leaky``), run one step per call; the readout is the ``output`` Linear applied at every
  step. ``readout="spikes"``: a last LIF layer whose spikes are counted (NeuroBench's GSC
  SNN, 20-256-256-256-35, β 0.9, decoded by spike count; Dense 200 x 145,152);
  ``readout="sum"``: the readout currents summed over time (the MSWC SNN's readout, so the
  prototype conversion with the bias divided by T applies).

Each model has ``features(x) -> (B, F)`` (M5: the pooled vector; LIFNet: spike counts of
the last hidden layer summed over time) and ``output`` (the Linear the prototypes replace).
Training: :func:`fit_classifier` (Adam, StepLR, cross entropy on ``logits(x)``; SNNs by
the fast-sigmoid surrogate gradient of :mod:`neuromark.networks.lif`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.benchmarks.keywords.encoder_cost import keyword_features_cost
from neuromark.benchmarks.keywords.features import KeywordFeatures
from neuromark.benchmarks.keywords.speech_commands import (
    CITATION,
    LABELS,
    SAMPLE_RATE,
    SpeechCommands,
    SpeechCommandsEntry,
)
from neuromark.context import default_cache_dir
from neuromark.data.clips import decoded_files
from neuromark.errors import ConfigError
from neuromark.networks.lif import spike_fn


class M5(nn.Module):
    """M5 on (B, n_input, samples or frames) -> logits (B, n_output)."""

    def __init__(self, n_input: int = 1, n_output: int = 35, stride: int = 16, n_channel: int = 32,
                 input_kernel: int = 80, pool_kernel: int = 4, dropout: float = 0.0) -> None:
        super().__init__()
        c = n_channel
        widths = [(n_input, c, input_kernel, stride), (c, c, 3, 1), (c, 2 * c, 3, 1), (2 * c, 2 * c, 3, 1)]
        layers: list[nn.Module] = []
        for cin, cout, k, s in widths:
            layers += [nn.Conv1d(cin, cout, kernel_size=k, stride=s), nn.BatchNorm1d(cout), nn.ReLU(),
                       nn.MaxPool1d(pool_kernel)]
        self.body = nn.Sequential(*layers)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(2 * c, n_output)
        self.feature_size = 2 * c

    def features(self, x: Tensor) -> Tensor:
        """(B, 2 n_channel): global average of the last conv block."""
        if x.dim() == 2:  # one channel given as (B, samples)
            x = x[:, None, :]
        return self.body(x).mean(dim=-1)

    def forward(self, x: Tensor) -> Tensor:
        return self.output(self.dropout(self.features(x)))

    logits = forward


class LeakyLIF(nn.Module):
    """Leaky integrate-and-fire, one step per call: current (B, H) -> spikes (B, H);
    ``mem = beta mem + current``; a spike when ``mem >= threshold``, reset by subtraction."""

    neuromark_neuron = True

    def __init__(self, size: int, beta: float = 0.9, threshold: float = 1.0, slope: float = 25.0) -> None:
        super().__init__()
        self.size, self.beta, self.threshold, self.slope = size, beta, threshold, slope
        self.mem: Tensor | None = None

    def reset_state(self) -> None:
        self.mem = None

    def forward(self, current: Tensor) -> Tensor:
        if self.mem is None or self.mem.shape != current.shape:
            self.mem = torch.zeros_like(current)
        mem = self.beta * self.mem + current
        spikes = spike_fn(mem - self.threshold, self.slope)
        self.mem = mem - self.threshold * spikes.detach()
        return spikes


class LeakyLIFSequence(torch.autograd.Function):
    """A whole sequence through :class:`LeakyLIF` in one autograd node (the training path):
    current (B, T, H) -> spikes (B, T, H), the same spikes as T calls of the step module.

    Backward, with m_t the membrane before reset and σ' the fast-sigmoid surrogate:
    dL/dm_t = dL/ds_t σ'(m_t - θ) + β dL/dm_{t+1} (the reset is detached, as in the step
    module), and dL/dI_t = dL/dm_t: a reverse scan of T element-wise steps instead of an
    autograd graph of about 6 T nodes per layer (4-5 times faster training on a CPU).
    """

    @staticmethod
    def forward(ctx: Any, current: Tensor, beta: float, threshold: float, slope: float) -> Tensor:  # type: ignore[override]
        mem = torch.zeros_like(current[:, 0])
        mems, spikes = torch.empty_like(current), torch.empty_like(current)
        for t in range(current.shape[1]):
            mem = beta * mem + current[:, t]
            mems[:, t] = mem
            s = (mem - threshold > 0).to(current.dtype)
            spikes[:, t] = s
            mem = mem - threshold * s
        ctx.save_for_backward(mems)
        ctx.beta, ctx.threshold, ctx.slope = beta, threshold, slope
        return spikes

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None, None]:  # type: ignore[override]
        (mems,) = ctx.saved_tensors
        direct = grad / (ctx.slope * (mems - ctx.threshold).abs() + 1.0) ** 2
        out = torch.empty_like(direct)
        carry = torch.zeros_like(direct[:, 0])
        for t in range(direct.shape[1] - 1, -1, -1):
            carry = direct[:, t] + ctx.beta * carry
            out[:, t] = carry
        return out, None, None, None


def lif_sequence(lif: LeakyLIF, current: Tensor) -> Tensor:
    """(B, T, H) currents -> spikes through ``lif`` from rest: the fused training path while
    gradients are on, else one step per call (so probes see every step)."""
    if torch.is_grad_enabled() and current.requires_grad:
        lif.reset_state()
        return LeakyLIFSequence.apply(current, lif.beta, lif.threshold, lif.slope)
    return torch.stack([lif(current[:, t]) for t in range(current.shape[1])], dim=1)


class LIFNet(nn.Module):
    """Feed-forward LIF network on (B, T, inputs) spikes; see the module notes.

    ``forward`` returns (B, T, classes): output spikes (``readout="spikes"``) or readout
    currents (``readout="sum"``); :meth:`logits` reduces them over time (sum).

    Training knobs (none changes the architecture or its Dense count): ``slope``, the
    fast-sigmoid surrogate's steepness (25: snnTorch's default; a smaller one passes
    gradient to neurons far from threshold); ``init_gain`` multiplies the default
    (uniform ±1/sqrt(fan_in)) weights of every layer that drives LIF neurons at
    construction, so that sparse ±1 inputs drive the first layers above threshold;
    ``logit_scale`` multiplies the ``sum`` readout's time-averaged logits, a fixed softmax
    temperature for cross entropy (currents driven by spike rates of a few % average to
    nearly flat logits that train slowly; the argmax is unchanged).
    """

    def __init__(self, inputs: int = 20, classes: int = 35,
                 hidden: tuple[int, ...] | list[int] = (256, 256, 256),
                 beta: float = 0.9, readout: str = "spikes", dropout: float = 0.0, *,
                 slope: float = 25.0, init_gain: float = 1.0, logit_scale: float = 1.0) -> None:
        super().__init__()
        if readout not in ("spikes", "sum"):
            raise ValueError(f"LIFNet readout must be 'spikes' or 'sum', got {readout!r}")
        for name, value in (("beta", beta), ("slope", slope), ("init_gain", init_gain),
                            ("logit_scale", logit_scale)):
            if not value > 0 or (name == "beta" and value >= 1):
                raise ValueError(f"LIFNet {name} must be positive{' and below 1' if name == 'beta' else ''}, "
                                 f"got {value}")
        sizes = [inputs, *hidden]
        self.fcs = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True))
        self.lifs = nn.ModuleList(LeakyLIF(b, beta, slope=slope) for b in sizes[1:])
        self.output = nn.Linear(sizes[-1], classes)
        self.out_lif = LeakyLIF(classes, beta, slope=slope) if readout == "spikes" else None
        self.dropout = nn.Dropout(dropout)
        self.readout, self.feature_size, self.logit_scale = readout, sizes[-1], logit_scale
        self.last_hidden: Tensor | None = None
        if init_gain != 1.0:
            with torch.no_grad():
                for layer in [*self.fcs, self.output] if self.out_lif is not None else self.fcs:
                    layer.weight.mul_(init_gain)

    def reset_state(self) -> None:
        for lif in self.lifs:
            lif.reset_state()
        if self.out_lif is not None:
            self.out_lif.reset_state()

    def hidden_spikes(self, x: Tensor) -> Tensor:
        """(B, T, H) spikes of the last hidden layer."""
        self.reset_state()
        h = x
        for fc, lif in zip(self.fcs, self.lifs, strict=True):
            h = self.dropout(lif_sequence(lif, fc(h)))
        self.last_hidden = h
        return h

    def features(self, x: Tensor) -> Tensor:
        """(B, H): spike counts of the last hidden layer, summed over time."""
        return self.hidden_spikes(x).sum(dim=1)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 3:
            raise ValueError(f"LIFNet expects (batch, time, inputs), got {tuple(x.shape)}")
        current = self.output(self.hidden_spikes(x))
        if self.out_lif is None:
            return current
        return lif_sequence(self.out_lif, current)

    def logits(self, x: Tensor) -> Tensor:
        """(B, classes): output spike counts (``spikes``) or the readout currents averaged
        over time times ``logit_scale`` (``sum``: the same argmax as their sum, on a scale
        cross entropy trains)."""
        out = self.forward(x)
        return out.sum(dim=1) if self.out_lif is not None else out.mean(dim=1) * self.logit_scale


def build(kind: str, **options: Any) -> nn.Module:
    """A fresh ``m5`` or ``lif`` model from its options."""
    if kind == "m5":
        return M5(**options)
    if kind == "lif":
        return LIFNet(**options)
    raise ValueError(f"unknown keyword model {kind!r} (m5, lif)")


def gsc_m5(n_input: int = 1, n_output: int = 35, n_channel: int = 32) -> M5:
    """NeuroBench's GSC ANN: M5 on the 8-kHz waveform (1, 8000)."""
    return M5(n_input, n_output, stride=16, n_channel=n_channel, input_kernel=80, pool_kernel=4)


def gsc_snn(inputs: int = 20, classes: int = 35, hidden: int = 256, beta: float = 0.9, *,
            slope: float = 25.0, init_gain: float = 1.0) -> LIFNet:
    """NeuroBench's GSC SNN: 20-256-256-256-35 Leaky LIF on delta-mel spikes (200, 20)
    (``slope``, ``init_gain``: training knobs of :class:`LIFNet`)."""
    return LIFNet(inputs, classes, (hidden, hidden, hidden), beta, readout="spikes", slope=slope,
                  init_gain=init_gain)


def dense_per_sample(model: nn.Module, example: Tensor) -> int:
    """Hand count of multiply-accumulates per sample of the conv/linear layers (weights
    only), from the layers' output shapes on ``example`` (1, ...): the Dense count."""
    total = 0
    hooks = []

    def count(module: nn.Module, inputs: Any, output: Tensor) -> None:
        nonlocal total
        if isinstance(module, nn.Conv1d):
            total += output.shape[-1] * module.out_channels * module.in_channels * module.kernel_size[0]
        elif isinstance(module, nn.Linear):
            total += math.prod(output.shape[1:-1]) * module.in_features * module.out_features

    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            hooks.append(m.register_forward_hook(count))
    try:
        with torch.inference_mode():
            model.eval()
            model(example)
    finally:
        for h in hooks:
            h.remove()
    return int(total)


# ---- the speech_commands dataset entry -------------------------------------------------------

_GSC_SPLITS = {"train": "training", "training": "training", "valid": "validation",
               "validation": "validation", "test": "testing", "testing": "testing"}


class KeywordClips:
    """Decoded clips of a keyword data set with a feature recipe applied batch by batch:
    ``dataset[i] = (features, label)``; :meth:`loader` yields ``(features (B, ...), labels (B,))``
    tensors, computing one batch's features at a time from the (memory-mapped) decoded array.
    """

    def __init__(self, clips: np.ndarray, labels: np.ndarray, features: Callable[[np.ndarray], Tensor],
                 *, num_classes: int, citation: str = "", path: Any = None,
                 recipe_file: Path | None = None) -> None:
        self.clips, self.labels, self.features = clips, np.asarray(labels), features
        self.num_classes, self.citation, self.path = num_classes, citation, path
        #: the file whose bytes define the clips (the decoded cache's sidecar: file list and
        #: array sha256), hashed into a trained checkpoint's recipe
        self.recipe_file = recipe_file

    def __len__(self) -> int:
        return len(self.labels)

    def front_end_cost(self) -> Any:
        """The feature recipe's cost on one clip of this set's length (issue 47.4;
        :mod:`neuromark.processors.encoder_cost`), or None for a recipe of unknown cost or the
        raw waveform at its own rate (no encoder)."""
        if not isinstance(self.features, KeywordFeatures):
            return None
        cost = keyword_features_cost(self.features, int(np.shape(self.clips)[-1]))
        return cost if cost.stages else None  # the raw waveform at its own rate: no encoder

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.features(np.asarray(self.clips[:1]))[0].shape)

    def __getitem__(self, i: int) -> tuple[Tensor, int]:
        if not -len(self) <= i < len(self):
            raise IndexError(f"{self.path}: sample {i} out of range (0..{len(self) - 1})")
        return self.features(np.asarray(self.clips[i:i + 1]))[0], int(self.labels[i])

    def loader(self, batch_size: int, *, shuffle: bool = False, seed: int | None = None,
               drop_last: bool = False) -> Any:
        order = (np.random.default_rng(seed).permutation(len(self)) if shuffle else np.arange(len(self)))
        stop = len(order) - (len(order) % batch_size if drop_last else 0)
        for i in range(0, stop, batch_size):
            idx = np.sort(order[i:i + batch_size]) if not shuffle else order[i:i + batch_size]
            yield self.features(np.asarray(self.clips[idx])), torch.from_numpy(self.labels[idx])


def speech_commands(split: str = "test", root: str = "", features: str = "waveform",
                    synthesize: dict[str, int | list[str]] | None = None,
                    cache_dir: str | None = None) -> LazyClips:
    """Dataset entry ``speech_commands``: Speech Commands v0.02 at ``root`` (the real set, or
    the espeak-ng corpus written there first when ``synthesize: {speakers, repeats}`` is
    given; ``words``: a subset of the 35, for tests), decoded once (cached in ``cache_dir``,
    default the cache folder's ``decoded/``, never the data folder), with
    ``features``: ``waveform`` ((1, 8000): resampled to 8 kHz, NeuroBench's M5 input) or
    ``delta_mel`` ((200, 20) spikes: 16 kHz, n_fft 512, hop 80, 20 HTK mels over 20-4000 Hz,
    delta threshold 1)."""
    if split not in _GSC_SPLITS:
        raise ConfigError(f"speech_commands: unknown split {split!r} (train, validation, test)")
    if not root:
        raise ConfigError("speech_commands: give options.root (the Speech Commands folder)")
    if features == "waveform":
        recipe = KeywordFeatures("waveform", SAMPLE_RATE, 8000)
    elif features == "delta_mel":
        recipe = KeywordFeatures("delta_mel", SAMPLE_RATE, None, 512, 80, 20)
    else:
        raise ConfigError(f"speech_commands: features must be 'waveform' or 'delta_mel', got {features!r}")

    def build() -> KeywordClips:
        if synthesize is not None:  # the data set entry's generator (neuromark.data.entry)
            SpeechCommandsEntry().synthesize(root, **synthesize)  # type: ignore[arg-type]
        data = SpeechCommands(root, _GSC_SPLITS[split])
        decoded = Path(cache_dir) if cache_dir else default_cache_dir() / "decoded"  # never root
        clips = data.arrays(decoded)
        sidecar = decoded_files(decoded, f"speech_commands_{data.subset}", data.recipe())[1]
        return KeywordClips(clips, data.labels, recipe, num_classes=len(LABELS), citation=CITATION,
                            path=data.folder, recipe_file=sidecar)

    if synthesize is None:
        SpeechCommands(root, _GSC_SPLITS[split])  # the layout is checked now (validation)
    return LazyClips(build, Path(root), recipe)


class LazyClips:
    """A :class:`KeywordClips` built on first use, so that validating a config never
    synthesises or decodes a corpus."""

    citation = CITATION
    classes = LABELS

    def __init__(self, build: Callable[[], KeywordClips], path: Path, recipe: Any = None) -> None:
        self._build, self._data, self.path = build, None, path
        #: its :class:`KeywordFeatures`: ``time_step_s()`` without building the clips
        self.time_step_s = getattr(recipe, "time_step_s", lambda: None)

    @property
    def data(self) -> KeywordClips:
        if self._data is None:
            self._data = self._build()
            self.path = self._data.path
        return self._data

    @property
    def num_classes(self) -> int:
        return len(LABELS)

    @property
    def targets(self) -> list[int]:
        return [int(v) for v in self.data.labels]

    @property
    def recipe_file(self) -> Path | None:
        """The built split's :attr:`KeywordClips.recipe_file` (builds it: synthesis, decoding)."""
        return self.data.recipe_file

    @property
    def input_shape(self) -> tuple[int, ...]:
        return self.data.input_shape

    def __len__(self) -> int:
        return len(self.data)

    def front_end_cost(self) -> Any:
        """The built split's :meth:`KeywordClips.front_end_cost`."""
        return self.data.front_end_cost()

    def __getitem__(self, i: int) -> tuple[Tensor, int]:
        return self.data[i]

    def loader(self, batch_size: int, **options: Any) -> Any:
        return self.data.loader(batch_size, **options)
