"""Serverless endpoints are watched like the other kinds: one alarm each (errors, latency
objective, concurrency near its maximum) from the configuration's ``alarms``, a
dashboard section of the metrics AWS publishes for them, every mistake named by its key."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from fm_platform.config import load_config
from fm_platform.constructs.inference.serverless_endpoint import ServerlessEndpoint
from fm_platform.constructs.observability.inference_observability import (
    InferenceObservabilityProps,
    WatchedServerlessEndpoint,
    watch_inference,
)
from fm_platform.constructs.observability.serverless_alarm import (
    ServerlessEndpointAlarmOptions,
    ServerlessEndpointAlarmProps,
)
from fm_platform.rules.problems import Problems, ValidationError
from fm_platform.stacks.inference import InferenceStack
from tests.support import new_app
from tests.test_observability_alarms import expression, watched

ONLY_SERVERLESS: dict[str, Any] = {
    "ic_endpoints": [],
    "single_model_endpoints": [],
    "multi_model_endpoints": [],
    "async_endpoints": [],
}


def _stack(serverless: list[dict[str, Any]]) -> InferenceStack:
    config = load_config(
        {
            "deploy_training": False,
            "notifications": {"emails": ["oncall@example.com"]},
            "inference": {**ONLY_SERVERLESS, "serverless_endpoints": serverless},
        }
    )
    return InferenceStack(
        new_app(), "Sporadic", config=config.inference, notifications=config.notifications
    )


@pytest.fixture(scope="module")
def stack() -> InferenceStack:
    return _stack(
        [
            {"name": "tagger", "alarms": {"latency_objective_ms": 300}},
            {
                "name": "warm",
                "max_concurrency": 10,
                "provisioned_concurrency": 2,
                "alarms": {"error_rate_percent": None, "concurrency_percent": 80, "minutes": 3},
            },
            {"name": "quiet", "alarms": {"enabled": False}},
        ]
    )


def _alarm(stack: InferenceStack, label: str) -> dict[str, Any]:
    construct = stack.observability.serverless_alarms[label]
    return Template.from_stack(stack).to_json()["Resources"][stack.get_logical_id(construct)][
        "Properties"
    ]


def test_a_serverless_alarm_watches_errors_latency_and_concurrency(stack):
    endpoint = stack.serverless_endpoints["tagger"]
    alarm = _alarm(stack, "tagger")
    dimensions = stack.resolve(endpoint.metric_dimensions())
    assert watched(alarm) == {
        "errors": ("AWS/SageMaker", "Invocation5XXErrors", "Average", dimensions),
        "latency": ("AWS/SageMaker", "ModelLatency", "p50", dimensions),
        "concurrency": (
            "AWS/SageMaker",
            "ServerlessConcurrentExecutionsUtilization",
            "Maximum",
            dimensions,
        ),
    }
    assert expression(alarm) == (
        "(FILL(errors, 0) >= 0.05) + 2 * (FILL(latency, 0) > 300000) + "
        "4 * (FILL(concurrency, 0) >= 0.9)"
    )
    assert alarm["TreatMissingData"] == "notBreaching"
    description = json.dumps(alarm["AlarmDescription"])
    assert "serverless endpoint tagger (" in description
    assert "4 = concurrent invocations at or above 90% of the maximum concurrency" in description


def test_a_serverless_alarm_takes_its_overrides_and_may_be_off(stack):
    alarm = _alarm(stack, "warm")
    assert list(watched(alarm)) == ["concurrency"]
    assert expression(alarm) == "(FILL(concurrency, 0) >= 0.8)"
    assert alarm["EvaluationPeriods"] == 3
    assert set(stack.observability.serverless_alarms) == {"tagger", "warm"}


def test_the_dashboard_draws_the_serverless_metrics_and_no_instances(stack):
    (dashboard,) = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(stack.resolve(dashboard["Properties"]["DashboardBody"]))
    for metric in (
        "ModelSetupTime",
        "OverheadLatency",
        "ServerlessConcurrentExecutionsUtilization",
        "MemoryUtilization",
        "Invocation4XXErrors",
    ):
        assert metric in body, metric
    # Provisioned concurrency only on the endpoint that has it.
    assert body.count("ServerlessProvisionedConcurrencySpilloverInvocations") == 1
    assert "Serverless endpoint tagger" in body
    assert "Instances in service" not in body


def test_an_imported_serverless_endpoint_is_watched_from_what_it_is():
    scope = Stack(new_app(), "Consumer")
    endpoint = ServerlessEndpoint.from_endpoint_name(scope, "Tagger", "tagger-prod")
    made = watch_inference(
        scope,
        InferenceObservabilityProps(
            serverless_endpoints=[WatchedServerlessEndpoint(label="tagger", endpoint=endpoint)],
            topic=sns.Topic(scope, "Topic"),
        ),
    )
    assert set(made.serverless_alarms) == {"tagger"}
    Template.from_stack(scope).has_resource_properties(
        "AWS::CloudWatch::Alarm", {"AlarmName": "Consumer-tagger-health"}
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"concurrency_percent": 150},
            "concurrency_percent=150: must be a percentage above 0 and at most 100",
        ),
        ({"minutes": 0}, "minutes=0: must be between 1 and 1440"),
        (
            {"error_rate_percent": None, "concurrency_percent": None},
            "error_rate_percent, latency_objective_ms, concurrency_percent=None: nothing to "
            "watch: set at least one (or enabled: false)",
        ),
    ],
)
def test_every_bad_option_is_refused_with_its_key(options, expected):
    problems = Problems("alarm")
    ServerlessEndpointAlarmOptions(**options).check(problems)
    assert problems.messages == (expected,)


def test_the_alarm_props_say_whose_options_are_bad():
    with pytest.raises(ValueError, match="invalid ServerlessEndpointAlarmProps 'tagger'"):
        scope = Stack(new_app(), "Consumer")
        ServerlessEndpointAlarmProps(
            endpoint=ServerlessEndpoint.from_endpoint_name(scope, "T", "t"),
            label="tagger",
            topic_arn="arn:aws:sns:us-east-1:123456789012:t",
            concurrency_percent=0,
        ).validate()


def test_a_configuration_mistake_is_named_by_its_key():
    with pytest.raises(ValidationError) as error:
        load_config(
            {
                "deploy_training": False,
                "inference": {
                    **ONLY_SERVERLESS,
                    "serverless_endpoints": [
                        {"name": "tagger", "alarms": {"concurrency_percent": 0}},
                        {"name": "isolated", "network_isolation": True},
                    ],
                },
            }
        )
    assert list(error.value.problems) == [
        "inference.serverless_endpoints[0].alarms.concurrency_percent=0 (endpoint 'tagger'): "
        "must be a percentage above 0 and at most 100",
        "inference.serverless_endpoints[1].network_isolation=True (endpoint 'isolated'): "
        "false: Serverless Inference does not support network isolation (SageMaker Developer "
        "Guide, Serverless Inference, Feature exclusions)",
    ]
