"""``ModelLabel``: the type of a config's ``model.label`` key (a valid file-name part, see
:func:`neuromark.identity.check_label`), for the tasks' pydantic config models."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from neuromark.identity import check_label

#: A model's label in results file names and leaderboards (default: its registry name).
ModelLabel = Annotated[str, AfterValidator(check_label)]
