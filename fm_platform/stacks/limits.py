"""CloudFormation quotas that large model catalogs run into, checked at synth time."""

from __future__ import annotations

from aws_cdk import CfnResource, Stack

from fm_platform.rules.inference import (
    MAX_OUTPUTS_PER_STACK,
    MAX_RESOURCES_PER_STACK,
)
from fm_platform.rules.inference import (
    check_resource_count as _check_count,
)
from fm_platform.rules.problems import Problems

__all__ = ["MAX_OUTPUTS_PER_STACK", "MAX_RESOURCES_PER_STACK", "check_resource_count"]


def check_resource_count(stack: Stack, advice: str) -> None:
    """Raise a ``ValueError`` when ``stack`` holds more resources than CloudFormation
    accepts, before anything deploys; ``advice`` says how to split it."""
    problems = Problems(f"stack {stack.node.id}")
    count = sum(isinstance(child, CfnResource) for child in stack.node.find_all())
    _check_count(problems, count, advice)
    problems.raise_if_any()
