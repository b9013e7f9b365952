"""Asynchronous endpoints: the queue's output config, its bucket and topics, backlog scaling
to zero with the documented wake-up, the grants, the metrics and every rejected input."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.inference.async_endpoint import AsyncEndpoint, AsyncEndpointProps
from fm_platform.constructs.inference.async_scaling import AsyncScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import (
    default_download_timeout_s,
    default_health_check_timeout_s,
)
from fm_platform.core.compliance import acknowledge
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
ARTIFACTS = "s3://model-bucket/models/transcriber/"
TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:{}"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/{}-12ab-34cd-56ef-1234567890ab"


def props(**overrides) -> AsyncEndpointProps:
    values = {
        "model_name": "transcriber",
        "container": ModelContainer(image=IMAGE, model_data_url=ARTIFACTS),
        "instance_type": "ml.g5.2xlarge",
    }
    return AsyncEndpointProps(**{**values, **overrides})


def imported_vpc(scope: cdk.Stack) -> ec2.IVpc:
    return ec2.Vpc.from_vpc_attributes(
        scope,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a", "us-east-1b"],
        private_subnet_ids=["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        private_subnet_route_table_ids=["rtb-0123456789abcdef0", "rtb-0123456789abcdef1"],
    )


class Built:
    def __init__(self) -> None:
        self.app = new_app()
        stack = cdk.Stack(self.app, "Async")
        self.stack = stack
        # The defaults: its own bucket, key and topics, scaling 0-1 and woken from zero.
        self.default = AsyncEndpoint(stack, "Queued", props())
        # Scaled 2-4 on an EBS-backed type, in a VPC, with a concurrency and timeouts.
        self.kept = AsyncEndpoint(
            stack,
            "Kept",
            props(
                instance_type="ml.m5.xlarge",
                initial_instance_count=2,
                scaling=AsyncScaling(
                    min_instances=2,
                    max_instances=4,
                    target_backlog_per_instance=3,
                    scale_in_cooldown_seconds=600,
                    scale_out_cooldown_seconds=120,
                ),
                max_concurrent_invocations_per_instance=8,
                container_startup_health_check_timeout_s=900,
                s3_prefix="queues/kept",
                vpc=imported_vpc(stack),
                network_isolation=False,
                endpoint_name="kept-transcriber",
            ),
        )
        # Everything passed: buckets (inputs elsewhere), keys and topics; a fixed count.
        self.input_key = kms.Key.from_key_arn(stack, "InputKey", KEY_ARN.format("1111aaaa"))
        self.topic_key = kms.Key.from_key_arn(stack, "TopicKey", KEY_ARN.format("3333cccc"))
        self.passed = AsyncEndpoint(
            stack,
            "Passed",
            props(
                scaling=None,
                results_bucket=s3.Bucket.from_bucket_name(stack, "Results", "results-bucket"),
                results_key=kms.Key.from_key_arn(stack, "ResultsKey", KEY_ARN.format("2222bbbb")),
                input_bucket=s3.Bucket.from_bucket_name(stack, "Inputs", "input-bucket"),
                input_key=self.input_key,
                success_topic=sns.Topic.from_topic_arn(stack, "Ok", TOPIC_ARN.format("ok")),
                error_topic=sns.Topic.from_topic_arn(stack, "Failed", TOPIC_ARN.format("failed")),
                topic_key=self.topic_key,
            ),
        )
        self.caller = iam.Role(
            stack, "Caller", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")
        )
        self.grants = [
            self.default.grant_invoke(self.caller),
            self.default.grant_write_inputs(self.caller),
            self.default.grant_read_results(self.caller),
        ]
        acknowledge(
            self.caller,
            "test principal standing in for an application role that queues requests",
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
            *(
                f"AwsSolutions-IAM5[Resource::<{self.logical_id(self.default.results_bucket)}"
                f".Arn>/async/{folder}/*]"
                for folder in ("inputs", "outputs", "failures")
            ),
        )
        self.findings = nag_findings(self.app)
        self.json = self.app.synth().get_stack_by_name("Async").template
        self.template = Template.from_json(self.json)

    def logical_id(self, construct) -> str:
        return self.stack.get_logical_id(construct.node.default_child or construct)

    def properties(self, construct) -> dict:
        return self.json["Resources"][self.logical_id(construct)]["Properties"]

    def get_att(self, construct, attribute: str) -> dict:
        return {"Fn::GetAtt": [self.logical_id(construct), attribute]}

    def statements(self, role) -> list[dict]:
        policy = role.node.find_child("DefaultPolicy")
        return self.properties(policy)["PolicyDocument"]["Statement"]


@pytest.fixture(scope="module")
def built() -> Built:
    return Built()


def granted(statements: list[dict]) -> set[tuple[str, str]]:
    """Every (action, resource) an Allow statement grants, resources as JSON (CDK merges
    statements, so the shape of the policy is not the point)."""
    pairs = set()
    for statement in statements:
        assert statement["Effect"] == "Allow"
        actions, resources = statement["Action"], statement["Resource"]
        for action in [actions] if isinstance(actions, str) else actions:
            for resource in resources if isinstance(resources, list) else [resources]:
                pairs.add((action, json.dumps(resource, sort_keys=True)))
    return pairs


def pairs(actions: list[str], *resources) -> set[tuple[str, str]]:
    return {(a, json.dumps(r, sort_keys=True)) for a in actions for r in resources}


def s3_uri(bucket_ref: dict, path: str) -> dict:
    return {"Fn::Join": ["", ["s3://", bucket_ref, path]]}


def objects(built: Built, bucket, path: str) -> dict:
    return {"Fn::Join": ["", [built.get_att(bucket, "Arn"), path]]}


# -- the queue's configuration -----------------------------------------------------------------


def test_results_and_failures_go_to_the_encrypted_bucket_and_notify_the_topics(built):
    endpoint = built.default
    config = built.properties(endpoint.endpoint_config)["AsyncInferenceConfig"]
    bucket = {"Ref": built.logical_id(endpoint.results_bucket)}
    assert config == {
        "OutputConfig": {
            "S3OutputPath": s3_uri(bucket, "/async/outputs"),
            "S3FailurePath": s3_uri(bucket, "/async/failures"),
            "KmsKeyId": built.get_att(endpoint.results_key, "Arn"),
            "NotificationConfig": {
                "SuccessTopic": {"Ref": built.logical_id(endpoint.success_topic)},
                "ErrorTopic": {"Ref": built.logical_id(endpoint.error_topic)},
            },
        }
    }
    resolved = built.stack.resolve(
        [endpoint.input_location, endpoint.output_location, endpoint.failure_location]
    )
    assert resolved == [
        s3_uri(bucket, "/async/inputs"),
        s3_uri(bucket, "/async/outputs"),
        s3_uri(bucket, "/async/failures"),
    ]


def test_concurrency_per_instance_is_sent_only_when_set(built):
    config = built.properties(built.kept.endpoint_config)["AsyncInferenceConfig"]
    assert config["ClientConfig"] == {"MaxConcurrentInvocationsPerInstance": 8}
    paths = config["OutputConfig"]
    assert paths["S3OutputPath"]["Fn::Join"][1][-1] == "/queues/kept/outputs"


def test_the_bucket_is_kms_encrypted_tls_only_and_retained(built):
    bucket = built.json["Resources"][built.logical_id(built.default.results_bucket)]
    assert (bucket["DeletionPolicy"], bucket["UpdateReplacePolicy"]) == ("Retain", "Retain")
    encryption = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption[0]["ServerSideEncryptionByDefault"] == {
        "SSEAlgorithm": "aws:kms",
        "KMSMasterKeyID": built.get_att(built.default.results_key, "Arn"),
    }
    built.template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": built.logical_id(built.default.results_bucket)},
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            },
        },
    )
    key = built.json["Resources"][built.logical_id(built.default.results_key)]
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"


def test_topics_are_encrypted_with_the_customer_managed_key_and_take_tls_only(built):
    for topic in (built.default.success_topic, built.default.error_topic):
        properties = built.properties(topic)
        assert properties["KmsMasterKeyId"] == built.get_att(built.default.results_key, "Arn")
        built.template.has_resource_properties(
            "AWS::SNS::TopicPolicy",
            {
                "Topics": [{"Ref": built.logical_id(topic)}],
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                },
            },
        )


def test_passed_buckets_keys_and_topics_are_used(built):
    endpoint = built.passed
    config = built.properties(endpoint.endpoint_config)["AsyncInferenceConfig"]["OutputConfig"]
    assert config == {
        "S3OutputPath": "s3://results-bucket/async/outputs",
        "S3FailurePath": "s3://results-bucket/async/failures",
        "KmsKeyId": KEY_ARN.format("2222bbbb"),
        "NotificationConfig": {
            "SuccessTopic": TOPIC_ARN.format("ok"),
            "ErrorTopic": TOPIC_ARN.format("failed"),
        },
    }
    assert endpoint.input_location == "s3://input-bucket/async/inputs"
    assert endpoint.input_key is built.input_key
    for child in ("Results", "Key", "SuccessTopic", "ErrorTopic"):
        assert endpoint.node.try_find_child(child) is None
    assert endpoint.scaling is None
    assert (
        "ModelDataDownloadTimeoutInSeconds"
        in (built.properties(endpoint.endpoint_config)["ProductionVariants"][0])
    )


def test_an_imported_bucket_without_a_key_gets_a_customer_managed_one():
    stack = cdk.Stack(new_app(), "S")
    bucket = s3.Bucket.from_bucket_name(stack, "Results", "results-bucket")
    endpoint = AsyncEndpoint(stack, "E", props(results_bucket=bucket))
    assert endpoint.node.try_find_child("Key") is endpoint.results_key
    # Inputs go to the passed bucket too, encrypted with the same key.
    assert endpoint.input_key is endpoint.results_key
    assert endpoint.input_location == "s3://results-bucket/async/inputs"


# -- the model and its variant -----------------------------------------------------------------


def test_the_variant_serves_the_model_with_timeouts_from_the_instances_accelerators(built):
    [variant] = built.properties(built.default.endpoint_config)["ProductionVariants"]
    weights = 22888 / 1024  # no model size given: the A10G of an ml.g5.2xlarge bounds it
    assert variant == {
        "VariantName": "AllTraffic",
        "ModelName": built.get_att(built.default.model, "ModelName"),
        "InstanceType": "ml.g5.2xlarge",
        "InitialInstanceCount": 1,
        "InitialVariantWeight": 1,
        "ModelDataDownloadTimeoutInSeconds": default_download_timeout_s(weights),
        "ContainerStartupHealthCheckTimeoutInSeconds": default_health_check_timeout_s(weights),
    }
    assert (
        variant["ModelDataDownloadTimeoutInSeconds"],
        variant["ContainerStartupHealthCheckTimeoutInSeconds"],
    ) == (396, 524)
    model = built.properties(built.default.model)
    assert model["EnableNetworkIsolation"] is True
    assert model["Tags"] == [{"Key": "fm_platform:model-name", "Value": "transcriber"}]
    assert model["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]["S3Uri"] == ARTIFACTS


def test_timeouts_from_the_instances_memory_and_an_explicit_one_wins(built):
    [variant] = built.properties(built.kept.endpoint_config)["ProductionVariants"]
    # ml.m5.xlarge: no accelerator, so its 16 GiB of host memory bound the model.
    assert variant["ModelDataDownloadTimeoutInSeconds"] == default_download_timeout_s(16) == 300
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 900
    assert variant["InitialInstanceCount"] == 2


@pytest.mark.parametrize("weights_gib", [0.001, 32, 2048])
def test_default_timeouts_stay_within_the_variants_limits(weights_gib):
    for member, value in (
        ("ModelDataDownloadTimeoutInSeconds", default_download_timeout_s(weights_gib)),
        (
            "ContainerStartupHealthCheckTimeoutInSeconds",
            default_health_check_timeout_s(weights_gib),
        ),
    ):
        rule = shape_rule(member_shape_name("ProductionVariant", member))
        assert rule.min <= value <= rule.max


def test_network_isolation_can_be_turned_off_and_the_vpc_gets_a_closed_group(built):
    model = built.properties(built.kept.model)
    assert "EnableNetworkIsolation" not in model
    group = built.kept.security_group
    assert model["VpcConfig"] == {
        "SecurityGroupIds": [built.get_att(group, "GroupId")],
        "Subnets": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    }
    assert "SecurityGroupIngress" not in built.properties(group)
    assert built.default.security_group is None


def test_storage_key_only_for_ebs_types(built):
    assert built.kept.storage_key is not None
    assert built.properties(built.kept.endpoint_config)["KmsKeyId"] == built.get_att(
        built.kept.storage_key, "Arn"
    )
    assert built.default.storage_key is None
    assert "KmsKeyId" not in built.properties(built.default.endpoint_config)


def test_endpoint_name_is_passed(built):
    assert built.properties(built.kept.endpoint)["EndpointName"] == "kept-transcriber"
    assert "EndpointName" not in built.properties(built.default.endpoint)


# -- scaling on the backlog --------------------------------------------------------------------


def test_scales_to_zero_on_the_backlog_per_instance(built):
    scaling = built.default.scaling
    endpoint_name = built.get_att(built.default.endpoint, "EndpointName")
    target = built.properties(scaling.target)
    assert target["ResourceId"] == {
        "Fn::Join": ["", ["endpoint/", endpoint_name, "/variant/AllTraffic"]]
    }
    assert target["ScalableDimension"] == "sagemaker:variant:DesiredInstanceCount"
    assert target["ServiceNamespace"] == "sagemaker"
    assert (target["MinCapacity"], target["MaxCapacity"]) == (0, 1)
    assert "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint" in json.dumps(
        target["RoleARN"]
    )
    assert built.properties(scaling.backlog_policy) == {
        "PolicyName": "BacklogPerInstance",
        "PolicyType": "TargetTrackingScaling",
        "ScalingTargetId": {"Ref": built.logical_id(scaling.target)},
        "TargetTrackingScalingPolicyConfiguration": {
            "CustomizedMetricSpecification": {
                "MetricName": "ApproximateBacklogSizePerInstance",
                "Namespace": "AWS/SageMaker",
                "Dimensions": [{"Name": "EndpointName", "Value": endpoint_name}],
                "Statistic": "Average",
            },
            "TargetValue": 5,
            "ScaleInCooldown": 300,
            "ScaleOutCooldown": 60,
        },
    }


def test_the_first_queued_request_wakes_it_as_the_guide_documents(built):
    scaling = built.default.scaling
    endpoint_name = built.get_att(built.default.endpoint, "EndpointName")
    assert built.properties(scaling.wake_policy) == {
        "PolicyName": "HasBacklogWithoutCapacity",
        "PolicyType": "StepScaling",
        "ScalingTargetId": {"Ref": built.logical_id(scaling.target)},
        "StepScalingPolicyConfiguration": {
            "AdjustmentType": "ChangeInCapacity",
            "MetricAggregationType": "Average",
            "Cooldown": 300,
            "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
        },
    }
    alarm = built.properties(scaling.wake_alarm)
    del alarm["AlarmDescription"]
    assert alarm == {
        "MetricName": "HasBacklogWithoutCapacity",
        "Namespace": "AWS/SageMaker",
        "Dimensions": [{"Name": "EndpointName", "Value": endpoint_name}],
        "Statistic": "Average",
        "Period": 60,
        "EvaluationPeriods": 2,
        "DatapointsToAlarm": 2,
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "TreatMissingData": "missing",
        "AlarmActions": [{"Ref": built.logical_id(scaling.wake_policy)}],
    }


def test_an_endpoint_that_keeps_instances_needs_no_wake_up(built):
    scaling = built.kept.scaling
    assert (scaling.wake_policy, scaling.wake_alarm) == (None, None)
    target = built.properties(scaling.target)
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 4)
    tracking = built.properties(scaling.backlog_policy)["TargetTrackingScalingPolicyConfiguration"]
    assert (tracking["TargetValue"], tracking["ScaleInCooldown"], tracking["ScaleOutCooldown"]) == (
        3,
        600,
        120,
    )
    # Three endpoints: two scaled, one wake-up alarm in all.
    built.template.resource_count_is("AWS::ApplicationAutoScaling::ScalableTarget", 2)
    built.template.resource_count_is("AWS::CloudWatch::Alarm", 1)


# -- grants ---------------------------------------------------------------------------------


def test_the_execution_role_reads_inputs_writes_results_and_notifies(built):
    endpoint = built.default
    bucket = endpoint.results_bucket
    inputs, outputs, failures = (
        objects(built, bucket, f"/async/{folder}/*") for folder in ("inputs", "outputs", "failures")
    )
    expected = (
        pairs(["s3:GetObject"], inputs)
        | pairs(["s3:PutObject", "s3:AbortMultipartUpload"], outputs, failures)
        | pairs(
            ["sns:Publish"],
            {"Ref": built.logical_id(endpoint.success_topic)},
            {"Ref": built.logical_id(endpoint.error_topic)},
        )
        | pairs(
            ["kms:Encrypt", "kms:GenerateDataKey", "kms:Decrypt"],
            built.get_att(endpoint.results_key, "Arn"),
        )
    )
    role_grants = granted(built.statements(endpoint.execution_role))
    assert expected <= role_grants
    # Nothing else on the results bucket (the role reads no result, writes no input).
    on_bucket = {g for g in role_grants if built.logical_id(bucket) in g[1]}
    assert on_bucket == {g for g in expected if built.logical_id(bucket) in g[1]}
    # SageMaker uses the grants at once (and notifies at CreateEndpoint): the model, which
    # the endpoint waits for, waits for the role's policy.
    model = built.json["Resources"][built.logical_id(endpoint.model)]
    policy = endpoint.execution_role.node.find_child("DefaultPolicy")
    assert built.logical_id(policy) in model["DependsOn"]


def test_the_execution_role_uses_passed_keys_and_topics(built):
    role_grants = granted(built.statements(built.passed.execution_role))
    inputs = {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::input-bucket/async/inputs/*"]]
    }
    assert pairs(["s3:GetObject"], inputs) <= role_grants
    assert pairs(["sns:Publish"], TOPIC_ARN.format("ok"), TOPIC_ARN.format("failed")) <= role_grants
    on_keys = {g for g in role_grants if ":kms:" in g[1]}
    assert on_keys == (
        pairs(["kms:Decrypt"], KEY_ARN.format("1111aaaa"))
        | pairs(["kms:Encrypt", "kms:GenerateDataKey", "kms:Decrypt"], KEY_ARN.format("2222bbbb"))
        | pairs(["kms:GenerateDataKey", "kms:Decrypt"], KEY_ARN.format("3333cccc"))
    )


def test_grants_to_callers(built):
    assert all(isinstance(grant, iam.Grant) and grant.success for grant in built.grants)
    endpoint = built.default
    bucket = endpoint.results_bucket
    inputs, outputs, failures = (
        objects(built, bucket, f"/async/{folder}/*") for folder in ("inputs", "outputs", "failures")
    )
    assert granted(built.statements(built.caller)) == (
        pairs(["sagemaker:InvokeEndpointAsync"], {"Ref": built.logical_id(endpoint.endpoint)})
        | pairs(["s3:PutObject", "s3:AbortMultipartUpload"], inputs)
        | pairs(["s3:GetObject"], outputs, failures)
        | pairs(["kms:GenerateDataKey", "kms:Decrypt"], built.get_att(endpoint.results_key, "Arn"))
    )


def test_grant_write_inputs_without_a_known_key_grants_no_kms():
    stack = cdk.Stack(new_app(), "S")
    endpoint = AsyncEndpoint(
        stack,
        "E",
        props(input_bucket=s3.Bucket.from_bucket_name(stack, "In", "input-bucket")),
    )
    assert endpoint.input_key is None
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    endpoint.grant_write_inputs(caller)
    policy = caller.node.find_child("DefaultPolicy")
    document = Template.from_stack(stack).to_json()["Resources"][
        stack.get_logical_id(policy.node.default_child)
    ]["Properties"]["PolicyDocument"]
    inputs = {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::input-bucket/async/inputs/*"]]
    }
    assert granted(document["Statement"]) == pairs(
        ["s3:PutObject", "s3:AbortMultipartUpload"], inputs
    )


# -- metrics --------------------------------------------------------------------------------


def test_queue_metrics_name_the_endpoint_only(built):
    endpoint = built.default
    dimensions = {"EndpointName": built.get_att(endpoint.endpoint, "EndpointName")}
    expected = {
        "metric_backlog_size": ("ApproximateBacklogSize", "Average"),
        "metric_backlog_size_per_instance": ("ApproximateBacklogSizePerInstance", "Average"),
        "metric_age_of_oldest_request": ("ApproximateAgeOfOldestRequest", "Maximum"),
        "metric_has_backlog_without_capacity": ("HasBacklogWithoutCapacity", "Average"),
    }
    for method, (name, statistic) in expected.items():
        metric = getattr(endpoint, method)()
        assert (metric.metric_name, metric.statistic, metric.namespace) == (
            name,
            statistic,
            "AWS/SageMaker",
        )
        assert built.stack.resolve(metric.dimensions) == dimensions
        assert metric.period.to_seconds() == 60
    custom = endpoint.metric_backlog_size(
        statistic="Maximum", period=cdk.Duration.minutes(5), label="queued"
    )
    assert (custom.statistic, custom.period.to_seconds(), custom.label) == (
        "Maximum",
        300,
        "queued",
    )
    latency = endpoint.metric_model_latency()
    assert built.stack.resolve(latency.dimensions) == {**dimensions, "VariantName": "AllTraffic"}


# -- compliance -----------------------------------------------------------------------------


def test_nag_packs_find_nothing(built):
    assert built.findings == []


@pytest.mark.slow
def test_cfn_lint_finds_nothing(built):
    matches = lint(json.dumps(built.json), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


# -- validation -----------------------------------------------------------------------------


def build(**overrides) -> AsyncEndpoint:
    stack = cdk.Stack(new_app(), "S")
    return AsyncEndpoint(stack, "E", props(**overrides))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"model_name": "bad name"}, "model_name='bad name'"),
        ({"instance_type": "ml.inf1.xlarge"}, "instance_type='ml.inf1.xlarge': asynchronous"),
        ({"instance_type": "ml.g5.huge"}, "instance_type='ml.g5.huge': not an instance type"),
        ({"initial_instance_count": 0}, "initial_instance_count=0: must be at least 1"),
        ({"variant_name": "bad_variant"}, "variant_name='bad_variant'"),
        (
            {"max_concurrent_invocations_per_instance": 1001},
            "max_concurrent_invocations_per_instance=1001: above the maximum 1000",
        ),
        ({"s3_prefix": "/results"}, "s3_prefix='/results': must be non-empty"),
        (
            {"container": ModelContainer(model_size_gib=-1)},
            "container.model_size_gib=-1: must be greater than 0",
        ),
        (
            {"model_data_download_timeout_s": 30},
            "model_data_download_timeout_s=30: below the minimum 60",
        ),
        (
            {"container_startup_health_check_timeout_s": 4000},
            "container_startup_health_check_timeout_s=4000: above the maximum 3600",
        ),
        (
            {"scaling": AsyncScaling(min_instances=2, max_instances=1)},
            "scaling.min_instances=2: must not exceed max_instances (1)",
        ),
        (
            {"scaling": AsyncScaling(target_backlog_per_instance=0)},
            "scaling.target_backlog_per_instance=0: must be greater than 0",
        ),
        (
            {"initial_instance_count": 3, "scaling": AsyncScaling(max_instances=2)},
            "initial_instance_count=3: must not exceed scaling.max_instances (2)",
        ),
        ({"endpoint_name": "a_b"}, "endpoint_name='a_b'"),
        ({"initial_instance_count": "1"}, "initial_instance_count='1': must be an integer"),
    ],
)
def test_validation_messages(overrides, expected):
    with pytest.raises(ValueError) as error:
        build(**overrides)
    assert expected in str(error.value)


def test_references_need_what_they_refer_to():
    stack = cdk.Stack(new_app(), "S")
    key = kms.Key.from_key_arn(stack, "K", KEY_ARN.format("4444dddd"))
    group = ec2.SecurityGroup.from_security_group_id(stack, "G", "sg-0123456789abcdef0")
    with pytest.raises(ValueError) as error:
        AsyncEndpoint(stack, "E", props(input_key=key, topic_key=key, security_group=group))
    message = str(error.value)
    assert "input_key=" in message and "needs `input_bucket` to be set" in message
    assert "topic_key=" in message and "needs `success_topic` or `error_topic`" in message
    assert "security_group=" in message and "needs `vpc` to be set" in message
    assert message.count("\n  - ") == 3


def test_values_known_only_at_deploy_time_are_left_to_cloudformation():
    stack = cdk.Stack(new_app(), "S")
    concurrency = cdk.CfnParameter(stack, "Concurrency", type="Number").value_as_number
    endpoint = AsyncEndpoint(stack, "E", props(max_concurrent_invocations_per_instance=concurrency))
    config = Template.from_stack(stack).to_json()["Resources"][
        stack.get_logical_id(endpoint.endpoint_config)
    ]["Properties"]
    assert config["AsyncInferenceConfig"]["ClientConfig"] == {
        "MaxConcurrentInvocationsPerInstance": {"Ref": "Concurrency"}
    }


def test_every_problem_is_reported_at_once():
    with pytest.raises(ValueError) as error:
        build(endpoint_name="a_b", instance_type="ml.inf1.xlarge", s3_prefix="")
    message = str(error.value)
    assert message.startswith("invalid AsyncEndpointProps:")
    # inf1 (once: not also for its missing figures), the prefix and the name.
    assert message.count("\n  - ") == 3


def test_a_passed_role_and_key_are_used_for_everything_created():
    stack = cdk.Stack(new_app(), "S")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    key = kms.Key(stack, "Key")
    endpoint = AsyncEndpoint(stack, "E", props(execution_role=role, results_key=key))
    assert endpoint.execution_role is role
    assert endpoint.results_key is key and endpoint.input_key is key
    resources = Template.from_stack(stack).to_json()["Resources"]
    key_arn = {"Fn::GetAtt": [stack.get_logical_id(key.node.default_child), "Arn"]}
    bucket = resources[stack.get_logical_id(endpoint.results_bucket.node.default_child)]
    encryption = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption[0]["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == key_arn
    for topic in (endpoint.success_topic, endpoint.error_topic):
        topic_resource = resources[stack.get_logical_id(topic.node.default_child)]
        assert topic_resource["Properties"]["KmsMasterKeyId"] == key_arn
    policy = resources[
        stack.get_logical_id(role.node.find_child("DefaultPolicy").node.default_child)
    ]
    actions = granted(policy["Properties"]["PolicyDocument"]["Statement"])
    assert {action for action, _ in actions} >= {
        "s3:GetObject",
        "s3:PutObject",
        "sns:Publish",
        "kms:Encrypt",
        "kms:GenerateDataKey",
        "kms:Decrypt",
    }
