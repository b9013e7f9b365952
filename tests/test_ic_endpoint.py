"""InferenceComponentEndpoint: an endpoint config without a model, managed instance scaling, the KMS
rule per instance storage, VPC placement, and its validation."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Annotations, Match, Template

from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointAttributes,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.endpoint_base import INVOKE_ACTIONS
from tests.components import chat_endpoint, chat_model
from tests.support import new_app

# An imported VPC with one private and one isolated subnet.
IMPORTED_VPC = {
    "vpc_id": "vpc-0123456789abcdef0",
    "availability_zones": ["us-east-1a"],
    "private_subnet_ids": ["subnet-0aaaaaaaaaaaaaaaa"],
    "isolated_subnet_ids": ["subnet-0bbbbbbbbbbbbbbbb"],
}


@pytest.fixture(scope="module")
def app():
    app = new_app()
    ebs = cdk.Stack(app, "Ebs")
    InferenceComponentEndpoint(
        ebs,
        "Endpoint",
        InferenceComponentEndpointProps(
            instance_type="ml.m5.xlarge",
            min_instance_count=0,
            max_instance_count=3,
            routing_strategy="RANDOM",
            endpoint_name="cpu-models",
        ),
    )
    nvme = cdk.Stack(app, "Nvme")
    in_vpc = chat_endpoint(
        nvme,
        instance_type="ml.g5.12xlarge",
        encryption_key=kms.Key(nvme, "Passed", enable_key_rotation=True),
        vpc=ec2.Vpc(nvme, "Vpc", max_azs=2, nat_gateways=1),
        network_isolation=True,
    )
    chat_model(nvme, in_vpc)
    placed = cdk.Stack(app, "Placed")
    vpc = ec2.Vpc.from_vpc_attributes(placed, "Vpc", **IMPORTED_VPC)
    InferenceComponentEndpoint(
        placed,
        "Endpoint",
        InferenceComponentEndpointProps(
            instance_type="ml.m5.xlarge",
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            security_groups=[
                ec2.SecurityGroup.from_security_group_id(placed, "Given", "sg-0123456789abcdef0")
            ],
        ),
    )
    return app


def _template(app, name) -> Template:
    return Template.from_stack(app.node.find_child(name))


def test_variant_has_no_model_and_managed_instance_scaling(app):
    _template(app, "Ebs").has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ExecutionRoleArn": {"Fn::GetAtt": [Match.string_like_regexp("ExecutionRole"), "Arn"]},
            "EndpointConfigName": Match.absent(),
            "ProductionVariants": [
                {
                    "VariantName": "AllTraffic",
                    "InstanceType": "ml.m5.xlarge",
                    "InitialInstanceCount": 1,
                    "ModelName": Match.absent(),
                    "ManagedInstanceScaling": {
                        "Status": "ENABLED",
                        "MinInstanceCount": 0,
                        "MaxInstanceCount": 3,
                    },
                    "RoutingConfig": {"RoutingStrategy": "RANDOM"},
                }
            ],
        },
    )


def test_endpoint_takes_the_given_name(app):
    _template(app, "Ebs").has_resource_properties(
        "AWS::SageMaker::Endpoint", {"EndpointName": "cpu-models"}
    )


def test_ebs_type_gets_a_customer_managed_key(app):
    template = _template(app, "Ebs")
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {"KmsKeyId": {"Fn::GetAtt": [Match.string_like_regexp("VolumeKey"), "Arn"]}},
    )
    template.has_resource("AWS::KMS::Key", {"DeletionPolicy": "Retain"})


def test_nvme_type_gets_no_key_even_when_passed(app):
    _template(app, "Nvme").has_resource_properties(
        "AWS::SageMaker::EndpointConfig", {"KmsKeyId": Match.absent()}
    )
    Annotations.from_stack(app.node.find_child("Nvme")).has_warning(
        "/Nvme/Endpoint", Match.string_like_regexp("ml.g5.12xlarge stores data on local NVMe")
    )


def test_default_routing_and_scaling(app):
    _template(app, "Nvme").has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                Match.object_like(
                    {
                        "ManagedInstanceScaling": {
                            "Status": "ENABLED",
                            "MinInstanceCount": 1,
                            "MaxInstanceCount": 2,
                        },
                        "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
                    }
                )
            ]
        },
    )


def test_vpc_and_network_isolation(app):
    template = _template(app, "Nvme")
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "EnableNetworkIsolation": True,
            "VpcConfig": {
                "SecurityGroupIds": [
                    {"Fn::GetAtt": [Match.string_like_regexp("EndpointSecurityGroup"), "GroupId"]}
                ],
                "Subnets": Match.array_with([{"Ref": Match.string_like_regexp("PrivateSubnet")}]),
            },
        },
    )
    assert "ec2:CreateNetworkInterface" in str(template.find_resources("AWS::IAM::Policy"))


def test_vpc_gets_a_dedicated_group_without_ingress_and_https_egress(app):
    template = _template(app, "Nvme")
    [group] = template.find_resources("AWS::EC2::SecurityGroup").values()
    assert "SecurityGroupIngress" not in group["Properties"]
    assert [
        (rule["IpProtocol"], rule["FromPort"], rule["ToPort"])
        for rule in group["Properties"]["SecurityGroupEgress"]
    ] == [("tcp", 443, 443)]
    template.resource_count_is("AWS::EC2::SecurityGroupIngress", 0)


def test_models_on_the_endpoint_use_its_vpc_config(app):
    template = _template(app, "Nvme")
    [config] = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    [model] = template.find_resources("AWS::SageMaker::Model").values()
    assert model["Properties"]["VpcConfig"] == config["Properties"]["VpcConfig"]
    assert model["Properties"]["EnableNetworkIsolation"] is True


def test_given_subnets_and_security_groups_are_used_as_they_are(app):
    template = _template(app, "Placed")
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "VpcConfig": {
                "SecurityGroupIds": ["sg-0123456789abcdef0"],
                "Subnets": ["subnet-0bbbbbbbbbbbbbbbb"],
            }
        },
    )
    template.resource_count_is("AWS::EC2::SecurityGroup", 0)
    assert "ec2:CreateNetworkInterface" in str(template.find_resources("AWS::IAM::Policy"))


def test_grant_invoke_names_the_endpoint_arn():
    stack = cdk.Stack(new_app(), "Grant")
    endpoint = InferenceComponentEndpoint(
        stack, "E", InferenceComponentEndpointProps(instance_type="ml.m5.xlarge")
    )
    grant = endpoint.grant_invoke(iam.User(stack, "Caller"))
    [statement] = grant.principal_statements
    endpoint_id = stack.get_logical_id(endpoint.endpoint)
    assert stack.resolve(statement.to_statement_json()) == {
        "Action": list(INVOKE_ACTIONS),
        "Effect": "Allow",
        "Resource": {"Ref": endpoint_id},
    }


def test_the_endpoint_carries_what_models_need():
    stack = cdk.Stack(new_app(), "Ref")
    endpoint = InferenceComponentEndpoint(
        stack, "E", InferenceComponentEndpointProps(instance_type="ml.m5.xlarge")
    )
    assert endpoint.instance_type == "ml.m5.xlarge"
    assert endpoint.variant_name == "AllTraffic"
    assert (endpoint.min_instance_count, endpoint.max_instance_count) == (1, 2)
    assert endpoint.vpc_config is None and endpoint.network_isolation


def test_an_endpoint_from_its_attributes_builds_its_arn_and_checks_its_type():
    stack = cdk.Stack(new_app(), "Imported")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::123456789012:role/hosting")
    imported = InferenceComponentEndpoint.from_endpoint_attributes(
        stack,
        "E",
        InferenceComponentEndpointAttributes(
            endpoint_name="Shared-G5", instance_type="ml.g5.12xlarge", execution_role=role
        ),
    )
    assert imported.endpoint_name == "Shared-G5"
    assert stack.resolve(imported.endpoint_arn) == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":sagemaker:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                ":endpoint/shared-g5",
            ],
        ]
    }
    with pytest.raises(ValueError, match="instance_type='ml.g5.13xlarge': not an instance type"):
        InferenceComponentEndpoint.from_endpoint_attributes(
            stack,
            "Bad",
            InferenceComponentEndpointAttributes(
                endpoint_name="x", instance_type="ml.g5.13xlarge", execution_role=role
            ),
        )


def test_endpoint_metrics_share_one_signature():
    stack = cdk.Stack(new_app(), "Metrics")
    endpoint = chat_endpoint(stack, "E")
    invocations = endpoint.metric_invocations(period=cdk.Duration.minutes(5), label="calls")
    assert (invocations.metric_name, invocations.statistic, invocations.label) == (
        "Invocations",
        "Sum",
        "calls",
    )
    assert invocations.period.to_seconds() == 300
    assert stack.resolve(invocations.dimensions)["VariantName"] == "AllTraffic"
    errors = endpoint.metric_invocation_5xx_errors("Other")
    assert stack.resolve(errors.dimensions)["VariantName"] == "Other"
    latency = endpoint.metric_model_latency(statistic="p90")
    assert (latency.metric_name, latency.statistic) == ("ModelLatency", "p90")


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"min_instance_count": 3, "max_instance_count": 2}, "min_instance_count=3: must not"),
        ({"initial_instance_count": 3}, "initial_instance_count=3: must lie between"),
        ({"instance_type": "ml.x9.huge"}, "instance_type='ml.x9.huge': not an instance type"),
        ({"instance_type": "ml.t2.medium"}, "regenerate_instance_specs.py --add ml.t2.medium"),
        ({"endpoint_name": "my_endpoint"}, "'my_endpoint': underscores are not allowed"),
        ({"endpoint_name": "e" * 64}, "endpoint_name='" + "e" * 64 + "': too long: at most 63"),
        ({"routing_strategy": "ROUND_ROBIN"}, "routing_strategy='ROUND_ROBIN': not supported"),
        ({"max_instance_count": 0, "min_instance_count": 0}, "max_instance_count=0: below"),
        ({"variant_name": "all_traffic"}, "variant_name='all_traffic'"),
    ],
)
def test_validation(props, expected):
    stack = cdk.Stack(new_app(), "Invalid")
    with pytest.raises(ValueError, match="invalid InferenceComponentEndpointProps") as error:
        InferenceComponentEndpoint(
            stack,
            "E",
            InferenceComponentEndpointProps(**{"instance_type": "ml.m5.xlarge", **props}),
        )
    assert expected in str(error.value)


def test_network_options_need_a_vpc():
    stack = cdk.Stack(new_app(), "NoVpc")
    group = ec2.SecurityGroup.from_security_group_id(stack, "G", "sg-0123456789abcdef0")
    props = InferenceComponentEndpointProps(
        instance_type="ml.m5.xlarge",
        security_groups=[group],
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
    )
    with pytest.raises(ValueError) as error:
        InferenceComponentEndpoint(stack, "E", props)
    message = str(error.value)
    assert "security_groups=[<" in message
    assert "vpc_subnets=SubnetSelection(subnet_type=" in message
    assert message.count("needs `vpc` to be set") == 2
