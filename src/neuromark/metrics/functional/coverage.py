"""The coverage error: parameters that no counted synaptic operation consumed.

Two cases get different advice. A parameter that an ancestor's ``forward`` uses directly
(``F.linear(x, self.fc.weight)``, ``x @ self.fc.weight.T`` in the parent of ``fc``) does
apply synapses: its operations ran outside its module, where neither the module's wrapper
nor interception counts them, and exempting it would drop them (an undercount); the fix is
to call the module, or to let interception count the functional call by making the weight
the caller's own parameter. Any other uncovered parameter (a layer that never ran, a
weight of a module that applies no synapses) may be exempted.
"""

from __future__ import annotations

from typing import Any

#: Where the docs explain interception (which functional calls are counted, and where).
INTERCEPTION_DOCS = "docs/algorithm_track.md, 'Interception, only where it is needed'"


def _line(info: Any, uses: dict[str, list[str]]) -> str:
    seen = uses.get(info.name)
    if getattr(info, "parent_use", ""):
        how = f"; {info.parent_use} in its forward, outside module {info.module!r}"
    elif seen:
        how = f"; used only by {', '.join(sorted(set(seen)))}, which neuromark cannot count"
    else:
        how = "; no counted operation used it"
    return (f"  {info.name} (module {info.module!r}, {info.module_type}, "
            f"shape {list(info.shape)}){how}")


def coverage_message(uncovered: list[Any], uses: dict[str, list[str]]) -> str:
    """The error naming each uncovered parameter (``ParamInfo``: name, module path, type,
    shape, ``parent_use``), the uncounted operations that used it, and the fix: for a
    parameter used by an ancestor's forward, how to count it (never exempt it); for the
    others, how to exempt it."""
    by_parent = [info for info in uncovered if getattr(info, "parent_use", "")]
    others = [info for info in uncovered if not getattr(info, "parent_use", "")]
    parts = ["coverage: these parameters were not consumed by any counted synaptic operation:"]
    if by_parent:
        modules = sorted({info.module for info in by_parent})
        parts += [_line(info, uses) for info in by_parent]
        parts.append(
            "These parameters apply synapses in their parent's forward: do NOT exempt them, "
            "that would drop their operations from the count (an undercount). Fix: call the "
            f"module itself (e.g. `self.{modules[0].rsplit('.', 1)[-1]}(x)` instead of "
            "`F.linear(x, self.<module>.weight)` or `x @ self.<module>.weight.T`), or make "
            "the weight a parameter of the module whose forward uses it (`self.w = "
            "nn.Parameter(...)`), where interception counts F.linear, matmul/@, einsum and "
            f"conv calls ({INTERCEPTION_DOCS}).")
    if others:
        if by_parent:
            parts.append("Not used by a parent's forward:")
        parts += [_line(info, uses) for info in others]
        parts.append(
            "If a parameter applies no synapses (or its layer never runs), exempt it: "
            "`exempt_params: [NAME, ...]` in the config (or the adapter argument), "
            "`neuromark_no_synapses = True` on its module; or run with `--coverage warn` "
            "(config `coverage: warn`) to report instead of failing. If a parent's forward "
            "uses it through another name, exempting it would undercount: call its module "
            f"instead ({INTERCEPTION_DOCS}).")
    return "\n".join(parts)
