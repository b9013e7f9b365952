"""The role of a Lambda function that runs in a VPC: the AWS managed policy Lambda documents
for it, and the acknowledgement that says why."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from constructs import Construct

from fm_platform.core.compliance import acknowledge

#: The AWS managed policy Lambda documents for functions in a VPC (Lambda Developer Guide,
#: "Giving Lambda functions access to resources in an Amazon VPC").
LAMBDA_VPC_ACCESS = "service-role/AWSLambdaVPCAccessExecutionRole"


def vpc_function_role(scope: Construct, construct_id: str, description: str) -> iam.Role:
    """A role Lambda assumes, with :data:`LAMBDA_VPC_ACCESS` from its creation on (Lambda
    checks the network-interface permissions when it creates the function) and the
    AwsSolutions-IAM4 acknowledgement of that policy; the caller adds the function's own
    permissions."""
    role = iam.Role(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(LAMBDA_VPC_ACCESS)],
    )
    acknowledge(
        role,
        "AWSLambdaVPCAccessExecutionRole is the AWS managed policy Lambda documents for "
        "functions in a VPC (create, describe and delete their network interfaces); "
        "Lambda checks for these permissions when it creates the function.",
        f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{LAMBDA_VPC_ACCESS}]",
    )
    return role
