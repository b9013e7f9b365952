"""What a hosted model starts with: startup timeouts sized from its weights (for inference
components without a weights size, from the copy's memory), the storage volume of large
models on types without a local disk, and the copy count CloudFormation sends at creation
and with every update."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import (
    default_download_timeout_s,
    default_health_check_timeout_s,
)
from tests.components import IMAGE, chat_endpoint, chat_model


def _component(instance_type: str = "ml.g5.12xlarge", **model) -> dict:
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = chat_endpoint(stack, instance_type=instance_type, max_instance_count=4)
    props = {
        "container": ModelContainer(image=IMAGE, model_data_url="s3://models/chat/"),
        "min_memory_mib": 32768,
        **model,
    }
    chat_model(stack, endpoint, **props)
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
    ("weights_gib", "download", "health_check"),
    [
        (0.125, 62, 302),  # the smallest model stays above the 60 s minimum
        (256, 3600, 2860),  # 256 GiB: the download is capped at 3600 s
        (1024, 3600, 3600),  # 1 TiB: both capped
    ],
)
def test_defaults_stay_within_the_api_limits(weights_gib, download, health_check):
    assert default_download_timeout_s(weights_gib) == download
    assert default_health_check_timeout_s(weights_gib) == health_check


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


def test_the_weights_size_sets_the_timeouts_rather_than_the_copys_memory():
    # A 7B model in bf16 (13 GiB) on a copy reserving 32 GiB: 60 + 15 x 13 = 255 s to
    # download, 300 + 10 x 13 = 430 s to start (the memory would give 540 s and 620 s).
    container = ModelContainer(image=IMAGE, model_data_url="s3://m/chat/", model_size_gib=13)
    assert _startup(_component(container=container, min_memory_mib=32768)) == (255, 430)


def _variant(kind: str, instance_type: str, **options) -> dict:
    from fm_platform.constructs.inference.multi_model_endpoint import (
        MultiModelEndpoint,
        MultiModelEndpointProps,
    )
    from fm_platform.constructs.inference.single_model_endpoint import (
        SingleModelEndpoint,
        SingleModelEndpointProps,
    )

    stack = cdk.Stack(cdk.App(), "Serving")
    if kind == "single":
        size = options.pop("model_size_gib", None)
        url = options.pop("model_data_url", "s3://m/summarizer/")
        SingleModelEndpoint(
            stack,
            "E",
            SingleModelEndpointProps(
                model_name="summarizer",
                instance_type=instance_type,
                container=ModelContainer(image=IMAGE, model_data_url=url, model_size_gib=size),
                **options,
            ),
        )
    else:
        MultiModelEndpoint(
            stack,
            "E",
            MultiModelEndpointProps(
                models_s3_prefix="s3://m/fleet/", instance_type=instance_type, **options
            ),
        )
    [config] = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    return config["Properties"]["ProductionVariants"][0]


def test_a_single_model_endpoint_gets_timeouts_from_its_weights():
    variant = _variant("single", "ml.g5.2xlarge", model_size_gib=15)
    assert (
        variant["ModelDataDownloadTimeoutInSeconds"],
        variant["ContainerStartupHealthCheckTimeoutInSeconds"],
    ) == (285, 450)
    assert "VolumeSizeInGB" not in variant  # local NVMe: no volume to size


def test_without_a_weights_size_the_instances_accelerator_memory_bounds_them():
    # ml.g5.2xlarge: one A10G with 22888 MiB (22.35 GiB): 60 + 15 x 22.35 = 396 s.
    variant = _variant("single", "ml.g5.2xlarge")
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 396
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 524


def test_a_large_model_on_a_type_without_local_disk_gets_a_larger_volume():
    # 40 GiB of uncompressed weights = 42.9 GB, over SageMaker's 30 GB default: 53 GB.
    variant = _variant("single", "ml.m5.4xlarge", model_size_gib=40)
    assert variant["VolumeSizeInGB"] == 53
    # A model.tar.gz is extracted beside its archive: twice the weights.
    archive = _variant(
        "single", "ml.m5.4xlarge", model_size_gib=40, model_data_url="s3://m/model.tar.gz"
    )
    assert archive["VolumeSizeInGB"] == 96
    assert "VolumeSizeInGB" not in _variant("single", "ml.m5.4xlarge", model_size_gib=5)


def test_explicit_values_win_and_are_checked():
    variant = _variant(
        "single",
        "ml.g5.2xlarge",
        model_size_gib=15,
        model_data_download_timeout_s=900,
        container_startup_health_check_timeout_s=1200,
        volume_size_gb=100,
    )
    assert (
        variant["ModelDataDownloadTimeoutInSeconds"],
        variant["ContainerStartupHealthCheckTimeoutInSeconds"],
        variant["VolumeSizeInGB"],
    ) == (900, 1200, 100)
    with pytest.raises(ValueError) as error:
        _variant("single", "ml.g5.2xlarge", volume_size_gb=600, model_size_gib=-1)
    assert "volume_size_gb=600: above the maximum 512" in str(error.value)
    assert "variant.container.model_size_gib=-1: must be greater than 0" in str(error.value)


def test_a_multi_model_endpoint_sizes_for_its_largest_model():
    variant = _variant("multi", "ml.m5.xlarge", model_size_gib=2)
    assert (
        variant["ModelDataDownloadTimeoutInSeconds"],
        variant["ContainerStartupHealthCheckTimeoutInSeconds"],
    ) == (90, 320)
