"""Limits, enums and name patterns from botocore's SageMaker service model.

They are read from ``data/sagemaker_shapes.json``, an extract of the model of the botocore
release pinned in requirements.txt (``scripts/regenerate_sagemaker_shapes.py``; a test
fails when the pin and the file disagree): validation is the same whatever botocore an app
installs, and reading it does not import botocore.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fm_platform.rules.name_patterns import explain_mismatch


@dataclass(frozen=True)
class ShapeRule:
    """The constraints botocore declares for one SageMaker API shape."""

    name: str
    enum: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    pattern: str | None = None

    def describe_allowed(self) -> str:
        """A human-readable summary of what the shape allows."""
        parts = []
        if self.enum:
            parts.append("one of " + ", ".join(self.enum))
        if self.pattern:
            parts.append(f"matching {self.pattern}")
        unit = " characters" if self.pattern is not None else ""
        if self.min is not None and self.max is not None:
            parts.append(f"{self.min}-{self.max}{unit}")
        elif self.min is not None:
            parts.append(f"at least {self.min}{unit}")
        elif self.max is not None:
            parts.append(f"at most {self.max}{unit}")
        return "; ".join(parts)

    def problem(self, value: object) -> str | None:
        """Why ``value`` breaks this rule, or ``None`` when it complies."""
        if self.enum and value not in self.enum:
            return "not supported"
        if isinstance(value, str):
            if self.min is not None and len(value) < self.min:
                return f"too short: at least {self.min} characters"
            if self.max is not None and len(value) > self.max:
                return f"too long: at most {self.max} characters, it has {len(value)}"
            if self.pattern and not re.fullmatch(self.pattern, value):
                return explain_mismatch(self.pattern, value)
        elif isinstance(value, int):
            if self.min is not None and value < self.min:
                return f"below the minimum {self.min}"
            if self.max is not None and value > self.max:
                return f"above the maximum {self.max}"
        return None


SHAPES_FILE = Path(__file__).with_name("data") / "sagemaker_shapes.json"


@cache
def _shapes() -> dict[str, dict[str, Any]]:
    shapes: dict[str, dict[str, Any]] = json.loads(SHAPES_FILE.read_text())["shapes"]
    return shapes


def _shape(shape_name: str) -> dict[str, Any]:
    try:
        return _shapes()[shape_name]
    except KeyError:
        raise KeyError(f"SageMaker's API has no shape {shape_name!r}") from None


@cache
def shape_rule(shape_name: str) -> ShapeRule:
    """The constraints of the SageMaker API shape ``shape_name`` (e.g. ``ClusterName``)."""
    shape = _shape(shape_name)
    return ShapeRule(
        name=shape_name,
        enum=tuple(shape.get("enum", ())),
        min=shape.get("min"),
        max=shape.get("max"),
        pattern=shape.get("pattern"),
    )


@cache
def member_shape_name(structure: str, member: str) -> str:
    """The shape name of ``structure.member``, for members whose shape has no fixed name."""
    members: dict[str, str] = _shape(structure).get("members", {})
    try:
        return members[member]
    except KeyError:
        raise KeyError(f"SageMaker's {structure} has no member {member!r}") from None


def enum_values(shape_name: str) -> tuple[str, ...]:
    """The allowed values of an enum shape, e.g. ``ClusterInstanceType``."""
    return shape_rule(shape_name).enum
