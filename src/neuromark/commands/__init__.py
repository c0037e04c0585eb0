"""CLI verbs; every module defines ``register(subparsers)`` and is picked up automatically."""

from __future__ import annotations

import argparse
from typing import Any


def add_command(subparsers: argparse._SubParsersAction, name: str, help: str,
                description: str | None = None, **kwargs: Any) -> argparse.ArgumentParser:
    """``subparsers.add_parser(name, help=help, description=...)`` for a description kept as
    one module-level constant written as a paragraph (a triple-quoted block): its white space
    folds to single spaces, as argparse's help formatter re-wraps it anyway."""
    text = " ".join(description.split()) if description is not None else None
    return subparsers.add_parser(name, help=help, description=text, **kwargs)
