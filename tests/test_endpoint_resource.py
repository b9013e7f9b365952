"""Every endpoint is a CDK resource implementing aws-cdk-lib's ``aws_sagemaker.IEndpoint``:
aws-cdk-lib's own APIs typed to it (``aws_apigateway.SagemakerIntegration``) take each
kind, created or imported, reading its name and calling its ``grant_invoke`` through jsii;
``env``, ``stack`` and ``apply_removal_policy`` are the resource's. Inference Components
endpoints place models with ``add_model``; the names placed on one are a read-only view."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk.assertions import Template
from constructs import Construct

from fm_platform.constructs.inference.async_endpoint import INVOKE_ASYNC_ACTION
from fm_platform.constructs.inference.endpoint_base import INVOKE_ACTIONS
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModelOptions,
)
from fm_platform.constructs.inference.single_model_endpoint import SingleModelEndpoint
from tests.components import chat_endpoint
from tests.endpoint_kinds import CONTAINER, KINDS, created, imported, placeable

ENV = cdk.Environment(account="123456789012", region="us-east-1")
HOSTING_ROLE = "arn:aws:iam::123456789012:role/hosting"


def _stack() -> cdk.Stack:
    return cdk.Stack(cdk.App(), "Api", env=ENV)


def _endpoints(stack: cdk.Stack, kind: str) -> dict[str, IEndpoint]:
    """``kind`` created (under ``Created``) and imported by name, ARN and attributes."""
    role = iam.Role.from_role_arn(stack, "Hosting", HOSTING_ROLE)
    return {"created": created(Construct(stack, "New"), kind), **imported(stack, kind, role)}


def _methods(template: dict) -> dict[str, dict]:
    """Each POST method's integration, by its resource's path part."""
    parts = {
        logical_id: resource["Properties"]["PathPart"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::ApiGateway::Resource"
    }
    return {
        parts[resource["Properties"]["ResourceId"]["Ref"]]: resource["Properties"]["Integration"]
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::ApiGateway::Method"
    }


def _role_statements(template: dict, role_logical_id: str) -> list[dict]:
    return [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy"
        and {"Ref": role_logical_id} in resource["Properties"]["Roles"]
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_sagemaker_integration_takes_every_kind_created_or_imported(kind):
    stack = _stack()
    endpoints = _endpoints(stack, kind)
    api = apigateway.RestApi(stack, "RestApi")
    for how, endpoint in endpoints.items():
        api.root.add_resource(how).add_method("POST", apigateway.SagemakerIntegration(endpoint))
    template = Template.from_stack(stack).to_json()
    integrations = _methods(template)
    assert set(integrations) == {"created", "name", "arn", "attributes"}
    new = endpoints["created"]
    assert isinstance(new, Construct) and new.endpoint is not None  # type: ignore[attr-defined]
    names = {
        "created": {"Fn::GetAtt": [stack.get_logical_id(new.endpoint), "EndpointName"]},  # type: ignore[attr-defined]
        "name": f"ext-{kind}",
        "arn": f"arn-{kind}",
        "attributes": f"Attr-{kind.capitalize()}",
    }
    actions = INVOKE_ASYNC_ACTION if kind == "async" else list(INVOKE_ACTIONS)
    for how, integration in integrations.items():
        assert integration["Type"] == "AWS"
        assert integration["IntegrationHttpMethod"] == "POST"
        path = ":apigateway:us-east-1:runtime.sagemaker:path/endpoints/"
        name = names[how]
        tail = (
            [path, name, "/invocations"]
            if isinstance(name, dict)
            else [f"{path}{name}/invocations"]
        )
        assert integration["Uri"]["Fn::Join"] == ["", ["arn:", {"Ref": "AWS::Partition"}, *tail]]
        role = integration["Credentials"]["Fn::GetAtt"][0]
        [statement] = _role_statements(template, role)
        assert statement["Action"] == actions
        arn = stack.resolve(endpoints[how].endpoint_arn)
        assert statement["Resource"] == arn
    assert template["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0][
        "Principal"
    ] == {"Service": "apigateway.amazonaws.com"}


@pytest.mark.parametrize("kind", KINDS)
def test_grant_invoke_gives_any_grantee_the_endpoint_arn(kind):
    stack = _stack()
    endpoint = created(stack, kind)
    caller = iam.Role(stack, "Caller", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    # aws-cdk-lib's interface, as any API typed to it calls it.
    as_cdk: sagemaker.IEndpoint = endpoint
    grant = as_cdk.grant_invoke(caller)
    assert grant.success
    template = Template.from_stack(stack).to_json()
    [statement] = _role_statements(template, stack.get_logical_id(caller.node.default_child))  # type: ignore[arg-type]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == (INVOKE_ASYNC_ACTION if kind == "async" else list(INVOKE_ACTIONS))
    assert statement["Resource"] == {"Ref": stack.get_logical_id(endpoint.endpoint)}  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", KINDS)
def test_an_endpoint_is_a_resource_with_its_environment(kind):
    stack = _stack()
    endpoint = created(stack, kind)
    assert isinstance(endpoint, cdk.Resource)
    assert endpoint.stack is stack
    assert (endpoint.env.account, endpoint.env.region) == ("123456789012", "us-east-1")
    assert stack.resolve(endpoint.endpoint_ref.endpoint_arn) == stack.resolve(endpoint.endpoint_arn)
    endpoint.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    resource = Template.from_stack(stack).to_json()["Resources"][
        stack.get_logical_id(endpoint.endpoint)  # type: ignore[attr-defined]
    ]
    assert resource["DeletionPolicy"] == "Retain"


def test_an_imported_endpoint_takes_its_account_and_region_from_its_arn():
    stack = _stack()
    other = "arn:aws:sagemaker:eu-west-1:210987654321:endpoint/elsewhere"
    endpoint = SingleModelEndpoint.from_endpoint_arn(stack, "Elsewhere", other)
    assert (endpoint.env.account, endpoint.env.region) == ("210987654321", "eu-west-1")
    by_name = SingleModelEndpoint.from_endpoint_name(stack, "Here", "here")
    assert (by_name.env.account, by_name.env.region) == ("123456789012", "us-east-1")
    assert by_name.endpoint_ref.endpoint_arn == by_name.endpoint_arn
    assert by_name.endpoint_arn.endswith(":sagemaker:us-east-1:123456789012:endpoint/here")


def test_an_imported_endpoint_refuses_a_removal_policy():
    stack = _stack()
    endpoint = SingleModelEndpoint.from_endpoint_name(stack, "Here", "here")
    with pytest.raises(ValueError) as raised:
        endpoint.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    assert str(raised.value) == (
        "Api/Here: an imported endpoint has no resource in this app to apply a removal policy to"
    )


OPTIONS = InferenceComponentModelOptions(
    model_name="chat", container=CONTAINER, accelerators=1, min_memory_mib=8192
)


def test_add_model_places_a_model_under_the_endpoint():
    stack = _stack()
    endpoint = chat_endpoint(stack, "Shared")
    model = endpoint.add_model("Chat", OPTIONS)
    elsewhere = Construct(stack, "Models")
    other = endpoint.add_model(
        "Other",
        InferenceComponentModelOptions(**{**OPTIONS.__dict__, "model_name": "other"}),
        scope=elsewhere,
    )
    assert model.node.scope is endpoint and other.node.scope is elsewhere
    assert model.endpoint is endpoint and other.endpoint is endpoint
    assert endpoint.component_names == {model.component_name, other.component_name}
    assert [demand.name for demand in endpoint.placements] == [
        model.component_name,
        other.component_name,
    ]
    Template.from_stack(stack).resource_count_is("AWS::SageMaker::InferenceComponent", 2)


def test_add_model_places_a_model_on_an_imported_endpoint():
    stack = _stack()
    endpoint = placeable(stack, iam.Role.from_role_arn(stack, "Hosting", HOSTING_ROLE))
    model = endpoint.add_model("Chat", OPTIONS)  # type: ignore[attr-defined]
    assert endpoint.component_names == {model.component_name}
    Template.from_stack(stack).has_resource_properties(
        "AWS::SageMaker::InferenceComponent",
        {"EndpointName": "Attr-Component", "VariantName": "v1"},
    )


def test_component_names_are_a_read_only_view():
    stack = _stack()
    endpoint = chat_endpoint(stack, "Shared")
    names = endpoint.component_names
    assert not hasattr(names, "add") and not hasattr(names, "discard")
    model = endpoint.add_model("Chat", OPTIONS)
    # A view: the names placed later show through it.
    assert model.component_name in names and len(names) == 1
    assert json.dumps(sorted(names)) == json.dumps([model.component_name])
