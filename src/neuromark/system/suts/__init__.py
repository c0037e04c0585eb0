"""Systems under test, one module each, registered in :data:`neuromark.registry.suts`.

A SUT entry is a factory called with the config's ``sut.options`` as keyword arguments,
plus, when its signature has them, the run's ``seed`` and ``config_dir`` (the config
file's folder, for relative data paths); it returns a
:class:`~neuromark.system.sut.BuiltSUT`::

    sut: {name: sleep, options: {sleep_s: 0.001, samples: 64}}

Options are checked when the config is validated, before anything runs, against the
factory's signature: unknown or missing options and values that do not fit the annotation
(``Annotated[int, Field(ge=1)]`` adds a bound) are errors naming the YAML line
(:func:`neuromark.components.check_options`).
"""

from __future__ import annotations

#: Keyword arguments a factory gets from the run, not from ``sut.options``, and their source.
RUN_ARGUMENTS = {"seed": "the config's top-level 'seed'", "config_dir": "the config file's folder"}
