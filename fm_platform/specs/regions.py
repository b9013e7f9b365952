"""Which region an AZ ID belongs to, and the check that the cluster's AZ ID and its stack's
region agree.

An AZ ID starts with a short code of its region: ``use1-az4`` is in us-east-1,
``apne1-az1`` in ap-northeast-1, ``usgw1-az1`` in us-gov-west-1 (the area, the first letter
of any further word, the direction's initials, the number). The regions come from
botocore's endpoint data, so a region botocore knows is matched without a table here.
"""

from __future__ import annotations

from functools import cache

import botocore.session
from aws_cdk import Aws, CfnRule, CfnRuleAssertion, Fn, Stack, Token
from constructs import Construct

from fm_platform.validation import Problems

_DIRECTIONS = {
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
    "central": "c",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
}


def az_id_prefix(region: str) -> str | None:
    """The AZ ID code of ``region`` (``use1`` for us-east-1), or None for a region name of
    another shape."""
    parts = region.split("-")
    if len(parts) < 3 or not parts[-1].isdigit() or parts[-2] not in _DIRECTIONS:
        return None
    others = "".join(word[0] for word in parts[1:-2])
    return f"{parts[0]}{others}{_DIRECTIONS[parts[-2]]}{parts[-1]}"


@cache
def _known_regions() -> tuple[str, ...]:
    session = botocore.session.get_session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions("ec2", partition_name=partition))
    return tuple(sorted(regions))


def region_of_az_id(availability_zone_id: str) -> str | None:
    """The region an AZ ID belongs to, or None when no region botocore knows matches."""
    prefix = availability_zone_id.split("-az")[0]
    matches = [region for region in _known_regions() if az_id_prefix(region) == prefix]
    return matches[0] if len(matches) == 1 else None


def require_region_of_az_id(scope: Construct, availability_zone_id: str) -> None:
    """Make sure ``scope``'s stack deploys to the region of ``availability_zone_id``.

    With a region known at synth time, a mismatch raises a ``ValueError`` naming both. An
    environment-agnostic stack gets a CloudFormation rule (``AvailabilityZoneIdRegion``)
    asserting the region, so a deployment elsewhere stops before any resource is created.
    Nothing is checked when either is a token or the AZ ID's region is not known."""
    if Token.is_unresolved(availability_zone_id):
        return
    region = region_of_az_id(availability_zone_id)
    if region is None:
        return
    stack_region = Stack.of(scope).region
    if not Token.is_unresolved(stack_region):
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
