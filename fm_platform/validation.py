"""Deprecated: the problem collector moved to :mod:`fm_platform.rules` and the token check
to :mod:`fm_platform.core.tokens`. The names still import from here (the token check
only on use, so that importing this module loads no aws-cdk-lib)."""

from __future__ import annotations

from typing import Any

from fm_platform.rules.problems import (
    Problems,
    ValidationError,
    closest,
    describe_choices,
    did_you_mean,
)

__all__ = [
    "Problems",
    "ValidationError",
    "closest",
    "describe_choices",
    "did_you_mean",
]


def __getattr__(name: str) -> Any:
    if name == "is_unresolved":
        from fm_platform.core.tokens import is_unresolved

        return is_unresolved
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
