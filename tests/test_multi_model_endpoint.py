"""Multi-model endpoints: one MultiModel container over an S3 prefix, CPU or single GPU."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.core.compliance import acknowledge
from tests.support import nag_findings, new_app

IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
    "pytorch-inference:2.6.0-cpu-py312-ubuntu22.04-sagemaker"
)
PREFIX = "s3://model-fleet/tenants/"


def props(**overrides) -> MultiModelEndpointProps:
    values = {"models_s3_prefix": PREFIX, "image": IMAGE, "instance_type": "ml.m5.xlarge"}
    return MultiModelEndpointProps(**{**values, **overrides})


class Built:
    def __init__(self) -> None:
        self.app = new_app()
        self.stack = stack = cdk.Stack(self.app, "Mme")
        vpc = ec2.Vpc.from_vpc_attributes(
            stack,
            "Vpc",
            vpc_id="vpc-0123456789abcdef0",
            availability_zones=["us-east-1a"],
            private_subnet_ids=["subnet-0123456789abcdef0"],
            private_subnet_route_table_ids=["rtb-0123456789abcdef0"],
        )
        self.cpu = MultiModelEndpoint(
            stack,
            "Cpu",
            props(
                environment={"SAGEMAKER_MODEL_SERVER_WORKERS": "2"},
                initial_instance_count=2,
                scaling=InstanceScaling(
                    min_instances=2, max_instances=6, target_invocations_per_instance=200
                ),
                vpc=vpc,
                network_isolation=True,
            ),
        )
        self.passed_key = kms.Key.from_key_arn(
            stack,
            "PassedKey",
            "arn:aws:kms:us-east-1:111122223333:key/11111111-2222-3333-4444-555555555555",
        )
        self.gpu = MultiModelEndpoint(
            stack,
            "Gpu",
            props(instance_type="ml.g5.xlarge", encryption_key=self.passed_key),
        )
        self.invoker = iam.Role(
            stack, "Invoker", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")
        )
        self.cpu.grant_invoke(self.invoker)
        acknowledge(
            self.invoker,
            "test principal standing in for an application role",
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
        )
        self.annotations = Annotations.from_stack(stack)
        self.findings = nag_findings(self.app)
        self.template = Template.from_json(self.app.synth().get_stack_by_name("Mme").template)

    def logical_id(self, construct) -> str:
        return self.stack.get_logical_id(construct.node.default_child or construct)

    def properties(self, construct) -> dict:
        return self.template.to_json()["Resources"][self.logical_id(construct)]["Properties"]


@pytest.fixture(scope="module")
def built() -> Built:
    return Built()


def test_model_is_one_multi_model_container_over_the_prefix(built):
    model = built.properties(built.cpu.model)
    assert model["PrimaryContainer"] == {
        "Image": IMAGE,
        "Mode": "MultiModel",
        "ModelDataUrl": PREFIX,
        "Environment": {"SAGEMAKER_MODEL_SERVER_WORKERS": "2"},
    }
    assert model["EnableNetworkIsolation"] is True
    assert "ModelName" not in model


def test_variant_serves_the_model(built):
    config = built.properties(built.cpu.endpoint_config)
    assert config["ProductionVariants"] == [
        {
            "VariantName": "AllTraffic",
            "ModelName": {"Fn::GetAtt": [built.logical_id(built.cpu.model), "ModelName"]},
            "InstanceType": "ml.m5.xlarge",
            "InitialInstanceCount": 2,
            "InitialVariantWeight": 1,
            # No model size given: the 16 GiB of an ml.m5.xlarge bound the models.
            "ModelDataDownloadTimeoutInSeconds": 300,
            "ContainerStartupHealthCheckTimeoutInSeconds": 460,
        }
    ]
    assert config["KmsKeyId"] == {"Fn::GetAtt": [built.logical_id(built.cpu.storage_key), "Arn"]}


def test_role_reads_every_object_under_the_prefix(built):
    policy = built.cpu.execution_role.node.find_child("DefaultPolicy")
    statements = built.properties(policy)["PolicyDocument"]["Statement"]
    objects = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::model-fleet/tenants/*"]]}
    assert {"Action": "s3:GetObject", "Effect": "Allow", "Resource": objects} in statements


def test_instance_scaling(built):
    target = built.properties(built.cpu.scalable_target)
    assert target["ResourceId"] == {
        "Fn::Join": [
            "",
            [
                "endpoint/",
                {"Fn::GetAtt": [built.logical_id(built.cpu.endpoint), "EndpointName"]},
                "/variant/AllTraffic",
            ],
        ]
    }
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 6)
    built.template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "ScalingTargetId": {"Ref": built.logical_id(built.cpu.scalable_target)},
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"
                    },
                    "TargetValue": 200,
                }
            ),
        },
    )
    assert built.gpu.scalable_target is None


def test_dedicated_security_group_in_the_vpc(built):
    group = built.properties(built.cpu.security_group)
    assert group["VpcId"] == "vpc-0123456789abcdef0"
    assert "SecurityGroupIngress" not in group
    assert built.properties(built.cpu.model)["VpcConfig"]["Subnets"] == ["subnet-0123456789abcdef0"]


def test_nvme_type_gets_no_key_and_warns_about_the_passed_one(built):
    assert built.gpu.storage_key is None
    assert "KmsKeyId" not in built.properties(built.gpu.endpoint_config)
    warnings = built.annotations.find_warning("/Mme/Gpu", Match.string_like_regexp("NVMe"))
    assert len(warnings) == 1


def test_grant_invoke(built):
    built.template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "Roles": [{"Ref": built.logical_id(built.invoker)}],
            "PolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {
                            "Action": [
                                "sagemaker:InvokeEndpoint",
                                "sagemaker:InvokeEndpointWithResponseStream",
                            ],
                            "Resource": {"Ref": built.logical_id(built.cpu.endpoint)},
                        }
                    )
                ]
            },
        },
    )


def test_cold_start_and_invocation_metrics(built):
    metric = built.cpu.metric_model_loading_wait_time()
    assert metric.metric_name == "ModelLoadingWaitTime"
    assert built.stack.resolve(metric.dimensions)["VariantName"] == "AllTraffic"
    invocations = built.cpu.metric_invocations()
    assert (invocations.metric_name, invocations.statistic) == ("Invocations", "Sum")
    assert built.stack.resolve(invocations.dimensions) == built.stack.resolve(metric.dimensions)


def test_nag_packs_find_nothing_but_the_ignored_key_warning(built):
    assert built.findings == ["Annotation::fm_platform:nvmeKmsKeyIgnored at Mme/Gpu"]


@pytest.mark.slow
def test_cfn_lint_finds_nothing(built):
    matches = lint(json.dumps(built.template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_role_reads_the_prefix_of_a_bucket_in_the_stack():
    stack = cdk.Stack(new_app(), "S")
    bucket = s3.Bucket(stack, "Models")
    endpoint = MultiModelEndpoint(
        stack, "Fleet", props(models_s3_prefix=f"s3://{bucket.bucket_name}/models/fleet/")
    )
    resources = Template.from_stack(stack).to_json()["Resources"]
    policy = resources[
        stack.get_logical_id(
            endpoint.execution_role.node.find_child("DefaultPolicy").node.default_child
        )
    ]
    bucket_arn = [
        "arn:",
        {"Ref": "AWS::Partition"},
        ":s3:::",
        {"Ref": stack.get_logical_id(bucket.node.default_child)},
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {
        "Action": "s3:GetObject",
        "Effect": "Allow",
        "Resource": {"Fn::Join": ["", [*bucket_arn, "/models/fleet/*"]]},
    } in statements
    assert {
        "Action": "s3:ListBucket",
        "Condition": {"StringLike": {"s3:prefix": "models/fleet/*"}},
        "Effect": "Allow",
        "Resource": {"Fn::Join": ["", bucket_arn]},
    } in statements
    Annotations.from_stack(stack).has_no_warning("*", Match.string_like_regexp("no read grant"))


# -- validation -----------------------------------------------------------------------------


def build(**overrides) -> MultiModelEndpoint:
    return MultiModelEndpoint(cdk.Stack(new_app(), "S"), "E", props(**overrides))


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        (
            "ml.g5.12xlarge",
            "instance_type='ml.g5.12xlarge': has 4 x nvidia-gpu accelerators; a multi-model "
            "endpoint needs a CPU instance type",
        ),
        (
            "ml.inf2.xlarge",
            "instance_type='ml.inf2.xlarge': has 1 x inferentia accelerators",
        ),
        ("ml.m5.gigantic", "instance_type='ml.m5.gigantic': not an instance type SageMaker"),
    ],
)
def test_instance_type_messages(instance_type, expected):
    with pytest.raises(ValueError) as error:
        build(instance_type=instance_type)
    assert expected in str(error.value)


@pytest.mark.parametrize("instance_type", ["ml.g5.2xlarge", "ml.c5.2xlarge"])
def test_single_gpu_and_cpu_types_are_accepted(instance_type):
    endpoint = build(instance_type=instance_type)
    Template.from_stack(cdk.Stack.of(endpoint)).has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {"ProductionVariants": [Match.object_like({"InstanceType": instance_type})]},
    )


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"models_s3_prefix": "s3://bucket/models"}, "models_s3_prefix='s3://bucket/models'"),
        ({"models_s3_prefix": "https://x/y/"}, "must be an S3 prefix"),
        ({"endpoint_name": "fleet_1"}, "endpoint_name='fleet_1'"),
        (
            {"endpoint_name": "f" * 64},
            f"endpoint_name='{'f' * 64}': too long: at most 63 characters, it has 64",
        ),
        (
            {
                "scaling": InstanceScaling(
                    min_instances=4, max_instances=1, target_invocations_per_instance=10
                )
            },
            "scaling.min_instances=4: must not exceed max_instances (1)",
        ),
        ({"initial_instance_count": 0}, "initial_instance_count=0: must be at least 1"),
    ],
)
def test_validation_messages(overrides, expected):
    with pytest.raises(ValueError) as error:
        build(**overrides)
    assert expected in str(error.value)
