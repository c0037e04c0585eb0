"""Instances are known by their content: fingerprints (checked against a canonical list built
here from the file's own text), the known-value table, and files named like another instance."""

from __future__ import annotations

import hashlib
import json
import lzma
import struct
from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.qubo.fingerprint import Fingerprint, graph_fingerprint, instance_fingerprint
from neuromark.benchmarks.qubo.known import KNOWN_VALUES, known_value, load_table, name_mismatch
from neuromark.benchmarks.qubo.library import load_instance, write_dimacs, write_mqlib
from neuromark.cli import main
from neuromark.errors import DataError

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"


def _hash_of_dimacs_text(path: Path) -> tuple[int, int, str]:
    """(n, m, sha256) from the file's text alone: 'e U V' lines, each as (min, max), sorted,
    packed as two little-endian int64."""
    n = m = 0
    pairs = []
    for line in path.read_text().splitlines():
        f = line.split()
        if f and f[0] == "p":
            n, m = int(f[2]), int(f[3])
        elif f and f[0] == "e":
            u, v = int(f[1]), int(f[2])
            pairs.append((min(u, v), max(u, v)))
    packed = b"".join(struct.pack("<qq", u, v) for u, v in sorted(pairs))
    return n, m, hashlib.sha256(packed).hexdigest()


@pytest.mark.parametrize("name", ["karate", "C125-9", "brock200-1"])
def test_graph_fingerprint_is_the_hash_of_the_sorted_edge_list(name):
    fp = instance_fingerprint(load_instance(REAL / f"{name}.gph"))
    assert (fp.n, fp.m, fp.sha256) == _hash_of_dimacs_text(REAL / f"{name}.gph")
    assert Fingerprint.parse(str(fp)) == fp and str(fp).startswith(f"graph:n={fp.n}:m={fp.m}:")


def test_same_graph_other_order_orientation_or_format_has_one_fingerprint(tmp_path):
    inst = load_instance(REAL / "C125-9.gph")
    rng = np.random.default_rng(0)
    edges = inst.edges[rng.permutation(len(inst.edges))][:, ::-1]  # shuffled, v u for u v
    write_dimacs(tmp_path / "renamed.gph", inst.n, edges)
    assert instance_fingerprint(load_instance(tmp_path / "renamed.gph")) == \
        instance_fingerprint(inst) == instance_fingerprint(load_instance(REAL / "C125-9.qs.xz"))
    one_less = graph_fingerprint(inst.n, inst.edges[1:])
    assert one_less != instance_fingerprint(inst) and one_less.m == inst.edges.shape[0] - 1


def test_qubo_fingerprint_of_a_non_mis_qubo(tmp_path):
    import scipy.sparse as sp

    W = sp.csr_matrix(np.array([[1.5, -2.0], [-2.0, 3.0]]))
    write_mqlib(tmp_path / "a.mqlib", W)
    fp = instance_fingerprint(load_instance(tmp_path / "a.mqlib"))
    # minimised Q = -W, upper triangle, 1-based (i, j, v) as <q q d, sorted, then the offset
    packed = b"".join(struct.pack("<qqd", *e) for e in ((1, 1, -1.5), (1, 2, 2.0), (2, 2, -3.0)))
    digest = hashlib.sha256(packed + struct.pack("<d", 0.0)).hexdigest()
    assert (fp.kind, fp.n, fp.m, fp.sha256) == ("qubo", 2, 3, digest)


def test_table_covers_qoblib_with_sources_and_matches_the_shipped_files():
    rows = load_table()
    assert len(rows) == 45 and {r.source for r in rows} == {"qoblib"}
    by_name = {r.instance: r for r in rows}
    assert (by_name["frb53-24-1"].value, by_name["frb53-24-1"].proven) == (52, False)
    assert "literature 53" in by_name["frb53-24-1"].reference
    for name, size in (("karate", 20), ("C125-9", 34), ("brock200-1", 6)):
        for suffix in (".gph", ".qs.xz") if name == "C125-9" else (".gph",):
            known = known_value(load_instance(REAL / f"{name}{suffix}"))
            assert (known.instance, known.value, known.proven) == (name, size, True)


def test_a_file_named_karate_that_is_not_karate_gets_no_value(tmp_path, capsys):
    fake = tmp_path / "karate.gph"
    write_dimacs(fake, 40, np.zeros((0, 2), dtype=np.int32))  # an empty 40-node graph
    inst = load_instance(fake)
    assert known_value(inst) is None
    note = name_mismatch(inst)
    assert "karate.gph" in note and "content differs" in note and "40 vertices, 0 edges" in note
    assert "34 vertices, 78 edges" in note and "20 is not used" in note
    assert main(["qubo", "solve", str(fake), "--timeout", "0.02", "--runs", "2", "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)["summary"]
    assert "content differs" in captured.err and "content differs" in summary["notes"][0]
    assert summary["target_size"] == 40 and "own best" in summary["target_source"]
    assert summary["gap_best"] == 0.0 and summary["residual_energy_mean"] == 0.0


def test_a_path_named_c125_9_is_not_scored_against_34(tmp_path, capsys):
    fake = tmp_path / "C125-9.gph"
    write_dimacs(fake, 5, np.array([[0, 1], [1, 2], [2, 3], [3, 4]]))
    assert main(["qubo", "solve", str(fake), "--timeout", "0.02", "--runs", "2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["target_size"] == 3 and summary["tts99_s"] is not None


def test_a_broken_table_is_refused(tmp_path):
    bad = tmp_path / "t.csv"
    text = KNOWN_VALUES.read_text().splitlines()
    bad.write_text("\n".join([text[0], text[1].replace(",qoblib,", ",rumour,")]) + "\n")
    with pytest.raises(DataError, match="t.csv:2: .*source"):
        load_table(bad)
    bad.write_text("\n".join([text[0], text[1].replace(",52,", ",53,", 1)]) + "\n")
    with pytest.raises(DataError, match="disagree with the fingerprint"):
        load_table(bad)


def test_qs_xz_reads_to_the_same_identity_as_its_text(tmp_path):
    plain = tmp_path / "C125-9.qs"
    plain.write_bytes(lzma.decompress((REAL / "C125-9.qs.xz").read_bytes()))
    assert instance_fingerprint(load_instance(plain)) == \
        instance_fingerprint(load_instance(REAL / "C125-9.qs.xz"))


def test_bks_rows_carry_their_graphs_fingerprint_and_source():
    import dataclasses

    from neuromark.benchmarks.qubo.bks import check_row, load_bks
    from neuromark.benchmarks.qubo.workloads import mis_workload

    table = load_bks()
    for row in table.rows.values():  # every row: a fingerprint, a source that says its method
        assert row.fingerprint.startswith(f"graph:n={row.num_vertices}:")
        assert row.source == ("exact:neuromark.exact_mis" if row.method == "exact" else
                              f"best-seen:{row.solver}")
    row = table.get(25, 0.1, 3)
    check_row(row, mis_workload(25, 0.1, 3))  # the generated graph is the row's
    other = dataclasses.replace(row, fingerprint=table.get(25, 0.1, 4).fingerprint)
    with pytest.raises(DataError, match="computed on another graph than this workload"):
        check_row(other, mis_workload(25, 0.1, 3))
