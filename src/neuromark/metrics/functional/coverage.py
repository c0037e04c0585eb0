"""The coverage error: parameters that no counted synaptic operation consumed."""

from __future__ import annotations

from typing import Any


def coverage_message(uncovered: list[Any], uses: dict[str, list[str]]) -> str:
    """The error naming each uncovered parameter (``ParamInfo``: name, module path, type,
    shape), the uncounted operations that used it, and how to exempt it."""
    lines = []
    for info in uncovered:
        seen = uses.get(info.name)
        how = (f"; used only by {', '.join(sorted(set(seen)))}, which neuromark cannot count"
               if seen else "; no counted operation used it")
        lines.append(f"  {info.name} (module {info.module!r}, {info.module_type}, "
                     f"shape {list(info.shape)}){how}")
    return ("coverage: these parameters were not consumed by any counted synaptic operation:\n"
            + "\n".join(lines) + "\nIf a parameter applies no synapses, exempt it: "
            "`exempt_params: [NAME, ...]` in the config (or the adapter argument), "
            "`neuromark_no_synapses = True` on its module; or run with `--coverage warn` "
            "(config `coverage: warn`) to report instead of failing.")
