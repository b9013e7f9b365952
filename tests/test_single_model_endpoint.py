"""Single-model endpoints: variants, data capture, shadow tests, VPC isolation, scaling."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.inference.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.single_model_endpoint import (
    DataCaptureProps,
    SingleModelEndpoint,
    SingleModelEndpointProps,
    VariantSpec,
)
from fm_platform.core.compliance import acknowledge
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
ARTIFACTS = "s3://model-bucket/models/summarizer/"


def imported_vpc(scope: cdk.Stack) -> ec2.IVpc:
    return ec2.Vpc.from_vpc_attributes(
        scope,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a", "us-east-1b"],
        private_subnet_ids=["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        private_subnet_route_table_ids=["rtb-0123456789abcdef0", "rtb-0123456789abcdef1"],
    )


def props(**overrides) -> SingleModelEndpointProps:
    values = {
        "model_name": "summarizer",
        "container": ModelContainer(image=IMAGE, model_data_url=ARTIFACTS),
        "instance_type": "ml.m5.xlarge",
    }
    return SingleModelEndpointProps(**{**values, **overrides})


class Built:
    def __init__(self) -> None:
        self.app = new_app()
        stack = cdk.Stack(self.app, "Sme")
        self.stack = stack
        # Isolated, shadow-tested, captured, scaled, in a VPC (g5: local NVMe, no key).
        self.isolated = SingleModelEndpoint(
            stack,
            "Isolated",
            props(
                instance_type="ml.g5.2xlarge",
                initial_instance_count=2,
                scaling=InstanceScaling(
                    min_instances=2, max_instances=5, target_invocations_per_instance=30
                ),
                data_capture=DataCaptureProps(sampling_percentage=25, capture_responses=False),
                shadow_variant=VariantSpec(
                    variant_name="Shadow",
                    container=ModelContainer(image=IMAGE, model_data_url="s3://b/candidate/"),
                    instance_type="ml.g5.2xlarge",
                    initial_weight=0.5,
                ),
                network_isolation=True,
                vpc=imported_vpc(stack),
                endpoint_name="isolated-summarizer",
            ),
        )
        # Weighted A/B variants on EBS-backed types, capture into a passed bucket.
        capture_bucket = s3.Bucket.from_bucket_name(stack, "CaptureBucket", "capture-bucket")
        self.weighted = SingleModelEndpoint(
            stack,
            "Weighted",
            props(
                variant_name="Blue",
                initial_weight=3,
                variants=(
                    VariantSpec(
                        variant_name="Green",
                        container=ModelContainer(image=IMAGE, model_data_url="s3://b/green/"),
                        instance_type="ml.c5.xlarge",
                        initial_weight=1,
                        scaling=InstanceScaling(
                            max_instances=3, target_invocations_per_instance=50
                        ),
                    ),
                ),
                data_capture=DataCaptureProps(bucket=capture_bucket, prefix="captures/ab"),
            ),
        )
        self.invoker = iam.Role(
            stack, "Invoker", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")
        )
        self.weighted.grant_invoke(self.invoker)
        acknowledge(
            self.invoker,
            "test principal standing in for an application role",
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
        )
        self.findings = nag_findings(self.app)
        self.template = Template.from_json(self.app.synth().get_stack_by_name("Sme").template)

    def logical_id(self, construct) -> str:
        return self.stack.get_logical_id(construct.node.default_child or construct)


@pytest.fixture(scope="module")
def built() -> Built:
    return Built()


def config_of(built: Built, endpoint: SingleModelEndpoint) -> dict:
    return built.template.to_json()["Resources"][built.logical_id(endpoint.endpoint_config)][
        "Properties"
    ]


def get_att(built: Built, construct, attribute: str) -> dict:
    return {"Fn::GetAtt": [built.logical_id(construct), attribute]}


def test_production_variant_serves_its_model(built):
    config = config_of(built, built.isolated)
    assert config["ProductionVariants"] == [
        {
            "VariantName": "AllTraffic",
            "ModelName": get_att(built, built.isolated.model, "ModelName"),
            "InstanceType": "ml.g5.2xlarge",
            "InitialInstanceCount": 2,
            "InitialVariantWeight": 1,
            # No model size given: the 22.35 GiB of an ml.g5.2xlarge's GPU bound the model.
            "ModelDataDownloadTimeoutInSeconds": 396,
            "ContainerStartupHealthCheckTimeoutInSeconds": 524,
        }
    ]
    model = built.template.to_json()["Resources"][built.logical_id(built.isolated.model)]
    assert "ModelName" not in model["Properties"]
    assert "EndpointConfigName" not in config
    assert model["Properties"]["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]["S3Uri"] == (
        ARTIFACTS
    )


def test_endpoint_name_is_passed_and_exposed(built):
    built.template.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {
            "EndpointName": "isolated-summarizer",
            "EndpointConfigName": get_att(
                built, built.isolated.endpoint_config, "EndpointConfigName"
            ),
        },
    )
    resolved = built.stack.resolve(built.isolated.endpoint_name)
    assert resolved == get_att(built, built.isolated.endpoint, "EndpointName")


def test_data_capture_goes_to_an_encrypted_bucket(built):
    capture = config_of(built, built.isolated)["DataCaptureConfig"]
    bucket = built.isolated.data_capture_bucket
    assert capture["EnableCapture"] is True
    assert capture["InitialSamplingPercentage"] == 25
    assert capture["CaptureOptions"] == [{"CaptureMode": "Input"}]
    assert capture["KmsKeyId"] == get_att(built, built.isolated.data_capture_key, "Arn")
    assert capture["DestinationS3Uri"] == {
        "Fn::Join": ["", ["s3://", {"Ref": built.logical_id(bucket)}, "/data-capture"]]
    }
    built.template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    Match.object_like(
                        {
                            "ServerSideEncryptionByDefault": {
                                "SSEAlgorithm": "aws:kms",
                                "KMSMasterKeyID": get_att(
                                    built, built.isolated.data_capture_key, "Arn"
                                ),
                            }
                        }
                    )
                ]
            }
        },
    )


def test_execution_role_can_write_captures(built):
    role_policy = built.logical_id(built.isolated.execution_role.node.find_child("DefaultPolicy"))
    statements = built.template.to_json()["Resources"][role_policy]["Properties"]["PolicyDocument"][
        "Statement"
    ]
    bucket_arn = get_att(built, built.isolated.data_capture_bucket, "Arn")
    assert {
        "Action": "s3:PutObject",
        "Effect": "Allow",
        "Resource": {"Fn::Join": ["", [bucket_arn, "/data-capture/*"]]},
    } in statements
    assert {
        "Action": ["kms:Encrypt", "kms:GenerateDataKey"],
        "Effect": "Allow",
        "Resource": get_att(built, built.isolated.data_capture_key, "Arn"),
    } in statements


def test_passed_capture_bucket_and_prefix(built):
    capture = config_of(built, built.weighted)["DataCaptureConfig"]
    assert capture["DestinationS3Uri"] == "s3://capture-bucket/captures/ab"
    assert capture["CaptureOptions"] == [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}]
    assert capture["InitialSamplingPercentage"] == 100
    # An imported bucket has no known key: a customer-managed one is created.
    assert capture["KmsKeyId"] == get_att(built, built.weighted.data_capture_key, "Arn")
    assert built.weighted.node.try_find_child("DataCaptureKey") is not None


def test_shadow_variant_gets_its_own_model(built):
    config = config_of(built, built.isolated)
    shadow_model = built.isolated.models["Shadow"]
    assert config["ShadowProductionVariants"] == [
        {
            "VariantName": "Shadow",
            "ModelName": get_att(built, shadow_model, "ModelName"),
            "InstanceType": "ml.g5.2xlarge",
            "InitialInstanceCount": 1,
            "InitialVariantWeight": 0.5,
            # No model size given: the 22.35 GiB of an ml.g5.2xlarge's GPU bound the model.
            "ModelDataDownloadTimeoutInSeconds": 396,
            "ContainerStartupHealthCheckTimeoutInSeconds": 524,
        }
    ]
    assert built.logical_id(shadow_model).startswith("IsolatedModelShadow")


def test_weighted_variants(built):
    variants = config_of(built, built.weighted)["ProductionVariants"]
    assert [(v["VariantName"], v["InstanceType"], v["InitialVariantWeight"]) for v in variants] == [
        ("Blue", "ml.m5.xlarge", 3),
        ("Green", "ml.c5.xlarge", 1),
    ]
    assert variants[1]["ModelName"] == get_att(built, built.weighted.models["Green"], "ModelName")


def test_storage_key_only_for_ebs_types(built):
    assert "KmsKeyId" not in config_of(built, built.isolated)
    assert built.isolated.storage_key is None
    assert config_of(built, built.weighted)["KmsKeyId"] == get_att(
        built, built.weighted.storage_key, "Arn"
    )


def test_dedicated_security_group_without_ingress(built):
    group = built.isolated.security_group
    resource = built.template.to_json()["Resources"][built.logical_id(group)]["Properties"]
    assert "SecurityGroupIngress" not in resource
    assert [
        (rule["CidrIp"], rule["IpProtocol"], rule["FromPort"], rule["ToPort"])
        for rule in resource["SecurityGroupEgress"]
    ] == [("0.0.0.0/0", "tcp", 443, 443)]
    built.template.resource_properties_count_is(
        "AWS::EC2::SecurityGroupIngress", Match.any_value(), 0
    )
    model = built.template.to_json()["Resources"][built.logical_id(built.isolated.model)]
    assert model["Properties"]["EnableNetworkIsolation"] is True
    assert model["Properties"]["VpcConfig"] == {
        "SecurityGroupIds": [get_att(built, group, "GroupId")],
        "Subnets": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    }
    assert built.weighted.security_group is None


def test_instance_scaling_targets_the_variant_after_the_endpoint(built):
    target = built.isolated.scalable_targets["AllTraffic"]
    resource = built.template.to_json()["Resources"][built.logical_id(target)]
    endpoint_id = built.logical_id(built.isolated.endpoint)
    assert resource["Properties"]["ResourceId"] == {
        "Fn::Join": [
            "",
            ["endpoint/", {"Fn::GetAtt": [endpoint_id, "EndpointName"]}, "/variant/AllTraffic"],
        ]
    }
    assert resource["Properties"]["ScalableDimension"] == "sagemaker:variant:DesiredInstanceCount"
    assert resource["Properties"]["ServiceNamespace"] == "sagemaker"
    assert (resource["Properties"]["MinCapacity"], resource["Properties"]["MaxCapacity"]) == (2, 5)
    assert "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint" in json.dumps(
        resource["Properties"]["RoleARN"]
    )
    built.template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "ScalingTargetId": {"Ref": built.logical_id(target)},
            "TargetTrackingScalingPolicyConfiguration": {
                "PredefinedMetricSpecification": {
                    "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"
                },
                "TargetValue": 30,
                "ScaleInCooldown": 300,
                "ScaleOutCooldown": 60,
            },
        },
    )


def test_scaling_per_variant(built):
    assert set(built.weighted.scalable_targets) == {"Green"}
    target = built.weighted.scalable_targets["Green"]
    resource_id = built.template.to_json()["Resources"][built.logical_id(target)]["Properties"][
        "ResourceId"
    ]
    assert resource_id["Fn::Join"][1][-1] == "/variant/Green"


def test_grant_invoke(built):
    built.template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "Roles": [{"Ref": built.logical_id(built.invoker)}],
            "PolicyDocument": {
                "Statement": [
                    {
                        "Action": [
                            "sagemaker:InvokeEndpoint",
                            "sagemaker:InvokeEndpointWithResponseStream",
                        ],
                        "Effect": "Allow",
                        "Resource": {"Ref": built.logical_id(built.weighted.endpoint)},
                    }
                ]
            },
        },
    )


def test_metrics_name_endpoint_and_variant(built):
    invocations = built.weighted.metric_invocations()
    latency = built.weighted.metric_model_latency("Green")
    assert (invocations.metric_name, invocations.statistic) == ("Invocations", "Sum")
    assert (latency.metric_name, latency.statistic) == ("ModelLatency", "Average")
    assert built.weighted.variant_name == "Blue"
    assert built.stack.resolve(invocations.dimensions)["VariantName"] == "Blue"
    assert built.stack.resolve(latency.dimensions) == {
        "EndpointName": get_att(built, built.weighted.endpoint, "EndpointName"),
        "VariantName": "Green",
    }


def test_nag_packs_find_nothing(built):
    assert built.findings == []


@pytest.mark.slow
def test_cfn_lint_finds_nothing(built):
    matches = lint(json.dumps(built.template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


# -- validation -----------------------------------------------------------------------------


def build(**overrides) -> SingleModelEndpoint:
    stack = cdk.Stack(new_app(), "S")
    return SingleModelEndpoint(stack, "E", props(**overrides))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"endpoint_name": "my_endpoint"}, "endpoint_name='my_endpoint'"),
        ({"endpoint_name": "e" * 64}, f"endpoint_name='{'e' * 64}'"),
        ({"model_name": "bad name"}, "model_name='bad name'"),
        ({"instance_type": "ml.m5.huge"}, "instance_type='ml.m5.huge': not an instance type"),
        ({"initial_instance_count": 0}, "variant.initial_instance_count=0: must be"),
        (
            {
                "scaling": InstanceScaling(
                    min_instances=3, max_instances=2, target_invocations_per_instance=1
                )
            },
            "variant.scaling.min_instances=3: must not exceed max_instances (2)",
        ),
        (
            {"scaling": InstanceScaling(max_instances=2, target_invocations_per_instance=0)},
            "variant.scaling.target_invocations_per_instance=0: must be greater than 0",
        ),
        (
            {"data_capture": DataCaptureProps(sampling_percentage=101)},
            "data_capture.sampling_percentage=101: must be between 0 and 100",
        ),
        (
            {"data_capture": DataCaptureProps(capture_requests=False, capture_responses=False)},
            "data_capture.capture_requests=False",
        ),
        ({"variant_name": "bad_variant"}, "variant.variant_name='bad_variant'"),
    ],
)
def test_validation_messages(overrides, expected):
    with pytest.raises(ValueError) as error:
        build(**overrides)
    assert expected in str(error.value)


def test_endpoint_name_message_names_the_pattern():
    with pytest.raises(ValueError, match=r"endpoint_name='a_b'.*matching \[a-zA-Z0-9\]"):
        build(endpoint_name="a_b")


def test_shadow_needs_a_single_production_variant():
    extra = VariantSpec(
        variant_name="B", container=ModelContainer(image=IMAGE), instance_type="ml.m5.xlarge"
    )
    shadow = VariantSpec(
        variant_name="S", container=ModelContainer(image=IMAGE), instance_type="ml.m5.xlarge"
    )
    with pytest.raises(ValueError, match="shadow_variant='S': a shadow test needs exactly one"):
        build(variants=(extra,), shadow_variant=shadow)


def test_variant_names_must_be_unique():
    twin = VariantSpec(
        variant_name="AllTraffic",
        container=ModelContainer(image=IMAGE),
        instance_type="ml.m5.xlarge",
    )
    with pytest.raises(ValueError, match="variant_name='AllTraffic': must be unique"):
        build(variants=(twin,))


def test_network_options_need_a_vpc():
    stack = cdk.Stack(new_app(), "S")
    group = ec2.SecurityGroup.from_security_group_id(stack, "G", "sg-0123456789abcdef0")
    with pytest.raises(ValueError, match="security_group=.*needs `vpc` to be set"):
        SingleModelEndpoint(stack, "E", props(security_group=group))


def test_every_problem_is_reported_at_once():
    with pytest.raises(ValueError) as error:
        build(endpoint_name="a_b", instance_type="ml.nope", initial_instance_count=0)
    message = str(error.value)
    assert message.count("\n  - ") == 3


def test_add_instance_scaling_validates_on_its_own():
    stack = cdk.Stack(new_app(), "S")
    endpoint = SingleModelEndpoint(stack, "E", props()).endpoint
    with pytest.raises(ValueError, match="scaling.max_instances=0: must be at least 1"):
        add_instance_scaling(
            stack,
            "Scaling",
            endpoint=endpoint,
            variant_name="AllTraffic",
            scaling=InstanceScaling(
                min_instances=1, max_instances=0, target_invocations_per_instance=5
            ),
        )
