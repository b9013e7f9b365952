"""The check that the cluster's AZ ID and its stack's region agree: at synth time when the
stack's region is known, else with a CloudFormation rule."""

from __future__ import annotations

from aws_cdk import Aws, CfnRule, CfnRuleAssertion, Fn, Stack
from constructs import Construct

from fm_platform.core.tokens import is_unresolved
from fm_platform.hardware.regions import region_of_az_id
from fm_platform.rules.problems import Problems


def require_region_of_az_id(scope: Construct, availability_zone_id: str) -> None:
    """Make sure ``scope``'s stack deploys to the region of ``availability_zone_id``.

    With a region known at synth time, a mismatch raises a ``ValueError`` naming both. An
    environment-agnostic stack gets a CloudFormation rule (``AvailabilityZoneIdRegion``)
    asserting the region, so a deployment elsewhere stops before any resource is created.
    Nothing is checked when either is a token or the AZ ID's region is not known."""
    if is_unresolved(availability_zone_id):
        return
    region = region_of_az_id(availability_zone_id)
    if region is None:
        return
    stack_region = Stack.of(scope).region
    if not is_unresolved(stack_region):
        if stack_region != region:
            problems = Problems("availability zone")
            problems.add(
                "availability_zone_id",
                availability_zone_id,
                f"an AZ ID of {region}, but the stack deploys to {stack_region}; use an AZ ID "
                f"of {stack_region} (`aws ec2 describe-availability-zones --region "
                f"{stack_region}` lists them)",
            )
            problems.raise_if_any()
        return
    CfnRule(
        scope,
        "AvailabilityZoneIdRegion",
        assertions=[
            CfnRuleAssertion(
                assert_=Fn.condition_equals(Aws.REGION, region),
                assert_description=f"The cluster's AZ ID {availability_zone_id} is in "
                f"{region}: deploy this stack to {region}, or set availability_zone_id to an "
                "AZ ID of the region you deploy to.",
            )
        ],
    )
