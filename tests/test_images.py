"""Model images from the one image table (``containers/images.json``, the planner's too) in
the stack's region, and the warning for an image from another region."""

from __future__ import annotations

import json

import aws_cdk as cdk
import aws_cdk.assertions
import pytest
from aws_cdk.assertions import Annotations, Match

from fm_platform import (
    InferenceConfig,
    InferenceStack,
    ModelContainer,
    MultiModelEndpointConfig,
    SingleModelEndpoint,
    SingleModelEndpointProps,
)
from fm_platform.constructs.inference.container_image import ContainerImage
from fm_platform.containers.images import image
from fm_platform.core.images import image_region
from tests.components import chat_endpoint, chat_model

US_EAST_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.6.0-cpu"


LMI = image("lmi", "gpu")
assert LMI is not None
LMI_IMAGE = f"{LMI.repository}:{LMI.tag}"


def test_the_image_follows_the_stack_region_and_its_publishing_account():
    lmi = ContainerImage.from_family()
    stack = cdk.Stack(cdk.App(), "S", env=cdk.Environment(region="eu-west-1"))
    assert lmi.image_uri(stack) == f"763104351884.dkr.ecr.eu-west-1.amazonaws.com/{LMI_IMAGE}"
    # Regions served by another account get that account's copy (the table's, per region).
    cape_town = cdk.Stack(cdk.App(), "C", env=cdk.Environment(region="af-south-1"))
    assert lmi.image_uri(cape_town) == (
        f"{LMI.accounts['af-south-1']}.dkr.ecr.af-south-1.amazonaws.com/{LMI_IMAGE}"
    )
    beijing = cdk.Stack(cdk.App(), "B", env=cdk.Environment(region="cn-north-1"))
    assert lmi.image_uri(beijing).endswith(f".cn-north-1.amazonaws.com.cn/{LMI_IMAGE}")


def test_an_environment_agnostic_stack_looks_the_account_up_by_region():
    stack = cdk.Stack(cdk.App(), "A")
    uri = stack.resolve(ContainerImage.from_family("pytorch", "cpu").image_uri(stack))
    assert uri["Fn::Join"][1][0] == {
        "Fn::FindInMap": ["PytorchCpuImageAccounts", {"Ref": "AWS::Region"}, "account"]
    }
    assert uri["Fn::Join"][1][-1].endswith("/pytorch-inference:2.6.0-cpu-py312")
    mapping = cdk.assertions.Template.from_stack(stack).to_json()["Mappings"]
    pytorch = image("pytorch", "cpu")
    assert pytorch is not None
    assert mapping["PytorchCpuImageAccounts"] == {
        region: {"account": account} for region, account in pytorch.accounts.items()
    }


def test_a_family_without_the_hardware_kind_is_refused():
    with pytest.raises(ValueError) as raised:
        ContainerImage.from_family("tei", "neuron")
    assert str(raised.value) == (
        "container family 'tei' has no 'neuron' image (it has gpu, cpu); name another "
        "family or hardware kind, or give an image URI"
    )
    with pytest.raises(ValueError, match="'nope' has no 'gpu' image \\(it has none"):
        ContainerImage.from_family("nope")


def test_a_region_without_the_image_is_refused_at_synth():
    pytorch = image("pytorch", "gpu")
    assert pytorch is not None and "eu-isoe-west-1" not in pytorch.accounts
    stack = cdk.Stack(cdk.App(), "Iso", env=cdk.Environment(region="eu-isoe-west-1"))
    with pytest.raises(ValueError) as raised:
        ContainerImage.from_family("pytorch", "gpu").image_uri(stack)
    assert str(raised.value) == (
        "Iso: container pytorch has no gpu image in eu-isoe-west-1 (the image table "
        f"publishes it in {len(pytorch.accounts)} other regions); set the container's image"
    )


def test_image_region_reads_ecr_uris_only():
    assert image_region(US_EAST_IMAGE) == "us-east-1"
    assert image_region("ghcr.io/org/image:1") is None


def warnings(region: str | None, image: str) -> list:
    config = InferenceConfig(
        ic_endpoints=(),
        single_model_endpoints=(),
        multi_model_endpoints=(
            MultiModelEndpointConfig(name="small", instance_type="ml.m5.xlarge", image=image),
        ),
    )
    env = cdk.Environment(region=region) if region else None
    stack = InferenceStack(cdk.App(), "Inference", config=config, env=env)
    return Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("fm_platform:imageFromAnotherRegion")
    )


def test_an_image_from_another_region_gets_a_warning():
    (warning,) = warnings("eu-west-1", US_EAST_IMAGE)
    assert f"image {US_EAST_IMAGE} is in us-east-1, but the stack deploys to eu-west-1" in (
        warning.entry.data
    )


def test_no_warning_in_the_same_region_or_when_the_region_is_unknown():
    assert warnings("us-east-1", US_EAST_IMAGE) == []
    assert warnings(None, US_EAST_IMAGE) == []


def _models(stack: cdk.Stack) -> list[dict]:
    template = cdk.assertions.Template.from_stack(stack)
    return [m["Properties"] for m in template.find_resources("AWS::SageMaker::Model").values()]


def test_a_container_without_an_image_runs_the_regions_lmi_image():
    stack = cdk.Stack(cdk.App(), "Models", env=cdk.Environment(region="eu-west-1"))
    chat_model(
        stack,
        chat_endpoint(stack, instance_type="ml.g5.xlarge"),
        container=ModelContainer(model_data_url="s3://artifacts/chat/"),
        min_memory_mib=8192,
    )
    SingleModelEndpoint(
        stack,
        "Summarizer",
        SingleModelEndpointProps(
            model_name="summarizer",
            container=ModelContainer(),
            instance_type="ml.g5.2xlarge",
        ),
    )
    expected = f"763104351884.dkr.ecr.eu-west-1.amazonaws.com/{LMI_IMAGE}"
    assert [m["PrimaryContainer"]["Image"] for m in _models(stack)] == [expected, expected]
    # The execution roles may pull exactly that repository.
    template = json.dumps(cdk.assertions.Template.from_stack(stack).to_json())
    assert "repository/djl-inference" in template


def test_a_given_image_is_kept():
    container = ModelContainer(image=US_EAST_IMAGE)
    stack = cdk.Stack(cdk.App(), "S")
    assert container.with_image_for(stack).image_uri(stack) == US_EAST_IMAGE
