"""The cluster's AZ ID and its stack's region agree: checked at synth when the region is
known, by a CloudFormation rule when the stack is environment-agnostic."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
from fm_platform.hardware.regions import az_id_prefix, region_of_az_id


@pytest.mark.parametrize(
    ("region", "prefix"),
    [
        ("us-east-1", "use1"),
        ("ap-northeast-1", "apne1"),
        ("ap-southeast-2", "apse2"),
        ("eu-central-1", "euc1"),
        ("us-gov-west-1", "usgw1"),
        ("cn-northwest-1", "cnnw1"),
    ],
)
def test_az_id_codes_follow_the_region_name(region, prefix):
    assert az_id_prefix(region) == prefix
    assert region_of_az_id(f"{prefix}-az1") == region


def test_an_unknown_code_has_no_region():
    assert region_of_az_id("zz9-az1") is None


def network(region: str | None, zone: str) -> cdk.Stack:
    env = cdk.Environment(region=region) if region else None
    stack = cdk.Stack(cdk.App(), "Net", env=env)
    ClusterNetwork(stack, "Network", ClusterNetworkProps(availability_zone_id=zone))
    return stack


def test_a_known_region_of_another_az_id_is_an_error_naming_both():
    with pytest.raises(ValueError) as error:
        network("eu-west-1", "use1-az4")
    assert (
        "availability_zone_id='use1-az4': an AZ ID of us-east-1, but the stack deploys to "
        "eu-west-1" in str(error.value)
    )


def test_the_matching_region_needs_no_rule():
    stack = network("us-west-2", "usw2-az1")
    rules = Template.from_stack(stack).to_json().get("Rules", {})
    assert not [name for name in rules if "AvailabilityZoneIdRegion" in name]


@pytest.mark.slow
def test_an_environment_agnostic_stack_gets_a_rule_on_its_region():
    stack = network(None, "usw2-az1")
    rules = Template.from_stack(stack).to_json()["Rules"]
    (rule,) = [rule for name, rule in rules.items() if "AvailabilityZoneIdRegion" in name]
    (assertion,) = rule["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-west-2"]}
    assert "AZ ID usw2-az1 is in us-west-2" in assertion["AssertDescription"]
    template = json.dumps(Template.from_stack(stack).to_json())
    matches = lint(template, config=ManualArgs(regions=["us-west-2"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []
