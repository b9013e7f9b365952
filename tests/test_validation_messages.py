"""Validation messages that say what is wrong in words: name patterns, lengths, subnet
sizes, and capacity checks that still run when another item was mistyped."""

from __future__ import annotations

import pytest

from fm_platform.config.training import TrainingConfig
from fm_platform.rules.name_patterns import allowed_characters, explain_mismatch
from fm_platform.rules.network import smallest_mask_holding, usable_addresses_of_mask
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import shape_rule

NAME = "[a-zA-Z0-9](-*[a-zA-Z0-9])*"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("my_workers", "underscores are not allowed"),
        ("a.b c", "dots and spaces are not allowed"),
        ("-gpu", "must start with a letter or digit"),
        ("gpu-", "must end with a letter or digit"),
        ("   ", "must not be empty or only spaces"),
    ],
)
def test_a_name_pattern_mismatch_is_said_in_words(value, words):
    assert explain_mismatch(NAME, value) == words


def test_fixed_starts_and_single_characters_are_named():
    assert explain_mismatch("/[a-zA-Z0-9._/-]+", "home") == "must start with '/'"
    assert explain_mismatch("i-[a-f0-9]{8}(?:[a-f0-9]{9})?", "i-0w1") == "'w' is not allowed"
    assert "_" not in allowed_characters(NAME) and "-" in allowed_characters(NAME)


def test_botocore_shapes_use_the_words_and_lengths_name_the_limit():
    rule = shape_rule("ClusterInstanceGroupName")
    assert rule.problem("gpu_nodes") == "underscores are not allowed"
    assert rule.problem("g" * 64) == "too long: at most 63 characters, it has 64"
    assert rule.problem("") == "too short: at least 1 characters"


def _training_problems(data) -> list[str]:
    problems = Problems("configuration")
    config = TrainingConfig.from_mapping(data, into=problems)
    config.check(problems)
    return list(problems.messages)


def _groups(count, workers=16, worker_type="ml.p5.48xlarge"):
    return [
        {
            "name": "controller",
            "role": "controller",
            "instance_type": "ml.m5.12xlarge",
            "instance_count": count,
        },
        {
            "name": "workers",
            "role": "worker",
            "instance_type": worker_type,
            "instance_count": workers,
            "partition": "dev",
        },
    ]


def test_the_subnet_suggestion_is_a_subnet_that_holds_the_groups():
    # 16 x p5.48xlarge take 32 addresses each (one per EFA interface): 512 + 1 + 16 spare.
    lines = _training_problems({"private_subnet_cidr_mask": 24, "instance_groups": _groups(1)})
    assert lines == [
        "private_subnet_cidr_mask=24: 251 usable addresses, but the instance groups need 529 "
        "(one per instance and per EFA interface, plus 16 spare); use a /22 subnet or a "
        "larger one (a mask of 22 or less)"
    ]
    assert usable_addresses_of_mask(22) >= 529 > usable_addresses_of_mask(23)
    assert smallest_mask_holding(529) == 22


def test_a_subnet_that_cannot_fit_in_the_vpc_says_so():
    # 2000 x p5.48xlarge need 64017 addresses: a /16 subnet, which no /16 VPC can hold.
    lines = _training_problems(
        {"private_subnet_cidr_mask": 17, "instance_groups": _groups(1, workers=2000)}
    )
    assert lines == [
        "private_subnet_cidr_mask=17: 32763 usable addresses, but the instance groups need "
        "64017 (one per instance and per EFA interface, plus 16 spare); a /16 subnet would "
        "hold them, but a subnet must be smaller than its VPC and a VPC is at most /16: use "
        "fewer instances per cluster"
    ]
    assert smallest_mask_holding(70000) is None


def test_a_smaller_vpc_is_told_to_grow_with_the_subnet():
    lines = _training_problems(
        {
            "vpc_cidr": "10.0.0.0/20",
            "private_subnet_cidr_mask": 24,
            "public_subnet_cidr_mask": 24,
            "instance_groups": _groups(1),
        }
    )
    assert lines == [
        "private_subnet_cidr_mask=24: 251 usable addresses, but the instance groups need 529 "
        "(one per instance and per EFA interface, plus 16 spare); use a /22 subnet or a "
        "larger one (a mask of 22 or less)"
    ]
    lines = _training_problems(
        {
            "vpc_cidr": "10.0.0.0/22",
            "private_subnet_cidr_mask": 24,
            "public_subnet_cidr_mask": 24,
            "instance_groups": _groups(1),
        }
    )
    assert lines[0].endswith(
        "use a /22 subnet (mask 22) in a larger VPC: vpc_cidr with a mask of /21 or less, "
        "since a subnet must be smaller than its VPC"
    )


def test_a_mistyped_count_elsewhere_no_longer_hides_the_subnet_check():
    lines = _training_problems({"private_subnet_cidr_mask": 24, "instance_groups": _groups("1")})
    assert lines == [
        "instance_groups[0].instance_count='1': must be an integer",
        "private_subnet_cidr_mask=24: 251 usable addresses, but the instance groups need at "
        "least 528 (one per instance and per EFA interface, plus 16 spare; counting only the "
        "groups whose instance type and count are known, not controller); use a /22 subnet "
        "or a larger one (a mask of 22 or less)",
    ]
