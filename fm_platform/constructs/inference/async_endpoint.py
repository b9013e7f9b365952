"""A SageMaker asynchronous endpoint: one model behind a queue, for requests that may take
up to an hour, with bodies read from S3 and results written to S3.

Callers upload a request body to S3 and call ``InvokeEndpointAsync``; SageMaker queues the
request, writes the result (or the failure) to S3 and notifies an SNS topic, and the
endpoint scales on its backlog down to zero instances ("Asynchronous inference",
https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference.html). An endpoint config
with ``AsyncInferenceConfig`` takes asynchronous invocations only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aws_cdk import CfnTag
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.async_scaling import AsyncAutoScaling, AsyncScaling
from fm_platform.constructs.inference.endpoint_base import (
    MetricOptions,
    VariantEndpoint,
    VariantEndpointOptions,
    VariantEndpointProps,
    sagemaker_metric,
    with_statistic,
)
from fm_platform.constructs.inference.endpoint_interface import IAsyncEndpoint
from fm_platform.constructs.inference.imported_endpoint import EndpointAttributes, ImportedEndpoint
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.core.compliance import acknowledge_wildcard_resource
from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props, checked
from fm_platform.rules.asynchronous import (
    FAILURES,
    INPUTS,
    OUTPUTS,
    check_async_instance_type,
    check_initial_instance_count,
    check_initial_within_scaling,
    check_max_concurrency,
    check_s3_prefix,
)
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import scaled_variants_key

INVOKE_ASYNC_ACTION = "sagemaker:InvokeEndpointAsync"


@dataclass(frozen=True, kw_only=True)
class AsyncEndpointOptions(VariantEndpointOptions):
    """Plain options of :class:`AsyncEndpoint` (the keys of an item of the configuration's
    ``inference.async_endpoints`` too).

    model_name: a stable logical name of the model (ModelName rules), set as the
        ``fm_platform:model-name`` tag of its SageMaker model.
    instance_type: a SageMaker hosting type (botocore ``ProductionVariantInstanceType``) of
        a family asynchronous inference runs on (not inf1).
    container: what the model runs; by default the Large Model Inference image and no
        artifacts (the stacks default the artifacts to their bucket). The container's own
        request timeout and size limits must allow the requests (docs/inference.md).
    initial_instance_count: instances at creation (at least 1: SageMaker creates an
        endpoint with instances; ``scaling`` then takes it to zero); by default 1.
    variant_name: the production variant's name; by default ``AllTraffic``.
    scaling: scaling on the backlog; by default :class:`AsyncScaling` (0-1 instances, 5
        queued requests per instance, woken from zero by the first request). None keeps
        ``initial_instance_count`` instances.
    max_concurrent_invocations_per_instance: requests each instance processes at once
        (botocore's limits, 1-1000); by default SageMaker chooses.
    s3_prefix: the key prefix of the endpoint's objects: callers upload request bodies
        under ``<s3_prefix>/inputs/``, SageMaker writes results under
        ``<s3_prefix>/outputs/`` and failures under ``<s3_prefix>/failures/``; by default
        ``async``.
    Also the fields of :class:`VariantEndpointOptions` (``network_isolation``, by default
    True, ``endpoint_name``, the startup timeouts and ``volume_size_gb``, by default from
    the container's ``model_size_gib``).
    """

    model_name: str
    instance_type: str
    container: ModelContainer = field(default_factory=ModelContainer)
    initial_instance_count: int = 1
    variant_name: str = "AllTraffic"
    scaling: AsyncScaling | None = field(default_factory=AsyncScaling)
    max_concurrent_invocations_per_instance: int | None = None
    s3_prefix: str = "async"

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        problems.check_shape("model_name", self.model_name, "ModelName")
        check_async_instance_type(problems, "instance_type", self.instance_type)
        check_initial_instance_count(
            problems, "initial_instance_count", self.initial_instance_count
        )
        problems.check_shape("variant_name", self.variant_name, "VariantName")
        check_max_concurrency(
            problems,
            "max_concurrent_invocations_per_instance",
            self.max_concurrent_invocations_per_instance,
        )
        check_s3_prefix(problems, "s3_prefix", self.s3_prefix)
        if self.container is not None:
            self.container.check(problems)
        if self.scaling is not None:
            self.scaling.check(problems)
            check_initial_within_scaling(
                problems,
                "initial_instance_count",
                self.initial_instance_count,
                self.scaling.max_instances,
            )
        self.check_endpoint(problems)


@dataclass(frozen=True, kw_only=True)
class AsyncEndpointProps(VariantEndpointProps, AsyncEndpointOptions, Props):
    """Options for :class:`AsyncEndpoint`: the fields of :class:`AsyncEndpointOptions` and
    of :class:`VariantEndpointProps` (``vpc``, ``vpc_subnets``, ``security_group``,
    ``encryption_key`` of the storage volumes, ``artifact_key``, ``execution_role``; a passed
    role also gets the request, result and notification grants), and

    results_bucket: where SageMaker writes results and failures, and, without
        ``input_bucket``, where callers upload request bodies; by default a
        :class:`SecureBucket` (construct ID ``Results``: KMS-encrypted, versioned,
        TLS-only, retained on delete).
    results_key: the KMS key SageMaker encrypts results with (the output config's
        ``KmsKeyId``); it also encrypts a created bucket and created topics; by default the
        passed bucket's key, else a new customer-managed key (construct ID ``Key``).
    input_bucket: where callers upload request bodies (under ``<s3_prefix>/inputs/``); by
        default ``results_bucket``.
    input_key: the KMS key encrypting the request bodies (needs ``input_bucket``); by
        default the input bucket's key, none when it has no known key.
    success_topic, error_topic: the SNS topics SageMaker notifies when a request succeeds
        or fails; by default topics are created (construct IDs ``SuccessTopic``,
        ``ErrorTopic``), encrypted with ``results_key`` and accepting TLS only.
    topic_key: the KMS key of passed topics, for the execution role's publish grant
        (needs a passed topic); by default no KMS grant for passed topics.
    """

    results_bucket: s3.IBucket | None = None
    results_key: kms.IKey | None = None
    input_bucket: s3.IBucket | None = None
    input_key: kms.IKey | None = None
    success_topic: sns.ITopic | None = None
    error_topic: sns.ITopic | None = None
    topic_key: kms.IKey | None = None

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        props.check_references(problems)
        if props.input_key is not None and props.input_bucket is None:
            problems.add("input_key", props.input_key, "needs `input_bucket` to be set")
        if (
            props.topic_key is not None
            and props.success_topic is None
            and (props.error_topic is None)
        ):
            problems.add(
                "topic_key", props.topic_key, "needs `success_topic` or `error_topic` to be set"
            )


class QueueMetrics:
    """The metrics of an asynchronous endpoint's queue (dimension ``EndpointName``, as
    SageMaker publishes them), each with the same options as every ``metric_*`` method."""

    if TYPE_CHECKING:  # the endpoint class it is mixed into has the name

        @property
        def endpoint_name(self) -> str: ...

    def metric_endpoint(
        self, metric_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """A metric of the whole endpoint (dimension ``EndpointName`` only, as SageMaker
        publishes the queue's metrics): by default the Average over 1 minute."""
        return sagemaker_metric(metric_name, {"EndpointName": self.endpoint_name}, **options)

    def metric_backlog_size(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Requests queued or being processed (``ApproximateBacklogSize``; by default the
        Average)."""
        return self.metric_endpoint("ApproximateBacklogSize", **options)

    def metric_backlog_size_per_instance(
        self, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The backlog divided by the instances (``ApproximateBacklogSizePerInstance``, the
        metric the scaling tracks; by default the Average)."""
        return self.metric_endpoint("ApproximateBacklogSizePerInstance", **options)

    def metric_age_of_oldest_request(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Age of the oldest queued request, in seconds (``ApproximateAgeOfOldestRequest``;
        by default the Maximum)."""
        return self.metric_endpoint(
            "ApproximateAgeOfOldestRequest", **with_statistic(options, cloudwatch.Stats.MAXIMUM)
        )

    def metric_has_backlog_without_capacity(
        self, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """1 while requests are queued and no instance runs, else 0
        (``HasBacklogWithoutCapacity``, the metric that wakes the endpoint; by default the
        Average)."""
        return self.metric_endpoint("HasBacklogWithoutCapacity", **options)


class AsyncEndpoint(VariantEndpoint, QueueMetrics):
    """One model behind a queue: an ``AWS::SageMaker::Model``, an endpoint config with
    ``AsyncInferenceConfig`` (results, failures, notifications, concurrency) and an
    endpoint, scaled on its backlog (by default down to zero instances).

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``variant_name``, ``model``, ``model_name`` (the logical name), ``execution_role``,
    ``network`` and ``security_group`` (None outside a VPC), ``storage_key``,
    ``results_bucket``, ``results_key``, ``input_bucket``, ``input_key`` (None when
    unknown), ``success_topic``, ``error_topic``, ``input_location``, ``output_location``
    and ``failure_location`` (``s3://`` URIs), ``scaling`` (an :class:`AsyncAutoScaling`,
    None without scaling).
    Construct IDs: ``Model``, ``EndpointConfig``, ``Endpoint`` (``Endpoint<key>`` with
    scaling: ``replacement_key`` of the instance type), ``Results``, ``Key``,
    ``SuccessTopic``, ``ErrorTopic``, ``Scaling``, ``ExecutionRole``, ``SecurityGroup``.

    Metrics: ``Invocations`` is not published for asynchronous endpoints ("Monitor
    asynchronous endpoint" in the SageMaker Developer Guide), so :meth:`metric_invocations`
    has no data; the errors and ``ModelLatency`` are, and the queue's metrics (dimension
    ``EndpointName``) have their own ``metric_*`` methods (:class:`QueueMetrics`).
    :meth:`grant_invoke` lets a principal queue requests (``InvokeEndpointAsync``; an
    asynchronous endpoint takes no other invocation). It implements
    :class:`~fm_platform.constructs.inference.endpoint_interface.IAsyncEndpoint`. An
    ``aws_apigateway.SagemakerIntegration`` takes it as it takes every ``IEndpoint``, but
    calls ``InvokeEndpoint`` (``/endpoints/{name}/invocations``, botocore
    ``sagemaker-runtime``), which an asynchronous endpoint refuses: put an
    ``aws_apigateway.AwsIntegration`` on ``/endpoints/{name}/async-invocations``
    (``InvokeEndpointAsync``) in front of it instead.
    """

    INVOKE_ACTIONS = (INVOKE_ASYNC_ACTION,)

    def __init__(self, scope: Construct, construct_id: str, props: AsyncEndpointProps) -> None:
        """Create the endpoint, its config, its model, its storage and topics under
        ``scope``; ``props`` is validated first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.endpoint_name)
        self.variant_name = props.variant_name
        self.model_name = props.model_name
        container = props.container.with_image_for(self)
        self._prepare_models(props, [container])
        self._storage(props)
        self._topics(props)
        self._grant_execution_role()
        tags = [CfnTag(key="fm_platform:model-name", value=props.model_name)]
        self.model = self._add_model("Model", container.to_container_property(self), tags)
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                self._production_variant(
                    variant_name=props.variant_name,
                    model=self.model,
                    instance_type=props.instance_type,
                    initial_instance_count=props.initial_instance_count,
                    container=container,
                    options=props,
                )
            ],
            async_inference_config=self._async_config(props),
        )
        self.storage_key = encrypt_endpoint_config(
            self, self.endpoint_config, [props.instance_type], props.encryption_key
        )
        self._create_endpoint(
            self.endpoint_config,
            props.endpoint_name,
            # A scaled variant's instance type cannot change in place: a new endpoint.
            scaled_variants_key(
                [(props.variant_name, props.instance_type)] if props.scaling is not None else []
            ),
        )
        self.scaling: AsyncAutoScaling | None = (
            AsyncAutoScaling(
                self,
                "Scaling",
                endpoint_name=self.endpoint_name,
                variant_name=props.variant_name,
                scaling=props.scaling,
            )
            if props.scaling is not None
            else None
        )

    # -- storage and notifications ----------------------------------------------------------

    def _storage(self, props: AsyncEndpointProps) -> None:
        bucket = props.results_bucket
        key = props.results_key or (bucket.encryption_key if bucket is not None else None)
        if key is None:
            key = customer_managed_key(
                self, "Key", purpose=f"SageMaker asynchronous inference of {self.node.path}"
            )
        if bucket is None:
            bucket = SecureBucket(
                self,
                "Results",
                SecureBucketProps(
                    purpose="SageMaker asynchronous inference requests and results",
                    encryption_key=key,
                ),
            ).bucket
        self.results_bucket: s3.IBucket = bucket
        self.results_key: kms.IKey = key
        self.input_bucket: s3.IBucket = props.input_bucket or bucket
        self.input_key: kms.IKey | None = key
        if props.input_bucket is not None:
            self.input_key = props.input_key or props.input_bucket.encryption_key
        self._prefix = props.s3_prefix
        self.input_location = self._location(self.input_bucket, INPUTS)
        self.output_location = self._location(bucket, OUTPUTS)
        self.failure_location = self._location(bucket, FAILURES)

    def _location(self, bucket: s3.IBucket, folder: str) -> str:
        return f"s3://{bucket.bucket_name}/{self._prefix}/{folder}"

    def _objects(self, bucket: s3.IBucket, folder: str) -> str:
        return bucket.arn_for_objects(f"{self._prefix}/{folder}/*")

    def _topics(self, props: AsyncEndpointProps) -> None:
        self.success_topic: sns.ITopic = props.success_topic or self._topic(
            "SuccessTopic", "succeeded"
        )
        self.error_topic: sns.ITopic = props.error_topic or self._topic("ErrorTopic", "failed")
        # Created topics use the results key, which the execution role already uses.
        self._topic_key = props.topic_key

    def _topic(self, construct_id: str, outcome: str) -> sns.Topic:
        return sns.Topic(
            self,
            construct_id,
            display_name=f"Asynchronous inference requests that {outcome}",
            master_key=self.results_key,
            enforce_ssl=True,
        )

    def _grant_execution_role(self) -> None:
        """Let the execution role read request bodies, write results and failures, and
        notify the topics."""
        role = self.execution_role
        inputs = self._objects(self.input_bucket, INPUTS)
        results = [
            self._objects(self.results_bucket, OUTPUTS),
            self._objects(self.results_bucket, FAILURES),
        ]
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[inputs])
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:AbortMultipartUpload"], resources=results
            )
        )
        if self.input_key is not None:
            self.input_key.grant(role, "kms:Decrypt")
        # Results may be uploaded in parts, which needs Decrypt too.
        self.results_key.grant(role, "kms:Encrypt", "kms:GenerateDataKey", "kms:Decrypt")
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["sns:Publish"],
                resources=[self.success_topic.topic_arn, self.error_topic.topic_arn],
            )
        )
        if self._topic_key is not None:
            self._topic_key.grant(role, "kms:GenerateDataKey", "kms:Decrypt")
        acknowledge_wildcard_resource(
            role,
            "SageMaker reads request bodies and writes results and failures under objects "
            f"it names per request, below the endpoint's {self._prefix}/ prefix; access is "
            "limited to its inputs/, outputs/ and failures/ folders.",
            inputs,
            *results,
        )

    def _async_config(
        self, props: AsyncEndpointProps
    ) -> sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty:
        config = sagemaker.CfnEndpointConfig
        concurrency = props.max_concurrent_invocations_per_instance
        return config.AsyncInferenceConfigProperty(
            output_config=config.AsyncInferenceOutputConfigProperty(
                s3_output_path=self.output_location,
                s3_failure_path=self.failure_location,
                kms_key_id=self.results_key.key_arn,
                notification_config=config.AsyncInferenceNotificationConfigProperty(
                    success_topic=self.success_topic.topic_arn,
                    error_topic=self.error_topic.topic_arn,
                ),
            ),
            client_config=(
                config.AsyncInferenceClientConfigProperty(
                    max_concurrent_invocations_per_instance=concurrency
                )
                if concurrency is not None
                else None
            ),
        )

    # -- imported endpoints -----------------------------------------------------------------

    @staticmethod
    def from_endpoint_name(
        scope: Construct, construct_id: str, endpoint_name: str
    ) -> IAsyncEndpoint:
        """An existing asynchronous endpoint, by name (its variant AllTraffic, its ARN built
        in ``scope``'s account and region), to invoke, measure and alarm. Nothing is
        created."""
        return ImportedAsyncEndpoint(
            scope, construct_id, EndpointAttributes(endpoint_name=endpoint_name)
        )

    @staticmethod
    def from_endpoint_arn(scope: Construct, construct_id: str, endpoint_arn: str) -> IAsyncEndpoint:
        """An existing asynchronous endpoint, by ARN (its name read from it, lower-cased as
        ARNs hold it). Nothing is created."""
        return ImportedAsyncEndpoint(
            scope, construct_id, EndpointAttributes(endpoint_arn=endpoint_arn)
        )

    @staticmethod
    def from_endpoint_attributes(
        scope: Construct, construct_id: str, attrs: EndpointAttributes
    ) -> IAsyncEndpoint:
        """An existing asynchronous endpoint described by ``attrs``. Nothing is created."""
        return ImportedAsyncEndpoint(scope, construct_id, attrs)

    # -- grants -----------------------------------------------------------------------------

    def grant_write_inputs(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` upload request bodies under :attr:`input_location`
        (``s3:PutObject``, and encryption with the input key when it is known)."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["s3:PutObject", "s3:AbortMultipartUpload"],
            resource_arns=[self._objects(self.input_bucket, INPUTS)],
        )
        if self.input_key is not None:
            grant = grant.combine(
                self.input_key.grant(grantee, "kms:GenerateDataKey", "kms:Decrypt")
            )
        return grant

    def grant_read_results(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read results and failures (``s3:GetObject`` under
        :attr:`output_location` and :attr:`failure_location`, decrypting with the results
        key)."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["s3:GetObject"],
            resource_arns=[
                self._objects(self.results_bucket, OUTPUTS),
                self._objects(self.results_bucket, FAILURES),
            ],
        )
        return grant.combine(self.results_key.grant_decrypt(grantee))


class ImportedAsyncEndpoint(ImportedEndpoint, QueueMetrics):
    """An asynchronous endpoint deployed elsewhere (see
    :meth:`AsyncEndpoint.from_endpoint_attributes`): ``grant_invoke`` grants
    ``InvokeEndpointAsync``; the queue's metrics as :class:`AsyncEndpoint`'s. Its
    ``model_name`` and ``failure_location`` are unknown (None)."""

    def __init__(self, scope: Construct, construct_id: str, attrs: EndpointAttributes) -> None:
        """Describe the endpoint under ``scope``; ``attrs`` are validated first."""
        super().__init__(scope, construct_id, attrs, invoke_actions=AsyncEndpoint.INVOKE_ACTIONS)
        self.model_name: str | None = None
        self.failure_location: str | None = None
