"""Submission report: sections, plots, power windows, bad system descriptions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.errors import ConfigError, DataError
from neuromark.system.timing import now_s
from neuromark.system.track.submission import load_description, load_results
from neuromark.system.track.task import TASK
from neuromark.tasks.base import plan_and_run

pytest.importorskip("mlperf_loadgen")

EXAMPLE = Path(__file__).resolve().parents[1] / "docs/system_track_example_system.yaml"


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sys")
    t = np.arange(now_s() - 1.0, now_s() + 120.0, 0.002)
    (tmp / "trace.csv").write_text("t_s,power_w\n" + "\n".join(f"{v:.6f},2.0" for v in t))
    text = ("task: system\nbenchmark: {id: toy-sleep}\nsut: {name: sleep, options: {sleep_s: 0.0002}}\n"
            "loadgen:\n  min_query_count: 50\n  min_duration_s: 0\n  expected_latency_s: 0.0005\n"
            "meter: {name: csv, options: {path: trace.csv, offset_s: 0}}\n"
            "power: {floor_s: 0.1, active_s: 0.1}\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp / "toy.yaml"), tmp / "toy")[0]
    res.save(tmp / f"{res.benchmark.id}.json")
    return tmp


def test_report_cli_writes_all_sections(results_dir, capsys):
    out = results_dir / "sub"
    assert main(["report", str(results_dir), "--system", str(EXAMPLE), "--out", str(out), "--html"]) == 0
    text = (out / "submission.md").read_text()
    for heading in ("## System architecture", "## Algorithm", "## Workflow", "## Timing measurement",
                    "## Power measurement", "## Results"):
        assert heading in text
    assert "![workflow](workflow.png)" in text and "![latency histogram](r0_latency.png)" in text
    assert "![power trace](r0_power.png)" in text
    assert "separate amortised run" in text  # the sleep SUT has no stages: one stream window
    assert "| floor | 0.1" in text and "| loadgen |" in text
    for png in ("workflow.png", "r0_latency.png", "r0_power.png"):
        assert (out / png).stat().st_size > 1000
    page = (out / "submission.html").read_text()  # --html
    assert '<img src="workflow.png"' in page and "<h2>Power measurement</h2>" in page
    assert "wrote" in capsys.readouterr().out


def test_amortised_energy_is_stream_energy_over_count(results_dir):
    res = load_results(results_dir)[0]
    stream = res.details["power"]["active"]["stream"]
    assert stream["total_power_w"] == pytest.approx(2.0)
    assert stream["total_energy_per_inference_j"] == pytest.approx(stream["energy_j"] / stream["inferences"])
    assert res["stream_dynamic_power"] == pytest.approx(0.0, abs=1e-9)


def test_bad_system_description(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("name: x\narchitecture: y\nhardware:\n  processor: z\nalgorithm: a\n"
                   "workflow:\n  inference: CNN\n  teleport: beam\n")
    with pytest.raises(DataError, match=r"s.yaml:8: workflow step 'teleport' is not one of"):
        load_description(bad)
    bad.write_text("name: x\nhardware:\n  processor: z\nalgorithm: a\n")
    with pytest.raises(ConfigError, match="architecture: Field required"):
        load_description(bad)


def test_report_needs_system_results(tmp_path):
    from neuromark.results import Results, Score

    Results(scores={"x": Score(1.0)}).save(tmp_path / "algo.json")
    with pytest.raises(DataError, match="no system-track results"):
        load_results(tmp_path)
    with pytest.raises(DataError, match="no results JSON found"):
        load_results(tmp_path / "empty")


def test_html_conversion_escapes_and_keeps_structure(results_dir):
    from neuromark.report.html import markdown_to_html

    page = markdown_to_html("# T <x>\n\n| a | b |\n|---|---|\n| 1 | `c` |\n\n- **flag:** y\n\n![p](p.png)\n")
    assert "<h1>T &lt;x&gt;</h1>" in page
    assert "<tr><th>a</th><th>b</th></tr><tr><td>1</td><td><code>c</code></td></tr>" in page
    assert "<li><strong>flag:</strong> y</li>" in page and '<img src="p.png" alt="p">' in page


def test_a_single_timed_sample_has_no_error_estimate():
    from neuromark.report.markdown import format_value
    from neuromark.system.timing import latency_stats
    from neuromark.system.track.scores import score_ms
    from neuromark.system.track.submission import _timing_table

    stats = latency_stats([2_000_000])
    assert stats["stderr_s"] is None
    score = score_ms(stats)
    assert score.value == pytest.approx(2.0) and score.error is None
    assert format_value(score) == "2 ms"  # no "± 0"
    row = _timing_table({"inference": stats})[2]
    assert row.startswith("| inference | 1 | 2 |") and "±" not in row
    two = _timing_table({"inference": latency_stats([1_000_000, 3_000_000])})[2]
    assert "| 2 ± 1 |" in two


def test_finish_submission_raises_on_an_unreadable_results_file_instead_of_exit_0(tmp_path):
    """A folder without system results finishes with 0; one whose results file cannot be
    read is an error, not silently "no system results"."""
    import pytest

    from neuromark.errors import DataError
    from neuromark.system.track.submission import finish_submission

    assert finish_submission(tmp_path) == 0
    (tmp_path / "broken.json").write_bytes(b'{"schema_version": "1.3", "benchmark": \xe9}')
    with pytest.raises(DataError, match="broken.json"):
        finish_submission(tmp_path)


def test_finish_submission_skips_other_json_in_the_run_folder(results_dir, tmp_path):
    """A QUBO sweep's entries.meta.json beside the system results is not a results file:
    the submission is written from the results alone, and the report reads them too."""
    import shutil

    from neuromark.system.track.submission import finish_submission

    run = tmp_path / "run"
    shutil.copytree(results_dir, run)
    (run / "entries.meta.json").write_text('{"neuromark_entries": 1, "config_digest": "x"}')
    assert finish_submission(run, allow_invalid=True) == 0
    assert (run / "submission.json").is_file()
    assert [r.benchmark.id for r in load_results(run)] == ["toy-sleep"]
