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


def allow_cloudwatch_logs(key: kms.IKey, region: str, log_group_arns: list[str]) -> None:
    """Let CloudWatch Logs of ``region`` use ``key`` for the log groups ``log_group_arns``
    only (ARNs, ``*`` allowed in the name). This is the key policy the CloudWatch Logs User
    Guide gives for encrypted log groups ("Encrypt log data in CloudWatch Logs using AWS
    Key Management Service", step 2): the service principal, with the
    ``kms:EncryptionContext:aws:logs:arn`` condition naming the log groups, since CloudWatch
    Logs sends each group's ARN as encryption context. An imported key's policy cannot be
    changed here and must already allow it."""
    key.add_to_resource_policy(
        iam.PolicyStatement(
            actions=[
                "kms:Encrypt*",
                "kms:Decrypt*",
                "kms:ReEncrypt*",
                "kms:GenerateDataKey*",
                "kms:Describe*",
            ],
            principals=[iam.ServicePrincipal(f"logs.{region}.amazonaws.com")],
            resources=["*"],
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": (
                        log_group_arns[0] if len(log_group_arns) == 1 else log_group_arns
                    )
                }
            },
        )
    )
