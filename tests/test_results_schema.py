"""Results schema 1.3: typed flags and artefacts, the requested and the effective config,
provenance completed in one place; files of 1.2 load into the new fields."""

from __future__ import annotations

import json

from neuromark.identity import BenchmarkIdentity
from neuromark.provenance import stamp_provenance
from neuromark.results import Results, Score, effective_config


def _results() -> Results:
    res = Results(scores={"acc": Score(0.5)}, benchmark=BenchmarkIdentity("toy"),
                  config={"task": "toy", "eval": {"batch_size": 128}},
                  details={"samples": 4, "flags": ["tie"], "plots": ["toy/a.png"]})
    res.requested = {"task": "toy"}
    return res


def test_flags_and_plots_given_in_details_become_typed_fields():
    res = _results()
    assert res.flags == ["tie"] and res.artefacts == ["toy/a.png"]
    assert "flags" not in res.details and "plots" not in res.details
    res.flag("tie")  # once
    res.flag("diverged")
    assert res.flags == ["tie", "diverged"]
    named = Results(scores={}, details={"flags": {"overrun": 2}})  # a task's own mapping stays
    assert named.details["flags"] == {"overrun": 2} and named.flags == []


def test_requested_and_effective_config_round_trip(tmp_path):
    path = _results().save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == "1.3"
    assert data["config"] == {"requested": {"task": "toy"},
                              "effective": {"task": "toy", "eval": {"batch_size": 128}}}
    assert data["flags"] == ["tie"] and data["artefacts"] == ["toy/a.png"]
    assert "flags" not in data["details"]
    back = Results.load(path)
    assert back.config == {"task": "toy", "eval": {"batch_size": 128}}
    assert back.requested == {"task": "toy"} and back.flags == ["tie"]
    assert effective_config(data) == back.config


def test_a_1_2_file_loads_into_the_new_fields(tmp_path):
    old = {"schema_version": "1.2", "benchmark": {"id": "toy"}, "model": None,
           "scores": {"acc": {"value": 0.5}}, "config": {"task": "toy"},
           "details": {"flags": ["old flag"], "plots": ["toy/p.png"], "samples": 3},
           "seeds": {}, "provenance": {}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    res = Results.load(tmp_path / "old.json")
    assert res.flags == ["old flag"] and res.artefacts == ["toy/p.png"]
    assert res.config == res.requested == {"task": "toy"}
    assert effective_config(old) == {"task": "toy"}


def test_provenance_is_completed_under_what_a_task_recorded():
    stamped = stamp_provenance({"device": {"used": "cpu"}, "machine": {"node": "remote"}},
                               run={"coverage": "warn"})
    assert stamped["device"] == {"used": "cpu"} and stamped["machine"] == {"node": "remote"}
    assert stamped["run"] == {"coverage": "warn"} and "created" in stamped and "python" in stamped


def test_a_results_file_is_read_as_utf8_whatever_the_locale(tmp_path, monkeypatch):
    import pytest

    from neuromark.errors import DataError

    path = _results().save(tmp_path / "r.json")
    text = path.read_text(encoding="utf-8").replace('"toy"', '"toy-\u00e9t\u00e9"', 1)
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("LC_ALL", "C")  # the locale must not matter: JSON is UTF-8
    assert "\u00e9t\u00e9" in Results.load(path).benchmark.id
    path.write_bytes(text.encode("utf-8").replace("\u00e9".encode(), b"\xe9"))
    with pytest.raises(DataError, match=r"r\.json: not a UTF-8 JSON file \(byte offset \d+\)"):
        Results.load(path)


def test_old_schemas_are_read_until_the_sunset_then_refused_saying_so():
    """Our own files of schema 1.0 to 1.2 (neuromark before 0.2.0) are read until
    OLD_SCHEMAS_READ_UNTIL (2027-12-06, one year after 0.2.0) included, refused after it."""
    import datetime

    from neuromark.results_versions import (
        CURRENT_SCHEMA,
        OLD_SCHEMAS,
        OLD_SCHEMAS_READ_UNTIL,
        readable_schemas,
        unsupported_schema,
    )

    assert OLD_SCHEMAS_READ_UNTIL == datetime.date(2027, 12, 6)
    last = OLD_SCHEMAS_READ_UNTIL
    after = last + datetime.timedelta(days=1)
    assert readable_schemas(last) == ("1.0", "1.1", "1.2", "1.3")
    assert readable_schemas(after) == (CURRENT_SCHEMA,) == ("1.3",)
    for version in OLD_SCHEMAS:
        assert unsupported_schema({"schema_version": version}, last) is None
        why = unsupported_schema({"schema_version": version}, after)
        assert why == (f"results schema_version {version!r} is no longer read: files of schema 1.0 "
                       "to 1.2 (neuromark before 0.2.0) were read until 2027-12-06; re-run the "
                       "benchmark to write schema 1.3")
    assert unsupported_schema({"schema_version": "1.3"}, after) is None
    assert str(unsupported_schema({"schema_version": "9.0"}, after)).startswith(
        "results schema_version '9.0' is not supported: this neuromark reads 1.3 (a newer")
