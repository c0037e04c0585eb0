"""FSCIL sessions: the prototype head, session sampling, and one session order scored as an
executor unit.

:func:`prototype_layer` is NeuroBench's prototypical conversion (Yik et al., Algorithm 1);
:class:`SessionSampler` draws session orders and shots from the task's own generator;
:func:`score_order` scores sessions 0..L of one repeat from cached features, and
:func:`order_units` declares the ``repeats`` orders as independent units (one per order), so
that ``--executor ray`` spreads them over a cluster while the backbone and its features are
computed once on the driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuromark._threads import torch_threads
from neuromark.errors import DataError
from neuromark.executors import Unit


def prototype_layer(features: Any, labels: Any, num_classes: int, *, steps: int | None = None) -> Any:
    """The prototypical output layer: ``nn.Linear(F, num_classes)`` with, for each class k
    present in ``labels``, ``w_k = 2 c_k`` and ``b_k = -c_k.c_k`` (``/ steps`` for a readout
    summed over ``steps`` time steps), c_k the mean of ``features`` (N, F) over its samples.

    logit_k = 2 c_k.f - |c_k|^2 = |f|^2 - |f - c_k|^2: the argmax is the nearest prototype.
    For an SNN, f is the time-summed spike count of the last hidden layer and the readout
    sums ``W s_t + b`` over the steps, so ``b = -|c_k|^2 / steps`` gives the same rule.
    Classes absent from ``labels`` get zero rows; ``layer.present`` (bool, (num_classes,))
    says which are real, for masking.
    """
    import torch

    x = torch.as_tensor(features, dtype=torch.float32)
    y = torch.as_tensor(labels, dtype=torch.long)
    if x.dim() != 2 or y.shape != (len(x),):
        raise ValueError(f"prototype_layer: need features (N, F) and labels (N,), got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    if len(y) and (int(y.min()) < 0 or int(y.max()) >= num_classes):
        raise ValueError(f"prototype_layer: labels must lie in 0..{num_classes - 1}")
    sums = torch.zeros(num_classes, x.shape[1], device=x.device).index_add_(0, y, x)
    counts = torch.bincount(y, minlength=num_classes).float()
    present = counts > 0
    protos = sums / counts.clamp(min=1)[:, None]
    layer = torch.nn.Linear(x.shape[1], num_classes)
    with torch.no_grad():
        layer.weight.copy_(2 * protos)
        layer.bias.copy_(-(protos * protos).sum(1) / (steps or 1))
    layer.present = present
    return layer


@dataclass(frozen=True)
class Session:
    """One incremental session: its language, new classes, support indices (into the
    evaluation clips) and the cumulative query indices."""

    index: int
    language: str | None
    classes: tuple[int, ...]
    support: tuple[int, ...]
    query: tuple[int, ...]
    new_query: tuple[int, ...]


class SessionSampler:
    """Session order and shot sampling from the task's own generator.

    Args:
        labels: label of each evaluation clip (N,).
        languages: language of each evaluation clip (N,).
        shots, support_pool, query_pool, query_shots: per class, as in the module notes.
    """

    def __init__(self, labels: Any, languages: Any, *, shots: int, support_pool: int, query_pool: int,
                 query_shots: int) -> None:
        if shots > support_pool or query_shots > query_pool:
            raise ValueError("need shots <= support_pool and query_shots <= query_pool")
        labels, languages = np.asarray(labels), np.asarray(languages)
        self.shots, self.query_shots = shots, query_shots
        self.languages = sorted(set(languages.tolist()))
        self.pools: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.by_language: dict[str, list[int]] = {}
        for label in sorted(set(labels.tolist())):
            idx = np.flatnonzero(labels == label)
            if len(idx) < support_pool + query_pool:
                raise DataError(f"class {label}: {len(idx)} evaluation clips, fewer than support_pool "
                                f"+ query_pool = {support_pool + query_pool}")
            self.pools[label] = (idx[:support_pool], idx[support_pool:support_pool + query_pool])
            self.by_language.setdefault(str(languages[idx[0]]), []).append(label)

    def sessions(self, seed: int, repeat: int, order: list[str] | None = None) -> list[Session]:
        """Sessions 1..L for one repeat: a permutation of the languages (or ``order``)."""
        rng = np.random.default_rng([seed, repeat])
        langs = list(order) if order else [self.languages[i] for i in rng.permutation(len(self.languages))]
        out, cumulative = [], []
        for s, lang in enumerate(langs, start=1):
            classes = [self.by_language[lang][i] for i in rng.permutation(len(self.by_language[lang]))]
            support, new = [], []
            for c in classes:
                pool_s, pool_q = self.pools[c]
                new += sorted(rng.choice(pool_q, self.query_shots, replace=False).tolist())
                support += sorted(rng.choice(pool_s, self.shots, replace=False).tolist())
            cumulative += new
            out.append(Session(s, lang, tuple(classes), tuple(support), tuple(cumulative), tuple(new)))
        return out


def prototype_set(emb: dict[str, Any], data: dict[str, Any], support: list[int]) -> tuple[Any, Any]:
    """Features and labels the prototypes are averaged from: base train plus the support
    shots (indices into the evaluation clips) of every session so far."""
    import torch

    return (torch.cat([emb["train"], emb["eval"][support]]),
            torch.cat([data["train_y"], data["eval_y"][support]]))


def head_predict(head: Any, x: Any, steps: int | None) -> Any:
    """Masked argmax of the prototype head on features ``x`` (N, F): for a readout summed
    over ``steps`` steps the logits are ``W S + steps b`` (the same as running it)."""
    import torch

    with torch.no_grad():
        logits = x @ head.weight.T + head.bias * (steps or 1)
    return logits.masked_fill(~head.present, float("-inf")).argmax(-1)


@dataclass(frozen=True)
class OrderInputs:
    """What every order unit needs (plain tensors, picklable): features (N, F) of base
    train, base test and evaluation clips (``emb``), their labels (``labels``: ``train_y``,
    ``test_y``, ``eval_y``), the sampler, the base accuracy and the readout ``steps``."""

    emb: dict[str, Any]
    labels: dict[str, Any]
    sampler: SessionSampler
    base_accuracy: float
    steps: int | None


def cumulative(sessions: list[Session]) -> Iterator[tuple[int, list[int], list[int]]]:
    """``(k, support, query)`` for sessions 0..L: the support shots and the query clips
    (indices into the evaluation clips) seen up to session k; empty for session 0."""
    support: list[int] = []
    yield 0, [], []
    for sess in sessions:
        support += sess.support
        yield sess.index, list(support), list(sess.query)


def session_head(inputs: OrderInputs, support: list[int]) -> Any:
    """The prototype head over base train plus ``support`` (:func:`prototype_layer`)."""
    feats, labels = prototype_set(inputs.emb, inputs.labels, support)
    return prototype_layer(feats, labels, 200, steps=inputs.steps)


def score_order(inputs: OrderInputs, seed: int, repeat: int, order: list[str] | None,
                threads: int = 1) -> dict[str, np.ndarray]:
    """Sessions 0..L of repeat ``repeat`` on ``threads`` torch threads: ``accuracy`` (L+1,)
    on all seen classes, ``new_class_accuracy`` (L+1,; NaN for session 0) and ``frozen``
    (L+1,)."""
    import torch

    labels, n_base = inputs.labels, len(inputs.labels["test_y"])
    sessions = inputs.sampler.sessions(seed, repeat, order)
    n = len(sessions) + 1
    acc, new_acc, frozen = np.zeros(n), np.full(n, np.nan), np.zeros(n)
    with torch_threads(threads):
        for k, support, query in cumulative(sessions):
            x = torch.cat([inputs.emb["test"], inputs.emb["eval"][query]])
            y = torch.cat([labels["test_y"], labels["eval_y"][query]])
            pred = head_predict(session_head(inputs, support), x, inputs.steps)
            acc[k] = float((pred == y).double().mean())
            if k:
                new_acc[k] = float((pred[n_base:] == y[n_base:]).double().mean())
            frozen[k] = inputs.base_accuracy * n_base / (n_base + len(query))
    return {"accuracy": acc, "new_class_accuracy": new_acc, "frozen": frozen}


def order_units(inputs: Any, seed: int, repeats: int, order: list[str] | None,
                threads: int, where: str) -> list[Unit]:
    """One unit per repeat (session order), each reserving ``threads`` CPUs; ``inputs`` is
    an :class:`OrderInputs` or the executor's shared handle to one
    (:func:`neuromark.executors.share`)."""
    return [Unit(f"fscil order {r}", where, score_order, (inputs, seed, r, order, threads),
                 num_cpus=threads) for r in range(repeats)]
