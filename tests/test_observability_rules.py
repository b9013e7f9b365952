"""The rules of notifications and alarms, as a configuration reports them: every problem
named by its configuration key, all at once."""

from __future__ import annotations

from typing import Any

import pytest

from fm_platform.config import load_config
from fm_platform.rules.observability import MAX_ALARM_MINUTES, check_topic_arn
from fm_platform.rules.problems import Problems, ValidationError

BAD: dict[str, Any] = {
    "notifications": {
        "emails": ["oncall@example.com", "not-an-email", "oncall@example.com"],
        "topic_arn": "arn:aws:sns:us-east-1:123:alerts.fifo",
    },
    "training": {"fsx_free_capacity_percent": 150},
    "inference": {
        "ic_endpoints": [
            {
                "name": "e",
                "instance_type": "ml.g5.12xlarge",
                "alarms": {"error_rate_percent": None, "instances_at_max": False},
                "models": [
                    {
                        "model_name": "m",
                        "accelerators": 1,
                        "min_memory_mib": 1024,
                        "alarms": {
                            "error_rate_percent": 0,
                            "minutes": 0,
                            "latency_objective_ms": 0,
                        },
                    },
                    {
                        "model_name": "n",
                        "accelerators": 1,
                        "min_memory_mib": 1024,
                        "alarms": {
                            "error_rate_percent": None,
                            "no_capacity": False,
                            "copies_at_max": False,
                        },
                    },
                ],
            }
        ],
        "single_model_endpoints": [
            {
                "name": "s",
                "instance_type": "ml.m5.large",
                "alarms": {"error_rate_percent": 101, "minutes": MAX_ALARM_MINUTES + 1},
            }
        ],
        "multi_model_endpoints": [],
        "async_endpoints": [
            {
                "name": "a",
                "instance_type": "ml.g5.2xlarge",
                "alarms": {"oldest_request_minutes": 0},
            },
            {
                "name": "b",
                "instance_type": "ml.g5.2xlarge",
                "alarms": {"error_rate_percent": None, "oldest_request_minutes": None},
            },
        ],
    },
}


def problem_lines(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as error:
        load_config(data)
    return list(error.value.problems)


def test_every_mistake_of_notifications_and_alarms_is_named_by_its_key():
    assert problem_lines(BAD) == [
        "notifications.emails[1]='not-an-email': must be an email address (name@domain)",
        "notifications.emails='oncall@example.com': must be unique; it appears more than once",
        "notifications.topic_arn='arn:aws:sns:us-east-1:123:alerts.fifo': must be a standard "
        "SNS topic ARN, arn:aws:sns:<region>:<12-digit account>:<name> (name: letters, "
        "digits, _ and -, 1-256 characters)",
        "training.fsx_free_capacity_percent=150: must be a percentage above 0 and at most 100",
        "inference.ic_endpoints[0].alarms.error_rate_percent, latency_objective_ms, "
        "instances_at_max=None (endpoint 'e'): nothing to watch: set at least one (or "
        "enabled: false)",
        "inference.ic_endpoints[0].models[0].alarms.error_rate_percent=0 (model 'm' on "
        "endpoint 'e'): must be a percentage above 0 and at most 100",
        "inference.ic_endpoints[0].models[0].alarms.latency_objective_ms=0 (model 'm' on "
        "endpoint 'e'): must be at least 1",
        "inference.ic_endpoints[0].models[0].alarms.minutes=0 (model 'm' on endpoint 'e'): "
        "must be between 1 and 1440",
        "inference.ic_endpoints[0].models[1].alarms.error_rate_percent, no_capacity, "
        "copies_at_max, latency_objective_ms=None (model 'n' on endpoint 'e'): nothing to "
        "watch: set at least one (or enabled: false)",
        "inference.single_model_endpoints[0].alarms.error_rate_percent=101 (endpoint 's'): "
        "must be a percentage above 0 and at most 100",
        "inference.single_model_endpoints[0].alarms.minutes=1441 (endpoint 's'): must be "
        "between 1 and 1440",
        "inference.async_endpoints[0].alarms.oldest_request_minutes=0 (endpoint 'a'): must be "
        "between 1 and 1440",
        "inference.async_endpoints[1].alarms.error_rate_percent, oldest_request_minutes=None "
        "(endpoint 'b'): nothing to watch: set at least one (or enabled: false)",
    ]


def test_a_disabled_alarm_may_watch_nothing():
    data = {
        "deploy_training": False,
        "inference": {
            "single_model_endpoints": [
                {
                    "name": "s",
                    "instance_type": "ml.m5.large",
                    "alarms": {"enabled": False, "error_rate_percent": None},
                }
            ],
        },
    }
    [single] = load_config(data).inference.single_model_endpoints
    assert single.alarms.enabled is False


def test_notifications_may_be_turned_off_or_reuse_a_topic():
    assert load_config({"notifications": None}).notifications is None
    arn = "arn:aws-us-gov:sns:us-gov-west-1:123456789012:platform-alerts_1"
    config = load_config({"notifications": {"topic_arn": arn, "emails": ["a@b.co"]}})
    assert config.notifications is not None
    assert config.notifications.topic_arn == arn
    assert config.notifications.emails == ("a@b.co",)


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:sns:us-east-1:123456789012:",  # no name
        "arn:aws:sqs:us-east-1:123456789012:queue",  # not SNS
        "arn:aws:sns:us-east-1:123456789012:" + "x" * 257,  # name too long
        "arn:aws:sns:us-east-1:123456789012:has.dot",
    ],
)
def test_a_topic_arn_that_is_not_a_standard_topic_is_refused(arn):
    problems = Problems("test")
    check_topic_arn(problems, "topic_arn", arn)
    assert len(problems.messages) == 1
    assert problems.messages[0].startswith("topic_arn=")


def test_a_model_alarm_left_with_copies_it_cannot_scale_is_refused_by_key():
    model = {
        "model_name": "fixed",
        "accelerators": 1,
        "min_memory_mib": 1024,
        "alarms": {"error_rate_percent": None, "no_capacity": False},
    }
    data = {
        "deploy_training": False,
        "inference": {
            "ic_endpoints": [{"name": "e", "instance_type": "ml.g5.12xlarge", "models": [model]}]
        },
    }
    assert problem_lines(data) == [
        "inference.ic_endpoints[0].models[0].alarms.copies_at_max=True (model 'fixed' on "
        "endpoint 'e'): nothing to watch: the model's copies do not scale (no scaling, or "
        "max_copies = min_copies); set another condition (or enabled: false)"
    ]
    model["scaling"] = {"min_copies": 1, "max_copies": 3}
    [endpoint] = load_config(data).inference.ic_endpoints
    assert endpoint.models[0].alarms.copies_at_max is True
