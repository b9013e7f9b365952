"""AdapterComponent: a LoRA adapter on a base model's component, as an embedder builds it."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from fm_platform import AdapterComponent, AdapterComponentProps
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.constructs.inference.model_container import ModelContainer
from tests.components import chat_endpoint, chat_model
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.36.0-lmi27.0.0-cu130"


def _base(stack: cdk.Stack, **model: Any) -> InferenceComponentModel:
    return chat_model(
        stack,
        chat_endpoint(stack),
        construct_id="Base",
        model_name="llama-8b",
        container=ModelContainer(
            image=IMAGE,
            model_data_url="s3://models/llama-8b/",
            environment={"OPTION_ENABLE_LORA": "true"},
        ),
        **model,
    )


def test_an_adapter_names_its_base_and_weights_and_reserves_no_compute():
    app = new_app()
    stack = cdk.Stack(app, "Serving")
    base = _base(stack)
    key = kms.Key(stack, "AdapterKey", enable_key_rotation=True)
    adapter = AdapterComponent(
        stack,
        "Support",
        AdapterComponentProps(
            base=base,
            adapter_name="support-ft",
            artifact_url="s3://adapters/support/adapter.tar.gz",
            artifact_key=key,
        ),
    )
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    adapter.grant_invoke(caller)
    template = Template.from_stack(stack)
    template.has_resource(
        "AWS::SageMaker::InferenceComponent",
        {
            "Properties": {
                "InferenceComponentName": "Serving-support-ft-62e167c0",
                "EndpointName": Match.any_value(),
                "Specification": {
                    "BaseInferenceComponentName": "Serving-llama-8b-62e167c0",
                    "Container": {"ArtifactUrl": "s3://adapters/support/adapter.tar.gz"},
                },
                "RuntimeConfig": Match.absent(),
            },
            "DependsOn": Match.array_with([stack.get_logical_id(base.component)]),
        },
    )
    policies = str(template.find_resources("AWS::IAM::Policy"))
    assert "adapters/support/adapter.tar.gz" in policies and "kms:Decrypt" in policies
    assert adapter.component_name == "Serving-support-ft-62e167c0"
    assert nag_findings(app) == []


def test_every_problem_is_reported_at_once():
    stack = cdk.Stack(new_app(), "Serving")
    base = _base(stack)
    with pytest.raises(ValueError) as error:
        AdapterComponent(
            stack,
            "Bad",
            AdapterComponentProps(
                base=base,
                adapter_name="bad_name",
                artifact_url="https://adapters/x",
                component_name="Serving-llama-8b-62e167c0",
            ),
        )
    message = str(error.value)
    assert "adapter_name='bad_name': underscores are not allowed" in message
    assert (
        "artifact_url='https://adapters/x': must be the s3:// URI of one gzip-compressed tar "
        "archive ending in .tar.gz" in message
    )
    assert "component_name='Serving-llama-8b-62e167c0': must be unique on the endpoint" in message


def test_an_adapter_prefix_is_refused_with_how_to_package_one_archive():
    # botocore InferenceComponentContainerSpecification.ArtifactUrl: "This path must point
    # to a single gzip compressed tar archive (.tar.gz suffix)."
    stack = cdk.Stack(new_app(), "Serving")
    base = _base(stack)
    with pytest.raises(ValueError) as error:
        AdapterComponent(
            stack,
            "Prefix",
            AdapterComponentProps(
                base=base, adapter_name="support-ft", artifact_url="s3://adapters/support/"
            ),
        )
    assert str(error.value).splitlines()[1:] == [
        "  - artifact_url='s3://adapters/support/': must be the s3:// URI of one "
        "gzip-compressed tar archive ending in .tar.gz (SageMaker loads an adapter from a "
        "single archive, not a prefix): package the adapter's directory (adapter_config.json "
        "and its weights) as one archive with `tar -czf adapter.tar.gz -C <adapter dir> .`, "
        "upload it with `aws s3 cp adapter.tar.gz s3://<bucket>/<path>/adapter.tar.gz` and "
        "give that URI"
    ]


def test_an_adapter_of_a_moved_base_follows_its_name_suffix_in_name_and_id():
    # A base moved between endpoints of one key is a new component under a new name; its
    # adapters must be new components too, naming it.
    stack = cdk.Stack(new_app(), "Serving")
    base = _base(stack, name_suffix="ic-g5-002")
    adapter = AdapterComponent(
        stack,
        "Support",
        AdapterComponentProps(
            base=base,
            adapter_name="support-ft",
            artifact_url="s3://adapters/support/adapter.tar.gz",
        ),
    )
    assert adapter.component_name == "Serving-support-ft-62e167c0-ic-g5-002"
    assert adapter.component.node.id == "Component62e167c0-ic-g5-002"
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {
            "InferenceComponentName": "Serving-support-ft-62e167c0-ic-g5-002",
            "Specification": {"BaseInferenceComponentName": "Serving-llama-8b-62e167c0-ic-g5-002"},
        },
    )
