"""The system's identity in a system-track result, kept apart from the benchmark's (issue 57.1).

As the algorithm track names the model apart from the benchmark (:mod:`neuromark.identity`),
a system benchmark's id names the task, its data, its accuracy rule and its scenario
(``spoken_digits_8-acc99-singlestream``), the same for every system run on it; the system is
the ``details.system`` block of :func:`system_block`:

- ``sut``: the registry entry (``akida``, ``xylo``, ``remote``, ...) and the sha256 of its
  options (canonical JSON);
- ``sdk``: the SDK and its version (``akida 2.19.3``, ``rockpool 3.1.0``; a CPU SUT: its
  numerical library), from the SUT's own ``info``;
- ``target``: the device it ran on (a virtual Akida, XyloSim, a board, the host CPU);
- ``host``: the machine that ran neuromark (and LoadGen);
- ``label``: the user's name for the system (``sut.label``; default the SUT's own
  ``info["label"]``, a remote server's SUT name, else the entry name), which names the
  results file ``<benchmark id>--<label>.json`` and the leaderboard's row.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from typing import Any

from neuromark.identity import as_label, check_label, model_identity


def default_label(entry: str, info: Mapping[str, Any]) -> str:
    """The label a system gets without ``sut.label``: the SUT's own ``info["label"]`` (a
    chip SUT names SDK and target, a remote server its SUT), else the registry entry."""
    own = info.get("label")
    return as_label(own) if isinstance(own, str) and own else as_label(entry)


def system_label(entry: str, given: str | None, info: Mapping[str, Any]) -> str:
    """``given`` (checked as a file-name part) or :func:`default_label`."""
    return check_label(given) if given is not None else default_label(entry, info)


def host_info() -> dict[str, Any]:
    """The machine neuromark and LoadGen ran on (never the remote SUT's, which states its own
    in ``target``)."""
    return {"node": platform.node(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "cores": os.cpu_count()}


def system_block(entry: str, options: Mapping[str, Any], info: Mapping[str, Any],
                 label: str) -> dict[str, Any]:
    """``details.system`` (see the module): what ran, on what, where, under which label."""
    sdk = info.get("sdk") if isinstance(info.get("sdk"), Mapping) else None
    target = info.get("target") if isinstance(info.get("target"), Mapping) else None
    return {"label": label,
            "sut": {"entry": entry,
                    "options_digest": model_identity(entry, options).options_digest},
            "sdk": dict(sdk) if sdk else {"name": "none stated", "version": None},
            "target": dict(target) if target else {"kind": "host", "name": "the host CPU"},
            "host": host_info()}


def system_identity(entry: str, options: Mapping[str, Any], label: str) -> Any:
    """The results' model block for a system: the SUT entry, its options' digest and the
    system's label (so the results file is ``<benchmark id>--<label>.json``)."""
    return model_identity(entry, options, label=label)
