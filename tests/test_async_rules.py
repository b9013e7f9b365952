"""The rules of asynchronous endpoints on plain values, without building a stack: what each
reports (field, value, what is allowed), its limits read from botocore, and that it skips
what is unset (None)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fm_platform.rules import asynchronous
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule


def messages(rule: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    problems = Problems("rule")
    rule(problems, *args, **kwargs)
    return list(problems.messages)


def test_instance_types_asynchronous_inference_runs_on():
    for supported in ("ml.g5.2xlarge", "ml.m5.xlarge", "ml.inf2.xlarge", "ml.p4d.24xlarge"):
        assert messages(asynchronous.check_async_instance_type, "t", supported) == []
    # inf1 is reported once, not also for the figures the package lacks for it.
    assert messages(asynchronous.check_async_instance_type, "t", "ml.inf1.xlarge") == [
        "t='ml.inf1.xlarge': asynchronous inference does not run on inf1 instances (SageMaker's "
        "supported features of each inference option); use inf2 or a GPU type, e.g. "
        "ml.g5.2xlarge"
    ]
    [unknown] = messages(asynchronous.check_async_instance_type, "t", "ml.g5.3xlarge")
    assert unknown.startswith("t='ml.g5.3xlarge': not an instance type SageMaker hosting offers")
    assert messages(asynchronous.check_async_instance_type, "t", None) == []


def test_an_endpoint_is_created_with_instances():
    low = shape_rule(member_shape_name("ProductionVariant", "InitialInstanceCount")).min
    assert low == 1
    assert messages(asynchronous.check_initial_instance_count, "n", 1) == []
    assert messages(asynchronous.check_initial_instance_count, "n", 0) == [
        "n=0: must be at least 1: SageMaker creates an endpoint with instances; scale to zero "
        "with scaling.min_instances=0"
    ]
    assert messages(asynchronous.check_initial_instance_count, "n", None) == []


def test_concurrency_within_botocores_limits():
    rule = shape_rule(
        member_shape_name("AsyncInferenceClientConfig", "MaxConcurrentInvocationsPerInstance")
    )
    assert (rule.min, rule.max) == (1, 1000)
    assert messages(asynchronous.check_max_concurrency, "c", 1000) == []
    assert messages(asynchronous.check_max_concurrency, "c", 1001) == [
        "c=1001: above the maximum 1000; allowed: 1-1000"
    ]
    assert messages(asynchronous.check_max_concurrency, "c", 0) == [
        "c=0: below the minimum 1; allowed: 1-1000"
    ]
    assert messages(asynchronous.check_max_concurrency, "c", None) == []


def test_s3_prefix_shape_and_room_in_the_output_path():
    limit = shape_rule(member_shape_name("AsyncInferenceOutputConfig", "S3OutputPath")).max
    assert limit == 512
    room = limit - asynchronous.longest_output_path("")
    assert asynchronous.longest_output_path("p") == len(f"s3://{'b' * 63}/p/failures")
    assert messages(asynchronous.check_s3_prefix, "p", "async/batch") == []
    assert messages(asynchronous.check_s3_prefix, "p", "x" * room) == []
    [too_long] = messages(asynchronous.check_s3_prefix, "p", "x" * (room + 1))
    assert too_long.endswith(
        f": at most {room} characters: s3://<bucket, up to 63>/<prefix>/outputs must fit "
        "S3OutputPath's 512"
    )
    for bad in ("", "/async", "async/"):
        assert messages(asynchronous.check_s3_prefix, "p", bad) == [
            f"p={bad!r}: must be non-empty, without leading or trailing /"
        ]
    assert messages(asynchronous.check_s3_prefix, "p", None) == []


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, []),
        ({"min_instances": -1}, ["s.min_instances=-1: must be at least 0"]),
        ({"max_instances": 0}, ["s.max_instances=0: must be at least 1"]),
        (
            {"min_instances": 3, "max_instances": 2},
            ["s.min_instances=3: must not exceed max_instances (2)"],
        ),
        (
            {"target_backlog_per_instance": 0},
            ["s.target_backlog_per_instance=0: must be greater than 0"],
        ),
        ({"wake_cooldown_seconds": -1}, ["s.wake_cooldown_seconds=-1: must be at least 0"]),
        (
            {"scale_in_cooldown_seconds": -5, "scale_out_cooldown_seconds": -6},
            [
                "s.scale_in_cooldown_seconds=-5: must be at least 0",
                "s.scale_out_cooldown_seconds=-6: must be at least 0",
            ],
        ),
    ],
)
def test_backlog_scaling(values, expected):
    settings = {
        "min_instances": 0,
        "max_instances": 2,
        "target_backlog_per_instance": 5.0,
        "scale_in_cooldown_seconds": 300,
        "scale_out_cooldown_seconds": 60,
        "wake_cooldown_seconds": 300,
        **values,
    }
    assert messages(asynchronous.check_async_scaling, "s", **settings) == expected


def test_backlog_scaling_skips_what_is_unset():
    unset = dict.fromkeys(
        (
            "min_instances",
            "max_instances",
            "target_backlog_per_instance",
            "scale_in_cooldown_seconds",
            "scale_out_cooldown_seconds",
            "wake_cooldown_seconds",
        )
    )
    assert messages(asynchronous.check_async_scaling, "s", **unset) == []


def test_instances_at_creation_within_the_scaling_maximum():
    assert messages(asynchronous.check_initial_within_scaling, "n", 2, 2) == []
    assert messages(asynchronous.check_initial_within_scaling, "n", 3, 2) == [
        "n=3: must not exceed scaling.max_instances (2)"
    ]
    assert messages(asynchronous.check_initial_within_scaling, "n", None, 2) == []


def test_prefixes_are_not_shared_between_endpoints_of_a_stack():
    assert messages(asynchronous.check_unique_prefixes, "e", ["a", "b", None, None]) == []
    assert messages(asynchronous.check_unique_prefixes, "e", ["a", "b", "a"]) == [
        "e[2].s3_prefix='a': must be unique among the stack's asynchronous endpoints: they "
        "share its bucket, so the readers of one endpoint's results would read the other's"
    ]
