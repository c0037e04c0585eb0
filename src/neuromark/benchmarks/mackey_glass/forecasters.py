"""Mackey-Glass forecasting baselines: an echo state network and an LSTM (NeuroBench, Methods).

Both models are ``nn.Module`` s with two modes:

- teacher forcing (``forecast = False``): ``forward(x)`` with ``x`` of shape (T, 1) takes the
  ground truth f(t) as input at every step and returns predictions of f(t+dt), (T, 1);
- forecast (``forecast = True``): ``forward(x)`` ignores the values of ``x`` (only its length
  T is used), feeds back its own previous prediction for T steps and returns (T, 1). The
  first input is the prediction made at the last training step (the ESN option
  ``first_forecast_input: ground_truth``: the first test value, as NeuroBench feeds it).

Their weights live in ``nn.Linear`` / ``nn.LSTM`` layers and their non-linearities in
``nn.Tanh`` / ``nn.ReLU`` modules, so the harness's probes count every per-step operation.
The state persists between ``forward`` calls and is cleared only by :meth:`clear_state`
(deliberately not ``reset_state``, which the runner calls before each batch).

References:
    Jaeger (2001), "The echo state approach to analysing and training recurrent neural
    networks", GMD Report 148; Lukoševičius (2012), "A practical guide to applying echo state
    networks" (ridge readout). Hochreiter & Schmidhuber (1997), LSTM. Yik et al. (2025),
    NeuroBench, Nature Communications 16:1545 (eq. 21: ridge readout; baseline sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import torch
from pydantic import Field, model_validator
from torch import Tensor, nn

from neuromark.config import StrictModel, check_memory
from neuromark.models.torch_model import TorchModel


class ESNParams(StrictModel):
    """ESN hyperparameters (tuned on tau=17 only)."""

    reservoir_size: int = Field(186, gt=0)
    connection_probability: float = Field(0.11, gt=0, le=1)
    spectral_radius: float = Field(1.0, gt=0)
    leak: float = Field(0.6, gt=0, le=1, description="alpha in r = (1-a) r + a tanh(...)")
    input_scale: float = Field(1.0, gt=0, description="beta, scales W_in [1; f]")
    recurrent_scale: float = Field(1.0, gt=0, description="gamma, scales W r")
    ridge: float = Field(1e-8, ge=0, description="ridge penalty of the readout fit")
    warmup: int = Field(100, ge=0, description="training steps left out of the readout fit")
    # protocol details in which NeuroBench's ESN (examples/mackey_glass) differs from ours
    input_weight_range: float = Field(1.0, gt=0, description="W_in uniform in [-r, r] before "
                                      "input_scale (ours 1; NeuroBench's rand - 0.5: 0.5)")
    spectral_scaling: Literal["largest", "first_eigenvalue"] = Field(
        "largest", description="divide W by its largest |eigenvalue| (ours) or by the "
                               "|eigenvalue| LAPACK lists first (NeuroBench's w[0])")
    first_forecast_input: Literal["prediction", "ground_truth"] = Field(
        "prediction", description="the first forecast step's input: the last training "
                                  "prediction (ours) or the first test value (NeuroBench's)")

    @model_validator(mode="after")
    def _fits(self) -> ESNParams:
        # building the reservoir holds about five (size, size) float64 matrices
        check_memory(f"reservoir_size {self.reservoir_size}", 5 * 8 * self.reservoir_size ** 2)
        return self


class LSTMParams(StrictModel):
    """LSTM hyperparameters (tuned on tau=17 only)."""

    window: int = Field(50, gt=0, description="memory buffer: last `window` points as input")
    hidden_size: int = Field(100, gt=0)
    epochs: int = Field(200, gt=0)
    learning_rate: float = Field(0.01, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    chunk: int = Field(50, ge=0, description="training subsequence length (0: whole sequence)")
    batch_size: int = Field(5, gt=0, description="chunks per optimiser step")

    @model_validator(mode="after")
    def _fits(self) -> LSTMParams:
        # weights, gradients and two Adam moments: 4 float32 copies of 4h(h + window + 2)
        params = 4 * self.hidden_size * (self.hidden_size + self.window + 2)
        check_memory(f"hidden_size {self.hidden_size}", 4 * 4 * params)
        return self


def sparse_reservoir(size: int, probability: float, spectral_radius: float,
                     generator: torch.Generator, dtype: torch.dtype = torch.float64,
                     scaling: str = "largest") -> Tensor:
    """(size, size) matrix: N(0,1) entries kept with ``probability``, scaled to ``spectral_radius``.

    Zeros stay exact zeros (scaling multiplies them by a constant). ``scaling="largest"``
    divides by the largest |eigenvalue| (the spectral radius); ``"first_eigenvalue"`` by
    the |eigenvalue| LAPACK returns first, as NeuroBench's ESN does (not the largest in
    general, so its radius is not ``spectral_radius``).
    """
    weights = torch.randn(size, size, generator=generator, dtype=torch.float64)
    mask = torch.rand(size, size, generator=generator, dtype=torch.float64) < probability
    weights = weights * mask
    eigenvalues = torch.linalg.eigvals(weights).abs()
    radius = (eigenvalues.max() if scaling == "largest" else eigenvalues[0]).item()
    if radius > 0:
        weights = weights * (spectral_radius / radius)
    return weights.to(dtype)


class EchoStateNetwork(nn.Module):
    """Leaky tanh reservoir with a ridge-regression readout (NeuroBench ESN baseline).

    r(t) = (1-a) r(t-1) + a tanh(g W r(t-1) + b W_in [1; f(t)]),  y(t) = W_out [1; f(t); r(t)].
    ``w_rec`` holds g W and ``w_in`` holds b W_in (scales folded in; ``w_rec``'s zeros are
    exact). ``fit`` computes W_out in closed form (NeuroBench eq. 21).

    Args:
        params: :class:`ESNParams`.
        seed: seed of W_in (uniform in [-1, 1]) and W.
    """

    def __init__(self, params: ESNParams | None = None, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        self.params = p = params or ESNParams()
        gen = torch.Generator().manual_seed(seed)
        n = p.reservoir_size
        self.w_in = nn.Linear(2, n, bias=False, dtype=dtype)
        self.w_rec = nn.Linear(n, n, bias=False, dtype=dtype)
        self.w_out = nn.Linear(n + 2, 1, bias=False, dtype=dtype)
        self.activation = nn.Tanh()
        with torch.no_grad():
            w_in = (torch.rand(n, 2, generator=gen, dtype=torch.float64) * 2 - 1) * p.input_weight_range
            self.w_in.weight.copy_(p.input_scale * w_in)
            w = sparse_reservoir(n, p.connection_probability, p.spectral_radius, gen,
                                 scaling=p.spectral_scaling)
            self.w_rec.weight.copy_(p.recurrent_scale * w)
            self.w_out.weight.zero_()
        # run state, not model state: plain tensor attributes (no buffers), so the state
        # dict and NeuroBench's footprint rule hold the weights only, as NeuroBench's own
        # ESN class does; :meth:`run_state` shows them to the adapter as neuron state
        self.reservoir = torch.zeros(n, dtype=dtype)
        self.prior = torch.zeros(1, dtype=dtype)
        self.forecast = False
        self.requires_grad_(False)

    def run_state(self) -> dict[str, Tensor]:
        """The per-sample run state by name: the reservoir r (n,) and the fed-back
        prediction (1,), both at the module's dtype (what :class:`ForecasterModel`'s
        ``state()`` adds to the footprint as neuron state)."""
        return {"reservoir": self.reservoir, "prior": self.prior}

    def _apply(self, fn: Any, recurse: bool = True) -> EchoStateNetwork:
        """Move and cast the run state with the module (``.to``, ``.double()``...)."""
        super()._apply(fn, recurse)
        self.reservoir, self.prior = fn(self.reservoir), fn(self.prior)
        return self

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        """Load a state dict; one saved while ``reservoir`` and ``prior`` were buffers (before
        they became run state) loads too, its run state restored from those two entries."""
        for name in ("reservoir", "prior"):
            saved = state_dict.pop(prefix + name, None)  # torch hands us its own copy
            if isinstance(saved, Tensor):
                current = getattr(self, name)
                if saved.shape != current.shape:
                    raise RuntimeError(f"{prefix}{name}: the checkpoint's run state has shape "
                                       f"{tuple(saved.shape)}, this ESN's {tuple(current.shape)}")
                setattr(self, name, saved.detach().to(current.dtype).clone())
        super()._load_from_state_dict(state_dict, prefix, *args)

    def clear_state(self) -> None:
        """Zero the reservoir and the fed-back prediction."""
        self.reservoir.zero_()
        self.prior.zero_()

    def _update(self, f: Tensor) -> Tensor:
        """One reservoir step on input f (shape (1,)); returns [1; f; r] (shape (n+2,))."""
        one = torch.ones_like(f)
        a = self.params.leak
        drive = self.w_rec(self.reservoir) + self.w_in(torch.cat([one, f]))
        self.reservoir = (1 - a) * self.reservoir + a * self.activation(drive)
        return torch.cat([one, f, self.reservoir])

    def forward(self, x: Tensor) -> Tensor:
        """(T, 1) -> (T, 1); see the module docstring for the two modes."""
        x = x.to(self.reservoir.dtype)
        outputs = []
        truth_first = self.params.first_forecast_input == "ground_truth"
        for t in range(x.shape[0]):
            f = self.prior if self.forecast and not (t == 0 and truth_first) else x[t].reshape(1)
            y = self.w_out(self._update(f))
            self.prior = y.detach()
            outputs.append(y)
        return torch.stack(outputs)

    @torch.no_grad()
    def fit(self, inputs: Tensor, targets: Tensor) -> Tensor:
        """Drive with ``inputs`` (T, 1), fit W_out by ridge regression on ``targets`` (T, 1).

        Leaves the reservoir at its state after the last input and ``prior`` at the last
        training prediction, ready to forecast. Returns the training predictions (T, 1).
        """
        p = self.params
        self.clear_state()
        self.forecast = False
        x = inputs.to(self.reservoir.dtype).reshape(-1)
        features = torch.stack([self._update(x[t].reshape(1)) for t in range(x.shape[0])])
        keep = slice(min(p.warmup, x.shape[0] - 1), None)
        design = features[keep].to(torch.float64)  # (T', n+2)
        y = targets.reshape(-1, 1)[keep].to(torch.float64)
        gram = design.T @ design + p.ridge * torch.eye(design.shape[1], dtype=torch.float64,
                                                      device=design.device)
        w_out = torch.linalg.solve(gram, design.T @ y).T  # (1, n+2)
        self.w_out.weight.copy_(w_out)
        predictions = features @ self.w_out.weight.T
        self.prior = predictions[-1].clone()
        return predictions


class LSTMForecaster(nn.Module):
    """Memory buffer of the last ``window`` points -> LSTM(hidden) -> ReLU -> Linear -> f(t+dt).

    Inputs are standardised with the training half's mean and standard deviation (buffers
    ``offset`` and ``scale``; scalar operations, identity until :meth:`fit`). The buffer
    (zeros at the start) and the LSTM state (h, c) persist across steps. Teacher forcing runs
    the whole sequence in one ``nn.LSTM`` call; forecast calls it once per step.
    """

    def __init__(self, params: LSTMParams | None = None, seed: int = 0,
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.params = p = params or LSTMParams()
        self.seed = seed
        # nn.LSTM / nn.Linear initialise from the global generator: seed it in a fork, so
        # the caller's random state is left as it was
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.lstm = nn.LSTM(p.window, p.hidden_size, dtype=dtype)
            self.readout = nn.Linear(p.hidden_size, 1, dtype=dtype)
        self.activation = nn.ReLU()
        self.register_buffer("memory", torch.zeros(p.window, dtype=dtype))
        self.register_buffer("h", torch.zeros(1, 1, p.hidden_size, dtype=dtype))
        self.register_buffer("c", torch.zeros(1, 1, p.hidden_size, dtype=dtype))
        self.register_buffer("prior", torch.zeros(1, dtype=dtype))
        self.register_buffer("offset", torch.zeros(1, dtype=dtype))
        self.register_buffer("scale", torch.ones(1, dtype=dtype))
        self.forecast = False

    def clear_state(self) -> None:
        """Zero the buffer, the LSTM state and the fed-back prediction."""
        for buf in (self.memory, self.h, self.c, self.prior):
            buf.zero_()

    def _windows(self, x: Tensor) -> Tensor:
        """(T, window) buffers ending at each standardised x[t], after the current memory."""
        padded = torch.cat([self.memory, (x - self.offset) / self.scale])
        return padded.unfold(0, self.params.window, 1)[1:]

    def _head(self, out: Tensor) -> Tensor:
        return self.readout(self.activation(out)) * self.scale + self.offset

    def _sequence(self, x: Tensor) -> Tensor:
        """Teacher forcing over x (T,) in one LSTM call; returns (T, 1)."""
        buffers = self._windows(x)
        out, (h, c) = self.lstm(buffers.unsqueeze(1), (self.h, self.c))
        self.memory, self.h, self.c = buffers[-1].detach(), h.detach(), c.detach()
        return self._head(out.squeeze(1))

    def forward(self, x: Tensor) -> Tensor:
        """(T, 1) -> (T, 1); see the module docstring for the two modes."""
        x = x.to(self.memory.dtype)
        if not self.forecast:
            y = self._sequence(x.reshape(-1))
            self.prior = y[-1].detach()
            return y
        outputs = []
        for _ in range(x.shape[0]):
            self.memory = torch.cat([self.memory[1:], (self.prior - self.offset) / self.scale])
            out, (self.h, self.c) = self.lstm(self.memory.view(1, 1, -1), (self.h, self.c))
            y = self._head(out.view(1, -1)).view(1)
            self.prior = y
            outputs.append(y)
        return torch.stack(outputs)

    def fit(self, inputs: Tensor, targets: Tensor, *, progress=None) -> list[float]:
        """Train with MSE and Adam for ``epochs``; returns the mean loss per epoch.

        The training sequence is cut into chunks of ``chunk`` steps (each with its true
        50-point buffers and a zero LSTM state); an epoch visits every chunk once, in shuffled
        mini-batches of ``batch_size`` chunks (``chunk = 0``: one full-sequence BPTT step per
        epoch). Afterwards the whole sequence is run once, leaving the state ready to forecast.
        ``progress`` (optional) is called with (epoch, loss) after each epoch.
        """
        p = self.params
        x = inputs.reshape(-1).to(self.memory.dtype)
        y = targets.reshape(-1).to(self.memory.dtype)
        with torch.no_grad():
            self.offset.fill_(float(x.mean()))
            self.scale.fill_(float(x.std()) or 1.0)
        self.clear_state()
        buffers = self._windows(x)  # (T, window)
        length = p.chunk or len(x)
        starts = list(range(0, len(x) - length + 1, length))
        if starts[-1] + length < len(x):
            starts.append(len(x) - length)
        xs = torch.stack([buffers[s:s + length] for s in starts], dim=1)  # (chunk, n, window)
        ys = torch.stack([y[s:s + length] for s in starts], dim=1)  # (chunk, n)
        gen = torch.Generator().manual_seed(self.seed)
        optimizer = torch.optim.Adam(self.parameters(), lr=p.learning_rate,
                                     weight_decay=p.weight_decay)
        self.forecast = False
        self.train()
        losses = []
        for epoch in range(p.epochs):
            order = torch.randperm(len(starts), generator=gen)
            total = 0.0
            for batch in order.split(p.batch_size):
                optimizer.zero_grad()
                out, _ = self.lstm(xs[:, batch])
                loss = nn.functional.mse_loss(self._head(out).squeeze(-1), ys[:, batch])
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * len(batch)
            losses.append(total / len(starts))
            if progress is not None:
                progress(epoch, losses[-1])
            if not math.isfinite(losses[-1]):
                break
        self.eval()
        with torch.no_grad():
            self.clear_state()
            self.forward(x.reshape(-1, 1))
        return losses


class ForecasterModel(TorchModel):
    """The adapter of a Mackey-Glass forecaster: a :class:`~neuromark.models.TorchModel`
    whose call runs one (T, 1) series, a single sample (``batch_dim`` None: T is time, not a
    batch), and whose ``state()`` adds the module's ``run_state()`` (the ESN's reservoir and
    fed-back prediction, held outside its parameters and buffers) to its neuron layers'
    state, so our footprint counts it as one sample's neuron state and NeuroBench's rule,
    which reads parameters and buffers only, does not."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__(module, batch_dim=None)

    def state(self) -> dict[str, Tensor]:
        run_state = getattr(self.module, "run_state", None)
        return {**super().state(), **(run_state() if callable(run_state) else {})}


@runtime_checkable
class Forecaster(Protocol):
    """A registered model the ``mackey_glass`` task can train and run: ``params_model`` (the
    pydantic model of ``models[i].params``) and ``build(params, seed)``, a fresh module with
    the two modes above and ``fit(inputs, targets)`` (its loss curve, a list, or anything)."""

    name: str
    params_model: type[StrictModel]

    def build(self, params: Any, seed: int) -> nn.Module: ...


@dataclass(frozen=True)
class ForecasterFamily:
    """A :class:`Forecaster` over a module class called as ``cls(params, seed=seed)``;
    ``revision`` (0: the first) counts changes of the module that change a figure, so the
    task's saved sweep entries of an older revision are recomputed, not reused."""

    name: str
    params_model: type[StrictModel]
    module: type[nn.Module]
    revision: int = 0

    def build(self, params: Any, seed: int) -> nn.Module:
        return self.module(params, seed=seed)


#: Registry entry ``esn``; the kernel's ``lstm`` (the LSTM baseline of every task) stands
#: for :data:`LSTM_FORECASTER` in this family (:func:`.instances.forecaster_for`).
#: revision 1: the reservoir state and fed-back prediction left the buffers (NeuroBench's
#: footprint rule no longer counts them; ours counts them as neuron state, as before).
ESN = ForecasterFamily("esn", ESNParams, EchoStateNetwork, revision=1)
LSTM_FORECASTER = ForecasterFamily("lstm", LSTMParams, LSTMForecaster)
