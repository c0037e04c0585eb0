"""CLI verbs; every module defines ``register(subparsers)`` and is picked up automatically."""
