"""Every endpoint kind, created here and imported by name, by ARN and by attributes, typed
as the Protocols they fit.

mypy checks this module strictly (``pyproject.toml``): a kind that stops fitting
:class:`IEndpoint` (or :class:`IAsyncEndpoint`, :class:`IInferenceComponentEndpoint`)
fails the type check; the tests in ``test_endpoint_interface.py`` run the same functions.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from constructs import Construct

from fm_platform.constructs.inference.async_endpoint import AsyncEndpoint, AsyncEndpointProps
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointAttributes,
)
from fm_platform.constructs.inference.endpoint_interface import (
    IAsyncEndpoint,
    IEndpoint,
    IInferenceComponentEndpoint,
)
from fm_platform.constructs.inference.imported_endpoint import EndpointAttributes
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.serverless_endpoint import (
    ServerlessEndpoint,
    ServerlessEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpoint,
    SingleModelEndpointProps,
)
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarm, EndpointAlarmProps
from tests.components import chat_endpoint

KINDS = ("component", "single", "multi", "async", "serverless")
ACCOUNT_ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/"
CONTAINER = ModelContainer(model_data_url="s3://models/chat/")
# Serverless endpoints read a model.tar.gz only (botocore ContainerDefinition.ModelDataSource).
ARCHIVE = ModelContainer(model_data_url="s3://models/tagger/model.tar.gz")


def created(scope: Construct, kind: str) -> IEndpoint:
    """A new endpoint of ``kind`` under ``scope`` (construct ID ``Created``)."""
    if kind == "component":
        return chat_endpoint(scope, "Created")
    if kind == "single":
        return SingleModelEndpoint(
            scope,
            "Created",
            SingleModelEndpointProps(
                model_name="chat", instance_type="ml.g5.xlarge", container=CONTAINER
            ),
        )
    if kind == "multi":
        return MultiModelEndpoint(
            scope,
            "Created",
            MultiModelEndpointProps(
                models_s3_prefix="s3://models/m/", instance_type="ml.m5.xlarge"
            ),
        )
    if kind == "serverless":
        return ServerlessEndpoint(
            scope, "Created", ServerlessEndpointProps(model_name="tagger", container=ARCHIVE)
        )
    return AsyncEndpoint(
        scope,
        "Created",
        AsyncEndpointProps(model_name="chat", instance_type="ml.g5.xlarge", container=CONTAINER),
    )


def imported(scope: Construct, kind: str, role: iam.IRole) -> dict[str, IEndpoint]:
    """Endpoints of ``kind`` deployed elsewhere, imported under ``scope`` by name
    (``ext-<kind>``), by ARN (``arn-<kind>``) and by attributes (``Attr-<Kind>``), by
    how they were imported."""
    attributes = EndpointAttributes(endpoint_name=f"Attr-{kind.capitalize()}", variant_name="v1")
    if kind == "component":
        return {
            "name": InferenceComponentEndpoint.from_endpoint_name(scope, "ByName", "ext-component"),
            "arn": InferenceComponentEndpoint.from_endpoint_arn(
                scope, "ByArn", f"{ACCOUNT_ARN}arn-component"
            ),
            "attributes": placeable(scope, role),
        }
    if kind == "single":
        return {
            "name": SingleModelEndpoint.from_endpoint_name(scope, "ByName", "ext-single"),
            "arn": SingleModelEndpoint.from_endpoint_arn(
                scope, "ByArn", f"{ACCOUNT_ARN}arn-single"
            ),
            "attributes": SingleModelEndpoint.from_endpoint_attributes(
                scope, "ByAttributes", attributes
            ),
        }
    if kind == "serverless":
        return {
            "name": ServerlessEndpoint.from_endpoint_name(scope, "ByName", "ext-serverless"),
            "arn": ServerlessEndpoint.from_endpoint_arn(
                scope, "ByArn", f"{ACCOUNT_ARN}arn-serverless"
            ),
            "attributes": ServerlessEndpoint.from_endpoint_attributes(
                scope, "ByAttributes", attributes
            ),
        }
    if kind == "multi":
        return {
            "name": MultiModelEndpoint.from_endpoint_name(scope, "ByName", "ext-multi"),
            "arn": MultiModelEndpoint.from_endpoint_arn(scope, "ByArn", f"{ACCOUNT_ARN}arn-multi"),
            "attributes": MultiModelEndpoint.from_endpoint_attributes(
                scope, "ByAttributes", attributes
            ),
        }
    return dict(imported_async(scope, attributes))


def imported_async(scope: Construct, attributes: EndpointAttributes) -> dict[str, IAsyncEndpoint]:
    """Asynchronous endpoints imported by name, ARN and attributes, as
    :class:`IAsyncEndpoint`."""
    return {
        "name": AsyncEndpoint.from_endpoint_name(scope, "ByName", "ext-async"),
        "arn": AsyncEndpoint.from_endpoint_arn(scope, "ByArn", f"{ACCOUNT_ARN}arn-async"),
        "attributes": AsyncEndpoint.from_endpoint_attributes(scope, "ByAttributes", attributes),
    }


def placeable(scope: Construct, role: iam.IRole) -> IInferenceComponentEndpoint:
    """An Inference Components endpoint imported with what models placed on it need."""
    return InferenceComponentEndpoint.from_endpoint_attributes(
        scope,
        "ByAttributes",
        InferenceComponentEndpointAttributes(
            endpoint_name="Attr-Component",
            variant_name="v1",
            instance_type="ml.g5.12xlarge",
            execution_role=role,
            max_instance_count=4,
        ),
    )


def invoke_and_watch(
    endpoint: IEndpoint, grantee: iam.IGrantable, topic: sns.ITopic, label: str
) -> tuple[iam.Grant, EndpointAlarm]:
    """What a consumer of any endpoint does: let ``grantee`` invoke it and alarm on its
    errors (construct ID ``Alarm-<label>`` beside the endpoint)."""
    grant = endpoint.grant_invoke(grantee)
    scope = endpoint.node.scope
    assert isinstance(scope, Construct)
    alarm = EndpointAlarm(
        scope,
        f"Alarm-{label}",
        EndpointAlarmProps(endpoint=endpoint, label=label, topic_arn=topic.topic_arn),
    )
    return grant, alarm
