"""Primate reaching sessions as parallel streams (clarification 12.4): the chunk schedule
of unequal streams (no padded step), per-stream state kept when the batch shrinks, and the
task's parallel run against sequential per-session runs of the same shared decoder."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neuromark.benchmarks.primate_reaching.models import ANN2D, SNN2
from neuromark.benchmarks.primate_reaching.parallel_streams import chunk_schedule, parallel_stream
from neuromark.config import ConfigFile
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.networks.ridge_decoder import RidgeDecoder
from neuromark.registry import tasks
from neuromark.tasks.base import plan_and_run

INDY = ["indy_20160622_01", "indy_20160630_01"]


def test_chunk_schedule_ends_chunks_where_streams_end():
    assert chunk_schedule([5, 3, 7], 3) == [(0, 3, [0, 1, 2]), (3, 5, [0, 2]), (5, 6, [2]),
                                            (6, 7, [2])]
    assert chunk_schedule([4], 10) == [(0, 4, [0])]
    with pytest.raises(ConfigError, match="at least one step"):
        chunk_schedule([3, 0], 2)


def test_parallel_stream_rows_keep_and_shapes():
    xs = [np.full((n, 2), i, np.float32) for i, n in enumerate([5, 3, 7])]
    ys = [np.arange(n, dtype=np.float32)[:, None] + 10 * i for i, n in enumerate([5, 3, 7])]
    batches = list(parallel_stream(xs, ys, 3))
    assert [tuple(x.shape) for x, _, _ in batches] == [(3, 3, 2), (2, 2, 2), (1, 1, 2), (1, 1, 2)]
    assert [m["new_stream"] for _, _, m in batches] == [True, False, False, False]
    assert [m["keep"] is None for _, _, m in batches] == [True, False, False, True]
    assert batches[1][2]["keep"].tolist() == [0, 2] and batches[2][2]["keep"].tolist() == [1]
    # every real step appears exactly once, in order, in its own row
    for i, n in enumerate([5, 3, 7]):
        got = [y[m["streams"].index(i)] for _, y, m in batches if i in m["streams"]]
        assert torch.cat(got)[:, 0].tolist() == (np.arange(n) + 10 * i).tolist()
    with pytest.raises(ConfigError, match="equal channel counts"):
        list(parallel_stream([np.zeros((3, 2)), np.zeros((3, 4))], [np.zeros((3, 1))] * 2))


@pytest.mark.parametrize("make", [lambda: RidgeDecoder(3, 2, 2), lambda: ANN2D(3, 4, (4, 4)),
                                  lambda: SNN2(3, 8)])
def test_keep_streams_continues_each_row_like_its_own_stream(make):
    torch.manual_seed(0)
    model = make().eval()
    x = (torch.rand(3, 12, 3) < 0.4).float() * 3
    with torch.no_grad():
        alone = []
        for i in range(3):
            _reset(model)
            alone.append(model(x[i:i + 1])[0])
        _reset(model)
        first = model(x[:, :5])
        model.keep_streams(torch.tensor([0, 2]))
        rest = model(x[[0, 2], 5:])
    assert torch.allclose(torch.cat([first[0], rest[0]]), alone[0], atol=1e-6)
    assert torch.allclose(torch.cat([first[2], rest[1]]), alone[2], atol=1e-6)


def _reset(model):
    for module in model.modules():
        if module is not model and hasattr(module, "reset_state"):
            module.reset_state()


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory):
    """Two 12-s indy sessions and one loco session, written once for this module."""
    from neuromark.benchmarks.primate_reaching.generator import SurrogateSettings, write_surrogate

    root = tmp_path_factory.mktemp("primate")
    write_surrogate(root, SurrogateSettings(12, 1, (*INDY, "loco_20170210_03")))
    return root


def config(tmp_path, root, parallel, sessions=INDY, **model):
    data = {"task": "primate_reaching", "benchmark": {"id": "pr-par"},
            "data": {"root": str(root), "surrogate": {"duration_s": 12, "seed": 1},
                     "sessions": sessions, "chunk": 40, "shared_decoder": True,
                     "parallel_sessions": parallel},
            "model": model, "checkpoint_dir": str(tmp_path / "ckpt")}
    path = tmp_path / "pr.yaml"
    path.write_text(json.dumps(data))
    return ConfigFile(data=data, path=path)


def test_parallel_run_equals_sequential_per_session_runs(tmp_path, surrogate):
    """The SNN: spiking state in two layers, every complexity metric (the ridge and ANN2D
    histories are checked above; the task code is the same for every decoder)."""
    model = {"name": "snn2", "options": {"hidden": 16, "iterations": 3}}
    task = tasks.get("primate_reaching")
    (seq,) = plan_and_run(task, config(tmp_path, surrogate, False, **model), tmp_path / "o1", quiet=True)
    (par,) = plan_and_run(task, config(tmp_path, surrogate, True, **model), tmp_path / "o2", quiet=True)
    assert seq.details["shared_decoder"]["trained_now"]
    assert not par.details["shared_decoder"]["trained_now"]  # the same checkpoint
    per_seq, per_par = seq.details["per_session"], par.details["per_session"]
    steps = [per_seq[s]["samples"] for s in INDY]
    assert steps[0] != steps[1] and steps == [per_par[s]["samples"] for s in INDY]
    for s in INDY:
        assert per_par[s]["r2"] == pytest.approx(per_seq[s]["r2"], abs=1e-9)
    assert par["r2"] == pytest.approx(seq["r2"], abs=1e-9)
    assert par["footprint"] == seq["footprint"]
    # per-step counts: pooled over all steps = the step-weighted mean of the sessions'
    for name in par.scores:
        if name in ("r2", "footprint", "connection_sparsity", "model_execution_rate") \
                or name.startswith("r2["):
            assert name != "r2[indy]" or par[name] == pytest.approx(seq[name], abs=1e-9)
            continue
        values = [per_seq[s]["metrics"][name] for s in INDY]
        if isinstance(values[0], dict):
            for key, got in par[name].items():
                want = np.average([v[key] for v in values], weights=steps)
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (name, key)
        else:
            assert par[name] == pytest.approx(np.average(values, weights=steps), rel=1e-9), name
    assert {"membrane_updates", "activation_sparsity", "synaptic_operations"} <= set(par.scores)


def test_parallel_needs_a_shared_decoder_of_one_array(tmp_path, surrogate):
    task = tasks.get("primate_reaching")
    cfg = config(tmp_path, surrogate, True, name="ridge_decoder")
    cfg.data["data"]["shared_decoder"] = False
    with pytest.raises(ConfigError, match="shared_decoder: true"):
        task.plan(cfg, RunContext.build())
    mixed = config(tmp_path, surrogate, True, sessions=[INDY[0], "loco_20170210_03"],
                   name="ridge_decoder")
    with pytest.raises(ConfigError, match="equal channel counts"):
        plan_and_run(task, mixed, tmp_path / "o", quiet=True)
