"""The least-privilege execution role HyperPod cluster instances run with."""

from __future__ import annotations

import json
from typing import Any, cast

from aws_cdk import Annotations, CfnResource, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from constructs import Construct

from fm_platform.core.compliance import (
    acknowledge,
    acknowledge_wildcard_resource,
    suppress_scanner_findings,
)

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

# Network-interface actions whose only resource is the interface itself. The EC2 service
# authorization reference ("Actions defined by Amazon EC2") gives
# DeleteNetworkInterfacePermission the resource type network-interface too (with the
# ec2:Subnet and ec2:NetworkInterfaceID condition keys): the permission's interface.
_ENI_ACTIONS = (
    "ec2:CreateNetworkInterfacePermission",
    "ec2:CreateTags",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
)
# DetachNetworkInterface is authorised against the interface and the instance it leaves
# (EC2 service authorization reference); HyperPod's instances live in a service account,
# so the instance part names any account's instances, the interface part only this one's.
_DETACH_ACTIONS = ("ec2:DetachNetworkInterface",)


class ClusterExecutionRole(iam.Role):
    """An IAM role whose permissions, including every later grant, live in one
    customer-managed policy (construct ID ``Policy``) instead of an inline policy."""

    def __init__(self, scope: Construct, construct_id: str, **role_props: Any) -> None:
        """Create the role and its customer-managed policy under ``scope``."""
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
    role = ClusterExecutionRole(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description="HyperPod cluster instances (fm_platform)",
        managed_policies=[instance_role_managed_policy()],
    )
    for statement in network_interface_statements(
        scope, subnet=subnet, security_group=security_group
    ):
        role.add_to_principal_policy(statement)
    _acknowledge_findings(role, _interfaces_arn(scope))
    _acknowledge_for_scanners(role)
    return role


def instance_role_managed_policy() -> iam.IManagedPolicy:
    """The AWS managed policy HyperPod documents for cluster instance roles."""
    return iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_MANAGED_POLICY)


def _interfaces_arn(scope: Construct) -> str:
    return Stack.of(scope).format_arn(
        service="ec2", resource="network-interface", resource_name="*"
    )


def _instances_arn(scope: Construct) -> str:
    return Stack.of(scope).format_arn(
        service="ec2", resource="instance", resource_name="*", account="*"
    )


def network_interface_statements(
    scope: Construct, *, subnet: ec2.ISubnet, security_group: ec2.ISecurityGroup
) -> list[iam.PolicyStatement]:
    """The EC2 statements HyperPod needs to attach instances in ``subnet`` with
    ``security_group`` (each with its ``Sid``)."""
    stack = Stack.of(scope)
    interfaces = _interfaces_arn(scope)
    subnet_arn = stack.format_arn(service="ec2", resource="subnet", resource_name=subnet.subnet_id)
    group_arn = stack.format_arn(
        service="ec2", resource="security-group", resource_name=security_group.security_group_id
    )
    return [
        iam.PolicyStatement(
            sid="CreateInterfacesInClusterSubnet",
            actions=["ec2:CreateNetworkInterface"],
            resources=[interfaces, subnet_arn, group_arn],
        ),
        iam.PolicyStatement(
            sid="ManageClusterInterfaces", actions=list(_ENI_ACTIONS), resources=[interfaces]
        ),
        iam.PolicyStatement(
            sid="DetachClusterInterfaces",
            actions=list(_DETACH_ACTIONS),
            resources=[interfaces, _instances_arn(scope)],
        ),
        iam.PolicyStatement(
            sid="DescribeClusterNetwork", actions=list(_EC2_DESCRIBE_ACTIONS), resources=["*"]
        ),
    ]


def extend_given_role(
    scope: Construct, role: iam.IRole, statements: list[iam.PolicyStatement]
) -> None:
    """Give a caller's ``role`` what :func:`cluster_execution_role` gives its own: the
    managed instance policy and ``statements``. A role of this app (``iam.Role``) gets both;
    a role imported as mutable gets the statements (in an inline policy) and a synth warning
    to check the managed policy, which cannot be seen or attached on an imported role; a
    role that cannot be changed (imported with ``mutable=False`` or
    ``without_policy_updates()``) gets a synth warning listing exactly what to attach."""
    for statement in statements:
        role.add_to_principal_policy(statement)
    if isinstance(role, iam.Role):
        if not _has_instance_role_policy(role):
            role.add_managed_policy(instance_role_managed_policy())
        return
    managed = f"the AWS managed policy {INSTANCE_ROLE_MANAGED_POLICY}"
    # An imported mutable role keeps the statements in an iam.Policy child (its id depends
    # on a feature flag); an immutable one creates nothing.
    if any(isinstance(child, iam.Policy) for child in role.node.children):
        Annotations.of(scope).add_warning_v2(
            "fm_platform:cluster-role-managed-policy",
            f"The imported cluster execution role cannot show or take managed policies here: "
            f"make sure {managed} is attached to it.",
        )
        return
    stack = Stack.of(scope)
    documents = json.dumps(
        [stack.resolve(s.to_statement_json()) for s in statements], sort_keys=True
    )
    Annotations.of(scope).add_warning_v2(
        "fm_platform:cluster-role-grants",
        f"The cluster execution role cannot be changed here (imported with mutable=False or "
        f"without policy updates): attach {managed} and these statements to it yourself, or "
        f"the cluster fails to create or its nodes cannot read their scripts: {documents}",
    )


def _has_instance_role_policy(role: iam.Role) -> bool:
    stack = Stack.of(role)
    wanted = stack.resolve(instance_role_managed_policy().managed_policy_arn)
    attached = stack.resolve(cast(iam.CfnRole, role.node.default_child).managed_policy_arns) or []
    return wanted in attached


#: Why the statements left on "*" cannot be narrowed, for IaC scanners that read the
#: template: AWS's HyperPod developer guide ("IAM role for SageMaker HyperPod") grants the
#: cluster's instance role these EC2 network-interface actions on "*"; the EC2 service
#: authorization reference gives the Describe* actions no resource type and
#: DetachNetworkInterface the HyperPod-owned instance as a resource, which this stack cannot
#: name; the other interface actions are bound to this account's interfaces and
#: CreateNetworkInterface to the cluster subnet and security group.
_SCANNER_REASON = (
    "HyperPod attaches and releases its instances' network interfaces in the cluster subnet; "
    "AWS's HyperPod guide grants these EC2 actions on '*'. The Describe* actions have no "
    "resource type; DetachNetworkInterface is bound to this account's interfaces and to "
    "instances (HyperPod's, in a service account); every other interface action to this "
    "account's interfaces, and CreateNetworkInterface to the cluster subnet and group."
)


def _acknowledge_for_scanners(role: ClusterExecutionRole) -> None:
    """Write the reason into the managed policy's template metadata, where checkov
    (CKV_AWS_109 permissions management and CKV_AWS_111 write access without constraints)
    and cfn_nag (W13, a managed policy with a '*' resource) read acknowledgements."""
    policy = role.policy.node.default_child
    if isinstance(policy, CfnResource):
        suppress_scanner_findings(
            policy,
            checkov={"CKV_AWS_109": _SCANNER_REASON, "CKV_AWS_111": _SCANNER_REASON},
            cfn_nag={"W13": _SCANNER_REASON},
        )


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
        "is further bound to the cluster subnet and security group). EC2 Describe* actions "
        "and fsx:DescribeFileSystems (listing the account's file systems) are authorised "
        "only against '*'; "
        "DetachNetworkInterface also authorises the instance, which HyperPod runs in a "
        "service account (any account's instances).",
        interfaces,
        _instances_arn(role),
        "*",
        after_references=True,
    )
