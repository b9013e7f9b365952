"""Option values against the limits of botocore's service models (fm_platform/cli/limits.py)."""

from __future__ import annotations

import pytest

from fm_platform.cli.errors import CliError
from fm_platform.cli.limits import check_options, member_shape, shape_problem


def test_member_shape_steps_through_lists() -> None:
    shape = member_shape(
        "sagemaker",
        "UpdateEndpointWeightsAndCapacities",
        "DesiredWeightsAndCapacities.DesiredInstanceCount",
    )
    assert (shape.name, shape.metadata.get("min")) == ("TaskCount", 0)


@pytest.mark.parametrize(
    ("member", "value", "problem"),
    [
        ("RequestTTLSeconds", 59, "below the minimum 60"),
        ("RequestTTLSeconds", 60, None),
        ("RequestTTLSeconds", 21600, None),
        ("RequestTTLSeconds", 21601, "above the maximum 21600"),
        ("InferenceId", "", "shorter than 1 characters"),
        ("InferenceId", "x" * 64, None),
        ("InputLocation", "s3://bucket/key", None),
        ("InputLocation", "bucket/key", "does not match ^(https|s3)://([^/]+)/?(.*)$"),
        # \p{ASCII} is Java's: Python cannot compile the pattern, the service checks it.
        ("ContentType", "text/plain; charset=é", None),
        ("ContentType", "x" * 1025, "longer than 1024 characters"),
    ],
)
def test_shape_problem(member: str, value: object, problem: str | None) -> None:
    shape = member_shape("sagemaker-runtime", "InvokeEndpointAsync", member)
    assert shape_problem(shape, value) == problem


def test_check_options_names_every_bad_option_and_skips_options_not_given() -> None:
    options = [
        ("--request-ttl", "RequestTTLSeconds", 1),
        ("--accept", "Accept", None),
        ("--inference-id", "InferenceId", ""),
    ]
    with pytest.raises(CliError) as error:
        check_options("sagemaker-runtime", "InvokeEndpointAsync", options)
    assert str(error.value) == (
        "--request-ttl 1: below the minimum 60 (InvokeEndpointAsync RequestTTLSeconds); "
        "--inference-id : shorter than 1 characters (InvokeEndpointAsync InferenceId)"
    )
