"""InferenceComponentModel: model + component per model, per-model scaling (to zero),
grants, metrics, cross-stack placement, validation, cdk-nag and cfn-lint."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.inference.component_endpoint import (
    ImportedInferenceComponentEndpoint,
    InferenceComponentEndpoint,
    InferenceComponentEndpointAttributes,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.endpoint_base import INVOKE_ACTIONS
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
    RollingUpdate,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from tests.components import chat_endpoint
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.4"


def _model(endpoint, name: str, **props) -> InferenceComponentModelProps:
    defaults = {
        "model_name": name,
        "endpoint": endpoint,
        "container": ModelContainer(image=IMAGE, model_data_url=f"s3://models/{name}/"),
        "accelerators": 1,
        "min_memory_mib": 8192,
    }
    return InferenceComponentModelProps(**{**defaults, **props})


@pytest.fixture(scope="module")
def synthesized():
    app = new_app()
    stack = cdk.Stack(app, "Serving")
    endpoint = chat_endpoint(stack)
    rollback = cloudwatch.Alarm(
        stack,
        "Errors",
        metric=cloudwatch.Metric(namespace="AWS/SageMaker", metric_name="Invocation5XXErrors"),
        threshold=1,
        evaluation_periods=1,
    )
    idle = InferenceComponentModel(
        stack,
        "Idle",
        _model(
            endpoint,
            "idle-chat",
            cpu_cores=4,
            max_memory_mib=16384,
            model_data_download_timeout_s=900,
            container_startup_health_check_timeout_s=600,
            rolling_update=RollingUpdate(wait_interval_s=60, rollback_alarms=[rollback]),
            scaling=ComponentScaling(min_copies=0, max_copies=3, target_value=5),
        ),
    )
    busy = InferenceComponentModel(
        stack,
        "Busy",
        _model(
            endpoint,
            "busy-chat",
            accelerators=2,
            initial_copies=2,
            scaling=ComponentScaling(
                min_copies=1, max_copies=2, metric="concurrent_requests_per_copy", target_value=4
            ),
        ),
    )
    InferenceComponentModel(stack, "Fixed", _model(endpoint, "fixed"))
    caller = iam.User(stack, "Caller")
    busy.grant_invoke(caller)

    other = cdk.Stack(app, "Tenant")
    InferenceComponentModel(other, "Remote", _model(endpoint, "remote"))
    return {
        "app": app,
        "serving": Template.from_stack(stack),
        "tenant": Template.from_stack(other),
        "idle": idle,
        "busy": busy,
        "stack": stack,
    }


def _logical_id(template: Template, resource_type: str, name: str) -> str:
    [logical_id] = [
        key
        for key, value in template.find_resources(resource_type).items()
        if value["Properties"].get("InferenceComponentName") == name
        or value["Properties"].get("ResourceId") == f"inference-component/{name}"
    ]
    return logical_id


def test_component_spec(synthesized):
    synthesized["serving"].has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "InferenceComponentName": "Serving-idle-chat-62e167c0",
            "EndpointName": {"Fn::GetAtt": [Match.string_like_regexp("Endpoint"), "EndpointName"]},
            "VariantName": "AllTraffic",
            "Specification": {
                "ModelName": {"Fn::GetAtt": [Match.string_like_regexp("IdleModel"), "ModelName"]},
                "ComputeResourceRequirements": {
                    "NumberOfAcceleratorDevicesRequired": 1,
                    "NumberOfCpuCoresRequired": 4,
                    "MinMemoryRequiredInMb": 8192,
                    "MaxMemoryRequiredInMb": 16384,
                },
                "StartupParameters": {
                    "ModelDataDownloadTimeoutInSeconds": 900,
                    "ContainerStartupHealthCheckTimeoutInSeconds": 600,
                },
            },
            "RuntimeConfig": {"CopyCount": 1},
            "DeploymentConfig": {
                "RollingUpdatePolicy": {
                    # 50% by default: within AWS's 5%-50% of the copy count whatever
                    # the copies (botocore InferenceComponentRollingUpdatePolicy).
                    "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 50},
                    "WaitIntervalInSeconds": 60,
                },
                "AutoRollbackConfiguration": {
                    "Alarms": [{"AlarmName": {"Ref": Match.string_like_regexp("Errors")}}]
                },
            },
        },
    )


def test_the_execution_role_may_read_the_rollback_alarms_before_the_update(synthesized):
    # Deployment guardrails: "Ensure that your IAM execution role has permission to perform
    # the cloudwatch:DescribeAlarms action on the auto-rollback alarms you specify".
    template = synthesized["serving"].to_json()
    alarm = next(
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::CloudWatch::Alarm" and k.startswith("Errors")
    )
    (policy_id,) = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::IAM::Policy" and k.startswith("EndpointExecutionRole")
    ]
    statements = template["Resources"][policy_id]["Properties"]["PolicyDocument"]["Statement"]
    (read,) = [s for s in statements if s["Action"] == "cloudwatch:DescribeAlarms"]
    assert read["Resource"] == {"Fn::GetAtt": [alarm, "Arn"]}
    component = _logical_id(
        synthesized["serving"], "AWS::SageMaker::InferenceComponent", "Serving-idle-chat-62e167c0"
    )
    assert policy_id in template["Resources"][component]["DependsOn"]
    # Components without rollback alarms add no read.
    assert sum(s["Action"] == "cloudwatch:DescribeAlarms" for s in statements) == 1


def test_rollback_alarms_named_by_name_are_read_by_their_arn_in_the_stack():
    stack = cdk.Stack(new_app(), "Named")
    endpoint = chat_endpoint(stack)
    InferenceComponentModel(
        stack,
        "Chat",
        _model(
            endpoint,
            "chat",
            rolling_update=RollingUpdate(rollback_alarms=["chat-errors", "chat-latency"]),
        ),
    )
    statements = [
        s
        for policy in Template.from_stack(stack).find_resources("AWS::IAM::Policy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "cloudwatch:DescribeAlarms"
    ]
    (read,) = statements
    rendered = [
        "".join(p if isinstance(p, str) else p["Ref"] for p in r["Fn::Join"][1])
        for r in read["Resource"]
    ]
    here = "arn:AWS::Partition:cloudwatch:AWS::Region:AWS::AccountId:alarm:"
    assert rendered == [f"{here}chat-errors", f"{here}chat-latency"]


def test_a_component_of_another_stack_grants_its_rollback_alarms_in_its_own_stack():
    # The endpoint's role lives in the serving stack; naming the tenant's alarm in that
    # role's policy would make each stack depend on the other.
    app = new_app()
    serving = cdk.Stack(app, "Serving")
    endpoint = chat_endpoint(serving)
    tenant = cdk.Stack(app, "Tenant")
    alarm = cloudwatch.Alarm(
        tenant,
        "Errors",
        metric=cloudwatch.Metric(namespace="AWS/SageMaker", metric_name="Invocation5XXErrors"),
        threshold=1,
        evaluation_periods=1,
    )
    InferenceComponentModel(
        tenant,
        "Remote",
        _model(endpoint, "remote", rolling_update=RollingUpdate(rollback_alarms=[alarm])),
    )
    app.synth()  # no cycle between the stacks
    resources = Template.from_stack(tenant).to_json()["Resources"]
    (policy_id,) = [k for k, r in resources.items() if r["Type"] == "AWS::IAM::Policy"]
    policy = resources[policy_id]["Properties"]
    alarm_id = next(k for k, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm")
    assert policy["PolicyDocument"]["Statement"] == [
        {
            "Action": "cloudwatch:DescribeAlarms",
            "Effect": "Allow",
            "Resource": {"Fn::GetAtt": [alarm_id, "Arn"]},
        }
    ]
    assert "EndpointExecutionRole" in json.dumps(policy["Roles"])  # the serving role
    (component,) = [
        r for r in resources.values() if r["Type"] == "AWS::SageMaker::InferenceComponent"
    ]
    assert policy_id in component["DependsOn"]
    assert "DescribeAlarms" not in json.dumps(Template.from_stack(serving).to_json())


def test_models_placed_on_an_imported_endpoint_are_counted_on_it():
    stack = cdk.Stack(new_app(), "Legacy")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::123456789012:role/hosting")
    imported = InferenceComponentEndpoint.from_endpoint_attributes(
        stack,
        "Shared",
        InferenceComponentEndpointAttributes(
            endpoint_name="chat-endpoint", instance_type="ml.g5.12xlarge", execution_role=role
        ),
    )
    assert isinstance(imported, ImportedInferenceComponentEndpoint)
    first = InferenceComponentModel(stack, "First", _model(imported, "first"))
    second = InferenceComponentModel(stack, "Second", _model(imported, "second"))
    assert first.endpoint is second.endpoint is imported
    assert [d.name for d in imported.placements] == [
        "Legacy-first-62e167c0",
        "Legacy-second-62e167c0",
    ]
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::InferenceComponent", {"EndpointName": "chat-endpoint"}
    )


def test_model_has_no_fixed_name_and_uses_the_endpoint_role(synthesized):
    synthesized["serving"].has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "ModelName": Match.absent(),
            "ExecutionRoleArn": {
                "Fn::GetAtt": [Match.string_like_regexp("EndpointExecutionRole"), "Arn"]
            },
            "PrimaryContainer": {
                "Image": IMAGE,
                "ModelDataSource": {
                    "S3DataSource": {
                        "S3Uri": "s3://models/busy-chat/",
                        "S3DataType": "S3Prefix",
                        "CompressionType": "None",
                    }
                },
            },
        },
    )


def test_scalable_target_depends_on_the_component(synthesized):
    template = synthesized["serving"]
    component = _logical_id(
        template, "AWS::SageMaker::InferenceComponent", "Serving-busy-chat-62e167c0"
    )
    target_id = _logical_id(
        template, "AWS::ApplicationAutoScaling::ScalableTarget", "Serving-busy-chat-62e167c0"
    )
    target = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")[target_id]
    assert component in target["DependsOn"]
    assert target["Properties"]["ServiceNamespace"] == "sagemaker"
    assert target["Properties"]["ScalableDimension"] == (
        "sagemaker:inference-component:DesiredCopyCount"
    )
    assert (target["Properties"]["MinCapacity"], target["Properties"]["MaxCapacity"]) == (1, 2)
    assert not template.find_resources(
        "AWS::IAM::Role",
        {
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Statement": [
                        Match.object_like(
                            {"Principal": {"Service": "application-autoscaling.amazonaws.com"}}
                        )
                    ]
                }
            }
        },
    )


def test_target_tracking_per_model(synthesized):
    template = synthesized["serving"]
    for name, metric, value in (
        (
            "Serving-busy-chat-62e167c0",
            "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
            4,
        ),
        ("Serving-idle-chat-62e167c0", "SageMakerInferenceComponentInvocationsPerCopy", 5),
    ):
        target = _logical_id(template, "AWS::ApplicationAutoScaling::ScalableTarget", name)
        template.has_resource_properties(
            "AWS::ApplicationAutoScaling::ScalingPolicy",
            {
                "PolicyType": "TargetTrackingScaling",
                "ScalingTargetId": {"Ref": target},
                "TargetTrackingScalingPolicyConfiguration": {
                    "PredefinedMetricSpecification": {"PredefinedMetricType": metric},
                    "TargetValue": value,
                    "ScaleInCooldown": 300,
                    "ScaleOutCooldown": 60,
                },
            },
        )


def test_scale_to_zero_alarm_and_step_policy_only_for_min_zero(synthesized):
    template = synthesized["serving"]
    template.resource_count_is("AWS::ApplicationAutoScaling::ScalableTarget", 2)
    [step_id] = template.find_resources(
        "AWS::ApplicationAutoScaling::ScalingPolicy", {"Properties": {"PolicyType": "StepScaling"}}
    )
    target = _logical_id(
        template, "AWS::ApplicationAutoScaling::ScalableTarget", "Serving-idle-chat-62e167c0"
    )
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "StepScaling",
            "ScalingTargetId": {"Ref": target},
            "StepScalingPolicyConfiguration": {
                "AdjustmentType": "ChangeInCapacity",
                "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
            },
        },
    )
    alarms = template.find_resources(
        "AWS::CloudWatch::Alarm", {"Properties": {"MetricName": "NoCapacityInvocationFailures"}}
    )
    [alarm] = alarms.values()
    assert alarm["Properties"] == {
        **alarm["Properties"],
        "Namespace": "AWS/SageMaker",
        "Dimensions": [{"Name": "InferenceComponentName", "Value": "Serving-idle-chat-62e167c0"}],
        "Statistic": "Maximum",
        "Period": 60,
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "TreatMissingData": "notBreaching",
        "AlarmActions": [{"Ref": step_id}],
    }
    target_props = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")[target]
    assert target_props["Properties"]["MinCapacity"] == 0


def test_scaling_resources_keep_their_logical_ids(synthesized):
    # The IDs aws-cdk-lib's ScalableTarget, TargetTrackingScalingPolicy, StepScalingAction
    # and Alarm gave these resources before they became L1 resources: a scalable target
    # under a new logical ID cannot be created beside the deployed one (CloudFormation
    # identifies it by resource ID, dimension and namespace: AlreadyExists), and deleting
    # the old one would deregister it.
    scaling = synthesized["idle"].scaling
    stack = synthesized["stack"]
    assert {
        name: stack.get_logical_id(getattr(scaling, name))
        for name in ("target", "tracking_policy", "scale_out_from_zero", "no_capacity_alarm")
    } == {
        "target": "IdleScalingTarget315D7DF9",
        "tracking_policy": "IdleScalingTargetTrackingFC3F1541",
        "scale_out_from_zero": "IdleScalingScaleOutFromZero6D4A4DF4",
        "no_capacity_alarm": "IdleScalingNoCapacityAlarm6271050E",
    }


def test_scaling_attributes_are_typed_l1_resources_with_short_policy_names(synthesized):
    idle, busy = synthesized["idle"].scaling, synthesized["busy"].scaling
    assert isinstance(idle.target, appscaling.CfnScalableTarget)
    assert isinstance(idle.no_capacity_alarm, cloudwatch.CfnAlarm)
    assert (idle.tracking_policy.policy_name, idle.scale_out_from_zero.policy_name) == (
        "TargetTracking",
        "ScaleOutFromZero",
    )
    assert (busy.scale_out_from_zero, busy.no_capacity_alarm) == (None, None)
    [role_arn] = {
        json.dumps(target["Properties"]["RoleARN"])
        for target in synthesized["serving"]
        .find_resources("AWS::ApplicationAutoScaling::ScalableTarget")
        .values()
    }
    assert "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint" in role_arn


def test_scale_to_zero_warns_when_the_endpoint_keeps_instances(synthesized):
    annotations = Annotations.from_stack(synthesized["stack"])
    annotations.has_warning("/Serving/Idle", Match.string_like_regexp("min_instance_count=1"))
    annotations.has_no_warning("/Serving/Busy", Match.string_like_regexp("min_instance_count="))


def test_grant_invoke(synthesized):
    template = synthesized["serving"]
    [endpoint_id] = template.find_resources("AWS::SageMaker::Endpoint")
    [caller_statements] = [
        policy["Properties"]["PolicyDocument"]["Statement"]
        for policy in template.find_resources("AWS::IAM::Policy").values()
        if "Users" in policy["Properties"]
    ]
    assert caller_statements == [
        {
            "Action": list(INVOKE_ACTIONS),
            "Effect": "Allow",
            "Resource": {"Ref": endpoint_id},
        }
    ]


def test_metrics_name_the_component(synthesized):
    busy = synthesized["busy"]
    invocations = busy.metric_invocations()
    assert (invocations.namespace, invocations.metric_name, invocations.statistic) == (
        "AWS/SageMaker",
        "Invocations",
        "Sum",
    )
    assert invocations.dimensions == {"InferenceComponentName": "Serving-busy-chat-62e167c0"}
    assert busy.metric_model_latency().metric_name == "ModelLatency"
    assert busy.metric_no_capacity_failures().metric_name == "NoCapacityInvocationFailures"


def test_component_in_another_stack(synthesized):
    template = synthesized["tenant"]
    template.has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {"InferenceComponentName": "Tenant-remote-62e167c0", "EndpointName": Match.object_like({})},
    )
    template.resource_count_is("AWS::SageMaker::Endpoint", 0)
    app = synthesized["app"]
    tenant = app.node.find_child("Tenant")
    assert app.node.find_child("Serving") in tenant.dependencies


@pytest.mark.slow
def test_cfn_lint_finds_nothing(synthesized):
    for name in ("serving", "tenant"):
        template = json.dumps(synthesized[name].to_json())
        matches = lint(template, config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_nag_clean_endpoint_with_two_models():
    app = new_app()
    stack = cdk.Stack(app, "Nag")
    endpoint = chat_endpoint(stack, min_instance_count=0)
    InferenceComponentModel(
        stack,
        "Idle",
        _model(endpoint, "idle", scaling=ComponentScaling(min_copies=0, max_copies=2)),
    )
    InferenceComponentModel(
        stack, "Busy", _model(endpoint, "busy", scaling=ComponentScaling(max_copies=3))
    )
    assert nag_findings(app) == []


@pytest.fixture
def endpoint():
    stack = cdk.Stack(new_app(), "Invalid")
    return chat_endpoint(stack)


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"accelerators": 5}, "accelerators=5: at most 4"),
        ({"min_memory_mib": 200000}, "min_memory_mib=200000: at most 196608"),
        ({"cpu_cores": 64}, "cpu_cores=64: at most 48"),
        ({"scaling": ComponentScaling(min_copies=3, max_copies=2)}, "scaling.min_copies=3"),
        ({"scaling": ComponentScaling(min_copies=0, max_copies=0)}, "scaling.max_copies=0"),
        ({"scaling": ComponentScaling(max_copies=2, target_value=0)}, "scaling.target_value=0"),
        ({"model_name": "my_model"}, "model_name='my_model': underscores are not allowed"),
        ({"model_name": "m" * 64}, "too long: at most 63"),
        ({"component_name": "bad_name"}, "component_name='bad_name'"),
        ({"model_data_download_timeout_s": 30}, "model_data_download_timeout_s=30: below"),
        (
            {"container_startup_health_check_timeout_s": 3601},
            "container_startup_health_check_timeout_s=3601: above",
        ),
        ({"initial_copies": 0}, "initial_copies=0"),
        ({"initial_copies": 3, "scaling": ComponentScaling(max_copies=2)}, "initial_copies=3"),
        ({"rolling_update": RollingUpdate(wait_interval_s=4000)}, "wait_interval_s=4000"),
        (
            {"rolling_update": RollingUpdate(batch_size=60)},
            "rolling_update.batch_size=60: 5-50 (percent of the copies, batch_unit "
            "CAPACITY_PERCENT): a batch is 5%-50% of the component's copies (botocore "
            "InferenceComponentRollingUpdatePolicy.MaximumBatchSize)",
        ),
        (
            {"rolling_update": RollingUpdate(batch_unit="COPY_COUNT", batch_size=1)},
            "rolling_update.batch_size=1: no batch of whole copies is 5%-50% of 1 copy "
            "(botocore InferenceComponentRollingUpdatePolicy.MaximumBatchSize): set "
            "batch_unit CAPACITY_PERCENT (5-50), or give the component at least 2 copies "
            "(initial_copies)",
        ),
        (
            {
                "initial_copies": 4,
                "rolling_update": RollingUpdate(batch_unit="COPY_COUNT", batch_size=3),
            },
            "rolling_update.batch_size=3: 1-2 copies: 5%-50% of the component's 4 copies "
            "(botocore InferenceComponentRollingUpdatePolicy.MaximumBatchSize); or set "
            "batch_unit CAPACITY_PERCENT (5-50)",
        ),
        ({"max_memory_mib": 1024}, "max_memory_mib=1024: must be at least"),
    ],
)
def test_validation(endpoint, props, expected):
    with pytest.raises(ValueError, match="invalid InferenceComponentModelProps") as error:
        InferenceComponentModel(endpoint, "Model", _model(endpoint, "model", **props))
    assert expected in str(error.value)


def test_two_components_with_one_name_on_an_endpoint(endpoint):
    InferenceComponentModel(endpoint, "First", _model(endpoint, "same"))
    with pytest.raises(ValueError, match="component_name='Invalid-same-62e167c0': must be unique"):
        InferenceComponentModel(endpoint, "Second", _model(endpoint, "same"))
