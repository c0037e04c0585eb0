"""Figures quoted in the README and docs agree with docs/figures.json, and re-derive.

The figures file is written by ``scripts/doc_figures.py`` (see its docstring); quoted figures
carry an invisible marker ``<!-- fig:KEY -->`` (``scripts/doc_markers.py``).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


markers = _load("doc_markers")
doc_figures = _load("doc_figures")


def _figures() -> dict[str, dict]:
    return markers.load_figures()


def _entry(value: float) -> dict:
    return {"value": value, "config": "c.yaml", "command": "x", "date": "d", "commit": "c"}


def _quotes_of(tmp_path: Path, text: str) -> list:
    doc = tmp_path / "doc.md"
    doc.write_text(text)
    return markers.quotes([doc])


# --- the docs against the file ----------------------------------------------------------


def test_every_quoted_figure_agrees_with_the_figures_file():
    found = markers.quotes()
    assert len(found) > 50  # the markers are there (a regex that finds none would pass)
    problems = markers.disagreements(_figures(), found)
    assert not problems, "stale figures (python scripts/doc_figures.py --write-docs):\n" + "\n".join(problems)


def test_every_config_in_the_figures_file_is_one_the_script_runs():
    known = set(doc_figures.CONFIGS) | set(doc_figures.LONG_CONFIGS)
    known |= {f"{doc}#{heading}" for _, doc, heading in doc_figures.EXAMPLES}
    stale = {e["config"] for e in _figures().values()} - known
    assert not stale, f"docs/figures.json holds figures of configs the script no longer runs: {stale}"


def test_the_float_path_names_the_machine_and_the_libraries():
    path = markers.float_path()
    assert path.split()[0] in {"x86_64", "aarch64", "arm64", "AMD64"} or path
    assert " torch-" in path and " numpy-" in path and " threads:" in path and " isa:" in path


def test_every_figure_entry_records_where_it_came_from():
    for key, entry in _figures().items():
        assert set(entry) >= {"value", "config", "command", "date", "commit"}, key
        assert len(entry["commit"]) == 40, key


def test_the_script_runs_the_default_suite_and_every_shortened_config():
    import yaml

    suite = yaml.safe_load((ROOT / "configs/suite/default.yaml").read_text())
    entries = {e if isinstance(e, str) else e["config"] for e in suite["entries"]}
    default = {str((ROOT / "configs/suite" / e).resolve().relative_to(ROOT)) for e in entries}
    shortened = {str(p.relative_to(ROOT)) for pattern in ("*_short.yaml", "*_suite.yaml")
                 for p in (ROOT / "configs").rglob(pattern)}
    assert default | shortened <= set(doc_figures.CONFIGS)


def test_marked_figures_name_keys_of_configs_the_script_runs():
    stems = {Path(c).stem for c in doc_figures.CONFIGS + doc_figures.LONG_CONFIGS}
    stems |= {s for s, _, _ in doc_figures.EXAMPLES}
    for q in markers.quotes():
        assert q.key.split(".", 1)[0] in stems, f"{q.where}: {q.key!r} names no config of the script"


def test_a_default_suite_figure_that_says_little_is_not_recorded(tmp_path, monkeypatch):
    flagged = [{"benchmark": {"id": "wisdm-nehar"}, "model": {"label": "ffsnn"},
                "scores": {"accuracy": {"value": 0.9}}, "details": {},
                "flags": ["decoding spike_count: 40 of 100 samples (40.0 %) have a tied top "
                          "class, decided by the lowest class index; the accuracy says little "
                          "about the model"]}]
    monkeypatch.setattr(doc_figures, "run_config", lambda *a: flagged)
    figures = tmp_path / "figures.json"
    failures = doc_figures.regenerate(["configs/activity/wisdm_ffsnn_short.yaml"], [],
                                      tmp_path / "cache", tmp_path / "work", figures)
    assert len(failures) == 1 and "default-suite entry whose figure says little" in failures[0]
    assert "wisdm-nehar: decoding spike_count: 40 of 100" in failures[0]
    assert not figures.exists()
    # outside the default suite the flag is shown beside the figure, not refused
    assert doc_figures.regenerate(["configs/eeg_mi/thor_eeg_snn_spikes_short.yaml"], [],
                                  tmp_path / "cache", tmp_path / "work", figures) == []
    assert "configs/activity/wisdm_ffsnn_short.yaml" in doc_figures.default_suite_configs()


def test_the_default_nehar_snn_entry_carries_no_flag(tmp_path):
    """The default suite's trained NeHAR FFSNN (8 epochs, ~20 s CPU): its accuracy ranks models
    (the spike-count readout tied 39.9 % of the test windows; issue 47)."""
    results = doc_figures.run_config("configs/activity/wisdm_ffsnn_short.yaml",
                                     tmp_path / "out", tmp_path / "cache")
    assert results and all(r.get("flags") == [] for r in results), [r.get("flags") for r in results]
    assert all(r["details"]["decoding"]["tied_samples"] == 0 for r in results)


# --- the marker rules, hand-computed ----------------------------------------------------


def test_quoted_precision_is_the_last_digit_written(tmp_path):
    (q,) = _quotes_of(tmp_path, "mAP 0.0114<!-- fig:a.b --> here")
    assert q.key == "a.b" and q.number == "0.0114" and q.line == 1
    assert q.step() == pytest.approx(1e-4)
    assert q.agrees(0.01144) and q.agrees(0.011351)
    assert not q.agrees(0.01146) and not q.agrees(0.0348)


def test_percent_scale_commas_and_exponents(tmp_path):
    pct, big, sci, bold = _quotes_of(
        tmp_path, "| 93.4 %<!-- fig:f.acc x100 --> | 281,564 B<!-- fig:f.fp --> |\n"
                  "Dense 1.13e8<!-- fig:f.dense --> and **72.6 %<!-- fig:f.s x100 -->**\n")
    assert pct.scale == 100 and pct.agrees(0.9339) and not pct.agrees(0.9397)
    assert big.quoted() == 281564 and big.agrees(281564) and not big.agrees(281565)
    assert sci.step() == pytest.approx(1e6) and sci.agrees(112_613_760) and not sci.agrees(1.14e8)
    assert bold.line == 2 and bold.agrees(0.7264)


def test_disagreement_and_missing_key_are_reported_with_file_and_line(tmp_path):
    found = _quotes_of(tmp_path, "a\nmAP 0.0348<!-- fig:g.map -->, FSCIL 94.0 %<!-- fig:g.sa x100 -->\n")
    problems = markers.disagreements({"g.map": _entry(0.011394)}, found)
    assert len(problems) == 2
    assert problems[0].endswith("quotes 0.0348 for 'g.map', the figures file has 0.011394: write 0.0114")
    assert ":2:" in problems[0]
    assert "'g.sa' is not in docs/figures.json" in problems[1]
    assert markers.disagreements({"g.map": _entry(0.03481), "g.sa": _entry(0.9397)}, found) == []
    assert "not a finite number" in markers.disagreements({"g.map": _entry(math.nan),
                                                           "g.sa": _entry(0.94)}, found)[0]


def test_a_marker_without_a_number_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"doc\.md:2: a figure marker must follow a number"):
        _quotes_of(tmp_path, "ok 1<!-- fig:a.b -->\nthe mAP<!-- fig:a.c -->\n")


def test_rewrite_keeps_the_quoted_format(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("0.0348<!-- fig:k.map --> | 94.0 %<!-- fig:k.sa x100 --> | 281,564<!-- fig:k.fp -->"
                   " | 5.75e7<!-- fig:k.macs --> | 3<!-- fig:k.none -->\n")
    figures = {"k.map": _entry(0.011394), "k.sa": _entry(0.93397), "k.fp": _entry(1281564),
               "k.macs": _entry(60_449_000.0)}
    changes = markers.rewrite(figures, [doc])
    assert doc.read_text() == ("0.0114<!-- fig:k.map --> | 93.4 %<!-- fig:k.sa x100 --> | "
                               "1,281,564<!-- fig:k.fp --> | 6.04e7<!-- fig:k.macs --> | "
                               "3<!-- fig:k.none -->\n")
    assert len(changes) == 4
    left = markers.disagreements(figures, markers.quotes([doc]))
    assert left == [f"{doc}:1: 'k.none' is not in docs/figures.json"]


def test_figures_are_keyed_by_config_and_score_not_by_file_name():
    result = {"benchmark": {"id": "x"}, "model": None, "details": {"curve": [0.5, None, 0.25]},
              "scores": {"acc": {"value": 0.75, "error": 0.1},
                         "synaptic_operations": {"value": {"Dense": 16.0, "Effective_ACs": 7.9},
                                                 "error": None}}}
    doc_figures.DETAILS["stem_for_test"] = ["curve"]
    try:
        figures = doc_figures.figures_of("stem_for_test", [result])
    finally:
        del doc_figures.DETAILS["stem_for_test"]
    assert figures == {"stem_for_test.acc": 0.75, "stem_for_test.acc.se": 0.1,
                       "stem_for_test.synaptic_operations.Dense": 16.0,
                       "stem_for_test.synaptic_operations.Effective_ACs": 7.9,
                       "stem_for_test.curve.0": 0.5, "stem_for_test.curve.2": 0.25}
    two = [dict(result, benchmark={"id": "qubo-mis-default-neuromark-sa"}),
           dict(result, benchmark={"id": "qubo-mis-default-dwave-tabu"})]
    assert doc_figures.result_tags(two) == ["neuromark-sa", "dwave-tabu"]
    labelled = [dict(r, model={"name": "m", "label": lab}) for r, lab in zip(two, ("a", "b"), strict=True)]
    assert doc_figures.result_tags(labelled) == ["a", "b"]
    # two splits x two models: no field alone tells the four apart, id and label together do
    crossed = [dict(result, benchmark={"id": bid}, model={"name": "m", "label": lab})
               for bid in ("har", "har-window-split") for lab in ("ann-seed0", "snn-seed0")]
    assert doc_figures.result_tags(crossed) == ["har--ann-seed0", "har--snn-seed0",
                                                "har-window-split--ann-seed0",
                                                "har-window-split--snn-seed0"]


def test_figures_of_a_long_config_are_read_from_its_own_run_folder_only(tmp_path):
    from neuromark.run_folder import MANIFEST_NAME, config_digest, resolved_configs
    from neuromark.suite import expand

    config = "configs/activity/wisdm_stats_short.yaml"
    folder = tmp_path / "out"
    folder.mkdir()
    digest = config_digest(resolved_configs(expand([ROOT / config], cache_root=tmp_path)))
    (folder / MANIFEST_NAME).write_text(json.dumps({"format": 1, "digest": digest}))
    result = {"schema_version": 1, "benchmark": {"id": "wisdm-nehar"}, "model": None,
              "details": {}, "scores": {"acc": {"value": 0.5, "error": 0.25}}}
    (folder / "wisdm-nehar--x.json").write_text(json.dumps(result))
    found = doc_figures.folder_results(config, folder, tmp_path)
    assert doc_figures.figures_of("wisdm_stats_short", found) == {
        "wisdm_stats_short.acc": 0.5, "wisdm_stats_short.acc.se": 0.25}
    with pytest.raises(ValueError, match="other configs than configs/activity/wisdm_ann_short.yaml"):
        doc_figures.folder_results("configs/activity/wisdm_ann_short.yaml", folder, tmp_path)
    with pytest.raises(ValueError, match="not a neuromark run folder"):
        doc_figures.folder_results(config, tmp_path, tmp_path)


def _part(folder: Path, entries: dict, results: list[dict]) -> Path:
    from neuromark.run_folder import MANIFEST_NAME, config_digest

    folder.mkdir()
    (folder / MANIFEST_NAME).write_text(json.dumps(
        {"format": 1, "digest": config_digest(entries), "configs": entries}))
    for r in results:
        (folder / f"{r['benchmark']['id']}--{r['model']['label']}.json").write_text(json.dumps(r))
    return folder


def test_a_long_config_is_read_from_run_folders_of_its_parts(tmp_path):
    from neuromark.run_folder import resolved_configs
    from neuromark.suite import expand

    config = "configs/suite/activity_eeg_full.yaml"
    resolved = json.loads(json.dumps(resolved_configs(expand([ROOT / config], cache_root=tmp_path))))
    keys = list(resolved)

    def result(bid, label, acc):
        return {"schema_version": 1, "benchmark": {"id": bid}, "model": {"label": label},
                "details": {"decoding": {"tied_samples": 0, "samples": 4, "tied_fraction": 0.0}},
                "scores": {"acc": {"value": acc, "error": 0.1}}}

    a = _part(tmp_path / "a", {k: resolved[k] for k in keys[:2]},
              [result("har", "stats", 0.5), result("har-ws", "stats", 0.25)])
    b = _part(tmp_path / "b", {keys[-1]: resolved[keys[-1]]}, [result("har-ws", "scnn-seed0", 0.75)])
    found = doc_figures.folder_results(config, [a, b], tmp_path)
    figures = doc_figures.figures_of("activity_eeg_full", found)
    # the tags are <benchmark id>--<label> whichever units the folders hold
    assert figures["activity_eeg_full.har-ws--scnn-seed0.acc"] == 0.75
    assert doc_figures.figures_of("activity_eeg_full", found[2:]) == {
        k: v for k, v in figures.items() if k.startswith("activity_eeg_full.har-ws--scnn-seed0.")}
    changed = dict(resolved[keys[2]], eval={"batch_size": 1})
    c = _part(tmp_path / "c", {keys[2]: changed}, [])
    with pytest.raises(ValueError, match=rf"other configs than {config} .*{keys[2]}"):
        doc_figures.folder_results(config, [a, c], tmp_path)
    d = _part(tmp_path / "d", {keys[-1]: resolved[keys[-1]]}, [])
    with pytest.raises(ValueError, match=rf"entry {keys[-1]} is also in {b}"):
        doc_figures.folder_results(config, [b, d], tmp_path)
    with pytest.raises(ValueError, match="other configs than configs/activity/wisdm_stats_short"):
        doc_figures.folder_results("configs/activity/wisdm_stats_short.yaml", [a], tmp_path)
    # recorded figures of units the folders do not hold are kept; the folders' replace theirs
    path = tmp_path / "figures.json"
    old = {"activity_eeg_full.eeg--lif-seed42.acc": _entry(0.6) | {"config": config},
           "activity_eeg_full.har-ws--scnn-seed0.old_score": _entry(0.1) | {"config": config}}
    doc_figures.write_figures(path, old)
    assert doc_figures.regenerate([config], [], tmp_path, tmp_path / "w", path, results=[a, b]) == []
    now = markers.load_figures(path)
    assert now["activity_eeg_full.eeg--lif-seed42.acc"]["value"] == 0.6
    assert "activity_eeg_full.har-ws--scnn-seed0.old_score" not in now
    assert now["activity_eeg_full.har--stats.acc"]["value"] == 0.5
    assert "suites of some of its entries" in now["activity_eeg_full.har--stats.acc"]["command"]


def test_the_long_configs_are_not_run_unless_named(capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(doc_figures, "regenerate", lambda configs, *a, **k: ran.extend(configs) or [])
    assert doc_figures.main(["--only", "wisdm_ann_short"]) == 0
    assert ran == ["configs/activity/wisdm_ann_short.yaml"]
    ran.clear()
    assert doc_figures.main([]) == 0
    assert not set(doc_figures.LONG_CONFIGS) & set(ran) and "not run (hours" in capsys.readouterr().out
    ran.clear()
    assert doc_figures.main(["--only", "activity_eeg_full"]) == 0
    assert ran == ["configs/suite/activity_eeg_full.yaml"]


# --- re-derivation ----------------------------------------------------------------------


def _rederive(config: str, tmp_path: Path) -> None:
    stem = Path(config).stem
    paths = {e.get("float_path") for e in _figures().values() if e["config"] == config}
    here = markers.float_path()
    if paths != {here}:  # a trained model's figures follow the CPU's rounding (float_path)
        pytest.skip(f"the figures of {config} were derived on float path(s) {sorted(map(str, paths))}; "
                    f"this machine's is {here!r}: re-derive them here (python scripts/doc_figures.py "
                    f"--only {stem}) to compare to the digit")
    results = doc_figures.run_config(config, tmp_path / "out", tmp_path / "cache")
    fresh = doc_figures.figures_of(stem, results)
    recorded = {k: e["value"] for k, e in _figures().items() if e["config"] == config}
    assert recorded, f"docs/figures.json has no figures of {config}"
    assert set(fresh) == set(recorded)
    for key, value in recorded.items():
        assert fresh[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


def test_a_shortened_config_re_derives_its_figures(tmp_path):
    """ann2d_suite (surrogate sessions, training, evaluation: ~10 s) from an empty cache."""
    _rederive("configs/primate_reaching/ann2d_suite.yaml", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("config", [
    "configs/mackey_glass/esn.yaml",
    "configs/mackey_glass/lstm_suite.yaml",
    "configs/event_detection/gen4_synthetic_short.yaml",
    "configs/keywords/mswc_fscil_m5_short.yaml",
    "configs/shd/spoken_digits_rsnn_suite.yaml",
    "configs/keywords/mswc_fscil_snn_short.yaml",  # about 8 min of CPU
    "configs/primate_reaching/psth_ceiled_short.yaml",  # about 90 s of CPU
])
def test_shortened_configs_re_derive_their_figures(config, tmp_path):
    _rederive(config, tmp_path)


def test_figures_file_is_valid_json_with_sorted_keys():
    data = json.loads((ROOT / "docs" / "figures.json").read_text())
    assert list(data["figures"]) == sorted(data["figures"])
