"""Re-run the configs whose figures the README and docs quote; rewrite docs/figures.json.

    python scripts/doc_figures.py                  # every config below, empty temp cache
    python scripts/doc_figures.py --only gen4_synthetic_short --cache-dir ~/.cache/neuromark
    python scripts/doc_figures.py --check          # compare the docs with the file, no runs
    python scripts/doc_figures.py --write-docs     # after a run: rewrite the marked figures
    python scripts/doc_figures.py --only activity_eeg_full --results OUT   # a long config's
                                                   # figures from its run folder (no run), or
                                                   # from run folders of parts of it

The configs (:data:`CONFIGS`) are the default suite's entries and every shortened
(``*_short.yaml`` / ``*_suite.yaml``) config; they run one after another in this process
(``neuromark run CONFIG --out TMP --cache-dir CACHE --quiet``) with one shared cache folder,
a fresh temporary one unless ``--cache-dir`` names one (never inside the checkout). The docs
examples of :data:`EXAMPLES` run as ``tests/test_docs_examples.py`` runs them.

A figure's key is ``<config stem>[.<tag>].<score>[.<part>]``: the score name as in the
results file (``coco_map``, ``synaptic_operations.Effective_MACs``), ``.se`` for its
standard error, and the detail paths of :data:`DETAILS`; ``<tag>`` tells apart several
results of one config (the model label, model name or the varying part of the benchmark
id). Keys do not depend on results file names. Each entry records the value, the config,
the command, the date (UTC), the git commit (``tree: modified`` when the checkout had
uncommitted changes to tracked files) and the float path (``doc_markers.float_path``: a
trained model's figures follow the CPU's rounding; ``tests/test_doc_figures.py`` compares a
re-derivation to the digit on the same path only). Figures of configs not re-run are kept.
A default-suite entry whose results carry the "says little" flag (a tied decoding) is a
failure, its figures not recorded: the default suite's baselines must rank models.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_markers  # noqa: E402

ROOT = doc_markers.ROOT

#: The default suite's entries (configs/suite/default.yaml) and every shortened config.
CONFIGS: list[str] = [
    "configs/mackey_glass/esn.yaml",
    "configs/mackey_glass/lstm_suite.yaml",
    "configs/shd/spoken_digits_rsnn_suite.yaml",
    "configs/mackey_glass/esn_mackey_glass_singlestream.yaml",
    "configs/qubo/mis_default.yaml",
    "configs/keywords/mswc_fscil_m5_short.yaml",
    "configs/primate_reaching/ann2d_suite.yaml",
    "configs/primate_reaching/psth_ceiled_short.yaml",  # about 90 s CPU first run
    "configs/event_detection/gen4_synthetic_short.yaml",
    "configs/activity/wisdm_stats_short.yaml",
    "configs/activity/wisdm_stats_window_split_short.yaml",  # the same on NeuroBench's window split
    "configs/activity/wisdm_ffsnn_short.yaml",
    "configs/activity/wisdm_scnn_short.yaml",  # not in the default suite (about 45 s CPU first run)
    "configs/activity/wisdm_ann_short.yaml",  # not in the default suite (a few seconds)
    "configs/eeg_mi/thor_csp_lda_short.yaml",
    "configs/eeg_mi/thor_eeg_snn_short.yaml",
    "configs/eeg_mi/thor_eeg_snn_spikes_short.yaml",  # the challenge's spiking output (not default)
    "configs/suite/activity_eeg_seeds.yaml",  # three seeds of the FFSNN and LIF nets (about 2 min CPU)
    "configs/keywords/mswc_fscil_snn_short.yaml",  # full suite only (about 8 min CPU first run)
    "configs/closed_loop/ops_ann_suite.yaml",  # closed loop (about 20 s CPU first run)
    "configs/nmnist/nmnist_snn_short.yaml",  # N-MNIST, the 30 shipped recordings (seconds)
    # closed-loop full protocols quoted in docs/closed_loop.md (about 7 min CPU together)
    "configs/closed_loop/ops_oracle.yaml",
    "configs/closed_loop/ops_zero.yaml",
    "configs/closed_loop/ops_random.yaml",
    "configs/closed_loop/ops_wiener.yaml",
    "configs/closed_loop/ops_ann.yaml",
    "configs/closed_loop/ops_snn.yaml",
    "configs/closed_loop/ops_ann_delta.yaml",
    "configs/closed_loop/cartpole_balance.yaml",
    "configs/closed_loop/cartpole_random.yaml",
    "configs/closed_loop/cartpole_snn.yaml",
]

#: Full-length configs whose figures the docs quote: hours of CPU, so run only when named
#: (``--only activity_eeg_full``; with ``--cache-dir`` holding their trained checkpoints a
#: re-run only evaluates) and never re-derived by the tests.
LONG_CONFIGS: list[str] = [
    "configs/suite/activity_eeg_full.yaml",  # NeHAR + EEG at full length, one seed (about 5 CPU-hours)
    # N-MNIST on the 100 recorded test samples: seconds, but its data lie outside the checkout
    # (the shared real-data folder; dataset.options.root), so it runs only when named
    "configs/nmnist/nmnist_snn.yaml",
]

_FSCIL_DETAILS = ["accuracy_mean", "accuracy_p5", "accuracy_p95", "new_class_accuracy_mean",
                  "frozen_reference", "session_average_per_repeat",
                  "complexity_per_session.0.activation_sparsity_by_layer"]

#: Detail entries (dotted paths into ``details``) kept as figures, per config stem.
DETAILS: dict[str, list[str]] = {
    "mswc_fscil_m5_short": _FSCIL_DETAILS,
    "mswc_fscil_snn_short": _FSCIL_DETAILS,
    "psth_ceiled_short": ["ceiled_by_rule"],
    "ann2d_suite": ["per_monkey"],
    "esn_mackey_glass_singlestream": ["accuracy.reference", "accuracy.threshold"],  # quality target
    "activity_eeg_full": ["decoding.tied_samples", "decoding.samples", "decoding.tied_fraction"],
}

#: Docs examples whose results are figures: (key stem, doc file, heading).
EXAMPLES: list[tuple[str, str, str]] = [
    ("extending_dataset", "docs/extending.md", "Adding a dataset"),
    ("extending_benchmark", "docs/extending.md", "Adding a benchmark"),
]

#: Lists in details longer than this are not figures.
MAX_LIST = 64


def _numbers(prefix: str, value: Any, out: dict[str, float]) -> None:
    """Numeric leaves of ``value`` under ``prefix`` (dicts by key, short lists by index)."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        out[prefix] = value
    elif isinstance(value, dict):
        for k, v in value.items():
            _numbers(f"{prefix}.{k}", v, out)
    elif isinstance(value, list) and len(value) <= MAX_LIST:
        for i, v in enumerate(value):
            _numbers(f"{prefix}.{i}", v, out)


def _detail(details: dict[str, Any], path: str) -> Any:
    node: Any = details
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", text).strip("_-") or "result"


def result_tags(results: list[dict[str, Any]]) -> list[str]:
    """One tag per result of a config ("" when there is one result): the first of model
    label, model name and benchmark id whose values differ, the shared ends stripped; else
    ``<benchmark id>--<model label>`` whole (the results file's name)."""
    if len(results) == 1:
        return [""]
    candidates = [
        [((r.get("model") or {}).get("label") or "") for r in results],
        [((r.get("model") or {}).get("name") or "") for r in results],
        [r["benchmark"]["id"] for r in results],
    ]
    for values in candidates:
        if all(values) and len(set(values)) == len(values):
            prefix = os.path.commonprefix(values)
            suffix = os.path.commonprefix([v[::-1] for v in values])[::-1]
            if min(len(v) for v in values) > len(prefix) + len(suffix):
                values = [v[len(prefix):len(v) - len(suffix)] for v in values]
            return [_slug(v) for v in values]
    named = named_tags(results)
    if len(set(named)) == len(named):
        return named
    raise ValueError(f"results {[r['benchmark']['id'] for r in results]} cannot be told apart")


def named_tags(results: list[dict[str, Any]]) -> list[str]:
    """``<benchmark id>--<model label>`` of each result: the tags of a long config's results,
    the same whichever of its units a run folder holds."""
    return [_slug(f"{r['benchmark']['id']}--{(r.get('model') or {}).get('label') or ''}")
            for r in results]


def figures_of(stem: str, results: list[dict[str, Any]]) -> dict[str, float]:
    """``{key: value}`` of one config's results (scores, their SE, :data:`DETAILS`)."""
    out: dict[str, float] = {}
    long = stem in {Path(c).stem for c in LONG_CONFIGS}
    tags = named_tags(results) if long else result_tags(results)
    if len(set(tags)) != len(tags):
        raise ValueError(f"results {tags} cannot be told apart")
    for tag, data in zip(tags, results, strict=True):
        prefix = f"{stem}.{tag}" if tag else stem
        for name, score in data["scores"].items():
            _numbers(f"{prefix}.{name}", score["value"], out)
            if isinstance(score.get("error"), (int, float)):
                out[f"{prefix}.{name}.se"] = score["error"]
        for path in DETAILS.get(stem, []):
            _numbers(f"{prefix}.{path}", _detail(data["details"], path), out)
    return out


def read_results(folder: Path) -> list[dict[str, Any]]:
    """Every results file under ``folder`` (JSON with ``schema_version`` and ``scores``),
    sorted by benchmark id."""
    found = []
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError:  # not a results file (LoadGen's accuracy log, ...)
            continue
        if isinstance(data, dict) and "schema_version" in data and "scores" in data:
            found.append(data)
    return sorted(found, key=lambda d: d["benchmark"]["id"])


def run_config(config: str, out: Path, cache: Path) -> list[dict[str, Any]]:
    """``neuromark run CONFIG --out OUT --cache-dir CACHE --quiet`` in this process."""
    from neuromark.cli import main

    status = main(["run", str(ROOT / config), "--out", str(out), "--cache-dir", str(cache), "--quiet"])
    if status != 0:
        raise RuntimeError(f"neuromark run {config} exited with {status}")
    return read_results(out)


def doc_example(doc: str, heading: str) -> str:
    """The first python block under ``heading`` in ``doc``."""
    text = (ROOT / doc).read_text()
    section = text.split(f"\n## {heading}\n", 1)
    if len(section) != 2:
        raise ValueError(f"{doc}: no '## {heading}' section")
    block = re.search(r"^```python\n(.*?)^```", section[1], re.M | re.S)
    if block is None:
        raise ValueError(f"{doc}#{heading}: no python block")
    return block.group(1)


def run_example(doc: str, heading: str, folder: Path) -> list[dict[str, Any]]:
    """Run a docs example in ``folder`` (registries restored afterwards); its results."""
    from neuromark import registry

    saved = {reg: (dict(reg._entries), dict(reg._origins)) for reg in vars(registry).values()
             if isinstance(reg, registry.Registry)}
    cwd = Path.cwd()
    module = types.ModuleType(f"doc_example_{_slug(heading)}")
    sys.modules[module.__name__] = module
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.chdir(folder)
        exec(compile(doc_example(doc, heading), f"{doc}#{heading}", "exec"), module.__dict__)
    finally:
        os.chdir(cwd)
        sys.modules.pop(module.__name__, None)
        for reg, (entries, origins) in saved.items():
            reg._entries, reg._origins = entries, origins
    return read_results(folder)


def folder_results(config: str, folders: Path | Sequence[Path],
                   cache: Path | None) -> list[dict[str, Any]]:
    """The results already in ``folders``: run folders of ``config`` (``neuromark run CONFIG
    --out FOLDER``, finished or stopped part-way: the units it finished) or, for a long
    config (:data:`LONG_CONFIGS`), of suites made of some of its entries (the entries trained
    side by side in several processes). Refused: a folder whose recorded configs are not
    ``config`` as it reads now, or (parts) hold an entry that is not one of its entries with
    the same resolved config; an entry found in two folders."""
    from neuromark.run_folder import MANIFEST_NAME, config_digest, resolved_configs
    from neuromark.suite import expand

    folders = [folders] if isinstance(folders, Path) else list(folders)
    resolved = json.loads(json.dumps(resolved_configs(expand([ROOT / config], cache_root=cache))))
    digest = config_digest(resolved)
    owner: dict[str, Path] = {}
    results: list[dict[str, Any]] = []
    for folder in folders:
        manifest = folder / MANIFEST_NAME
        try:
            recorded = json.loads(manifest.read_text())
            entries = recorded.get("configs")
            recorded_digest = recorded["digest"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{folder}: not a neuromark run folder ({manifest}: {exc})") from None
        if recorded_digest != digest:
            foreign = ([k for k, v in entries.items() if resolved.get(k) != v]
                       if isinstance(entries, dict) and entries else ["<config digest>"])
            if config not in LONG_CONFIGS or foreign:
                raise ValueError(f"{folder}: a run of other configs than {config} as it reads "
                                 f"now (config digest {recorded_digest[:12]} recorded, "
                                 f"{digest[:12]} now; entries not in it as they read now: "
                                 f"{', '.join(foreign) or 'none'})")
        for key in entries if isinstance(entries, dict) else resolved:
            if key in owner:
                raise ValueError(f"{folder}: entry {key} is also in {owner[key]}: name each "
                                 f"entry's run folder once")
            owner[key] = folder
        results += read_results(folder)
    return results


def default_suite_configs() -> set[str]:
    """The entries of ``configs/suite/default.yaml``, as paths relative to the checkout."""
    import yaml

    suite = yaml.safe_load((ROOT / "configs/suite/default.yaml").read_text())
    entries = [e if isinstance(e, str) else e["config"] for e in suite["entries"]]
    return {str((ROOT / "configs/suite" / e).resolve().relative_to(ROOT)) for e in entries}


#: Words of the flag a result carries when its figure cannot rank models (a tied decoding:
#: ``processors.decoding``); a default-suite entry must not carry it (issue 47).
WEAK_FIGURE_FLAG = "says little"


def refuse_weak_default_figures(config: str, results: list[dict[str, Any]]) -> None:
    """Raise ``ValueError`` when a default-suite config's results carry the "says little"
    flag: the suite's baselines must be models worth comparing with."""
    if config not in default_suite_configs():
        return
    weak = [f"{r['benchmark']['id']}: {flag}" for r in results for flag in r.get("flags") or []
            if WEAK_FIGURE_FLAG in flag]
    if weak:
        raise ValueError(f"a default-suite entry whose figure says little: {'; '.join(weak)}")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def stamp() -> dict[str, str]:
    """Date (UTC), commit and float path (:func:`doc_markers.float_path`) of this run."""
    modified = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "commit": _git("rev-parse", "HEAD"), "tree": "modified" if modified else "clean",
            "float_path": doc_markers.float_path()}


def write_figures(path: Path, figures: dict[str, dict[str, Any]]) -> None:
    """Write the figures file atomically, keys sorted."""
    tmp = path.with_suffix(".json.tmp")
    body = {"about": "Figures quoted in README.md and docs/ (markers <!-- fig:KEY -->); written by "
                     "scripts/doc_figures.py, checked by tests/test_doc_figures.py.",
            "figures": dict(sorted(figures.items()))}
    tmp.write_text(json.dumps(body, indent=1) + "\n")
    tmp.replace(path)


def regenerate(configs: Sequence[str], examples: Sequence[tuple[str, str, str]], cache: Path,
               work: Path, figures_path: Path,
               results: Path | Sequence[Path] | None = None) -> list[str]:
    """Run ``configs`` and ``examples``, replace their figures in ``figures_path``; failures.
    With ``results`` (one config, no examples) the figures are read from those run folders
    of the config or of its parts (:func:`folder_results`) instead of a new run; the figures
    of units they do not hold are kept."""
    figures = doc_markers.load_figures(figures_path) if figures_path.exists() else {}
    failures = []
    jobs: list[tuple[str, str, Any]] = [(Path(c).stem, c, None) for c in configs]
    jobs += [(stem, f"{doc}#{heading}", (doc, heading)) for stem, doc, heading in examples]
    for i, (stem, where, example) in enumerate(jobs):
        print(f"[{i + 1}/{len(jobs)}] {where}", flush=True)
        try:
            if example is None and results is not None:
                found = folder_results(where, results, cache)
                command = (f"neuromark run {where} --out OUT, or suites of some of its entries "
                           f"into several OUTs (scripts/doc_figures.py --results OUT...)")
            elif example is None:
                found = run_config(where, work / f"{i:02d}-{stem}", cache)
                command = f"neuromark run {where} --quiet (scripts/doc_figures.py)"
            else:
                found = run_example(*example, work / f"{i:02d}-{stem}")
                command = f"the python block of {where} (scripts/doc_figures.py)"
            refuse_weak_default_figures(where, found)
            new = figures_of(stem, found)
        except Exception as exc:  # report and go on with the other configs
            failures.append(f"{where}: {type(exc).__name__}: {exc}")
            print(f"  failed: {failures[-1]}", flush=True)
            continue
        when = stamp()
        if example is None and results is not None:
            # the units the folders hold replace their figures; a long config's other units
            # keep theirs, each with its own date and commit
            fresh = {".".join(k.split(".")[:2]) + "." for k in new}
            kept = {k for k, v in figures.items() if v.get("config") == where
                    and not any(k.startswith(p) for p in fresh)}
            if kept:
                print(f"  {len(kept)} figures of units not in the folders kept", flush=True)
        else:
            kept = set()
        figures = {k: v for k, v in figures.items() if v.get("config") != where or k in kept}
        figures.update({k: {"value": v, "config": where, "command": command, **when}
                        for k, v in new.items()})
        write_figures(figures_path, figures)
        print(f"  {len(new)} figures", flush=True)
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="STEM",
                        help="config stems (or example keys) to re-run (default: all)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="shared cache folder (default: a fresh temporary one)")
    parser.add_argument("--figures", type=Path, default=doc_markers.FIGURES)
    parser.add_argument("--results", type=Path, nargs="+", default=None, metavar="OUT",
                        help="with --only CONFIG (one config): read its figures from OUT, a "
                             "folder of `neuromark run CONFIG --out OUT` (for the long configs: "
                             "or several folders, each a run of a suite of some of its entries)")
    parser.add_argument("--check", action="store_true", help="only compare the docs with the file")
    parser.add_argument("--write-docs", action="store_true",
                        help="rewrite the marked figures in the docs from the file (no runs)")
    args = parser.parse_args(argv)
    if args.write_docs:
        for line in doc_markers.rewrite(doc_markers.load_figures(args.figures)):
            print(line)
    if args.check or args.write_docs:
        problems = doc_markers.disagreements(doc_markers.load_figures(args.figures), doc_markers.quotes())
        print("\n".join(problems) or "every quoted figure agrees with the figures file")
        return 1 if problems else 0
    configs = [c for c in CONFIGS if not args.only or Path(c).stem in args.only]
    configs += [c for c in LONG_CONFIGS if args.only and Path(c).stem in args.only]
    if not args.only:
        print(f"not run (hours; name them with --only): {', '.join(LONG_CONFIGS)}", flush=True)
    examples = [e for e in EXAMPLES if not args.only or e[0] in args.only]
    if args.cache_dir is not None and args.cache_dir.resolve().is_relative_to(ROOT):
        parser.error("--cache-dir must be outside the checkout")
    if args.results is not None and (len(configs) != 1 or examples):
        parser.error("--results takes one config (--only STEM)")
    with tempfile.TemporaryDirectory(prefix="neuromark-figures-") as tmp:
        cache = args.cache_dir or Path(tmp) / "cache"
        failures = regenerate(configs, examples, cache, Path(tmp) / "out", args.figures,
                              results=args.results)
    for line in failures:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
