"""Models run without network access by default on every kind of endpoint (SageMaker reads
their artifacts from S3 and images from ECR outside the container); one flag per endpoint
opts out."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from fm_platform.constructs.inference.async_endpoint import AsyncEndpoint, AsyncEndpointProps
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpoint,
    SingleModelEndpointProps,
)
from fm_platform.stacks.inference import InferenceStack
from tests.components import IMAGE, chat_endpoint, chat_model
from tests.support import fixture_config

MME_IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
    "pytorch-inference:2.6.0-cpu-py312-ubuntu22.04-sagemaker"
)


def _ic_endpoint(**endpoint) -> Template:
    stack = cdk.Stack(cdk.App(), "Serving")
    chat_model(
        stack,
        chat_endpoint(stack, **endpoint),
        container=ModelContainer(image=IMAGE, model_data_url="s3://models/chat/"),
    )
    return Template.from_stack(stack)


def _single_model(**props) -> Template:
    stack = cdk.Stack(cdk.App(), "Serving")
    SingleModelEndpoint(
        stack,
        "Endpoint",
        SingleModelEndpointProps(
            model_name="summarizer",
            container=ModelContainer(image=IMAGE, model_data_url="s3://models/summarizer/"),
            instance_type="ml.g5.2xlarge",
            **props,
        ),
    )
    return Template.from_stack(stack)


def _multi_model(**props) -> Template:
    stack = cdk.Stack(cdk.App(), "Serving")
    MultiModelEndpoint(
        stack,
        "Endpoint",
        MultiModelEndpointProps(
            models_s3_prefix="s3://models/small/",
            image=MME_IMAGE,
            instance_type="ml.m5.xlarge",
            **props,
        ),
    )
    return Template.from_stack(stack)


def _asynchronous(**props) -> Template:
    stack = cdk.Stack(cdk.App(), "Serving")
    AsyncEndpoint(
        stack,
        "Endpoint",
        AsyncEndpointProps(
            model_name="transcriber",
            container=ModelContainer(image=IMAGE, model_data_url="s3://models/transcriber/"),
            instance_type="ml.g5.2xlarge",
            **props,
        ),
    )
    return Template.from_stack(stack)


def _isolation(template: Template) -> tuple[list, list]:
    models = template.find_resources("AWS::SageMaker::Model").values()
    configs = template.find_resources("AWS::SageMaker::EndpointConfig").values()
    return (
        [m["Properties"].get("EnableNetworkIsolation") for m in models],
        [c["Properties"].get("EnableNetworkIsolation") for c in configs],
    )


def test_inference_component_models_are_isolated_by_default():
    assert _isolation(_ic_endpoint()) == ([True], [True])


def test_an_inference_components_endpoint_opts_out_with_one_flag():
    assert _isolation(_ic_endpoint(network_isolation=False)) == ([None], [None])


@pytest.mark.parametrize("build", [_single_model, _multi_model, _asynchronous])
def test_single_and_multi_model_endpoints_are_isolated_by_default(build):
    models, _ = _isolation(build())
    assert models == [True]


@pytest.mark.parametrize("build", [_single_model, _multi_model, _asynchronous])
def test_single_and_multi_model_endpoints_opt_out_with_one_flag(build):
    models, _ = _isolation(build(network_isolation=False))
    assert models == [None]


def test_every_model_of_the_default_stack_is_isolated():
    demo = fixture_config().inference
    template = Template.from_stack(InferenceStack(cdk.App(), "FmpInference", config=demo))
    models = template.find_resources("AWS::SageMaker::Model")
    assert len(models) == 6  # 3 components, single-model, multi-model, asynchronous
    template.all_resources_properties(
        "AWS::SageMaker::Model", Match.object_like({"EnableNetworkIsolation": True})
    )


def test_a_model_asking_for_the_network_on_an_isolated_endpoint_is_refused():
    # botocore CreateEndpointConfigInput.EnableNetworkIsolation: "all model containers
    # deployed to the endpoint are isolated", whatever the model's own flag says
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = chat_endpoint(stack)
    with pytest.raises(ValueError) as error:
        chat_model(
            stack,
            endpoint,
            construct_id="Hub",
            model_name="hub",
            container=ModelContainer(image=IMAGE, environment={"HF_MODEL_ID": "org/m"}),
            network_isolation=False,
        )
    assert str(error.value).splitlines()[1:] == [
        "  - network_isolation=False: the endpoint runs network-isolated, which applies to "
        "every container on it (botocore CreateEndpointConfigInput.EnableNetworkIsolation): "
        "place the model on an endpoint with network_isolation=False, or give it its weights "
        "in S3 and leave network_isolation unset"
    ]
