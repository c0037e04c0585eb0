"""One shared test case every data set entry passes (tonic's ``DatasetTestCase`` is the
model): a per-dataset case writes a tiny file set in the real layout (plus the
``SHA256SUMS`` record ``download`` and ``synthesize`` leave), then the generic checks run.

The cases are the families' (``cases.DATASET_CASES`` of each family, found through
``neuromark.registry.families()``; their keys: ``tests/family_cases.py``). Every name of
:data:`neuromark.registry.datasets` has one, and so do the entries tasks read without
registering them; a new one without a case fails :func:`test_every_entry_has_a_case`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from family_cases import DATASET_KEYS, gather, skip_without, skip_without_programs

from neuromark.data.entry import SUMS, SynthesizingEntry, layout_files, write_sums
from neuromark.registry import datasets
from neuromark.testing.dataset import (
    DAMAGES,
    check_dataset_entry,
    check_declares_contract,
    check_reads_without_download,
    check_sample,
    check_synthesize,
    check_verify,
    check_verify_names_damage,
)
from neuromark.testing.results import ContractError

SRC = Path(__file__).resolve().parents[1] / "src" / "neuromark"
CASES = gather("DATASET_CASES")
NAMES = sorted(CASES)


def _case(name: str) -> dict[str, Any]:
    """The case of ``name``, skipped where a module it needs is absent."""
    case = CASES[name].case
    skip_without(case.get("needs", ()))
    return case


def _entry(name: str) -> Any:
    case = CASES[name].case
    return case["entry"]() if "entry" in case else datasets.get(name)


def _root(name: str, tmp_path: Path) -> Path:
    """The case's tiny file set in ``tmp_path/data``, with its sums record."""
    root = tmp_path / "data"
    root.mkdir()
    _case(name)["write"](root)
    if not (root / SUMS).is_file():
        write_sums(root, layout_files(root))
    return root


def _reader(name: str) -> Any:
    """The case's sample reader ``(entry, root, split, options) -> (input, label)``."""
    case = CASES[name].case
    if "sample" in case:
        return lambda entry, root, split, options: case["sample"](entry, root)
    return lambda entry, root, split, options: entry.load(root, split, **options)[0]


def test_every_entry_has_a_case():
    missing = sorted(set(datasets.names()) - set(CASES))
    assert not missing, (f"data set entries without a case: "
                         f"{', '.join(f'{n} (family {datasets.family_of(n)})' for n in missing)}; "
                         "add one to the family's cases.DATASET_CASES")
    for name, found in CASES.items():
        unknown = set(found.case) - DATASET_KEYS
        assert not unknown, f"data set case {name!r} ({found.family}): unknown keys {sorted(unknown)}"
        assert {"write", "damage"} <= set(found.case), f"data set case {name!r}: needs write and damage"


# the checks are neuromark.testing.dataset's, which plugin authors run on their entries

@pytest.mark.parametrize("name", NAMES)
def test_declares_the_contract(name):
    _case(name)
    check_declares_contract(_entry(name))


@pytest.mark.parametrize("name", NAMES)
def test_verify_passes_on_the_fixture(name, tmp_path):
    check_verify(_entry(name), _root(name, tmp_path))


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("name", NAMES)
def test_verify_names_a_damaged_file(name, how, tmp_path):
    check_verify_names_damage(_entry(name), _root(name, tmp_path), CASES[name].case["damage"], how)


@pytest.mark.parametrize("name", NAMES)
def test_reads_without_download(name, tmp_path):
    case = _case(name)
    check_reads_without_download(_entry(name), _root(name, tmp_path), case.get("split", "test"),
                                 case.get("options", {}), _reader(name))


@pytest.mark.parametrize("name", NAMES)
def test_samples_have_the_declared_shape_dtype_and_labels(name, tmp_path):
    case = _case(name)
    check_sample(_entry(name), _root(name, tmp_path), case.get("split", "test"), case.get("options", {}),
                 shape=case.get("shape"), dtype=case.get("dtype", "float32"),
                 num_classes=case.get("num_classes"), sample=_reader(name))


@pytest.mark.parametrize("name", NAMES)
def test_synthesize_writes_a_verified_deterministic_layout(name, tmp_path):
    case, entry = _case(name), _entry(name)
    if case.get("synth") is None:
        assert not isinstance(entry, SynthesizingEntry) or case.get("no_synth"), \
            f"{name}: an entry with a generator needs a synth case (or no_synth saying why not)"
        pytest.skip(f"{name}: {case.get('no_synth') or 'no generator'}")
    skip_without_programs(case.get("synth_programs", ()))
    check_synthesize(entry, tmp_path, case["synth"], case.get("split", "test"), case.get("options", {}),
                     _reader(name))


EXTRA = [(name, check) for name in NAMES for check in sorted(CASES[name].case.get("extra", {}))]


@pytest.mark.parametrize("name, check", EXTRA, ids=[f"{name}:{check}" for name, check in EXTRA])
def test_the_cases_own_checks(name, check, tmp_path):
    root = _root(name, tmp_path)
    CASES[name].case["extra"][check](_entry(name), root, tmp_path)


def test_no_task_imports_a_generator():
    """Generators are data set options: no module under tasks/ imports neuromark.synth."""
    offenders = [str(p.relative_to(SRC)) for p in sorted((SRC / "tasks").rglob("*.py"))
                 if re.search(r"^\s*(from|import)\s+neuromark\.synth\b", p.read_text(encoding="utf-8"),
                              re.MULTILINE)]
    assert offenders == []


class _Lax:
    """An entry that breaks the contract: an ftp address, an unknown digest, no checking."""

    name, citation, urls, manifest = "lax", "@misc{lax}", ("ftp://example.org/x",), {"x": "sha1:00"}

    def download(self, root):
        return Path(root)

    def verify(self, root):
        pass


def test_the_checks_fail_on_a_broken_entry(tmp_path):
    with pytest.raises(ContractError) as caught:
        check_declares_contract(_Lax())
    assert "urls is ('ftp://example.org/x',)" in str(caught.value)
    assert "manifest['x'] = 'sha1:00'" in str(caught.value)
    (tmp_path / "x.bin").write_bytes(b"0123456789")
    with pytest.raises(ContractError, match="verify.. passed with x.bin corrupted"):
        check_verify_names_damage(_Lax(), tmp_path, "x.bin", "corrupted")


def test_the_whole_check_in_one_call(tmp_path):
    """What a plugin author calls: every check of neuromark.testing.dataset at once, on the
    first case with a generator and nothing optional to need."""
    name = next(n for n in NAMES if CASES[n].case.get("synth") and not {"needs", "synth_programs", "entry"}
                & set(CASES[n].case))
    case = CASES[name].case
    check_dataset_entry(_entry(name), case["write"], tmp_path, damage=case["damage"],
                        split=case.get("split", "test"), options=case.get("options"),
                        shape=case.get("shape"), dtype=case.get("dtype", "float32"),
                        num_classes=case.get("num_classes"), synth=case["synth"], sample=_reader(name))
