"""The NIR import's input contract (issue 32, point 2): hostile graphs built with the ``nir``
package and written as ``.nir`` files in tmp_path; each is refused before any module is
built, naming the node and the field (or the edge)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.errors import DataError

nir = pytest.importorskip("nir", reason="NIR tests need the 'nir' extra (nir, nirtorch)")
from neuromark.models import nir_check  # noqa: E402
from neuromark.models.nir_model import from_nir  # noqa: E402


def lif(n: int = 2, **change) -> object:
    fields = {"tau": np.full(n, 2e-4), "r": np.full(n, 2.0), "v_leak": np.zeros(n),
              "v_threshold": np.ones(n), "v_reset": np.zeros(n)}
    return nir.LIF(**{**fields, **change})


def chain(*middle: tuple[str, object], n_in: int = 3, n_out: int = 2,
          type_check: bool = True) -> object:
    """input -> middle nodes in order -> output."""
    names = ["input", *(k for k, _ in middle), "output"]
    nodes = {"input": nir.Input(np.array([n_in])), **dict(middle),
             "output": nir.Output(np.array([n_out]))}
    return nir.NIRGraph(nodes=nodes, edges=list(zip(names[:-1], names[1:])), type_check=type_check)


def valid_graph(**lif_change) -> object:
    w = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])
    return chain(("fc", nir.Linear(w)), ("lif", lif(**lif_change)))


def written(tmp_path: Path, graph: object, name: str = "net.nir") -> Path:
    path = tmp_path / name
    nir.write(str(path), graph)
    return path


def test_valid_graph_imports_and_runs(tmp_path):
    adapter = from_nir(written(tmp_path, valid_graph()))
    adapter.reset_state()
    with torch.no_grad():
        out = adapter(torch.ones(1, 3, 3))
    assert out.shape == (1, 3, 2) and torch.isfinite(out).all()


def test_finite_nan_time_constant_named(tmp_path):
    path = written(tmp_path, valid_graph(tau=np.array([2e-4, np.nan])))
    with pytest.raises(DataError, match=r"NIR node 'lif' \(LIF\): field 'tau' holds a non-finite "
                                        r"value \(nan at flat index 1\)"):
        from_nir(path)


def test_finite_nan_weight_column_named(tmp_path):
    w = np.array([[1.0, np.nan, 0.0], [0.0, np.nan, 2.0]])
    path = written(tmp_path, chain(("fc", nir.Linear(w)), ("lif", lif())))
    with pytest.raises(DataError, match=r"NIR node 'fc' \(Linear\): field 'weight' holds a "
                                        r"non-finite value \(nan at flat index 1\)"):
        from_nir(path)


def test_finite_nan_threshold_named(tmp_path):
    path = written(tmp_path, valid_graph(v_threshold=np.array([np.nan, 1.0])))
    with pytest.raises(DataError, match=r"node 'lif' \(LIF\): field 'v_threshold' holds a non-finite"):
        from_nir(path)


def test_finite_infinite_bias_named(tmp_path):
    w = np.ones((2, 3))
    path = written(tmp_path, chain(("fc", nir.Affine(w, np.array([0.0, np.inf]))), ("lif", lif())))
    with pytest.raises(DataError, match=r"node 'fc' \(Affine\): field 'bias' holds a non-finite "
                                        r"value \(inf at flat index 1\)"):
        from_nir(path)


def test_positive_time_constant_negative_tau_named(tmp_path):
    path = written(tmp_path, valid_graph(tau=np.array([2e-4, -2e-4])))
    with pytest.raises(DataError, match=r"node 'lif' \(LIF\): field 'tau' must be > 0 \(a time "
                                        r"constant in s\), got min -0.0002"):
        from_nir(path)


@pytest.mark.parametrize("tau", [9e-5, 4e-5])
def test_time_constant_at_least_dt_named(tmp_path, tau):
    """tau < dt: forward Euler keeps 1 - dt/tau < 0 of the membrane per step (a sign flip;
    below dt/2 it diverges); tau = dt (snnTorch's beta = 0) is accepted."""
    path = written(tmp_path, valid_graph(tau=np.array([2e-4, tau])))
    with pytest.raises(DataError, match=rf"node 'lif' \(LIF\): field 'tau' = {tau:g} s is below "
                                        r"the step dt = 0.0001 s"):
        from_nir(path)
    from_nir(path, dt=tau)  # a finer step accepts it
    from_nir(written(tmp_path, valid_graph(tau=np.full(2, 1e-4)), "edge.nir"))
    with pytest.raises(DataError, match=r"dt = nan must be a finite step"):
        from_nir(path, dt=float("nan"))


def test_positive_time_constant_zero_tau_syn_named(tmp_path):
    cuba = nir.CubaLIF(tau_syn=np.zeros(2), tau_mem=np.full(2, 2e-4), r=np.ones(2),
                       v_leak=np.zeros(2), v_threshold=np.ones(2), v_reset=np.zeros(2))
    path = written(tmp_path, chain(("fc", nir.Linear(np.ones((2, 3)))), ("cuba", cuba)))
    with pytest.raises(DataError, match=r"node 'cuba' \(CubaLIF\): field 'tau_syn' must be > 0"):
        from_nir(path)


def test_positive_time_constant_li_named(tmp_path):
    li = nir.LI(tau=np.array([-1.0, 1.0]), r=np.ones(2), v_leak=np.zeros(2))
    path = written(tmp_path, chain(("fc", nir.Linear(np.ones((2, 3)))), ("li", li)))
    with pytest.raises(DataError, match=r"node 'li' \(LI\): field 'tau' must be > 0"):
        from_nir(path)


def test_threshold_above_reset_negative_threshold_named(tmp_path):
    path = written(tmp_path, valid_graph(v_threshold=np.array([1.0, -0.5])))
    with pytest.raises(DataError, match=r"node 'lif' \(LIF\): field 'v_threshold' must lie above "
                                        r"v_reset \(min -0.5, v_reset max 0\)"):
        from_nir(path)


def test_threshold_above_reset_if_neuron_named(tmp_path):
    if_node = nir.IF(r=np.ones(2), v_threshold=np.zeros(2), v_reset=np.zeros(2))
    path = written(tmp_path, chain(("fc", nir.Linear(np.ones((2, 3)))), ("if", if_node)))
    with pytest.raises(DataError, match=r"node 'if' \(IF\): field 'v_threshold' must lie above"):
        from_nir(path)


@pytest.mark.parametrize("threshold", [0.0, -0.5])
def test_threshold_node_positive_named(tmp_path, threshold):
    """A Threshold node at or below 0 spikes every step with no input at all."""
    node = nir.Threshold(np.array([0.5, threshold]))
    path = written(tmp_path, chain(("fc", nir.Linear(np.ones((2, 3)))), ("thr", node)))
    with pytest.raises(DataError, match=r"node 'thr' \(Threshold\): field 'threshold' must be > 0"):
        from_nir(path)
    ok = written(tmp_path, chain(("fc", nir.Linear(np.ones((2, 3)))), ("thr", nir.Threshold(np.full(2, .5)))),
                 "ok.nir")
    assert from_nir(ok) is not None


def test_threshold_above_reset_physical_units_accepted(tmp_path):
    """A threshold below zero is fine when the reset lies below it (millivolts)."""
    graph = valid_graph(v_leak=np.full(2, -70.0), v_threshold=np.full(2, -50.0),
                        v_reset=np.full(2, -70.0))
    from_nir(written(tmp_path, graph))


def test_shapes_edge_mismatch_named_in_memory():
    graph = chain(("fc", nir.Linear(np.ones((2, 4)))), ("lif", lif()), type_check=False)
    with pytest.raises(DataError, match=r"NIR edge \('input', 'fc'\): node 'input' outputs shape "
                                        r"\[3\], node 'fc' \(Linear\) takes input_type \[4\]"):
        from_nir(graph)


def test_shapes_edge_mismatch_in_a_file_names_the_nodes(tmp_path):
    graph = chain(("fc", nir.Linear(np.ones((2, 4)))), ("lif", lif()), type_check=False)
    path = written(tmp_path, graph)
    with pytest.raises(DataError, match=r"net\.nir: not a readable NIR file: .*input\.output.*"
                                        r"fc\.input"):
        from_nir(path)


def test_shapes_per_neuron_fields_disagree_named():
    node = lif()  # nir's constructor refuses this; a graph from another writer may not
    node.r = np.ones(3)
    graph = chain(("fc", nir.Linear(np.ones((2, 3)))), ("lif", node), type_check=False)
    with pytest.raises(DataError, match=r"node 'lif' \(LIF\): per-neuron fields of different shapes"):
        from_nir(graph)


def test_shapes_bias_of_the_wrong_size_named():
    graph = chain(("fc", nir.Affine(np.ones((2, 3)), np.zeros(5))), ("lif", lif()), type_check=False)
    with pytest.raises(DataError, match=r"node 'fc' \(Affine\): field 'bias' has 5 values, the "
                                        r"weight 2 outputs"):
        from_nir(graph)


def test_shapes_weight_not_2d_named():
    graph = chain(("fc", nir.Linear(np.ones((2, 3, 1)))), ("lif", lif()), type_check=False)
    with pytest.raises(DataError, match=r"node 'fc' \(Linear\): field 'weight' must be 2-D"):
        from_nir(graph)


def test_one_input_two_inputs_refused(tmp_path):
    graph = nir.NIRGraph(nodes={"a": nir.Input(np.array([2])), "b": nir.Input(np.array([2])),
                                "lif": lif(), "output": nir.Output(np.array([2]))},
                         edges=[("a", "lif"), ("b", "lif"), ("lif", "output")])
    with pytest.raises(DataError, match=r"exactly one Input and one Output node, got inputs "
                                        r"\['a', 'b'\]"):
        from_nir(written(tmp_path, graph))


def test_one_input_none_refused():
    graph = nir.NIRGraph(nodes={"lif": lif(), "output": nir.Output(np.array([2]))},
                         edges=[("lif", "output")], type_check=False)
    with pytest.raises(DataError, match=r"exactly one Input and one Output node, got inputs \[\]"):
        from_nir(graph)


def test_no_orphan_unconnected_node_named(tmp_path):
    """nir gives an unconnected node its own Input (``input_lost``): reported as the orphan."""
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([3])), "fc": nir.Linear(np.ones((2, 3))),
                                "lost": nir.Linear(np.ones((2, 2))),
                                "output": nir.Output(np.array([2]))},
                         edges=[("input", "fc"), ("fc", "output")])
    with pytest.raises(DataError, match=r"NIR node 'lost' \(Linear\) is an orphan: no edge reaches "
                                        r"it from the graph's input"):
        from_nir(written(tmp_path, graph))


def test_no_orphan_dead_end_named():
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([3])), "fc": nir.Linear(np.ones((2, 3))),
                                "side": nir.Linear(np.ones((2, 2))),
                                "output": nir.Output(np.array([2]))},
                         edges=[("input", "fc"), ("fc", "output"), ("fc", "side")], type_check=False)
    with pytest.raises(DataError, match=r"NIR node 'side' \(Linear\) is an orphan: it does not "
                                        r"reach the Output 'output'"):
        from_nir(graph)


def test_no_orphan_source_without_input_named():
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([3])), "fc": nir.Linear(np.ones((2, 3))),
                                "ghost": nir.Linear(np.ones((2, 2))),
                                "output": nir.Output(np.array([2]))},
                         edges=[("input", "fc"), ("fc", "output"), ("ghost", "output")],
                         type_check=False)
    with pytest.raises(DataError, match=r"NIR node 'ghost' \(Linear\) is an orphan: it is not "
                                        r"reached from the Input 'input'"):
        from_nir(graph)


def test_size_limit_parameters(tmp_path, monkeypatch):
    path = written(tmp_path, valid_graph())
    monkeypatch.setattr(nir_check, "MAX_PARAMETERS", 10)
    with pytest.raises(DataError, match=r"the graph's parameters exceed 10 values in all"):
        from_nir(path)


def test_size_limit_nodes(tmp_path, monkeypatch):
    path = written(tmp_path, valid_graph())
    monkeypatch.setattr(nir_check, "MAX_NODES", 3)
    with pytest.raises(DataError, match=r"has 4 nodes; neuromark imports at most 3"):
        from_nir(path)


def test_size_limit_declared_shape(tmp_path):
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([10**5, 10**4])),
                                "output": nir.Output(np.array([10**5, 10**4]))},
                         edges=[("input", "output")])
    with pytest.raises(DataError, match=r"node 'input' \(Input\): input_type \[100000, 10000\] "
                                        r"must have dimensions >= 1 and at most 100,000,000"):
        from_nir(written(tmp_path, graph))
    assert nir_check.MAX_PARAMETERS == 100_000_000 and nir_check.MAX_NODES == 10_000
