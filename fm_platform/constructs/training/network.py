"""The cluster network: one VPC, one Availability Zone (chosen by AZ ID), one large private
subnet with NAT egress, an S3 gateway endpoint and the cluster security group."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import cast

from aws_cdk import ArnFormat, CfnResource, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from fm_platform.constructs.training.az_region import require_region_of_az_id
from fm_platform.core.compliance import acknowledge, suppress_scanner_findings
from fm_platform.core.dependencies import drop_redundant_depends_on
from fm_platform.core.encryption import allow_cloudwatch_logs, customer_managed_key
from fm_platform.core.options import Props, checked
from fm_platform.rules.network import (
    AWS_RESERVED_ADDRESSES_PER_SUBNET,
    check_availability_zone_id,
    check_subnet_mask,
    check_vpc_cidr,
    usable_ipv4_addresses,
)
from fm_platform.rules.problems import Problems

_BYO_FIELDS = ("vpc", "subnet", "security_group")
#: Size of each of the two subnets a database subnet group adds (a /27 holds 27 usable
#: addresses: a serverless writer and its replacements during maintenance).
DATABASE_SUBNET_MASK = 27


@dataclass(frozen=True, kw_only=True)
class ClusterNetworkOptions:
    """Plain options of :class:`ClusterNetwork` (the configuration's ``training`` keys too).

    availability_zone_id: the AZ ID (not name) that holds both subnets; by default
        ``use1-az4``, which exists only in us-east-1: deploying to another Region requires
        setting it (e.g. ``usw2-az1``). AZ IDs name the same physical zone in every account,
        which is how capacity reservations and training plans are offered.
    vpc_cidr: the VPC's IPv4 range; by default 10.0.0.0/16.
    private_subnet_cidr_mask: prefix length of the private subnet holding the cluster and
        FSx; by default 17. Every EFA interface takes an address (an ml.p5.48xlarge has 32),
        so hundreds of instances need thousands of addresses: a /17 has 32,768 - 5 (reserved
        by AWS) = 32,763 usable addresses. A /24 (251 usable) is a known trap.
    public_subnet_cidr_mask: prefix length of the public subnet that holds the NAT gateway;
        by default 24.
    flow_log_retention: how long VPC flow logs are kept; by default one year.
    restrict_default_security_group: remove every rule of the VPC's default security group
        (nothing in the stacks uses it), through aws-cdk-lib's custom resource function,
        which runs outside the VPC (Control Tower CT.LAMBDA.PR.3); by default true. False
        leaves the group as EC2 creates it (all traffic among its members, all egress) and
        creates no function: only for a landing zone that closes default security groups
        itself (AWS Config's ``vpc-default-security-group-closed`` with remediation).
    """

    availability_zone_id: str = "use1-az4"
    vpc_cidr: str = "10.0.0.0/16"
    private_subnet_cidr_mask: int = 17
    public_subnet_cidr_mask: int = 24
    flow_log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR
    restrict_default_security_group: bool = True

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_availability_zone_id(problems, "availability_zone_id", self.availability_zone_id)
        vpc_mask = check_vpc_cidr(problems, "vpc_cidr", self.vpc_cidr)
        for field in ("private_subnet_cidr_mask", "public_subnet_cidr_mask"):
            check_subnet_mask(problems, field, getattr(self, field), vpc_mask)


@dataclass(frozen=True, kw_only=True)
class ClusterNetworkProps(ClusterNetworkOptions, Props):
    """Options for :class:`ClusterNetwork`: the fields of :class:`ClusterNetworkOptions`, and

    encryption_key: KMS key encrypting the flow-log group; by default a customer-managed key
        with rotation is created (and retained). Its policy is extended so that CloudWatch
        Logs in this Region may use it; an imported key must already allow that.
    vpc, subnet, security_group: bring your own network. Pass all three or none; with them
        nothing is created and the other options are ignored. By default a VPC, subnet and
        security group are created as described above.
    """

    encryption_key: kms.IKey | None = None
    vpc: ec2.IVpc | None = None
    subnet: ec2.ISubnet | None = None
    security_group: ec2.ISecurityGroup | None = None

    @property
    def brings_own_network(self) -> bool:
        """True when all of ``vpc``, ``subnet`` and ``security_group`` were given."""
        return all(getattr(self, name) is not None for name in _BYO_FIELDS)

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        given = [name for name in _BYO_FIELDS if getattr(props, name) is not None]
        if given and len(given) < len(_BYO_FIELDS):
            missing = [name for name in _BYO_FIELDS if name not in given]
            problems.add(
                "vpc/subnet/security_group",
                f"only {', '.join(given)} given",
                "bring your own network with all three of vpc, subnet and security_group, "
                f"or none; missing: {', '.join(missing)}",
            )
        if not given:
            props.check(problems)


class ClusterNetwork(Construct):
    """The network a HyperPod cluster and its FSx for Lustre file system live in.

    Created by default: a VPC with one public subnet (NAT gateway) and one large private
    subnet in a single Availability Zone chosen by AZ ID, an S3 gateway endpoint on the
    private route table, VPC flow logs to a KMS-encrypted log group, and a security group
    whose members may talk to each other on every port in both directions (EFA needs both).

    Attributes: ``vpc``, ``subnet`` (the private subnet), ``security_group``,
    ``availability_zone_id`` and ``flow_log`` (both None when you bring your own network),
    ``encryption_key`` and ``flow_log_group`` (None when you bring your own network).
    Construct IDs ``Vpc``, ``ClusterSecurityGroup``, ``FlowLogKey``, ``FlowLogs``,
    ``FlowLogRole`` and ``DatabaseSubnet0``/``1`` (see :meth:`database_subnets`) are
    stable.
    """

    def __init__(self, scope: Construct, construct_id: str, props: ClusterNetworkProps) -> None:
        """Create the network under ``scope`` (or adopt the one in ``props``); ``props`` is
        validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self._vpc_cidr: str | None = None
        self._database_subnets: list[ec2.ISubnet] | None = None
        self.availability_zone_id: str | None = None
        self.flow_log: ec2.FlowLog | None = None
        self.flow_log_group: logs.LogGroup | None = None
        self.encryption_key: kms.IKey | None = None
        own_vpc, own_subnet, own_group = props.vpc, props.subnet, props.security_group
        if own_vpc is not None and own_subnet is not None and own_group is not None:
            self.vpc: ec2.IVpc = own_vpc
            self.subnet: ec2.ISubnet = own_subnet
            self.security_group: ec2.ISecurityGroup = own_group
            return
        self.availability_zone_id = props.availability_zone_id
        self._vpc_cidr = props.vpc_cidr
        require_region_of_az_id(self, props.availability_zone_id)
        vpc = self._create_vpc(props)
        self.vpc = vpc
        self.subnet = vpc.private_subnets[0]
        self.security_group = self._create_security_group(vpc)
        self._create_flow_log(vpc, props)
        _settle_default_group_provider(Stack.of(self))

    def database_subnets(self) -> list[ec2.ISubnet]:
        """Subnets for a database subnet group, which must span two Availability Zones: the
        private subnet (where the database runs, next to the cluster) and two isolated
        /27 subnets (local routes only) in the Region's first two AZs (``Fn::GetAZs``), so
        that one of them lies outside the cluster's AZ whichever it is. They take the first
        free blocks of the VPC range, are created on the first call and retained (a
        retained database keeps its subnet group). Only for a network this construct
        created."""
        if self._database_subnets is not None:
            return self._database_subnets
        if self._vpc_cidr is None:
            raise ValueError(
                "database_subnets: the network was brought (vpc, subnet, security_group); "
                "give the database subnets in two Availability Zones yourself"
            )
        taken = [s.ipv4_cidr_block for s in (*self.vpc.private_subnets, *self.vpc.public_subnets)]
        blocks = free_blocks(self._vpc_cidr, taken, DATABASE_SUBNET_MASK, 2)
        if len(blocks) < 2:
            problems = Problems("ClusterNetworkProps")
            problems.add(
                "vpc_cidr",
                self._vpc_cidr,
                f"no room left for two /{DATABASE_SUBNET_MASK} database subnets next to the "
                "private and public subnets; use a larger VPC range or smaller subnets",
            )
            problems.raise_if_any()
        subnets: list[ec2.ISubnet] = [self.subnet]
        for index, block in enumerate(blocks):
            subnet = ec2.Subnet(
                self,
                f"DatabaseSubnet{index}",
                vpc_id=self.vpc.vpc_id,
                cidr_block=block,
                availability_zone=Fn.select(index, Fn.get_azs()),
            )
            cast(CfnResource, subnet.node.default_child).apply_removal_policy(RemovalPolicy.RETAIN)
            subnets.append(subnet)
        self._database_subnets = subnets
        return subnets

    def _create_vpc(self, props: ClusterNetworkProps) -> ec2.Vpc:
        # The private subnet comes first: allocating the larger block first leaves no gap.
        vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(props.vpc_cidr),
            max_azs=1,
            nat_gateways=1,
            # Set here, not left to the @aws-cdk/aws-ec2:restrictDefaultSecurityGroup
            # feature flag, so the network is the same in any app.
            restrict_default_security_group=props.restrict_default_security_group,
            subnet_configuration=[
                ec2.SubnetConfiguration(
                    name="Private",
                    subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS,
                    cidr_mask=props.private_subnet_cidr_mask,
                ),
                ec2.SubnetConfiguration(
                    name="Public",
                    subnet_type=ec2.SubnetType.PUBLIC,
                    cidr_mask=props.public_subnet_cidr_mask,
                    map_public_ip_on_launch=False,
                ),
            ],
            gateway_endpoints={
                "S3": ec2.GatewayVpcEndpointOptions(
                    service=ec2.GatewayVpcEndpointAwsService.S3,
                    subnets=[ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)],
                )
            },
        )
        for subnet in vpc.public_subnets:
            acknowledge(
                subnet.node.find_child("DefaultRoute"),
                "The public subnet holds only the NAT gateway; its route to the internet "
                "gateway is what gives the private cluster subnet outbound access for "
                "package installs. Nothing in the cluster is reachable from the internet.",
                "HIPAA.Security-VPCNoUnrestrictedRouteToIGW",
                "NIST.800.53.R5-VPCNoUnrestrictedRouteToIGW",
            )
        # Place both subnets by AZ ID, which is the same physical zone in every account,
        # instead of the AZ name an env-agnostic VPC would pick with Fn::GetAZs.
        for subnet in (*vpc.private_subnets, *vpc.public_subnets):
            cfn_subnet = cast(ec2.CfnSubnet, subnet.node.default_child)
            cfn_subnet.add_property_deletion_override("AvailabilityZone")
            cfn_subnet.add_property_override("AvailabilityZoneId", props.availability_zone_id)
        return vpc

    def _create_security_group(self, vpc: ec2.Vpc) -> ec2.SecurityGroup:
        group = ec2.SecurityGroup(
            self,
            "ClusterSecurityGroup",
            vpc=vpc,
            description="HyperPod cluster and FSx for Lustre: all traffic within the group",
            allow_all_outbound=True,
        )
        group.add_ingress_rule(group, ec2.Port.all_traffic(), "All traffic within the cluster")
        for rule in group.node.children:
            if isinstance(rule, ec2.CfnSecurityGroupIngress):
                acknowledge(
                    rule,
                    "The all-traffic ingress comes only from this security group itself (no "
                    "address range): EFA between cluster nodes needs every port open within "
                    "the group.",
                    "HIPAA.Security-EC2RestrictedCommonPorts",
                    "NIST.800.53.R5-EC2RestrictedCommonPorts",
                )
        # The L2 drops explicit egress rules from a group that allows all outbound traffic,
        # but EFA needs the self-referencing egress rule itself, so it is added as L1.
        ec2.CfnSecurityGroupEgress(
            group,
            "AllTrafficToSelf",
            group_id=group.security_group_id,
            ip_protocol="-1",
            destination_security_group_id=group.security_group_id,
            description="All traffic within the cluster (EFA needs it in both directions)",
        )
        return group

    def _create_flow_log(self, vpc: ec2.Vpc, props: ClusterNetworkProps) -> None:
        key = props.encryption_key or customer_managed_key(
            self, "FlowLogKey", purpose="VPC flow logs"
        )
        _allow_cloudwatch_logs(key, self)
        self.encryption_key = key
        self.flow_log_group = logs.LogGroup(
            self,
            "FlowLogs",
            encryption_key=key,
            retention=props.flow_log_retention,
            removal_policy=RemovalPolicy.RETAIN,
        )
        # A managed policy on an immutable role instead of the inline policy the L2 would add.
        role = iam.Role(
            self,
            "FlowLogRole",
            assumed_by=iam.ServicePrincipal(
                "vpc-flow-logs.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            ),
            description="Lets VPC flow logs write to the cluster network's flow-log group",
        )
        policy = iam.ManagedPolicy(
            self,
            "FlowLogPolicy",
            roles=[role],
            statements=[
                iam.PolicyStatement(
                    actions=[
                        "logs:CreateLogStream",
                        "logs:DescribeLogStreams",
                        "logs:PutLogEvents",
                    ],
                    resources=[self.flow_log_group.log_group_arn],
                )
            ],
        )
        self.flow_log = vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(
                self.flow_log_group, role.without_policy_updates()
            ),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )
        self.flow_log.node.add_dependency(policy)


def free_blocks(vpc_cidr: str, taken: list[str], mask: int, count: int) -> list[str]:
    """The first ``count`` blocks of size ``/mask`` in ``vpc_cidr`` that overlap none of
    ``taken`` (fewer when the range is full)."""
    network = ipaddress.IPv4Network(vpc_cidr)
    if network.prefixlen > mask:
        return []
    used = [ipaddress.IPv4Network(cidr) for cidr in taken]
    found: list[str] = []
    for block in network.subnets(new_prefix=mask):
        if not any(block.overlaps(other) for other in used):
            found.append(str(block))
            if len(found) == count:
                break
    return found


def _settle_default_group_provider(stack: Stack) -> None:
    """The function aws-cdk-lib adds to strip the VPC's default security group of its rules:
    its DependsOn on its role repeats its ``Fn::GetAtt`` on the role, and what its construct
    cannot set is acknowledged for checkov and cfn_nag. (cdk-nag does not check it: it is a
    plain CfnResource, not a CfnFunction.)"""
    provider = stack.node.try_find_child("Custom::VpcRestrictDefaultSGCustomResourceProvider")
    handler = provider.node.try_find_child("Handler") if provider is not None else None
    if not isinstance(handler, CfnResource):
        return
    drop_redundant_depends_on(handler)
    once = (
        "Runs once per deployment of the VPC; reserving concurrency would take it from the "
        "account's unreserved pool, which Lambda keeps at a minimum (accounts with a low "
        "quota cannot reserve any, and the deployment would fail)."
    )
    caller = (
        "CloudFormation is its only caller and reports a failed run as a failed stack "
        "operation; a dead-letter queue would hold the request with nothing to replay it."
    )
    outside = (
        "aws-cdk-lib's CustomResourceProvider offers no VPC setting; the function only calls "
        "the EC2 API to revoke the default security group's rules."
    )
    suppress_scanner_findings(
        handler,
        checkov={"CKV_AWS_115": once, "CKV_AWS_116": caller, "CKV_AWS_117": outside},
        cfn_nag={"W92": once, "W89": outside},
    )


def _allow_cloudwatch_logs(key: kms.IKey, scope: Construct) -> None:
    """Let CloudWatch Logs in this stack's account and Region use ``key`` for its log
    groups (see :func:`~fm_platform.core.encryption.allow_cloudwatch_logs`)."""
    stack = Stack.of(scope)
    every_group = stack.format_arn(
        service="logs",
        resource="log-group",
        resource_name="*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    allow_cloudwatch_logs(key, stack.region, [every_group])


__all__ = [
    "AWS_RESERVED_ADDRESSES_PER_SUBNET",
    "ClusterNetwork",
    "ClusterNetworkOptions",
    "ClusterNetworkProps",
    "usable_ipv4_addresses",
]
