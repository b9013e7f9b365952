"""Check what a command will send against the request shapes of botocore's service model
(lengths, limits, patterns, enums and list sizes as the model declares them), before the
call, so that a bad value is reported with what is allowed and no request is made.

botocore's own validation, which every call also runs, checks required members, types and
minimums but no maximum, pattern or enum.
"""

from __future__ import annotations

from typing import Any

from botocore.model import ServiceModel, Shape

from fm_platform.cli.errors import CliError
from fm_platform.rules.sagemaker_model import ShapeRule


def request_shape(model: ServiceModel, operation: str, path: str) -> Shape:
    """The shape at ``path`` in ``operation``'s request: member names joined by ``.``, with
    ``[]`` for the items of a list (``InstanceGroups[].InstanceCount``)."""
    shape = model.operation_model(operation).input_shape
    for part in path.split("."):
        name, items = (part[:-2], True) if part.endswith("[]") else (part, False)
        shape = shape.members[name]
        if items:
            shape = shape.member
    return shape


def _rule(shape: Shape) -> ShapeRule:
    meta = shape.metadata
    return ShapeRule(
        name=shape.name,
        enum=tuple(meta.get("enum", ())),
        min=meta.get("min"),
        max=meta.get("max"),
        pattern=meta.get("pattern"),
    )


def field_problem(model: ServiceModel, operation: str, path: str, value: Any) -> str | None:
    """Why ``value`` cannot go to ``path`` of ``operation``'s request, with what the model
    allows there; None when it fits."""
    shape = request_shape(model, operation, path)
    rule = _rule(shape)
    if isinstance(value, list):
        low = rule.min if rule.min is not None else 0
        if low <= len(value) <= (rule.max if rule.max is not None else len(value)):
            return None
        most = f"-{rule.max}" if rule.max is not None else " or more"
        return f"{len(value)} given; {shape.name} takes {low}{most} items"
    reason = rule.problem(value)
    if reason is None:
        return None
    return f"{reason} ({shape.name}: {_allowed(rule, shape.type_name == 'string')})"


def _allowed(rule: ShapeRule, text: bool) -> str:
    parts = []
    if rule.enum:
        parts.append("one of " + ", ".join(rule.enum))
    if rule.pattern:
        parts.append(f"matching {rule.pattern}")
    unit = " characters" if text else ""
    if rule.min is not None and rule.max is not None:
        parts.append(f"{rule.min}-{rule.max}{unit}")
    elif rule.min is not None:
        parts.append(f"at least {rule.min}{unit}")
    elif rule.max is not None:
        parts.append(f"at most {rule.max}{unit}")
    return "; ".join(parts)


def check_fields(model: ServiceModel, operation: str, fields: list[tuple[str, str, Any]]) -> None:
    """Raise one CliError naming every ``(label, path, value)`` whose value does not fit
    ``path`` of ``operation``'s request; ``label`` is how the user gave the value."""
    problems = []
    for label, path, value in fields:
        why = field_problem(model, operation, path, value)
        if why is not None:
            shown = "" if isinstance(value, list) else f" {value}"
            problems.append(f"{label}{shown}: {why}")
    if problems:
        raise CliError("; ".join(problems))
