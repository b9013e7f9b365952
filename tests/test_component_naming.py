"""Default inference component names carry the stack's name, so that two copies of a stack
in one account and region do not collide (component names and Application Auto Scaling
resource IDs are unique per account and region)."""

from __future__ import annotations

import re

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.inference.component_naming import component_name_for
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.rules.sagemaker_model import shape_rule
from tests.components import IMAGE, chat_endpoint, chat_model, chat_model_props

NAME_RULE = shape_rule("InferenceComponentName")


def _serving_stack(app: cdk.App, stack_id: str, **model) -> Template:
    stack = cdk.Stack(app, stack_id)
    chat_model(
        stack,
        chat_endpoint(stack),
        model_name="chat",
        container=ModelContainer(image=IMAGE, model_data_url="s3://models/chat/"),
        scaling=ComponentScaling(min_copies=0, max_copies=2),
        **model,
    )
    return Template.from_stack(stack)


def _names(template: Template) -> tuple[str, str, str]:
    [component] = template.find_resources("AWS::SageMaker::InferenceComponent").values()
    [target] = template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget").values()
    [alarm] = template.find_resources("AWS::CloudWatch::Alarm").values()
    return (
        component["Properties"]["InferenceComponentName"],
        target["Properties"]["ResourceId"],
        alarm["Properties"]["Dimensions"][0]["Value"],
    )


def test_two_copies_of_a_stack_get_distinct_component_names():
    production = _names(_serving_stack(cdk.App(), "ServingProd"))
    staging = _names(_serving_stack(cdk.App(), "ServingStaging"))
    assert production == (
        "ServingProd-chat-62e167c0",
        "inference-component/ServingProd-chat-62e167c0",
        "ServingProd-chat-62e167c0",
    )
    assert staging == (
        "ServingStaging-chat-62e167c0",
        "inference-component/ServingStaging-chat-62e167c0",
        "ServingStaging-chat-62e167c0",
    )


def test_the_stack_name_not_the_construct_id_prefixes_the_name():
    app = cdk.App()
    template = _serving_stack_named(app, "Serving", "tenant-a-serving")
    assert _names(template)[0] == "tenant-a-serving-chat-62e167c0"


def _serving_stack_named(app: cdk.App, stack_id: str, stack_name: str) -> Template:
    stack = cdk.Stack(app, stack_id, stack_name=stack_name)
    chat_model(
        stack,
        chat_endpoint(stack),
        model_name="chat",
        scaling=ComponentScaling(min_copies=0, max_copies=2),
    )
    return Template.from_stack(stack)


def test_an_explicit_component_name_is_used_as_given():
    template = _serving_stack(cdk.App(), "Serving", component_name="chat-v2")
    assert _names(template) == ("chat-v2", "inference-component/chat-v2", "chat-v2")


@pytest.mark.parametrize(
    ("stack_name", "model_name"),
    [
        ("s" * 100, "llama-3-70b-instruct"),
        ("tenant-" + "x" * 60, "m"),
        ("stack", "m" * 63),
        ("a" * 128, "b" * 62),
    ],
)
def test_long_names_are_trimmed_with_a_hash_within_the_api_limits(stack_name, model_name):
    name = component_name_for(stack_name, model_name)
    assert len(name) <= 63 == NAME_RULE.max
    assert re.fullmatch(NAME_RULE.pattern, name)
    assert NAME_RULE.problem(name) is None
    # deterministic, and distinct for names that differ only where they are trimmed
    assert name == component_name_for(stack_name, model_name)
    assert name != component_name_for(stack_name + "2", model_name)


def test_a_trimmed_name_keeps_the_model_name_readable():
    name = component_name_for(
        "platform-team-inference-production-eu-west-1-blue", "llama-3-8b-chat"
    )
    assert re.fullmatch(r"platform-team-inference-production-eu-[0-9a-f]{8}-llama-3-8b-chat", name)


def test_a_name_that_fits_is_not_trimmed():
    assert component_name_for("FmpInference", "llama-7b-chat") == "FmpInference-llama-7b-chat"


def test_models_in_nested_stacks_are_named_after_the_parent_and_the_nested_stack():
    app = cdk.App()
    parent = cdk.Stack(app, "Serving")
    endpoint = chat_endpoint(parent)
    names = []
    for nested_id in ("Tenant_A", "TenantB"):
        model = chat_model(cdk.NestedStack(parent, nested_id), endpoint, model_name="chat")
        names.append(model.component_name)
    assert names == ["Serving-TenantA-chat-62e167c0", "Serving-TenantB-chat-62e167c0"]


def test_one_component_name_twice_in_a_stack_is_rejected():
    stack = cdk.Stack(cdk.App(), "Serving")
    models = []
    for endpoint_id in ("First", "Second"):
        models.append(chat_model_props(chat_endpoint(stack, endpoint_id), model_name="chat"))
    InferenceComponentModel(stack, "Chat", models[0])
    with pytest.raises(ValueError, match="component_name='Serving-chat-62e167c0': must be unique"):
        InferenceComponentModel(stack, "ChatAgain", models[1])


def test_a_name_suffix_follows_the_key_in_the_name_scaling_and_alarm():
    # A model moved to another endpoint of the same key needs a name of its own.
    template = _serving_stack(cdk.App(), "Serving", name_suffix="ic-g5-002")
    assert _names(template) == (
        "Serving-chat-62e167c0-ic-g5-002",
        "inference-component/Serving-chat-62e167c0-ic-g5-002",
        "Serving-chat-62e167c0-ic-g5-002",
    )


def test_a_long_name_with_a_suffix_is_trimmed_keeping_the_suffix():
    stack = "platform-team-inference-production-eu-west-1"
    name = component_name_for(stack, "chat", "62e167c0", "ic-g6e-002")
    assert re.fullmatch(r"platform-team-inference-produ-[0-9a-f]{8}-chat-62e167c0-ic-g6e-002", name)
    assert len(name) == 63
    assert name != component_name_for(stack, "chat", "62e167c0")


def test_a_name_suffix_with_an_explicit_name_or_bad_characters_is_refused():
    with pytest.raises(ValueError) as error:
        _serving_stack(cdk.App(), "Serving", component_name="chat-v2", name_suffix="moved")
    assert (
        "name_suffix='moved': applies to the default component name only; component_name "
        "'chat-v2' is used as given: put the suffix into it, or drop one"
    ) in str(error.value)
    bad = r"name_suffix='ic_g5 2': underscores and spaces are not allowed"
    with pytest.raises(ValueError, match=bad):
        _serving_stack(cdk.App(), "Serving2", name_suffix="ic_g5 2")
