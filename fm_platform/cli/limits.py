"""Option values checked against the limits botocore's service models declare for the request
member they fill, before any request is sent.

botocore itself checks only minimums (and raises a multi-line error), so the bounds, lengths
and patterns of the member's shape are checked here. A pattern written for Java's
regular expressions (``\\p{...}`` classes, ``\\z``) that Python's ``re`` cannot compile is
left to the service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import botocore.session
from botocore.model import Shape

from fm_platform.cli.errors import CliError


@cache
def _service_model(service: str) -> Any:
    return botocore.session.get_session().get_service_model(service)


def member_shape(service: str, operation: str, path: str) -> Shape:
    """The shape of the request member at ``path`` (names joined by dots; list levels are
    stepped through), e.g. ``DesiredWeightsAndCapacities.DesiredInstanceCount``."""
    shape = _service_model(service).operation_model(operation).input_shape
    for name in path.split("."):
        while shape.type_name == "list":
            shape = shape.member
        shape = shape.members[name]
    return shape


@cache
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def shape_problem(shape: Shape, value: object) -> str | None:
    """Why ``value`` breaks ``shape``'s declared limits, or None when it keeps them."""
    meta = shape.metadata
    low, high = meta.get("min"), meta.get("max")
    if isinstance(value, int):
        if low is not None and value < low:
            return f"below the minimum {low}"
        if high is not None and value > high:
            return f"above the maximum {high}"
    elif isinstance(value, str):
        if low is not None and len(value) < low:
            return f"shorter than {low} characters"
        if high is not None and len(value) > high:
            return f"longer than {high} characters"
        pattern = _compiled(meta["pattern"]) if meta.get("pattern") else None
        if pattern is not None and not pattern.fullmatch(value):
            return f"does not match {meta['pattern']}"
    return None


def check_options(service: str, operation: str, options: Iterable[tuple[str, str, object]]) -> None:
    """Check each ``(option, member path, value)`` against the member's shape in
    ``operation``'s request; values that are None (option not given) are skipped.

    Raises one CliError naming every bad option, its value, what is wrong and the API member.
    """
    problems = []
    for option, path, value in options:
        if value is None:
            continue
        problem = shape_problem(member_shape(service, operation, path), value)
        if problem:
            problems.append(f"{option} {value}: {problem} ({operation} {path})")
    if problems:
        raise CliError("; ".join(problems))
