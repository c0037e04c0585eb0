"""Contract checks for plugin authors' own tests: the checks every built-in passes.

Like tonic's ``DatasetTestCase`` and torchmetrics' ``MetricTester``, these give a
contributor the same tests the built-ins pass, one module per kind of component:

- :mod:`neuromark.testing.task_check`: :func:`check_task` (a task on a small config:
  protocol, plan, run, the results contract, the round trip through the results file,
  artefacts, determinism);
- :mod:`neuromark.testing.results`: the results contract itself
  (:func:`check_task_results`, :func:`check_written_results`);
- :mod:`neuromark.testing.adapter`: :func:`check_adapter` (a model or adapter: a batch
  runs, footprint and synaptic operations present and independent of the batch size);
- :mod:`neuromark.testing.sut`: :func:`check_sut` (a system under test through a small
  LoadGen-free harness);
- :mod:`neuromark.testing.meter`: :func:`check_meter` (a power meter: start, mark, stop,
  samples, energy; the null meter says "not measured");
- :mod:`neuromark.testing.dataset`: :func:`check_dataset_entry` (a
  :class:`~neuromark.data.entry.DatasetEntry`: declared contract, verify, damage named,
  reads without download, synthesize deterministic).

Every check raises :class:`~neuromark.testing.results.ContractError` (an
``AssertionError``) listing what is wrong; none needs pytest. The check functions are
named from this package too (docs/extending.md: ``from neuromark.testing import
check_task``), loaded on first use: importing the package imports none of them.

Example (a plugin's test file)::

    from neuromark.testing import check_task

    def test_my_task(tmp_path):
        check_task("my_task", "tests/configs/my_task_tiny.yaml", tmp_path)
"""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

#: The kit's check functions (its documented API) and the module that defines each.
_LAZY = {
    "check_task_results": "neuromark.testing.results",
    "check_written_results": "neuromark.testing.results",
    "check_task": "neuromark.testing.task_check",
    "check_adapter": "neuromark.testing.adapter",
    "check_sut": "neuromark.testing.sut",
    "check_meter": "neuromark.testing.meter",
    "check_dataset_entry": "neuromark.testing.dataset",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
