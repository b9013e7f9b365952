"""What every SageMaker real-time endpoint construct shares.

- :func:`endpoint_network` / :class:`EndpointNetwork` / :class:`EndpointVpcConfig`: VPC
  placement (selected subnets and, unless given, a dedicated security group without ingress
  and with HTTPS-only egress).
- :class:`RealtimeEndpoint`: the ``Endpoint`` resource serving an endpoint config, its name
  and ARN, invoke grants and per-variant ``AWS/SageMaker`` metrics, every ``metric_*``
  method with the same options (what
  :class:`~fm_platform.constructs.inference.endpoint_interface.IEndpoint` asks for);
  :class:`VariantEndpoint` (options: :class:`VariantEndpointProps`) adds the models of its
  variants (VPC placement, execution role).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import jsii
from aws_cdk import CfnTag, Duration, RemovalPolicy, Resource
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk.interfaces import aws_sagemaker as sagemaker_refs
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.execution_role import (
    depend_on_role_policies,
    execution_role_for,
    role_arn,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import (
    instance_weights_gib,
    timeouts,
    volume_size_gb,
)
from fm_platform.core.images import warn_if_image_from_another_region
from fm_platform.hardware.instances import instance_spec
from fm_platform.rules.components import check_startup_timeouts
from fm_platform.rules.hosting import check_vpc_options
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name
from fm_platform.rules.variant_features import check_variant_host

#: Invocation metrics, and per-instance utilisation metrics of endpoints (SageMaker
#: Developer Guide, "Amazon SageMaker AI metrics in Amazon CloudWatch").
SAGEMAKER_NAMESPACE = "AWS/SageMaker"
ENDPOINT_INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
INVOKE_ACTIONS = ("sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream")
_SELECTION_FIELDS = (
    "availability_zones",
    "one_per_az",
    "subnet_filters",
    "subnet_group_name",
    "subnets",
    "subnet_type",
)


@dataclass(frozen=True, kw_only=True)
class EndpointVpcConfig:
    """The subnets and security groups an endpoint's containers use (IDs only, so that it
    can be passed to constructs in other stacks)."""

    subnet_ids: Sequence[str]
    security_group_ids: Sequence[str]

    def model_property(self) -> sagemaker.CfnModel.VpcConfigProperty:
        """The ``AWS::SageMaker::Model`` ``VpcConfig``."""
        return sagemaker.CfnModel.VpcConfigProperty(
            subnets=list(self.subnet_ids), security_group_ids=list(self.security_group_ids)
        )

    def endpoint_config_property(self) -> sagemaker.CfnEndpointConfig.VpcConfigProperty:
        """The ``AWS::SageMaker::EndpointConfig`` ``VpcConfig``."""
        return sagemaker.CfnEndpointConfig.VpcConfigProperty(
            subnets=list(self.subnet_ids), security_group_ids=list(self.security_group_ids)
        )


@dataclass(frozen=True, kw_only=True)
class EndpointNetwork:
    """An endpoint's VPC placement: its security groups and the resulting VPC config."""

    security_groups: tuple[ec2.ISecurityGroup, ...]
    vpc_config: EndpointVpcConfig

    @property
    def security_group(self) -> ec2.ISecurityGroup:
        """The first (for the single-group endpoints: the only) security group."""
        return self.security_groups[0]


def endpoint_network(
    scope: Construct,
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None = None,
    security_groups: Sequence[ec2.ISecurityGroup] = (),
) -> EndpointNetwork | None:
    """The placement of ``scope``'s endpoint in ``vpc``, or None without a VPC.

    Subnets: ``vpc_subnets``, by default CDK's default selection (the private subnets, else
    the isolated ones). Security groups: ``security_groups``; when there are none, a
    dedicated group (construct ID ``SecurityGroup`` under ``scope``) with no ingress and
    egress only to HTTPS (S3, ECR and other AWS APIs through VPC endpoints or NAT).
    """
    if vpc is None:
        return None
    groups = tuple(security_groups)
    if not groups:
        created = ec2.SecurityGroup(
            scope,
            "SecurityGroup",
            vpc=vpc,
            description=f"SageMaker endpoint {scope.node.path} (no ingress)",
            allow_all_outbound=False,
        )
        created.add_egress_rule(
            ec2.Peer.any_ipv4(),
            ec2.Port.tcp(443),
            "HTTPS to S3, ECR and other AWS APIs (through endpoints or NAT)",
        )
        groups = (created,)
    selection = vpc_subnets or ec2.SubnetSelection()
    selected = vpc.select_subnets(
        **{
            name: getattr(selection, name)
            for name in _SELECTION_FIELDS
            if getattr(selection, name) is not None
        }
    )
    return EndpointNetwork(
        security_groups=groups,
        vpc_config=EndpointVpcConfig(
            subnet_ids=selected.subnet_ids,
            security_group_ids=[group.security_group_id for group in groups],
        ),
    )


def create_model(
    scope: Construct,
    construct_id: str,
    *,
    role: iam.IRole,
    container: sagemaker.CfnModel.ContainerDefinitionProperty,
    network_isolation: bool,
    vpc_config: EndpointVpcConfig | None,
    tags: Sequence[CfnTag] = (),
) -> sagemaker.CfnModel:
    """A SageMaker model (generated name) running ``container`` as ``role``, without
    network access when ``network_isolation``, in ``vpc_config`` when given; it waits for
    the role's policies, so that SageMaker can use the grants at once."""
    model = sagemaker.CfnModel(
        scope,
        construct_id,
        execution_role_arn=role_arn(role),
        primary_container=container,
        enable_network_isolation=network_isolation or None,
        vpc_config=vpc_config.model_property() if vpc_config else None,
        tags=list(tags) or None,
    )
    depend_on_role_policies(model, role)
    if container.image is not None:
        warn_if_image_from_another_region(scope, container.image)
    return model


class MetricOptions(TypedDict, total=False):
    """The options every ``metric_*`` method takes as keywords: ``statistic`` (by default
    the method's), ``period`` (by default 1 minute), ``label`` and ``unit``."""

    statistic: str | None
    period: Duration | None
    label: str | None
    unit: cloudwatch.Unit | None


def with_statistic(options: MetricOptions, statistic: str) -> MetricOptions:
    """``options``, with ``statistic`` unless they name one."""
    return {**options, "statistic": options.get("statistic") or statistic}


def sagemaker_metric(
    metric_name: str,
    dimensions: dict[str, str],
    *,
    namespace: str = SAGEMAKER_NAMESPACE,
    **options: Unpack[MetricOptions],
) -> cloudwatch.Metric:
    """A SageMaker metric with ``dimensions``: by default the Average over 1 minute."""
    return cloudwatch.Metric(
        namespace=namespace,
        metric_name=metric_name,
        dimensions_map=dimensions,
        statistic=options.get("statistic") or cloudwatch.Stats.AVERAGE,
        period=options.get("period") or Duration.minutes(1),
        label=options.get("label"),
        unit=options.get("unit"),
    )


@jsii.implements(sagemaker.IEndpoint)
class RealtimeEndpoint(Resource):
    """Base of the endpoint constructs: a CDK ``Resource`` implementing aws-cdk-lib's
    ``aws_sagemaker.IEndpoint`` (so ``aws_apigateway.SagemakerIntegration`` and any API
    typed to it take every endpoint of this package, created or imported), invoke grants
    and per-variant metrics.

    Attributes (set by :meth:`_create_endpoint`): ``endpoint`` (construct ID ``Endpoint``,
    followed by ``replacement_key`` when the kind has one; None for an imported endpoint),
    ``replacement_key``, ``endpoint_name``, ``endpoint_arn`` (the endpoint's
    ``Ref``, which is its ARN: the same token for every endpoint construct, so cross-stack
    exports of it stay stable), ``endpoint_ref``; ``variant_name`` (set by the subclass:
    the variant the ``metric_*`` methods measure unless told another). It fits
    :class:`~fm_platform.constructs.inference.endpoint_interface.IEndpoint`.
    """

    endpoint: sagemaker.CfnEndpoint | None
    variant_name: str
    replacement_key: str | None = None
    _endpoint_name: str
    _endpoint_arn: str
    #: The utilisation metric every instance of a variant reports once per publishing
    #: period (namespace ``/aws/sagemaker/Endpoints``): counted by :meth:`metric_instances`.
    INSTANCE_METRIC = "CPUUtilization"
    #: What :meth:`grant_invoke` allows.
    INVOKE_ACTIONS: tuple[str, ...] = INVOKE_ACTIONS

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        physical_name: str | None = None,
        environment_from_arn: str | None = None,
    ) -> None:
        """The resource under ``scope``: ``physical_name`` is the endpoint's explicit name
        (None: CloudFormation generates one); an imported endpoint's account and region
        come from ``environment_from_arn``."""
        super().__init__(
            scope,
            construct_id,
            physical_name=physical_name,
            environment_from_arn=environment_from_arn,
        )

    # Properties, not instance attributes: the JavaScript side of aws-cdk-lib reads the
    # members of ``IEndpoint`` through jsii, which sees class-level members only.
    @property
    def endpoint_name(self) -> str:
        """The endpoint's name (a token for a created endpoint)."""
        return self._endpoint_name

    @property
    def endpoint_arn(self) -> str:
        """The endpoint's ARN (a token for a created endpoint)."""
        return self._endpoint_arn

    @property
    def endpoint_ref(self) -> sagemaker_refs.EndpointReference:
        """A reference to the endpoint (its ARN), as aws-cdk-lib's ``IEndpointRef`` has it."""
        return sagemaker_refs.EndpointReference(endpoint_arn=self.endpoint_arn)

    def apply_removal_policy(self, policy: RemovalPolicy) -> None:
        """Apply ``policy`` to the ``AWS::SageMaker::Endpoint`` (an imported endpoint has
        none to apply it to: the error says so)."""
        if self.endpoint is None:
            raise ValueError(
                f"{self.node.path}: an imported endpoint has no resource in this app to "
                "apply a removal policy to"
            )
        self.endpoint.apply_removal_policy(policy)

    @property
    def instance_metric(self) -> str:
        """The per-instance utilisation metric that counts the variant's instances
        (``INSTANCE_METRIC``)."""
        return self.INSTANCE_METRIC

    def _create_endpoint(
        self,
        endpoint_config: sagemaker.CfnEndpointConfig,
        endpoint_name: str | None,
        replacement_key: str | None = None,
    ) -> None:
        """Create the endpoint serving ``endpoint_config``; without ``endpoint_name``
        CloudFormation generates its name. ``replacement_key`` (see
        :mod:`fm_platform.rules.replacement`) follows ``Endpoint`` in its construct ID, so
        that a change of the settings SageMaker cannot update in place creates a new
        endpoint beside the old one."""
        self.replacement_key = replacement_key
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            f"Endpoint{replacement_key or ''}",
            endpoint_config_name=endpoint_config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
        )
        self._endpoint_name = self.endpoint.attr_endpoint_name
        self._endpoint_arn = self.endpoint.ref

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` invoke this endpoint (``INVOKE_ACTIONS``: ``InvokeEndpoint`` and
        ``InvokeEndpointWithResponseStream``; ``InvokeEndpointAsync`` for an asynchronous
        endpoint)."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(self.INVOKE_ACTIONS), resource_arns=[self.endpoint_arn]
        )

    # -- metrics: every method takes the same options -------------------------------------

    def metric_dimensions(self, variant_name: str | None = None) -> dict[str, str]:
        """The dimensions of a variant's metrics (``EndpointName``, ``VariantName``; by
        default the endpoint's ``variant_name``), plain values for alarms and dashboards
        built without CDK metric objects."""
        return {
            "EndpointName": self.endpoint_name,
            "VariantName": variant_name or self.variant_name,
        }

    def metric(
        self,
        metric_name: str,
        variant_name: str | None = None,
        *,
        namespace: str = SAGEMAKER_NAMESPACE,
        **options: Unpack[MetricOptions],
    ) -> cloudwatch.Metric:
        """A metric of a variant of this endpoint (dimensions ``EndpointName`` and
        ``VariantName``; by default the endpoint's ``variant_name``): by default the Average
        over 1 minute. Instance utilisation metrics live in namespace
        ``/aws/sagemaker/Endpoints``."""
        return sagemaker_metric(
            metric_name, self.metric_dimensions(variant_name), namespace=namespace, **options
        )

    def metric_invocations(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Requests sent to the variant (by default the Sum)."""
        return self.metric(
            "Invocations", variant_name, **with_statistic(options, cloudwatch.Stats.SUM)
        )

    def metric_invocation_5xx_errors(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Requests the model answered with a 5xx error (by default the Sum)."""
        return self.metric(
            "Invocation5XXErrors", variant_name, **with_statistic(options, cloudwatch.Stats.SUM)
        )

    def metric_invocation_4xx_errors(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Requests answered with a 4xx error (by default the Sum)."""
        return self.metric(
            "Invocation4XXErrors", variant_name, **with_statistic(options, cloudwatch.Stats.SUM)
        )

    def metric_instances(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The variant's instances in service: each instance reports its utilisation
        (``INSTANCE_METRIC``, namespace ``/aws/sagemaker/Endpoints``) once per publishing
        period, 60 s unless the endpoint config changes it, so the SampleCount over one
        minute counts them (by default that SampleCount over 1 minute). SageMaker
        publishes no instance-count metric of its own; AWS counts instances the same way
        ("Enhanced metrics for Amazon SageMaker AI endpoints", AWS Machine Learning Blog,
        March 2026)."""
        return self.metric(
            self.INSTANCE_METRIC,
            variant_name,
            **with_statistic(options, cloudwatch.Stats.SAMPLE_COUNT),
            namespace=ENDPOINT_INSTANCE_NAMESPACE,
        )

    def metric_model_latency(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Time the model took to respond, in microseconds (by default the Average)."""
        return self.metric("ModelLatency", variant_name, **options)


@dataclass(frozen=True, kw_only=True)
class VariantEndpointOptions:
    """The plain options shared by the endpoints whose variants serve models they create
    (:class:`SingleModelEndpointOptions`, :class:`MultiModelEndpointOptions`).

    network_isolation: run the containers without network access; by default True:
        SageMaker reads the artifacts from S3 and the images from ECR with the execution
        role, outside the container. Set False only for containers that must reach the
        network themselves, e.g. to download weights from a model hub at startup.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    model_data_download_timeout_s: seconds to download the production variant's artifacts
        (60-3600); by default 60 + 15 per GiB of the weights (the container's
        ``model_size_gib``; without it, as many as the instance's accelerators, else its
        host memory, hold: an upper bound), within 60-3600.
    container_startup_health_check_timeout_s: seconds for the production variant's
        container to pass its health check (60-3600); by default 300 + 10 per GiB of the
        weights, estimated the same way, within 60-3600.
    volume_size_gb: the storage volume of each instance (1-512 GB; types without a local
        disk only); by default SageMaker's, or, for weights over its 30 GB default, the
        weights (twice for a ``model.tar.gz``) plus 10 GB.
    inference_ami_version: the production variant's inference AMI (botocore
        ``ProductionVariantInferenceAmiVersion``); by default SageMaker's for the type.
    enable_ssm_access: let operators open SSM sessions to the production variant's
        instances; by default False.
    """

    network_isolation: bool = True
    endpoint_name: str | None = None
    model_data_download_timeout_s: int | None = None
    container_startup_health_check_timeout_s: int | None = None
    volume_size_gb: int | None = None
    inference_ami_version: str | None = None
    enable_ssm_access: bool = False

    def check_endpoint(self, problems: Problems) -> None:
        """Add the problems of these shared fields to ``problems``."""
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")
        check_startup_timeouts(
            problems,
            self.model_data_download_timeout_s,
            self.container_startup_health_check_timeout_s,
        )
        problems.check_shape(
            "volume_size_gb",
            self.volume_size_gb,
            member_shape_name("ProductionVariant", "VolumeSizeInGB"),
        )
        check_variant_host(
            problems,
            inference_ami_version=self.inference_ami_version,
            instance_provision_timeout_s=None,
        )


@dataclass(frozen=True, kw_only=True)
class VariantEndpointProps(VariantEndpointOptions):
    """The references shared by the props of endpoints whose variants serve models they
    create (:class:`SingleModelEndpointProps`, :class:`MultiModelEndpointProps`), beside the
    fields of :class:`VariantEndpointOptions`.

    vpc: run the models in this VPC; by default SageMaker's own network is used.
    vpc_subnets: the subnets in ``vpc``; by default CDK's default selection (the private
        subnets, else the isolated ones).
    security_group: the models' security group; by default, with a VPC, a dedicated security
        group with no ingress and HTTPS egress is created.
    encryption_key: KMS key of the instances' storage volumes; by default a customer-managed
        key for EBS-backed types and no key for types with local NVMe storage (a passed key
        is then ignored with a warning).
    artifact_key: KMS key encrypting the model artifacts; by default no decrypt grant.
    execution_role: the role the models run as; by default a least-privilege role is created.
        A passed role gets image pull and artifact read added; VPC network-interface
        permissions are then the caller's to grant.
    """

    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_group: ec2.ISecurityGroup | None = None
    encryption_key: kms.IKey | None = None
    artifact_key: kms.IKey | None = None
    execution_role: iam.IRole | None = None

    def check_references(self, problems: Problems) -> None:
        """Add the problems of the VPC options to ``problems``."""
        check_vpc_options(
            problems,
            self.vpc is not None,
            {"vpc_subnets": self.vpc_subnets, "security_group": self.security_group},
        )


class VariantEndpoint(RealtimeEndpoint):
    """An endpoint whose production variants serve models it creates: their VPC placement,
    execution role and ``AWS::SageMaker::Model`` resources.

    Attributes (set by :meth:`_prepare_models`): ``network`` and ``security_group`` (None
    outside a VPC), ``execution_role``. Construct IDs: ``SecurityGroup``,
    ``ExecutionRole``.
    """

    endpoint: sagemaker.CfnEndpoint
    network: EndpointNetwork | None
    security_group: ec2.ISecurityGroup | None
    execution_role: iam.IRole

    def _prepare_models(
        self, props: VariantEndpointProps, containers: Sequence[ModelContainer]
    ) -> None:
        """Place the models in ``props.vpc`` (see :func:`endpoint_network`; the only
        security group is ``props.security_group`` or a dedicated one) and give them
        ``props.execution_role`` extended for ``containers``, or a new least-privilege
        role."""
        groups = [props.security_group] if props.security_group else []
        self.network = endpoint_network(self, props.vpc, props.vpc_subnets, groups)
        self.security_group = self.network.security_group if self.network else None
        self.execution_role = execution_role_for(
            self,
            role=props.execution_role,
            containers=containers,
            artifact_key=props.artifact_key,
            in_vpc=props.vpc is not None,
        )
        self._network_isolation = props.network_isolation

    def _add_model(
        self,
        construct_id: str,
        container: sagemaker.CfnModel.ContainerDefinitionProperty,
        tags: Sequence[CfnTag] = (),
    ) -> sagemaker.CfnModel:
        """A model (generated name) running ``container`` as the execution role, in the
        endpoint's network; it waits for the role's policies."""
        return create_model(
            self,
            construct_id,
            role=self.execution_role,
            container=container,
            network_isolation=self._network_isolation,
            vpc_config=self.network.vpc_config if self.network else None,
            tags=tags,
        )

    def _production_variant(
        self,
        *,
        variant_name: str,
        model: sagemaker.CfnModel,
        instance_type: str,
        initial_instance_count: int,
        container: ModelContainer,
        options: VariantEndpointOptions | None = None,
        initial_weight: float = 1.0,
        archives: bool | None = None,
        pools: Sequence[sagemaker.CfnEndpointConfig.InstancePoolProperty] | None = None,
    ) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        """A production variant serving ``model`` on ``instance_type``, with the startup
        timeouts and volume that ``container``'s weights need (``options``: the variant's
        explicit settings; ``archives``: whether the models are ``.tar.gz`` archives, by
        default read from the container's artifacts URL; ``pools``: its
        ``InstancePools``, ``instance_type`` first, which then stand for its
        ``InstanceType``; the volume follows ``instance_type``, none is set when a pool's
        type has local NVMe storage)."""
        weights = container.model_size_gib
        if weights is None:
            weights = instance_weights_gib(instance_type)
        download_s, health_check_s = timeouts(
            weights,
            download_s=options.model_data_download_timeout_s if options else None,
            health_check_s=options.container_startup_health_check_timeout_s if options else None,
        )
        volume = volume_size_gb(
            instance_type,
            container.model_size_gib,
            compressed=(
                archives
                if archives is not None
                else container.model_data_url is not None and not container.is_uncompressed
            ),
            given=options.volume_size_gb if options else None,
        )
        if pools and any(instance_spec(p.instance_type).local_nvme for p in pools):
            volume = options.volume_size_gb if options else None
        return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=variant_name,
            model_name=model.attr_model_name,
            instance_type=None if pools else instance_type,
            instance_pools=list(pools) if pools else None,
            initial_instance_count=initial_instance_count,
            initial_variant_weight=initial_weight,
            model_data_download_timeout_in_seconds=download_s,
            container_startup_health_check_timeout_in_seconds=health_check_s,
            volume_size_in_gb=volume,
            inference_ami_version=options.inference_ami_version if options else None,
            enable_ssm_access=(options.enable_ssm_access or None) if options else None,
        )
