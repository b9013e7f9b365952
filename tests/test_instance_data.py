"""Instance figures an app adds or overrides, and the warning for accelerated training
types without figures."""

from __future__ import annotations

import dataclasses

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

import fm_platform
from fm_platform.specs import instances
from fm_platform.specs.instances import InstanceSpec, instance_spec, known_instance_types

P6 = InstanceSpec(
    instance_type="ml.p6-b200.48xlarge",
    vcpus=192,
    memory_mib=2097152,
    accelerator="nvidia-gpu",
    accelerator_count=8,
    accelerator_memory_mib_total=8 * 183359,
    local_nvme=True,
    efa_interfaces=8,
)


@pytest.fixture
def registered():
    """Undo every registration after the test."""
    yield
    instances._REGISTERED.clear()
    instance_spec.cache_clear()


def test_an_app_adds_a_type_the_package_data_does_not_know(registered):
    with pytest.raises(instances.UnknownInstanceTypeError, match="register_instance_type"):
        instance_spec(P6.instance_type)
    fm_platform.register_instance_type(P6)
    assert instance_spec(P6.instance_type) == P6
    assert P6.instance_type in known_instance_types()


def test_an_app_overrides_the_package_figures(registered):
    smaller = dataclasses.replace(instance_spec("ml.g5.12xlarge"), memory_mib=1024)
    fm_platform.register_instance_type(smaller)
    assert instance_spec("ml.g5.12xlarge").memory_mib == 1024


def hyperpod_warnings(instance_type: str) -> list:
    from fm_platform.stacks.training import TrainingConfig, TrainingStack

    groups = TrainingConfig().instance_groups
    workers = dataclasses.replace(groups[1], instance_type=instance_type)
    stack = TrainingStack(
        cdk.App(), "Training", config=TrainingConfig(instance_groups=(groups[0], workers))
    )
    return Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("fm_platform:unknownInstanceType")
    )


def test_an_accelerated_training_type_without_figures_gets_a_warning():
    (warning,) = hyperpod_warnings("ml.p6-b300.48xlarge")
    text = warning.entry.data
    assert "instance_groups[1].instance_type='ml.p6-b300.48xlarge' has no figures" in text
    assert "deep health checks were left off and EFA subnet sizing was skipped" in text


def test_a_known_training_type_gets_no_warning(registered):
    fm_platform.register_instance_type(dataclasses.replace(P6, instance_type="ml.p6-b300.48xlarge"))
    assert hyperpod_warnings("ml.p6-b300.48xlarge") == []
