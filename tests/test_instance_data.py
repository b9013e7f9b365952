"""Instance figures an app adds or overrides, and the warning for accelerated training
types without figures."""

from __future__ import annotations

import dataclasses
import json
import sys

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

import fm_platform
from fm_platform.hardware import instances
from fm_platform.hardware.instances import InstanceSpec, instance_spec, known_instance_types
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

# A type the package data has no figures for; the figures are the test's own.
UNKNOWN = "ml.p6e-gb200.36xlarge"
REGISTERED = InstanceSpec(
    instance_type=UNKNOWN,
    vcpus=144,
    memory_mib=1048576,
    accelerator="nvidia-gpu",
    accelerator_count=4,
    accelerator_memory_mib_total=4 * 180000,
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
        instance_spec(UNKNOWN)
    fm_platform.register_instance_type(REGISTERED)
    assert instance_spec(UNKNOWN) == REGISTERED
    assert UNKNOWN in known_instance_types()


def test_an_app_overrides_the_package_figures(registered):
    smaller = dataclasses.replace(instance_spec("ml.g5.12xlarge"), memory_mib=1024)
    fm_platform.register_instance_type(smaller)
    assert instance_spec("ml.g5.12xlarge").memory_mib == 1024


def hyperpod_warnings(instance_type: str) -> list:
    from fm_platform.config import TrainingConfig
    from fm_platform.stacks.training import TrainingStack

    groups = TrainingConfig().instance_groups
    workers = dataclasses.replace(groups[1], instance_type=instance_type)
    stack = TrainingStack(
        cdk.App(), "Training", config=TrainingConfig(instance_groups=(groups[0], workers))
    )
    return Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("fm_platform:unknownInstanceType")
    )


def test_an_accelerated_training_type_without_figures_gets_a_warning():
    (warning,) = hyperpod_warnings(UNKNOWN)
    text = warning.entry.data
    assert f"instance_groups[1].instance_type='{UNKNOWN}' has no figures" in text
    assert "deep health checks were left off and EFA subnet sizing was skipped" in text


def test_a_known_training_type_gets_no_warning(registered):
    fm_platform.register_instance_type(REGISTERED)
    assert hyperpod_warnings(UNKNOWN) == []


@pytest.mark.parametrize(
    ("instance_type", "accelerators", "efa"),
    [
        ("ml.p6-b200.48xlarge", 8, 8),
        ("ml.p6-b300.48xlarge", 8, 16),
        ("ml.g7e.48xlarge", 8, 4),
        ("ml.p5en.48xlarge", 8, 16),
        ("ml.g6e.12xlarge", 4, 1),
        ("ml.trn2.48xlarge", 16, 16),
        ("ml.inf2.48xlarge", 12, 0),
    ],
)
def test_the_data_covers_current_accelerated_families(instance_type, accelerators, efa):
    spec = instance_spec(instance_type)
    assert (spec.accelerator_count, spec.efa_interfaces) == (accelerators, efa)


def test_the_regeneration_tool_writes_the_data_file_as_it_is_committed():
    from importlib import resources

    from regenerate_instance_specs import format_data

    text = resources.files("fm_platform.hardware").joinpath("instance_specs.json").read_text()
    assert format_data(json.loads(text)) == text


def test_an_app_registers_the_types_of_a_regenerated_file(registered, tmp_path):
    from regenerate_instance_specs import format_data

    record = {
        "vcpus": 144,
        "memory_mib": 1048576,
        "accelerator": "nvidia-gpu",
        "accelerator_count": 4,
        "accelerator_memory_mib_total": 720000,
        "instance_storage_present": True,
        "efa_interfaces": 8,
    }
    path = tmp_path / "my_specs.json"
    path.write_text(format_data({"instance_types": {UNKNOWN: record}}))
    assert fm_platform.register_instance_types_from_file(path) == (UNKNOWN,)
    assert instance_spec(UNKNOWN).accelerator_count == 4
