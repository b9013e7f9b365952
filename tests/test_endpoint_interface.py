"""One shape for every endpoint: each kind, created or imported by name, ARN or
attributes, can be invoked (``grant_invoke``), measured and alarmed; imported attributes
are checked; observability built from nothing but what it watches."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template

from fm_platform.constructs.inference.async_endpoint import INVOKE_ASYNC_ACTION, AsyncEndpoint
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointAttributes,
)
from fm_platform.constructs.inference.endpoint_base import INVOKE_ACTIONS
from fm_platform.constructs.inference.imported_endpoint import EndpointAttributes
from fm_platform.constructs.inference.single_model_endpoint import SingleModelEndpoint
from fm_platform.constructs.observability.inference_observability import (
    SINGLE_KIND,
    InferenceObservabilityProps,
    WatchedAsyncEndpoint,
    WatchedEndpoint,
    WatchedModel,
    watch_inference,
)
from fm_platform.constructs.observability.training_alarms import FunctionPlacement
from fm_platform.constructs.observability.training_observability import (
    TrainingObservability,
    TrainingObservabilityProps,
)
from fm_platform.constructs.training.instance_groups import InstanceGroup, NodeRole
from tests.components import chat_model
from tests.endpoint_kinds import (
    ACCOUNT_ARN,
    CONTAINER,
    KINDS,
    created,
    imported,
    invoke_and_watch,
    placeable,
)

ENV = cdk.Environment(account="123456789012", region="us-east-1")


def _stack() -> cdk.Stack:
    return cdk.Stack(cdk.App(), "Consumer", env=ENV)


def _function(stack: cdk.Stack) -> lambda_.Function:
    return lambda_.Function(
        stack,
        "Caller",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
    )


def _invoke_statements(stack: cdk.Stack) -> list[dict]:
    template = Template.from_stack(stack).to_json()
    return [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy"
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
        if "sagemaker:" in str(statement["Action"])
    ]


def _actions(kind: str) -> list[str] | str:
    return INVOKE_ASYNC_ACTION if kind == "async" else list(INVOKE_ACTIONS)


@pytest.mark.parametrize("kind", KINDS)
def test_an_imported_endpoint_of_every_kind_can_be_invoked_by_a_function(kind):
    stack = _stack()
    role = iam.Role.from_role_arn(stack, "Hosting", "arn:aws:iam::123456789012:role/hosting")
    function = _function(stack)
    topic = sns.Topic(stack, "Topic")
    endpoints = imported(stack, kind, role)
    for how, endpoint in endpoints.items():
        invoke_and_watch(endpoint, function, topic, f"{kind}-{how}")
    statements = _invoke_statements(stack)
    assert len(statements) == 3
    assert {(s["Effect"], json.dumps(s["Action"])) for s in statements} == {
        ("Allow", json.dumps(_actions(kind)))
    }
    resources = json.dumps([stack.resolve(s["Resource"]) for s in statements])
    # By ARN as given; by name and attributes built in the stack's account and region,
    # the name lower-cased as SageMaker's ARNs hold it.
    assert f'"{ACCOUNT_ARN}arn-{kind}"' in resources
    assert f":123456789012:endpoint/ext-{kind}" in resources
    assert f":123456789012:endpoint/attr-{kind}" in resources


@pytest.mark.parametrize("kind", KINDS)
def test_an_imported_endpoint_gets_the_alarm_and_metrics_of_its_kind(kind):
    stack = _stack()
    role = iam.Role.from_role_arn(stack, "Hosting", "arn:aws:iam::123456789012:role/hosting")
    topic = sns.Topic(stack, "Topic")
    endpoints = imported(stack, kind, role)
    by_attributes = endpoints["attributes"]
    _, alarm = invoke_and_watch(by_attributes, iam.AccountRootPrincipal(), topic, "watched")
    assert by_attributes.endpoint_name == f"Attr-{kind.capitalize()}"
    assert by_attributes.variant_name == "v1"
    assert endpoints["arn"].endpoint_name == f"arn-{kind}"
    metrics = {"component": "CPUUtilizationNormalized", "serverless": "MemoryUtilization"}
    expected_metric = metrics.get(kind, "CPUUtilization")
    assert by_attributes.instance_metric == expected_metric
    assert created(stack, kind).instance_metric == expected_metric
    instances = by_attributes.metric_instances()
    assert (instances.metric_name, instances.namespace) == (
        expected_metric,
        "/aws/sagemaker/Endpoints",
    )
    assert stack.resolve(instances.dimensions) == {
        "EndpointName": f"Attr-{kind.capitalize()}",
        "VariantName": "v1",
    }
    assert alarm.conditions[0].dimensions == {
        "EndpointName": f"Attr-{kind.capitalize()}",
        "VariantName": "v1",
    }
    Template.from_stack(stack).has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmDescription": Match.string_like_regexp(
                f"endpoint watched \\(Attr-{kind.capitalize()}, variant v1\\)"
            )
        },
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_created_endpoint_of_every_kind_fits_the_same_consumer(kind):
    stack = _stack()
    endpoint = created(stack, kind)
    grant, _ = invoke_and_watch(endpoint, _function(stack), sns.Topic(stack, "Topic"), kind)
    assert grant.success
    [statement] = _invoke_statements(stack)
    assert statement["Action"] == _actions(kind)
    assert endpoint.endpoint is not None
    assert stack.resolve(statement["Resource"]) == {"Ref": stack.get_logical_id(endpoint.endpoint)}


def test_models_are_placed_on_an_endpoint_imported_with_its_attributes():
    stack = _stack()
    role = iam.Role.from_role_arn(stack, "Hosting", "arn:aws:iam::123456789012:role/hosting")
    endpoint = placeable(stack, role)
    model = chat_model(stack, endpoint, container=CONTAINER)
    assert endpoint.component_names == {model.component_name}
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {"EndpointName": "Attr-Component", "VariantName": "v1"},
    )


def test_an_endpoint_by_arn_reads_its_name_from_a_token_too():
    stack = _stack()
    arn = cdk.CfnParameter(stack, "EndpointArn").value_as_string
    endpoint = AsyncEndpoint.from_endpoint_arn(stack, "ByArn", arn)
    assert stack.resolve(endpoint.endpoint_name) == {
        "Fn::Select": [
            1,
            {"Fn::Split": ["/", {"Fn::Select": [5, {"Fn::Split": [":", {"Ref": "EndpointArn"}]}]}]},
        ]
    }


NAME_SHAPE = "allowed: matching [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}; 0-63 characters"


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        (EndpointAttributes(), "endpoint_name=None: give the endpoint's name or its ARN"),
        (
            EndpointAttributes(endpoint_name="bad_name"),
            f"endpoint_name='bad_name': underscores are not allowed; {NAME_SHAPE}",
        ),
        (
            EndpointAttributes(endpoint_arn="arn:aws:s3:::models-bucket"),
            "endpoint_arn='arn:aws:s3:::models-bucket': has a shape the pattern does not allow; "
            "allowed: matching arn:aws[a-z\\-]*:sagemaker:[a-z0-9\\-]*:[0-9]{12}:endpoint/.*; "
            "20-2048 characters",
        ),
        (
            EndpointAttributes(endpoint_name="ok", variant_name="a b"),
            f"variant_name='a b': spaces are not allowed; {NAME_SHAPE}",
        ),
    ],
)
def test_imported_attributes_are_checked_field_by_field(attributes, expected):
    with pytest.raises(ValueError) as raised:
        SingleModelEndpoint.from_endpoint_attributes(_stack(), "Bad", attributes)
    assert str(raised.value) == f"invalid EndpointAttributes:\n  - {expected}"


def test_component_endpoint_attributes_report_every_problem_at_once():
    stack = _stack()
    role = iam.Role.from_role_arn(stack, "Hosting", "arn:aws:iam::123456789012:role/hosting")
    with pytest.raises(ValueError) as raised:
        InferenceComponentEndpoint.from_endpoint_attributes(
            stack,
            "Bad",
            InferenceComponentEndpointAttributes(
                endpoint_name="bad_name",
                instance_type="ml.g5.13xlarge",
                execution_role=role,
                initial_instance_count=1,
                min_instance_count=3,
                max_instance_count=2,
            ),
        )
    lines = str(raised.value).splitlines()
    assert lines[0] == "invalid InferenceComponentEndpointAttributes:"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "  - endpoint_name='bad_name'",
        "  - instance_type='ml.g5.13xlarge'",
        "  - min_instance_count=3",
    ]


def test_inference_observability_works_in_a_bare_stack_given_what_it_watches():
    stack = _stack()
    role = iam.Role.from_role_arn(stack, "Hosting", "arn:aws:iam::123456789012:role/hosting")
    topic = sns.Topic(stack, "Topic")
    shared = placeable(stack, role)
    model = chat_model(stack, shared, container=CONTAINER)
    single = SingleModelEndpoint.from_endpoint_name(stack, "Single", "ext-single")
    queued = AsyncEndpoint.from_endpoint_name(stack, "Queue", "queue")
    made = watch_inference(
        stack,
        InferenceObservabilityProps(
            endpoints=[
                WatchedEndpoint(
                    label="shared",
                    endpoint=shared,
                    kind="Inference Components",
                    min_instance_count=0,
                    max_instance_count=4,
                    models=[WatchedModel(model=model)],
                ),
                WatchedEndpoint(label="single", endpoint=single, kind=SINGLE_KIND),
            ],
            async_endpoints=[WatchedAsyncEndpoint(label="queue", endpoint=queued)],
            topic=topic,
        ),
    )
    assert set(made.model_alarms) == {"chat"}
    assert set(made.endpoint_alarms) == {"shared", "single"}
    assert set(made.async_alarms) == {"queue"}
    assert made.dashboards is not None
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::CloudWatch::Alarm", 4)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": "Consumer-queue-health",
            "AlarmDescription": Match.string_like_regexp(
                r"^fm_platform: asynchronous endpoint queue \(queue\): unhealthy"
            ),
        },
    )


def test_inference_observability_without_a_topic_makes_only_dashboards():
    stack = _stack()
    single = created(stack, "single")
    made = watch_inference(
        stack,
        InferenceObservabilityProps(
            endpoints=[WatchedEndpoint(label="single", endpoint=single, kind=SINGLE_KIND)]
        ),
    )
    assert (made.endpoint_alarms, made.dashboards is not None) == ({}, True)
    Template.from_stack(stack).resource_count_is("AWS::CloudWatch::Alarm", 0)


class _Cluster:
    cluster_arn = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123"
    cluster_id = "abc123"
    node_health_alarm = None
    instance_groups = (
        InstanceGroup(
            name="controller",
            role=NodeRole.CONTROLLER,
            instance_type="ml.m5.12xlarge",
            instance_count=1,
        ),
    )


def test_training_observability_works_in_a_bare_stack_given_what_it_watches():
    stack = _stack()
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1)
    watched = TrainingObservability(
        stack,
        "Observability",
        TrainingObservabilityProps(
            cluster=_Cluster(),
            placement=FunctionPlacement(
                vpc=vpc,
                subnet=vpc.private_subnets[0],
                log_group=logs.LogGroup(stack, "Logs"),
                log_key=kms.Key(stack, "LogsKey", enable_key_rotation=True),
            ),
            file_system_id="fs-0123456789abcdef0",
            topic=sns.Topic(stack, "Topic"),
        ),
    )
    assert watched.cluster_events is not None and watched.lifecycle_errors is not None
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Events::Rule",
        {"EventPattern": Match.object_like({"detail": {"ClusterArn": [_Cluster.cluster_arn]}})},
    )
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)
