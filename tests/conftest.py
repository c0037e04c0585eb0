"""Shared test helpers."""

from __future__ import annotations

import os
from pathlib import Path

#: ``$NEUROMARK_REFERENCE_DIR`` or ``shared/reference`` beside the checkout (the project's
#: reference data; tests that need it skip when it is absent).
REFERENCE_DIR = Path(os.environ.get("NEUROMARK_REFERENCE_DIR",
                                    Path(__file__).resolve().parents[2] / "shared/reference"))
