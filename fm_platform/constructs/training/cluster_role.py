"""The least-privilege execution role HyperPod cluster instances run with."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from constructs import Construct

from fm_platform.compliance import acknowledge, acknowledge_wildcard_resource

#: The AWS managed policy HyperPod documents for cluster instances: CloudWatch logs and
#: metrics under /aws/sagemaker/Clusters, SSM Session Manager channels, and S3 read on
#: buckets named sagemaker-* (other buckets need their own grant).
INSTANCE_ROLE_MANAGED_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"

# EC2 read actions HyperPod calls to attach instances to your VPC. None of them supports
# resource-level permissions (the EC2 service authorization reference lists no resource
# type for them), so they must be granted on "*".
_EC2_DESCRIBE_ACTIONS = (
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVpcs",
)

# Network-interface actions whose only resource is the interface itself.
_ENI_ACTIONS = (
    "ec2:CreateNetworkInterfacePermission",
    "ec2:CreateTags",
    "ec2:DeleteNetworkInterface",
)

# Network-interface actions that are not authorised against an interface ARN alone:
# DeleteNetworkInterfacePermission names a permission ID, and DetachNetworkInterface also
# authorises the instance, which HyperPod owns and whose ARN this stack cannot know.
_UNSCOPED_ENI_ACTIONS = (
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DetachNetworkInterface",
)


class ClusterExecutionRole(iam.Role):
    """An IAM role whose permissions, including every later grant, live in one
    customer-managed policy (construct ID ``Policy``) instead of an inline policy."""

    def __init__(self, scope: Construct, construct_id: str, **role_props: Any) -> None:
        super().__init__(scope, construct_id, **role_props)
        self.policy = iam.ManagedPolicy(
            self, "Policy", description="HyperPod cluster instances (fm_platform)", roles=[self]
        )

    def add_to_principal_policy(
        self, statement: iam.PolicyStatement
    ) -> iam.AddToPrincipalPolicyResult:
        """Add ``statement`` to the role's managed policy."""
        self.policy.add_statements(statement)
        return iam.AddToPrincipalPolicyResult(statement_added=True, policy_dependable=self.policy)


def cluster_execution_role(
    scope: Construct,
    construct_id: str,
    *,
    subnet: ec2.ISubnet,
    security_group: ec2.ISecurityGroup,
) -> ClusterExecutionRole:
    """A role SageMaker assumes for the cluster's instances, with the managed instance
    policy and the EC2 network-interface permissions HyperPod needs in ``subnet`` with
    ``security_group``. Grant lifecycle-script and file-system access separately."""
    stack = Stack.of(scope)
    role = ClusterExecutionRole(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description="HyperPod cluster instances (fm_platform)",
        managed_policies=[
            iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_MANAGED_POLICY)
        ],
    )
    interfaces = stack.format_arn(service="ec2", resource="network-interface", resource_name="*")
    subnet_arn = stack.format_arn(service="ec2", resource="subnet", resource_name=subnet.subnet_id)
    group_arn = stack.format_arn(
        service="ec2", resource="security-group", resource_name=security_group.security_group_id
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="CreateInterfacesInClusterSubnet",
            actions=["ec2:CreateNetworkInterface"],
            resources=[interfaces, subnet_arn, group_arn],
        )
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="ManageClusterInterfaces", actions=list(_ENI_ACTIONS), resources=[interfaces]
        )
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="ReleaseClusterInterfaces", actions=list(_UNSCOPED_ENI_ACTIONS), resources=["*"]
        )
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="DescribeClusterNetwork", actions=list(_EC2_DESCRIBE_ACTIONS), resources=["*"]
        )
    )
    _acknowledge_findings(role, interfaces)
    return role


def _acknowledge_findings(role: ClusterExecutionRole, interfaces: str) -> None:
    acknowledge(
        role,
        f"{INSTANCE_ROLE_MANAGED_POLICY} is the AWS managed policy the HyperPod developer "
        "guide requires on cluster instance roles; AWS keeps it in step with the agent's "
        "needs (CloudWatch logs and metrics for /aws/sagemaker/Clusters, SSM Session "
        "Manager channels).",
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
        f"{INSTANCE_ROLE_MANAGED_POLICY}]",
    )
    acknowledge_wildcard_resource(
        role,
        "HyperPod creates one elastic network interface per instance and per EFA device in "
        "the cluster subnet; their IDs exist only after creation, so the interface actions "
        "are scoped to network interfaces of this account and Region (CreateNetworkInterface "
        "is further bound to the cluster subnet and security group). EC2 Describe* actions, "
        "DeleteNetworkInterfacePermission, DetachNetworkInterface (which also authorises the "
        "HyperPod-owned instance) and fsx:DescribeFileSystems (listing the account's file "
        "systems) are authorised only against '*'.",
        interfaces,
        "*",
    )
