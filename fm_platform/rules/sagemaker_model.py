"""Limits, enums and name patterns from botocore's SageMaker service model.

Reading them from botocore keeps the validation in step with the API: upgrading botocore
brings new instance types and changed limits without code changes here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import botocore.session

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
        if self.min is not None or self.max is not None:
            unit = "characters" if self.pattern is not None else ""
            parts.append(f"{self.min}-{self.max} {unit}".rstrip())
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


@cache
def _service_model():
    return botocore.session.get_session().get_service_model("sagemaker")


@cache
def shape_rule(shape_name: str) -> ShapeRule:
    """The constraints of the SageMaker API shape ``shape_name`` (e.g. ``ClusterName``)."""
    shape = _service_model().shape_for(shape_name)
    meta = shape.metadata
    return ShapeRule(
        name=shape_name,
        enum=tuple(meta.get("enum", ())),
        min=meta.get("min"),
        max=meta.get("max"),
        pattern=meta.get("pattern"),
    )


@cache
def member_shape_name(structure: str, member: str) -> str:
    """The shape name of ``structure.member``, for members whose shape has no fixed name."""
    return _service_model().shape_for(structure).members[member].name


def enum_values(shape_name: str) -> tuple[str, ...]:
    """The allowed values of an enum shape, e.g. ``ClusterInstanceType``."""
    return shape_rule(shape_name).enum
