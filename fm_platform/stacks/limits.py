"""CloudFormation quotas that large model catalogs run into, checked at synth time."""

from __future__ import annotations

from aws_cdk import CfnResource, Stack

from fm_platform.validation import Problems

#: CloudFormation's quotas per stack.
MAX_RESOURCES_PER_STACK = 500
MAX_OUTPUTS_PER_STACK = 200


def check_resource_count(stack: Stack, advice: str) -> None:
    """Raise a ``ValueError`` when ``stack`` holds more resources than CloudFormation
    accepts, before anything deploys; ``advice`` says how to split it."""
    count = sum(isinstance(child, CfnResource) for child in stack.node.find_all())
    if count > MAX_RESOURCES_PER_STACK:
        problems = Problems(f"stack {stack.node.id}")
        problems.add(
            "resources",
            count,
            f"CloudFormation allows at most {MAX_RESOURCES_PER_STACK} per stack; {advice}",
        )
        problems.raise_if_any()
