"""The alarms of an inference stack, one per model and per endpoint: what each watches, its
thresholds, its description, how it treats missing data, and the configuration's
overrides."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from aws_cdk.assertions import Template

from fm_platform.config import load_config
from fm_platform.constructs.observability.conditions import alarm_arn_of
from fm_platform.constructs.observability.model_alarm import (
    DEFAULT_MINUTES,
    SCALE_FROM_ZERO_ALLOWANCE_S,
)
from fm_platform.stacks.inference import InferenceStack
from tests.support import new_app

MAPPING: dict[str, Any] = {
    "deploy_training": False,
    "notifications": {"emails": ["oncall@example.com"]},
    "inference": {
        "ic_endpoints": [
            {
                "name": "shared",
                "instance_type": "ml.g5.12xlarge",
                "min_instance_count": 1,
                "max_instance_count": 3,
                "models": [
                    {
                        "model_name": "chat",
                        "accelerators": 1,
                        "min_memory_mib": 16384,
                        "scaling": {"min_copies": 1, "max_copies": 4},
                        "alarms": {"latency_objective_ms": 800},
                    },
                    {
                        "model_name": "sleepy",
                        "accelerators": 1,
                        "min_memory_mib": 16384,
                        "container": {"model_size_gib": 20},
                        "scaling": {"min_copies": 0, "max_copies": 2},
                    },
                    {
                        "model_name": "custom",
                        "accelerators": 1,
                        "min_memory_mib": 16384,
                        "alarms": {
                            "error_rate_percent": None,
                            "no_capacity": False,
                            "latency_objective_ms": 250,
                            "minutes": 3,
                        },
                    },
                    {
                        "model_name": "silent",
                        "accelerators": 1,
                        "min_memory_mib": 16384,
                        "alarms": {"enabled": False},
                    },
                ],
            }
        ],
        "single_model_endpoints": [
            {
                "name": "single",
                "instance_type": "ml.g5.2xlarge",
                "scaling": {
                    "min_instances": 1,
                    "max_instances": 3,
                    "target_invocations_per_instance": 100,
                },
                "alarms": {"error_rate_percent": 2, "latency_objective_ms": 1500},
            }
        ],
        "multi_model_endpoints": [
            {"name": "multi", "instance_type": "ml.m5.xlarge", "alarms": {"minutes": 30}}
        ],
        "async_endpoints": [
            {"name": "queue", "instance_type": "ml.g5.2xlarge"},
            {
                "name": "backfill",
                "instance_type": "ml.g5.2xlarge",
                "alarms": {"error_rate_percent": None, "oldest_request_minutes": 240},
            },
        ],
    },
}


class Built:
    def __init__(self, mapping: dict[str, Any]) -> None:
        config = load_config(mapping)
        self.stack = InferenceStack(
            new_app(),
            "Watched",
            config=config.inference,
            notifications=config.notifications,
            dashboards=config.dashboards,
        )
        self.template = Template.from_stack(self.stack)
        self.json = self.template.to_json()
        self.resources = self.json["Resources"]

    def alarm(self, construct: Any) -> dict[str, Any]:
        return self.resources[self.stack.get_logical_id(construct)]["Properties"]

    def topic_ref(self) -> dict[str, str]:
        topic = self.stack.observability.topic
        assert topic is not None
        return self.stack.resolve(topic.topic_arn)


@pytest.fixture(scope="module")
def built() -> Built:
    return Built(MAPPING)


def queries(alarm: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The alarm's metric queries by ID."""
    return {query["Id"]: query for query in alarm["Metrics"]}


def watched(alarm: dict[str, Any]) -> dict[str, tuple[str, str, str, dict[str, Any]]]:
    """Per metric query: namespace, metric, statistic and dimensions (resolved)."""
    found = {}
    for query_id, query in queries(alarm).items():
        if "MetricStat" not in query:
            continue
        stat = query["MetricStat"]
        metric = stat["Metric"]
        dimensions = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        found[query_id] = (metric["Namespace"], metric["MetricName"], stat["Stat"], dimensions)
        assert stat["Period"] == 60
        assert query["ReturnData"] is False
    return found


def expression(alarm: dict[str, Any]) -> str:
    return queries(alarm)["health"]["Expression"]


def component_dimension(built: Built, name: str) -> dict[str, Any]:
    model = built.stack.ic_models[name]
    return {"InferenceComponentName": built.stack.resolve(model.component_name)}


# -- every alarm --------------------------------------------------------------------------


def test_one_alarm_per_model_and_per_endpoint_each_sent_to_the_topic(built):
    observability = built.stack.observability
    assert set(observability.model_alarms) == {"chat", "sleepy", "custom"}  # "silent": off
    assert set(observability.endpoint_alarms) == {"shared", "single", "multi"}
    assert set(observability.async_alarms) == {"queue", "backfill"}
    health = [
        r
        for r in built.resources.values()
        if r["Type"] == "AWS::CloudWatch::Alarm" and "Metrics" in r["Properties"]
    ]
    assert len(health) == 3 + 3 + 2
    for resource in health:
        properties = resource["Properties"]
        assert properties["AlarmActions"] == [built.topic_ref()]
        assert properties["TreatMissingData"] == "notBreaching"
        assert properties["Threshold"] == 1
        assert properties["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert properties["EvaluationPeriods"] == properties["DatapointsToAlarm"]
        # A minute without data counts as healthy inside the expression too.
        for query_id in watched(properties):
            assert f"FILL({query_id}, 0)" in expression(properties)


# -- models -------------------------------------------------------------------------------


def test_a_models_alarm_watches_errors_capacity_copies_and_its_latency_objective(built):
    alarm = built.alarm(built.stack.observability.model_alarms["chat"])
    dimensions = component_dimension(built, "chat")
    assert watched(alarm) == {
        "errors": ("AWS/SageMaker", "Invocation5XXErrors", "Average", dimensions),
        "nocapacity": ("AWS/SageMaker", "NoCapacityInvocationFailures", "Sum", dimensions),
        "copies": (
            "/aws/sagemaker/InferenceComponents",
            "CPUUtilizationNormalized",
            "SampleCount",
            dimensions,
        ),
        "latency": ("AWS/SageMaker", "ModelLatency", "p50", dimensions),
    }
    assert expression(alarm) == (
        "(FILL(errors, 0) >= 0.05) + 2 * (FILL(nocapacity, 0) >= 1) + "
        "4 * (FILL(copies, 0) >= 4) + 8 * (FILL(latency, 0) > 800000)"
    )
    assert alarm["EvaluationPeriods"] == DEFAULT_MINUTES


def test_a_models_description_names_the_model_its_component_and_endpoint(built):
    alarm = built.alarm(built.stack.observability.model_alarms["chat"])
    text = built.stack.resolve(alarm["AlarmDescription"])
    flat = str(text)
    assert "model chat (inference component Watched-chat-62e167c0)" in flat
    assert "1 = 5xx errors at or above 5% of requests" in flat
    assert "8 = p50 model latency over the 800 ms objective" in flat
    assert (
        "4 = copies at the maximum (4; counted as the copies' CPUUtilizationNormalized "
        "datapoints per minute, AWS publishing no copy count for metric math)"
    ) in flat
    endpoint = built.stack.ic_endpoints["shared"]
    assert built.stack.get_logical_id(endpoint.endpoint) in flat  # the endpoint's name
    assert "fmp endpoint metrics" in flat
    assert alarm["AlarmName"] == "Watched-chat-62e167c0-health"


def test_a_model_scaling_to_zero_waits_out_its_startup_before_firing(built):
    model = built.stack.ic_models["sleepy"]
    alarm = built.alarm(built.stack.observability.model_alarms["sleepy"])
    assert model.min_copies == 0 and model.startup_timeout_s is not None
    expected = math.ceil((model.startup_timeout_s + SCALE_FROM_ZERO_ALLOWANCE_S) / 60)
    assert expected > DEFAULT_MINUTES  # the startup budget, not the default, decides
    assert alarm["EvaluationPeriods"] == alarm["DatapointsToAlarm"] == expected
    assert f"each of {expected} consecutive minutes" in str(alarm["AlarmDescription"])


def test_a_models_overrides_choose_its_conditions_and_window(built):
    alarm = built.alarm(built.stack.observability.model_alarms["custom"])
    # No errors, no capacity failures, no scaling (so no copies condition): latency only.
    assert list(watched(alarm)) == ["latency"]
    assert expression(alarm) == "(FILL(latency, 0) > 250000)"
    assert alarm["EvaluationPeriods"] == 3
    assert "1 = p50 model latency over the 250 ms objective" in str(alarm["AlarmDescription"])


# -- endpoints ----------------------------------------------------------------------------


def test_an_inference_components_endpoint_alarm_watches_its_instances(built):
    endpoint = built.stack.ic_endpoints["shared"]
    alarm = built.alarm(built.stack.observability.endpoint_alarms["shared"])
    dimensions = built.stack.resolve(endpoint.metric_dimensions())
    # Inference Components endpoints publish the normalized utilisation per instance.
    assert watched(alarm) == {
        "instances": (
            "/aws/sagemaker/Endpoints",
            "CPUUtilizationNormalized",
            "SampleCount",
            dimensions,
        )
    }
    assert expression(alarm) == "(FILL(instances, 0) >= 3)"
    description = str(alarm["AlarmDescription"])
    assert "endpoint shared (" in description
    assert (
        "1 = instances at the maximum (3; counted as the instances' CPUUtilizationNormalized "
        "datapoints per minute, AWS publishing no instance count)"
    ) in description


def test_a_single_model_endpoint_alarm_takes_its_overrides(built):
    endpoint = built.stack.single_model_endpoints["single"]
    alarm = built.alarm(built.stack.observability.endpoint_alarms["single"])
    dimensions = built.stack.resolve(endpoint.metric_dimensions())
    assert watched(alarm) == {
        "errors": ("AWS/SageMaker", "Invocation5XXErrors", "Average", dimensions),
        "latency": ("AWS/SageMaker", "ModelLatency", "p50", dimensions),
        "instances": ("/aws/sagemaker/Endpoints", "CPUUtilization", "SampleCount", dimensions),
    }
    assert expression(alarm) == (
        "(FILL(errors, 0) >= 0.02) + 2 * (FILL(latency, 0) > 1500000) + "
        "4 * (FILL(instances, 0) >= 3)"
    )
    assert alarm["AlarmName"] == "Watched-single-health"


def test_an_endpoint_without_scaling_is_not_watched_for_its_maximum(built):
    alarm = built.alarm(built.stack.observability.endpoint_alarms["multi"])
    assert list(watched(alarm)) == ["errors"]
    assert alarm["EvaluationPeriods"] == 30


# -- asynchronous endpoints -----------------------------------------------------------------


def test_an_asynchronous_endpoint_alarm_watches_errors_and_its_oldest_request(built):
    endpoint = built.stack.async_endpoints["queue"]
    alarm = built.alarm(built.stack.observability.async_alarms["queue"])
    name = built.stack.resolve(endpoint.endpoint_name)
    assert watched(alarm) == {
        "errors": (
            "AWS/SageMaker",
            "Invocation5XXErrors",
            "Average",
            built.stack.resolve(endpoint.metric_dimensions()),
        ),
        "oldest": (
            "AWS/SageMaker",
            "ApproximateAgeOfOldestRequest",
            "Maximum",
            {"EndpointName": name},
        ),
    }
    assert expression(alarm) == "(FILL(errors, 0) >= 0.05) + 2 * (FILL(oldest, 0) > 3600)"
    assert alarm["TreatMissingData"] == "notBreaching"  # an idle queue publishes nothing
    description = str(alarm["AlarmDescription"])
    assert "asynchronous endpoint queue (" in description
    assert "model queue)" in description
    assert "2 = oldest queued request older than 60 minutes" in description
    assert "failures" in description  # where failed requests land


def test_an_asynchronous_endpoint_alarm_takes_its_overrides(built):
    alarm = built.alarm(built.stack.observability.async_alarms["backfill"])
    assert list(watched(alarm)) == ["oldest"]
    assert expression(alarm) == "(FILL(oldest, 0) > 14400)"


# -- no notifications -----------------------------------------------------------------------


def test_without_notifications_there_is_no_topic_and_no_alarm_but_the_wake_ups():
    mapping = {**MAPPING, "notifications": None}
    quiet = Built(mapping)
    assert quiet.stack.observability.topic is None
    assert quiet.stack.observability.model_alarms == {}
    assert quiet.stack.observability.endpoint_alarms == {}
    assert quiet.stack.observability.async_alarms == {}
    quiet.template.resource_count_is("AWS::SNS::Subscription", 0)
    assert "NotificationTopicArn" not in quiet.json.get("Outputs", {})
    alarms = [r for r in quiet.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    # What is left scales models and queues from zero: sleepy, queue and backfill.
    assert len(alarms) == 3
    assert all(re.search("zero|instances: start", str(a["Properties"])) for a in alarms)


def test_an_alarms_arn_is_written_from_its_name(built):
    alarm = built.stack.observability.model_alarms["chat"]
    assert built.stack.resolve(alarm.alarm_arn) == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":cloudwatch:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                ":alarm:Watched-chat-62e167c0-health",
            ],
        ]
    }
    assert alarm_arn_of("${Token[TOKEN.1]}-health") is None  # a name known at deploy only
