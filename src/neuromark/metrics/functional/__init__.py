"""Pure metric functions: correctness, counting and statistics, no state. Import each name
from the module that defines it (``import neuromark.metrics.functional`` imports nothing
heavy):

Correctness (:mod:`.correctness`; tensors, numpy arrays or lists of shape (N, ...); each
returns a float): ``accuracy``, ``mse``, ``smape``, ``r2``; :mod:`.coco`: ``coco_map``
(COCO box AP of timed detections).

Sparsity and synaptic-operation arithmetic (what the complexity metrics and the activity
probes count with): :mod:`.sparsity` (``zero_fraction``, ``weight_zero_counts``),
:mod:`.synops` (``masked_counts``, ``weight_column_nnz``, ``conv_input_counts``).

Statistics (:mod:`.stats`): ``standard_error``, ``MeanStats``.

Neuron operations (:mod:`.neuron_ops`; cost per neuron update, NeuroBench's snnTorch
table): ``neuron_cost``, ``neuron_operations``, ``SNNTORCH_COSTS``.

Energy estimates (joules from op counts and a named, versioned profile; never a
measurement): :mod:`.energy` (``energy_estimate``), :mod:`.energy_profiles`
(``EnergyProfile``, ``load_profile``).

Example:
    >>> from neuromark.metrics.functional.correctness import accuracy, smape
    >>> accuracy([1, 2, 3, 4], [1, 2, 0, 4])
    0.75
    >>> smape([3.0, 0.0], [1.0, 0.0])
    50.0
"""
