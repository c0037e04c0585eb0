"""Auto-wrapping said out loud: a bare ``nn.Module`` handed to neuromark runs inside an
adapter (:func:`neuromark.models.as_adapter`); what that adapter feeds the net and returns
is said once per run and named in every error that follows (issue 58.8).

- :class:`Wrapping` records which adapter was chosen for a bare net and why;
- :func:`describe_output` says what a net's forward returned (a tensor and its shape, or a
  tuple of them) for the note and the errors.

Example:
    >>> import torch
    >>> describe_output((torch.zeros(2, 3), torch.zeros(2, 3)))
    'a tuple of 2 (tensor (2, 3), tensor (2, 3))'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def describe_output(output: Any, depth: int = 0) -> str:
    """A short account of ``output``: ``tensor (B, K)``, ``a tuple of 2 (...)``, or its type."""
    shape = getattr(output, "shape", None)
    if shape is not None and hasattr(output, "dim"):
        return f"tensor {tuple(shape)}"
    if isinstance(output, (tuple, list)) and depth < 2:
        inner = ", ".join(describe_output(o, depth + 1) for o in output[:4])
        more = ", ..." if len(output) > 4 else ""
        return f"a {type(output).__name__} of {len(output)} ({inner}{more})"
    return f"a {type(output).__name__}"


@dataclass(frozen=True)
class Wrapping:
    """How a bare net was wrapped: the adapter's name, why it was chosen, and what each call
    feeds the net and what the adapter returns (``feeds``, ``returns``: prose)."""

    adapter: str
    why: str
    feeds: str
    returns: str
    #: how to choose otherwise
    instead: str

    def note(self, net: str, seen: str | None, output: str | None) -> str:
        """The once-per-run note: ``net`` (its class name), ``seen`` (what its forward
        returned on the first call), ``output`` (what the adapter returned)."""
        got = f"; its forward returned {seen}" if seen else ""
        out = f", here {output}" if output else ""
        return (f"note: {net} was given bare and {self.why}, so it runs wrapped in "
                f"{self.adapter}: {self.feeds}{got}; the run's output (what decoding and your "
                f"postprocessors get) is {self.returns}{out}. {self.instead}")

    def clause(self, net: str, seen: str | None) -> str:
        """The words an error after the wrapping carries."""
        got = f" (its forward returned {seen})" if seen else ""
        return (f" [{net} was given bare and runs wrapped in {self.adapter}: {self.feeds}"
                f"{got}; the output is {self.returns}. {self.instead}]")


#: A loop-free snnTorch network, stepped over time.
SNNTORCH_STEPPED = Wrapping(
    "SNNTorchModel", "holds snnTorch neurons with no loop in its forward",
    "each call gets ONE time step (batch, features) of the (batch, time, features) input",
    "the net's output per step (the FIRST element where its forward returns a tuple such as "
    "(spk, mem)), stacked over time: (batch, time, outputs)",
    "If your forward takes the whole sequence or returns something else first, wrap it "
    "yourself: TorchModel(net), or SNNTorchModel on a net that returns the spikes alone "
    "(from neuromark.models import SNNTorchModel, TorchModel)")
#: Any other bare network, called once per batch.
PLAIN = Wrapping(
    "TorchModel", "holds no stepped neurons",
    "each call gets the whole batch as the data loader gives it",
    "what its forward returns, unchanged",
    "If it takes one time step per call, wrap it yourself: SNNTorchModel(net) "
    "(from neuromark.models import SNNTorchModel)")
