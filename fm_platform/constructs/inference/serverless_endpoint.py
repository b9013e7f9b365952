"""A SageMaker serverless endpoint: one model on compute SageMaker provisions per request,
for small CPU models with sporadic traffic (no instances to pay for while idle; a cold
start after idle periods unless concurrency is provisioned).

Serverless Inference has no GPUs and no instance type: the variant names only its memory
and concurrency (``ServerlessConfig``). The endpoint config takes a KMS key for the copy of
the container image SageMaker keeps: "(Optional) For ``KmsKeyId``, use the key ID, key
ARN, alias name, or alias ARN for an AWS KMS key that you want to use. SageMaker uses this
key to encrypt your Amazon ECR image" (SageMaker Developer Guide, "Create a serverless
endpoint", "Create an endpoint configuration", awsdocs/amazon-sagemaker-developer-guide
``doc_source/serverless-endpoints-create.md``, whose example sets ``KmsKeyId`` beside a
``ServerlessConfig``; the prerequisites page adds that the key policy must grant access to
the endpoint's role). Network isolation and VPC configuration are among the features
Serverless Inference does not support ("Serverless Inference", "Feature exclusions").

Metrics (SageMaker Developer Guide, "Alarms and logs for tracking metrics from serverless
endpoints"): the invocation metrics of real-time endpoints (``Invocations``,
``Invocation4XXErrors``, ``Invocation5XXErrors``, ``ModelLatency``, ``OverheadLatency``,
which holds the cold start), ``ModelSetupTime`` (the time to launch new compute),
``MemoryUtilization`` (namespace ``/aws/sagemaker/Endpoints``),
``ServerlessConcurrentExecutionsUtilization`` and, with provisioned concurrency,
``ServerlessProvisionedConcurrencyUtilization`` and
``ServerlessProvisionedConcurrencySpilloverInvocations``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import CfnTag
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.endpoint_base import (
    ENDPOINT_INSTANCE_NAMESPACE,
    MetricOptions,
    RealtimeEndpoint,
    create_model,
    with_statistic,
)
from fm_platform.constructs.inference.execution_role import execution_role_for
from fm_platform.constructs.inference.imported_endpoint import ImportableByName
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import checked
from fm_platform.rules.model_container import check_serverless_artifacts
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import replacement_key
from fm_platform.rules.serverless import check_serverless, check_serverless_isolation


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointOptions:
    """Plain options of :class:`ServerlessEndpoint`.

    model_name: a stable logical name of the model (ModelName rules), set as the
        ``fm_platform:model-name`` tag of its SageMaker model.
    container: what the model runs (a CPU image: Serverless Inference has no GPUs); its
        artifacts a ``model.tar.gz`` (``ModelDataUrl``): a prefix of uncompressed files
        (``ModelDataSource``) is refused, serverless endpoints cannot read one (botocore
        ``ContainerDefinition.ModelDataSource``); by default the Large Model Inference
        image and no artifacts.
    memory_size_mib: memory of each invocation's compute, 1024-6144 in steps of 1024
        (vCPUs grow with it); by default 2048.
    max_concurrency: the most invocations served at once (1-200); by default 5.
    provisioned_concurrency: invocations kept warm, without cold starts (1-200, at most
        ``max_concurrency``), billed while idle; by default none.
    variant_name: the variant's name; by default ``AllTraffic``.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    network_isolation: run the container without network access; by default False, the
        only value Serverless Inference supports (module docstring): True is refused.
    """

    model_name: str
    container: ModelContainer = field(default_factory=ModelContainer)
    memory_size_mib: int = 2048
    max_concurrency: int = 5
    provisioned_concurrency: int | None = None
    variant_name: str = "AllTraffic"
    endpoint_name: str | None = None
    network_isolation: bool = False

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        problems.check_shape("model_name", self.model_name, "ModelName")
        if self.container is not None:
            self.container.check(problems)
            check_serverless_artifacts(
                problems, "container.model_data_url", self.container.model_data_url
            )
        check_serverless(
            problems,
            memory_size_mib=self.memory_size_mib,
            max_concurrency=self.max_concurrency,
            provisioned_concurrency=self.provisioned_concurrency,
        )
        problems.check_shape("variant_name", self.variant_name, "VariantName")
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")
        check_serverless_isolation(problems, self.network_isolation)


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointProps(ServerlessEndpointOptions):
    """Options for :class:`ServerlessEndpoint`: the fields of
    :class:`ServerlessEndpointOptions`, and

    execution_role: the role the model runs as; by default a least-privilege role.
    artifact_key: the KMS key encrypting the model artifacts; by default no decrypt grant.
    encryption_key: the KMS key SageMaker encrypts its copy of the container image with
        (the endpoint config's ``KmsKeyId``); by default a customer-managed key created for
        the endpoint (construct ID ``ImageKey``). The execution role may decrypt with it
        and generate data keys.
    """

    execution_role: iam.IRole | None = None
    artifact_key: kms.IKey | None = None
    encryption_key: kms.IKey | None = None

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem in these props.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "ServerlessEndpointProps")
        checked(problems, self).check(problems)
        problems.raise_if_any()


class ServerlessEndpoint(RealtimeEndpoint, ImportableByName):
    """One model behind a serverless endpoint: ``Model``, ``EndpointConfig`` (no physical
    name, its ``KmsKeyId`` the ``encryption_key``, ``ImageKey`` by default) and
    ``Endpoint<key>`` (a key of its own, so that it never updates an instance-based
    endpoint of the same construct ID in place), with ``ExecutionRole`` unless a role is
    passed.

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``variant_name``, ``model``, ``execution_role``, ``encryption_key``,
    ``memory_size_mib``, ``max_concurrency``, ``provisioned_concurrency``. Invoke grants
    and ``metric_*`` as on every endpoint, and the serverless metrics (module docstring).
    It has no instances: ``metric_instances`` counts the SampleCount of
    ``MemoryUtilization``, the one ``/aws/sagemaker/Endpoints`` metric it publishes, which
    AWS documents as no count. Import one with ``from_endpoint_name``,
    ``from_endpoint_arn`` or ``from_endpoint_attributes``.
    """

    # A constant of the kind: RealtimeEndpoint reads it per instance (imports set theirs),
    # ImportableByName per class, so mypy sees two declarations of one name.
    INSTANCE_METRIC = "MemoryUtilization"  # type: ignore[misc]

    def __init__(self, scope: Construct, construct_id: str, props: ServerlessEndpointProps) -> None:
        """Create the endpoint, its config and its model under ``scope``; ``props`` is
        validated first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.endpoint_name)
        self.variant_name = props.variant_name
        self.memory_size_mib = props.memory_size_mib
        self.max_concurrency = props.max_concurrency
        self.provisioned_concurrency = props.provisioned_concurrency
        container = props.container.with_image_for(self)
        self.execution_role = execution_role_for(
            self,
            role=props.execution_role,
            containers=[container],
            artifact_key=props.artifact_key,
            in_vpc=False,
        )
        self.model = create_model(
            self,
            "Model",
            role=self.execution_role,
            container=container.to_container_property(self),
            network_isolation=props.network_isolation,
            vpc_config=None,
            tags=[CfnTag(key="fm_platform:model-name", value=props.model_name)],
        )
        self.encryption_key = props.encryption_key or customer_managed_key(
            self, "ImageKey", purpose="SageMaker serverless endpoint container image copy"
        )
        self.encryption_key.grant(self.execution_role, "kms:Decrypt", "kms:GenerateDataKey")
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            kms_key_id=self.encryption_key.key_arn,
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=props.variant_name,
                    model_name=self.model.attr_model_name,
                    serverless_config=sagemaker.CfnEndpointConfig.ServerlessConfigProperty(
                        memory_size_in_mb=props.memory_size_mib,
                        max_concurrency=props.max_concurrency,
                        provisioned_concurrency=props.provisioned_concurrency,
                    ),
                )
            ],
        )
        # Its own key: a construct ID reused between a serverless and an instance-based
        # endpoint gives a new endpoint rather than an update from one to the other.
        self._create_endpoint(
            self.endpoint_config, props.endpoint_name, replacement_key({"serverless": True})
        )

    # -- serverless metrics (module docstring) ----------------------------------------------

    def metric_model_setup_time(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Time to launch new compute for the endpoint: its cold starts, in microseconds
        (by default the Average)."""
        return self.metric("ModelSetupTime", variant_name, **options)

    def metric_overhead_latency(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Latency SageMaker adds, cold starts included, in microseconds (by default the
        Average)."""
        return self.metric("OverheadLatency", variant_name, **options)

    def metric_memory_utilization(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The container's memory use, percent (by default the Average)."""
        return self.metric(
            "MemoryUtilization", variant_name, namespace=ENDPOINT_INSTANCE_NAMESPACE, **options
        )

    def metric_concurrency_utilization(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Concurrent executions over the maximum concurrency, a fraction (by default the
        Maximum)."""
        return self.metric(
            "ServerlessConcurrentExecutionsUtilization",
            variant_name,
            **with_statistic(options, cloudwatch.Stats.MAXIMUM),
        )

    def metric_provisioned_concurrency_spillover(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Requests beyond the provisioned concurrency, served on demand with a possible
        cold start (by default the Sum)."""
        return self.metric(
            "ServerlessProvisionedConcurrencySpilloverInvocations",
            variant_name,
            **with_statistic(options, cloudwatch.Stats.SUM),
        )
