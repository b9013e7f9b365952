"""Customer-managed KMS keys."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct


def customer_managed_key(scope: Construct, construct_id: str, *, purpose: str) -> kms.Key:
    """A customer-managed KMS key with yearly rotation, retained on delete, whose policy
    lets only AWS services create grants on it.

    ``purpose`` becomes the key's description, so the key is recognisable in the console.
    """
    key = kms.Key(
        scope,
        construct_id,
        description=f"fm_platform: {purpose}",
        enable_key_rotation=True,
        removal_policy=RemovalPolicy.RETAIN,
    )
    key.add_to_resource_policy(_grants_through_services_only())
    return key


def _grants_through_services_only() -> iam.PolicyStatement:
    """Deny ``kms:CreateGrant`` unless an AWS service asks (AWS Control Tower control
    CT.KMS.PR.3, "Require an AWS KMS key policy to have a statement that limits creation of
    AWS KMS grants to AWS services"). Sound for every key of this package: the grants they
    need are made by the services that use them (EC2 and SageMaker for volumes, FSx, RDS),
    which call CreateGrant for the caller with ``kms:GrantIsForAWSResource`` true (AWS KMS
    Developer Guide, "kms:GrantIsForAWSResource"); no principal grants a key directly."""
    return iam.PolicyStatement(
        sid="GrantsThroughAwsServicesOnly",
        effect=iam.Effect.DENY,
        actions=["kms:CreateGrant"],
        principals=[iam.AnyPrincipal()],
        resources=["*"],
        conditions={
            "BoolIfExists": {
                "kms:GrantIsForAWSResource": "false",
                "aws:PrincipalIsAWSService": "false",
            }
        },
    )
