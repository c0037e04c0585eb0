"""Pre- and post-processors.

Preprocessors are called as ``(data, targets) -> (data, targets)`` on a tuple;
postprocessors as ``output -> predictions``. Any callable with that signature works,
lambdas included. The decoders of classifier outputs (``ChooseMaxCount``, ``Argmax``, the
classification task's rules) live in :mod:`.decoding`; the cochlea in :mod:`.cochlea`.
"""
