"""Customer-managed KMS keys."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from constructs import Construct


def customer_managed_key(scope: Construct, construct_id: str, *, purpose: str) -> kms.Key:
    """A customer-managed KMS key with yearly rotation, retained on delete.

    ``purpose`` becomes the key's description, so the key is recognisable in the console.
    """
    return kms.Key(
        scope,
        construct_id,
        description=f"fm_platform: {purpose}",
        enable_key_rotation=True,
        removal_policy=RemovalPolicy.RETAIN,
    )
