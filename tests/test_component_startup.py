"""What an inference component starts with: startup timeouts sized from the model's memory
per copy, and the copy count CloudFormation sends at creation and with every update."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import (
    default_download_timeout_s,
    default_health_check_timeout_s,
)

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def _component(instance_type: str = "ml.g5.12xlarge", **model) -> dict:
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = InferenceComponentEndpoint(
        stack,
        "Endpoint",
        InferenceComponentEndpointProps(instance_type=instance_type, max_instance_count=4),
    )
    props = {
        "model_name": "chat",
        "endpoint": endpoint,
        "container": ModelContainer(image=IMAGE, model_data_url="s3://models/chat/"),
        "accelerators": 1,
        "min_memory_mib": 32768,
        **model,
    }
    InferenceComponentModel(stack, "Chat", InferenceComponentModelProps(**props))
    template = Template.from_stack(stack)
    [component] = template.find_resources("AWS::SageMaker::InferenceComponent").values()
    return component["Properties"]


def _startup(properties: dict) -> tuple[int, int]:
    startup = properties["Specification"]["StartupParameters"]
    return (
        startup["ModelDataDownloadTimeoutInSeconds"],
        startup["ContainerStartupHealthCheckTimeoutInSeconds"],
    )


def test_a_7b_model_gets_timeouts_for_its_memory():
    # 32 GiB per copy: 60 + 15 x 32 = 540 s to download, 300 + 10 x 32 = 620 s to start.
    assert _startup(_component(min_memory_mib=32768)) == (540, 620)


def test_a_70b_model_gets_longer_timeouts():
    # 160 GiB per copy on 8 x A100: 60 + 15 x 160 = 2460 s, 300 + 10 x 160 = 1900 s.
    properties = _component(instance_type="ml.p4d.24xlarge", accelerators=8, min_memory_mib=163840)
    assert _startup(properties) == (2460, 1900)


@pytest.mark.parametrize(
    ("memory_mib", "download", "health_check"),
    [
        (128, 62, 302),  # the smallest copy stays above the 60 s minimum
        (262144, 3600, 2860),  # 256 GiB: the download is capped at 3600 s
        (1_048_576, 3600, 3600),  # 1 TiB: both capped
    ],
)
def test_defaults_stay_within_the_api_limits(memory_mib, download, health_check):
    assert default_download_timeout_s(memory_mib) == download
    assert default_health_check_timeout_s(memory_mib) == health_check


def test_explicit_timeouts_win():
    properties = _component(
        min_memory_mib=163840,
        model_data_download_timeout_s=900,
        container_startup_health_check_timeout_s=120,
    )
    assert _startup(properties) == (900, 120)


def test_one_explicit_timeout_keeps_the_other_default():
    properties = _component(container_startup_health_check_timeout_s=120)
    assert _startup(properties) == (540, 120)


def test_copy_count_defaults_to_the_scaling_minimum():
    properties = _component(scaling=ComponentScaling(min_copies=2, max_copies=4))
    assert properties["RuntimeConfig"] == {"CopyCount": 2}


def test_a_model_that_scales_to_zero_starts_with_one_copy():
    properties = _component(scaling=ComponentScaling(min_copies=0, max_copies=4))
    assert properties["RuntimeConfig"] == {"CopyCount": 1}


def test_explicit_initial_copies_win():
    properties = _component(initial_copies=3, scaling=ComponentScaling(min_copies=2, max_copies=4))
    assert properties["RuntimeConfig"] == {"CopyCount": 3}


def test_without_scaling_the_copy_count_is_fixed():
    assert _component()["RuntimeConfig"] == {"CopyCount": 1}
    assert _component(initial_copies=2)["RuntimeConfig"] == {"CopyCount": 2}
