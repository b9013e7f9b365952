"""ClusterNetwork: one AZ by AZ ID, a large private subnet, S3 endpoint, EFA security group,
encrypted flow logs; bring-your-own network; validation."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.training.network import (
    ClusterNetwork,
    ClusterNetworkProps,
    usable_ipv4_addresses,
)
from tests.support import nag_findings, new_app


def _network_stack(props: ClusterNetworkProps | None = None) -> tuple[cdk.Stack, ClusterNetwork]:
    app = new_app()
    stack = cdk.Stack(app, "Net")
    return stack, ClusterNetwork(stack, "Network", props or ClusterNetworkProps())


@pytest.fixture(scope="module")
def built() -> tuple[ClusterNetwork, Template]:
    stack, network = _network_stack()
    return network, Template.from_stack(stack)


@pytest.fixture(scope="module")
def template(built) -> Template:
    return built[1]


def _resources(template: Template, kind: str) -> dict:
    return template.find_resources(kind)


def _private_subnet(template: Template) -> dict:
    subnets = template.find_resources(
        "AWS::EC2::Subnet",
        {
            "Properties": {
                "MapPublicIpOnLaunch": False,
                "Tags": Match.array_with([{"Key": "aws-cdk:subnet-type", "Value": "Private"}]),
            }
        },
    )
    assert len(subnets) == 1
    return next(iter(subnets.values()))


def test_one_private_and_one_public_subnet(template):
    template.resource_count_is("AWS::EC2::VPC", 1)
    template.resource_count_is("AWS::EC2::Subnet", 2)
    template.resource_count_is("AWS::EC2::NatGateway", 1)


def test_private_subnet_is_placed_by_az_id_with_a_17_mask(template):
    properties = _private_subnet(template)["Properties"]
    assert properties["AvailabilityZoneId"] == "use1-az4"
    assert "AvailabilityZone" not in properties
    assert properties["CidrBlock"] == "10.0.0.0/17"


def test_no_subnet_is_placed_by_az_name(template):
    for subnet in _resources(template, "AWS::EC2::Subnet").values():
        assert "AvailabilityZone" not in subnet["Properties"]
        assert subnet["Properties"]["AvailabilityZoneId"] == "use1-az4"


def test_public_subnet_does_not_hand_out_public_addresses(template):
    for subnet in _resources(template, "AWS::EC2::Subnet").values():
        assert subnet["Properties"]["MapPublicIpOnLaunch"] is False


def test_attributes(built):
    network, _ = built
    assert network.availability_zone_id == "use1-az4"
    assert network.subnet.ipv4_cidr_block == "10.0.0.0/17"
    assert network.flow_log is not None
    assert usable_ipv4_addresses(network.subnet.ipv4_cidr_block) == 32_763


def test_s3_gateway_endpoint_is_on_the_private_route_table(template):
    endpoints = _resources(template, "AWS::EC2::VPCEndpoint")
    assert len(endpoints) == 1
    endpoint = next(iter(endpoints.values()))["Properties"]
    assert endpoint["VpcEndpointType"] == "Gateway"
    assert endpoint["ServiceName"]["Fn::Join"][1][-1] == ".s3"
    private_tables = [
        logical_id
        for logical_id in _resources(template, "AWS::EC2::RouteTable")
        if "PrivateSubnet" in logical_id
    ]
    assert endpoint["RouteTableIds"] == [{"Ref": table} for table in private_tables]


def _cluster_group_id(template: Template) -> str:
    groups = _resources(template, "AWS::EC2::SecurityGroup")
    assert len(groups) == 1
    return next(iter(groups))


def test_security_group_allows_all_traffic_from_itself(template):
    group = _cluster_group_id(template)
    self_ref = {"Fn::GetAtt": [group, "GroupId"]}
    template.has_resource_properties(
        "AWS::EC2::SecurityGroupIngress",
        {"GroupId": self_ref, "SourceSecurityGroupId": self_ref, "IpProtocol": "-1"},
    )


def test_security_group_allows_all_traffic_to_itself(template):
    group = _cluster_group_id(template)
    self_ref = {"Fn::GetAtt": [group, "GroupId"]}
    template.has_resource_properties(
        "AWS::EC2::SecurityGroupEgress",
        {"GroupId": self_ref, "DestinationSecurityGroupId": self_ref, "IpProtocol": "-1"},
    )


def test_security_group_has_internet_egress_and_no_open_ingress(template):
    group = _resources(template, "AWS::EC2::SecurityGroup")[_cluster_group_id(template)]
    egress = group["Properties"]["SecurityGroupEgress"]
    assert {"CidrIp": "0.0.0.0/0", "IpProtocol": "-1"}.items() <= egress[0].items()
    assert "SecurityGroupIngress" not in group["Properties"]
    for rule in _resources(template, "AWS::EC2::SecurityGroupIngress").values():
        assert "CidrIp" not in rule["Properties"]


def test_flow_log_captures_all_traffic_into_a_kms_encrypted_group(template):
    template.has_resource_properties(
        "AWS::EC2::FlowLog",
        {"ResourceType": "VPC", "TrafficType": "ALL", "LogDestinationType": "cloud-watch-logs"},
    )
    groups = _resources(template, "AWS::Logs::LogGroup")
    assert len(groups) == 1
    group = next(iter(groups.values()))
    assert group["Properties"]["RetentionInDays"] == 365
    key_id = group["Properties"]["KmsKeyId"]["Fn::GetAtt"][0]
    assert template.to_json()["Resources"][key_id]["Type"] == "AWS::KMS::Key"


def test_flow_log_key_lets_cloudwatch_logs_use_it(template):
    template.has_resource_properties(
        "AWS::KMS::Key",
        {
            "EnableKeyRotation": True,
            "KeyPolicy": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Principal": {
                                    "Service": {
                                        "Fn::Join": [
                                            "",
                                            ["logs.", {"Ref": "AWS::Region"}, ".amazonaws.com"],
                                        ]
                                    }
                                },
                                "Action": Match.array_with(
                                    ["kms:Encrypt*", "kms:GenerateDataKey*"]
                                ),
                                "Condition": {
                                    "ArnLike": {
                                        "kms:EncryptionContext:aws:logs:arn": Match.any_value()
                                    }
                                },
                            }
                        )
                    ]
                ),
            },
        },
    )


def test_flow_log_role_uses_a_managed_policy_not_an_inline_one(template):
    template.resource_count_is("AWS::IAM::Policy", 0)
    template.has_resource_properties(
        "AWS::IAM::ManagedPolicy",
        {
            "PolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {"Action": Match.array_with(["logs:PutLogEvents"]), "Effect": "Allow"}
                    )
                ]
            }
        },
    )


def test_custom_options_reach_the_template():
    app = new_app()
    stack = cdk.Stack(app, "Custom")
    key = kms.Key(stack, "OwnKey", enable_key_rotation=True)
    network = ClusterNetwork(
        stack,
        "Network",
        ClusterNetworkProps(
            availability_zone_id="usw2-az1",
            vpc_cidr="10.20.0.0/18",
            private_subnet_cidr_mask=19,
            public_subnet_cidr_mask=26,
            flow_log_retention=logs.RetentionDays.THREE_MONTHS,
            encryption_key=key,
        ),
    )
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::EC2::VPC", {"CidrBlock": "10.20.0.0/18"})
    properties = _private_subnet(template)["Properties"]
    assert properties["AvailabilityZoneId"] == "usw2-az1"
    assert properties["CidrBlock"] == "10.20.0.0/19"
    key_arn = stack.resolve(key.key_arn)
    template.has_resource_properties(
        "AWS::Logs::LogGroup", {"RetentionInDays": 90, "KmsKeyId": key_arn}
    )
    template.resource_count_is("AWS::KMS::Key", 1)
    statements = stack.resolve(key.node.default_child.key_policy)["Statement"]
    assert any("logs." in json.dumps(s.get("Principal")) for s in statements)
    assert network.encryption_key is key
    assert usable_ipv4_addresses(network.subnet.ipv4_cidr_block) == 8187


def test_bring_your_own_network_creates_nothing():
    app = new_app()
    stack = cdk.Stack(app, "Byo")
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123"],
    )
    subnet = ec2.Subnet.from_subnet_attributes(
        stack, "Subnet", subnet_id="subnet-0123", ipv4_cidr_block="10.1.0.0/16"
    )
    group = ec2.SecurityGroup.from_security_group_id(stack, "Group", "sg-0123")
    network = ClusterNetwork(
        stack, "Network", ClusterNetworkProps(vpc=vpc, subnet=subnet, security_group=group)
    )
    assert network.vpc is vpc
    assert network.subnet is subnet
    assert network.security_group is group
    assert network.availability_zone_id is None
    assert network.flow_log is None
    assert [c for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)] == []


def _error(**kwargs) -> str:
    with pytest.raises(ValueError) as raised:
        _network_stack(ClusterNetworkProps(**kwargs))
    return str(raised.value)


def test_partial_bring_your_own_network_names_what_is_missing():
    stack = cdk.Stack(new_app(), "Partial")
    group = ec2.SecurityGroup.from_security_group_id(stack, "Group", "sg-0123")
    message = _error(security_group=group)
    assert "only security_group given" in message
    assert "missing: vpc, subnet" in message


@pytest.mark.parametrize("zone", ["us-east-1a", "use1-az", "USE1-AZ4", "use1-bos1-az1", ""])
def test_az_name_is_rejected_as_az_id(zone):
    message = _error(availability_zone_id=zone)
    assert f"availability_zone_id={zone!r}" in message
    assert "an AZ ID such as use1-az4 (not an AZ name such as us-east-1a)" in message


@pytest.mark.parametrize("zone", ["use1-az4", "usw2-az1", "apne1-az1", "euc1-az2", "usgw1-az1"])
def test_az_ids_are_accepted(zone):
    ClusterNetworkProps(availability_zone_id=zone).validate()


@pytest.mark.parametrize(
    ("cidr", "expected"),
    [
        ("10.0.0.0", "vpc_cidr='10.0.0.0': mask must be between /16 and /28"),
        ("10.0.0.1/16", "vpc_cidr='10.0.0.1/16': must be an IPv4 CIDR block"),
        ("not-a-cidr", "vpc_cidr='not-a-cidr': must be an IPv4 CIDR block"),
        ("10.0.0.0/8", "vpc_cidr='10.0.0.0/8': mask must be between /16 and /28"),
    ],
)
def test_bad_vpc_cidr(cidr, expected):
    assert expected in _error(vpc_cidr=cidr)


def test_subnet_masks_out_of_range():
    message = _error(private_subnet_cidr_mask=29, public_subnet_cidr_mask=15)
    assert "private_subnet_cidr_mask=29: must be between 16 and 28" in message
    assert "public_subnet_cidr_mask=15: must be between 16 and 28" in message


def test_subnet_must_be_smaller_than_the_vpc():
    message = _error(vpc_cidr="10.0.0.0/20", private_subnet_cidr_mask=17)
    assert "private_subnet_cidr_mask=17: must be larger than the VPC's mask /20" in message


def test_every_problem_is_reported_at_once():
    message = _error(availability_zone_id="us-east-1a", vpc_cidr="bad", public_subnet_cidr_mask=30)
    assert message.count("\n  - ") == 3


@pytest.mark.parametrize(
    ("cidr", "usable"),
    [("10.0.0.0/17", 32_763), ("10.0.0.0/24", 251), ("10.0.0.0/16", 65_531), ("10.0.0.0/28", 11)],
)
def test_usable_ipv4_addresses(cidr, usable):
    assert usable_ipv4_addresses(cidr) == usable


@pytest.mark.slow
def test_cfn_lint_finds_nothing(template):
    matches = lint(json.dumps(template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_nag_packs_find_nothing():
    app = new_app()
    ClusterNetwork(cdk.Stack(app, "Nag"), "Network", ClusterNetworkProps())
    assert nag_findings(app) == []


def test_the_default_security_group_is_closed_by_default_and_can_be_left_to_the_landing_zone(
    template,
):
    template.resource_count_is("Custom::VpcRestrictDefaultSG", 1)
    stack, _ = _network_stack(ClusterNetworkProps(restrict_default_security_group=False))
    left = Template.from_stack(stack)
    left.resource_count_is("Custom::VpcRestrictDefaultSG", 0)
    # No function outside the VPC is left (Control Tower CT.LAMBDA.PR.3).
    left.resource_count_is("AWS::Lambda::Function", 0)
    assert nag_findings(stack.node.root) == []  # type: ignore[arg-type]
