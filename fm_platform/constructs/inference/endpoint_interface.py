"""What alarms, dashboards, grants and inference components need from an endpoint: the
interfaces every endpoint kind implements, created here or imported (``from_endpoint_name``,
``from_endpoint_arn``, ``from_endpoint_attributes`` on each kind).

Each extends aws-cdk-lib's ``aws_sagemaker.IEndpoint`` (``endpoint_name``,
``endpoint_arn``, ``grant_invoke`` and ``IResource``'s ``env``, ``stack`` and
``apply_removal_policy``), which every endpoint construct implements through jsii, so that
``aws_apigateway.SagemakerIntegration`` and any other API typed to it take them
(``@aws-cdk/aws-sagemaker-alpha``'s ``IEndpoint extends sagemaker.IEndpoint`` for the same
reason). The richer members are read-only properties and the methods a consumer calls,
nothing about how the endpoint was made, and no mutable state.

- :class:`IEndpoint`: every endpoint (``InferenceComponentEndpoint``,
  ``SingleModelEndpoint``, ``MultiModelEndpoint``, ``AsyncEndpoint``,
  ``ServerlessEndpoint`` and the imported ones).
- :class:`IAsyncEndpoint`: an asynchronous endpoint, with its queue's metrics.
- :class:`IInferenceComponentEndpoint`: an endpoint models can be placed on as inference
  components.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Protocol

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.endpoint_base import EndpointVpcConfig, MetricOptions
from fm_platform.rules.capacity import CopyDemand


class IEndpoint(sagemaker.IEndpoint, Protocol):
    """A SageMaker endpoint (every endpoint construct of this package implements it,
    created or imported): aws-cdk-lib's ``IEndpoint`` (its name, ARN and invoke grant), the
    variant its ``metric_*`` methods measure and its per-variant metrics
    (``AWS/SageMaker``, dimensions ``EndpointName`` and ``VariantName``;
    ``instance_metric`` in ``/aws/sagemaker/Endpoints`` counts the variant's instances)."""

    @property
    def variant_name(self) -> str: ...

    @property
    def instance_metric(self) -> str: ...

    def metric_dimensions(self, variant_name: str | None = None) -> dict[str, str]: ...

    def metric(
        self,
        metric_name: str,
        variant_name: str | None = None,
        *,
        namespace: str = ...,
        **options: Unpack[MetricOptions],
    ) -> cloudwatch.Metric: ...

    def metric_invocations(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_invocation_5xx_errors(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_invocation_4xx_errors(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_instances(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_model_latency(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...


class IAsyncEndpoint(IEndpoint, Protocol):
    """An asynchronous endpoint (``AsyncEndpoint`` fits, and one imported with its
    ``from_endpoint_*`` methods): ``grant_invoke`` grants ``InvokeEndpointAsync``; its
    queue's metrics (dimension ``EndpointName``); the logical model name and the failure
    location when known (None for an imported endpoint)."""

    @property
    def model_name(self) -> str | None: ...

    @property
    def failure_location(self) -> str | None: ...

    def metric_endpoint(
        self, metric_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_backlog_size(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric: ...

    def metric_backlog_size_per_instance(
        self, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_age_of_oldest_request(
        self, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...

    def metric_has_backlog_without_capacity(
        self, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric: ...


class IInferenceComponentEndpoint(IEndpoint, Protocol):
    """An endpoint models are placed on as inference components
    (``InferenceComponentEndpoint`` fits, and one imported with
    ``InferenceComponentEndpoint.from_endpoint_attributes``): its instance type and counts
    (None when unknown), the role and network its models use, the names of the components
    placed on it, and :meth:`place`, which counts a model's copies against its
    instances."""

    @property
    def instance_type(self) -> str: ...

    @property
    def execution_role(self) -> iam.IRole: ...

    @property
    def network_isolation(self) -> bool: ...

    @property
    def vpc_config(self) -> EndpointVpcConfig | None: ...

    @property
    def min_instance_count(self) -> int | None: ...

    @property
    def initial_instance_count(self) -> int | None: ...

    @property
    def max_instance_count(self) -> int | None: ...

    @property
    def instance_types(self) -> tuple[str, ...]:
        """``instance_type``, then the fallback types of the variant's instance pools."""
        ...

    @property
    def replacement_key(self) -> str | None:
        """What the endpoint's logical ID ends with (see
        :mod:`fm_platform.rules.replacement`); the components placed on it follow it."""
        ...

    @property
    def component_names(self) -> AbstractSet[str]:
        """The names of the components placed on the endpoint so far (read-only)."""
        ...

    def record_component_name(self, name: str) -> None:
        """Record that the component ``name`` runs on the endpoint (names are unique)."""
        ...

    def place(
        self,
        scope: Construct,
        demand: CopyDemand,
        by_type: Mapping[str, CopyDemand] | None = None,
    ) -> None: ...
