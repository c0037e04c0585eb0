"""Keyword FSCIL: the prototype conversion against the nearest-prototype rule, session
sampling (determinism, cumulative query), and the task end to end on a tiny corpus written
here in the MSWC layout."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neuromark.benchmarks.keywords.cases import tiny_corpus
from neuromark.benchmarks.keywords.fscil_sessions import SessionSampler, prototype_layer
from neuromark.benchmarks.keywords.models import LIFNet
from neuromark.benchmarks.keywords.mswc import KEYWORD_LANGUAGE
from neuromark.cli import main
from neuromark.context import RunContext


def test_prototype_layer_is_the_nearest_prototype_rule():
    g = torch.Generator().manual_seed(0)
    feats = torch.randn(300, 16, generator=g)
    labels = torch.randint(0, 12, (300,), generator=g)
    labels[labels == 7] = 8  # class 7 absent
    layer = prototype_layer(feats, labels, 12)
    protos = torch.stack([feats[labels == k].mean(0) if (labels == k).any() else torch.zeros(16)
                          for k in range(12)])
    torch.testing.assert_close(layer.weight, 2 * protos)
    torch.testing.assert_close(layer.bias, -(protos**2).sum(1))
    assert layer.present.tolist() == [k != 7 for k in range(12)]
    queries = torch.randn(500, 16, generator=g) * 1.5
    logits = layer(queries).masked_fill(~layer.present, float("-inf"))
    dist = torch.cdist(queries, protos).masked_fill(~layer.present, float("inf"))
    assert torch.equal(logits.argmax(1), dist.argmin(1))
    with pytest.raises(ValueError, match="labels must lie"):
        prototype_layer(feats, labels, 5)


def test_snn_prototypes_with_a_readout_summed_over_time():
    """A LIFNet with readout 'sum' and the prototype head (bias / T) ranks classes by the
    distance of the time-summed hidden spike counts to the prototypes."""
    torch.manual_seed(0)
    net = LIFNet(inputs=6, classes=5, hidden=(32,), beta=0.8, readout="sum").eval()
    x = (torch.rand(40, 25, 6) < 0.3).float()
    y = torch.arange(40) % 5
    with torch.no_grad():
        counts = net.features(x)
        net.output = prototype_layer(counts, y, 5, steps=25)
        summed = net(x).sum(1)  # sum over T of W s_t + b
    protos = torch.stack([counts[y == k].mean(0) for k in range(5)])
    expected = 2 * counts @ protos.T - (protos**2).sum(1)
    torch.testing.assert_close(summed, expected, rtol=1e-4, atol=1e-3)
    assert torch.equal(summed.argmax(1), torch.cdist(counts, protos).argmin(1))


def _sampler() -> SessionSampler:
    labels = np.repeat(np.arange(100, 130), 12)  # 3 languages x 10 classes, 12 clips each
    languages = np.array([KEYWORD_LANGUAGE[c] for c in labels])
    return SessionSampler(labels, languages, shots=3, support_pool=6, query_pool=6, query_shots=4)


def test_sessions_are_seeded_and_the_query_set_cumulative():
    sampler = _sampler()
    a, b = sampler.sessions(7, 0), sampler.sessions(7, 0)
    assert a == b  # same seed and repeat: same order and shots
    others = [sampler.sessions(7, r) for r in range(1, 6)]
    assert any(o != a for o in others)  # other repeats draw other orders/shots
    state = np.random.get_state()
    sampler.sessions(7, 3)
    assert np.array_equal(np.random.get_state()[1], state[1])  # global state untouched
    assert sorted(s.language for s in a) == ["eo", "fa", "pt"]
    labels = np.repeat(np.arange(100, 130), 12)
    seen: list[int] = []
    for s in a:
        assert len(s.classes) == 10 and len(s.support) == 30 and len(s.new_query) == 40
        assert list(s.query) == seen + list(s.new_query)  # cumulative, earlier sessions first
        seen = list(s.query)
        for c in s.classes:  # support from the first 6 clips of a class, query from the next 6
            first = 12 * (c - 100)
            sup = [i for i in s.support if labels[i] == c]
            qry = [i for i in s.new_query if labels[i] == c]
            assert len(sup) == 3 and all(first <= i < first + 6 for i in sup)
            assert len(qry) == 4 and all(first + 6 <= i < first + 12 for i in qry)
    assert len(set(seen)) == len(seen) == 120


def _tiny_corpus(root) -> None:
    """The keywords family's tiny MSWC layout (:func:`~neuromark.benchmarks.keywords.cases.tiny_corpus`)
    under ``root``; skips without soundfile."""
    pytest.importorskip("soundfile")
    tiny_corpus(root)


#: The tiny FSCIL config's fixed part (data, model); tests add train/fscil/eval lines.
FSCIL_TINY = """task: fscil
benchmark: {id: fscil-tiny, version: "1.0"}
data: {root: data, languages: [fa]}
model: {name: keyword_m5, options: {n_input: 20, n_output: 200, stride: 2, n_channel: 8,
        input_kernel: 4, pool_kernel: 2}, checkpoint: m5.pt}
"""


def test_fscil_task_end_to_end(tmp_path):
    _tiny_corpus(tmp_path / "data")
    (tmp_path / "c.yaml").write_text(FSCIL_TINY + """train: {epochs: 3, batch_size: 4, lr: 0.01}
fscil: {shots: 2, support_pool: 2, query_pool: 2, query_shots: 2, repeats: 3, seed: 1}
eval: {complexity: [footprint, synaptic_operations]}
""")
    assert main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "fscil-tiny--keyword_m5.json").read_text())
    d, scores = res["details"], res["scores"]
    assert len(d["accuracy_mean"]) == 2 and d["sessions"] == [0, 1]
    base = scores["base_accuracy"]["value"]
    assert d["frozen_reference"] == pytest.approx([base, base * 4 / (4 + 20)])
    assert scores["session_average"]["value"] == pytest.approx(np.mean(d["accuracy_mean"]))
    assert all(c["accuracy_matches_features_path"] for c in d["complexity_per_session"])
    assert [c["session"] for c in d["complexity_per_session"]] == [0, 1]
    assert scores["footprint"]["unit"] == "bytes"  # the metric's own unit
    assert scores["synaptic_operations"]["unit"] == "ops/sample"
    assert len(list((tmp_path / "out").rglob("fscil-tiny_sessions.png"))) == 1
    assert (tmp_path / "m5.pt").is_file()


@pytest.mark.parametrize("change,message", [
    ({"fscil": {"shots": 6, "support_pool": 5}}, "shots <= support_pool"),
    ({"data": {"root": "d", "languages": ["fa", "xx"]}}, "'xx' is not an incremental MSWC language"),
    ({"fscil": {"order": ["fa", "eo"]}}, "must list each language of the run once"),
    ({"model": {"name": "keyword_m6", "checkpoint": "m.pt"}}, "keyword_m5"),
])
def test_fscil_config_errors(change, message):
    from pathlib import Path

    import yaml

    from neuromark.benchmarks.keywords.fscil import TASK
    from neuromark.config import parse_yaml
    from neuromark.errors import NeuromarkError

    data = {"task": "fscil", "benchmark": {"id": "x"}, "data": {"root": "d"},
            "model": {"name": "keyword_m5", "checkpoint": "m.pt"}}
    data.update(change)
    config = parse_yaml(yaml.safe_dump(data), Path("c.yaml"))
    with pytest.raises(NeuromarkError, match=message):
        TASK.plan(config, RunContext.build())
