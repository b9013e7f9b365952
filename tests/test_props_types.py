"""Props given values of the wrong Python type fail with the field, the expected type and
the value, every one at once, instead of a TypeError or AttributeError from deep inside."""

from __future__ import annotations

import aws_cdk as cdk
import pytest

import fm_platform
from fm_platform import (
    ComponentScaling,
    HomeFileSystemProps,
    InstanceGroup,
    NodeRole,
)
from fm_platform.constructs.training.hyperpod import HyperPodClusterOptions
from fm_platform.core.options import Props
from fm_platform.rules.problems import Problems
from tests.components import chat_endpoint, chat_model


def test_a_model_with_mistyped_fields_names_each_one():
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = chat_endpoint(stack)
    with pytest.raises(ValueError) as error:
        chat_model(
            stack,
            endpoint,
            model_name="chat",
            accelerators="2",  # a string, not an int
            scaling={"max_copies": 2},  # a dict, not a ComponentScaling
        )
    lines = str(error.value).splitlines()
    assert lines[0] == "invalid InferenceComponentModelProps 'chat':"
    assert "  - accelerators='2': must be an integer" in lines
    assert "  - scaling={'max_copies': 2}: must be a ComponentScaling or null" in lines


def test_a_nested_option_of_the_wrong_type_is_named_by_its_path():
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = chat_endpoint(stack)
    with pytest.raises(ValueError, match=r"scaling.max_copies='4': must be an integer"):
        chat_model(
            stack,
            endpoint,
            scaling=ComponentScaling(max_copies="4"),  # type: ignore[arg-type]
        )


def test_an_instance_group_role_given_as_a_string_is_named_with_its_choices():
    groups = [
        InstanceGroup(
            name="controller",
            role=NodeRole.CONTROLLER,
            instance_type="ml.m5.xlarge",
            instance_count=1,
        ),
        InstanceGroup(
            name="gpu",
            role="worker",
            instance_type="ml.p5.48xlarge",
            instance_count=2,  # type: ignore[arg-type]
        ),
    ]
    problems = Problems("HyperPodClusterProps")
    from fm_platform.core.options import checked

    checked(problems, HyperPodClusterOptions(instance_groups=groups)).check(problems)
    assert problems.messages == (
        "instance_groups[1].role='worker': must be a NodeRole (NodeRole.CONTROLLER, "
        "NodeRole.LOGIN, NodeRole.WORKER)",
    )


# Every construct's props validate through the one base: what differs is what they check.
_PROPS_CLASSES = [
    "AsyncEndpointProps",
    "ClusterNetworkProps",
    "HomeFileSystemProps",
    "HyperPodClusterProps",
    "InferenceComponentEndpointProps",
    "LifecycleScriptsProps",
    "MultiModelEndpointProps",
    "SharedFileSystemProps",
    "SingleModelEndpointProps",
    "SlurmAccountingDatabaseProps",
]


@pytest.mark.parametrize("name", _PROPS_CLASSES)
def test_construct_props_validate_through_the_props_base(name):
    cls = getattr(fm_platform, name)
    assert issubclass(cls, Props)
    assert cls.validate is Props.validate


def test_the_props_base_names_the_subject_and_records_into_a_caller_s_problems():
    props = HomeFileSystemProps(storage_capacity_gib=0, subnet=None, security_group=None)
    with pytest.raises(
        ValueError, match=r"(?s)invalid HomeFileSystemProps:.*storage_capacity_gib=0"
    ):
        props.validate()
    problems = Problems("AppConfig")
    props.validate(problems)
    assert any(message.startswith("storage_capacity_gib=0") for message in problems.messages)
