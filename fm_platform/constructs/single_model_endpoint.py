"""A SageMaker real-time endpoint serving one model on dedicated instances.

The hosting option for models that need isolation (their own instances, network isolation,
a dedicated security group), data capture, shadow tests or weighted A/B variants; each
variant scales on invocations per instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.compliance import acknowledge_wildcard_resource
from fm_platform.constructs.encryption import customer_managed_key
from fm_platform.constructs.hosting import (
    HostingRole,
    HostingRoleProps,
    ModelContainer,
    acknowledge_config_without_key,
    grant_image_pull,
    grant_model_artifacts,
    role_policies,
    storage_key_applies,
    volume_encryption_key,
)
from fm_platform.constructs.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.specs.sagemaker_model import enum_values
from fm_platform.validation import Problems, is_unresolved

INVOKE_ACTIONS = ("sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream")


@dataclass(frozen=True, kw_only=True)
class VariantSpec:
    """One more production variant (weighted traffic) or a shadow variant.

    variant_name: the variant's name (unique within the endpoint).
    container: what the variant's model runs.
    instance_type: the variant's instance type.
    initial_instance_count: instances at creation; by default 1.
    initial_weight: the variant's share of traffic relative to the other variants' weights
        (for a shadow variant: the share of requests copied to it relative to the
        production variant); by default 1.0.
    scaling: instance-level autoscaling of this variant; by default the instance count
        stays fixed.
    """

    variant_name: str
    container: ModelContainer
    instance_type: str
    initial_instance_count: int = 1
    initial_weight: float = 1.0
    scaling: InstanceScaling | None = None


@dataclass(frozen=True, kw_only=True)
class DataCaptureProps:
    """Capture of requests and responses to an encrypted S3 location.

    sampling_percentage: the percentage of requests captured (0-100); by default 100.
    capture_requests / capture_responses: what is captured; by default both.
    bucket: where captures are written; by default a :class:`SecureBucket` is created.
    prefix: the key prefix captures are written under; by default ``data-capture``.
    encryption_key: the KMS key SageMaker encrypts captures with; by default the created
        bucket's key, else the passed bucket's key, else a new customer-managed key.
    """

    sampling_percentage: int = 100
    capture_requests: bool = True
    capture_responses: bool = True
    bucket: s3.IBucket | None = None
    prefix: str = "data-capture"
    encryption_key: kms.IKey | None = None

    def check(self, problems: Problems, field: str = "data_capture") -> None:
        """Add every problem with these settings to ``problems``."""
        problems.check_range(f"{field}.sampling_percentage", self.sampling_percentage, 0, 100)
        if not (self.capture_requests or self.capture_responses):
            problems.add(
                f"{field}.capture_requests",
                self.capture_requests,
                "capture_requests or capture_responses must be True",
            )
        if not is_unresolved(self.prefix) and (
            not self.prefix or self.prefix.startswith("/") or self.prefix.endswith("/")
        ):
            problems.add(
                f"{field}.prefix", self.prefix, "must be non-empty, without leading/trailing /"
            )


@dataclass(frozen=True, kw_only=True)
class SingleModelEndpointProps:
    """Options for :class:`SingleModelEndpoint`.

    model_name: a stable logical name of the model (ModelName rules: letters, digits and
        hyphens, at most 63), set as the ``fm_platform:model-name`` tag of its SageMaker
        models. Models and the endpoint config get generated names so that updates can
        replace them.
    container: what the model runs.
    instance_type: the instance type of the production variant (a SageMaker hosting
        ``ml.*`` type).
    initial_instance_count: instances at creation; by default 1.
    variant_name: the production variant's name; by default ``AllTraffic``.
    initial_weight: the production variant's traffic weight; by default 1.0.
    scaling: instance-level autoscaling of the production variant; by default the
        instance count stays fixed.
    variants: further weighted production variants (A/B tests), each with its own model;
        by default none.
    shadow_variant: a shadow variant receiving copies of production requests (responses
        are discarded); by default none. Not combinable with ``variants``.
    data_capture: request/response capture; by default off.
    network_isolation: run the containers without network access; by default False.
    vpc: run the endpoint in this VPC; by default SageMaker's own network is used.
    vpc_subnets: the subnets in ``vpc``; by default its private subnets.
    security_group: the endpoint's security group; by default, with a VPC, a dedicated
        security group with no ingress and HTTPS egress is created.
    encryption_key: KMS key of the instances' storage volumes; by default a
        customer-managed key for EBS-backed types and no key for types with local NVMe
        storage (a passed key is then ignored with a warning).
    artifact_key: KMS key encrypting the model artifacts; by default no decrypt grant.
    execution_role: the role models run as; by default a least-privilege role is created.
        A passed role gets image pull, artifact read and data-capture write added; VPC
        network-interface permissions are then the caller's to grant.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    """

    model_name: str
    container: ModelContainer
    instance_type: str
    initial_instance_count: int = 1
    variant_name: str = "AllTraffic"
    initial_weight: float = 1.0
    scaling: InstanceScaling | None = None
    variants: Sequence[VariantSpec] = ()
    shadow_variant: VariantSpec | None = None
    data_capture: DataCaptureProps | None = None
    network_isolation: bool = False
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_group: ec2.ISecurityGroup | None = None
    encryption_key: kms.IKey | None = None
    artifact_key: kms.IKey | None = None
    execution_role: iam.IRole | None = None
    endpoint_name: str | None = None

    @property
    def primary_variant(self) -> VariantSpec:
        """The production variant described by the top-level fields."""
        return VariantSpec(
            variant_name=self.variant_name,
            container=self.container,
            instance_type=self.instance_type,
            initial_instance_count=self.initial_instance_count,
            initial_weight=self.initial_weight,
            scaling=self.scaling,
        )

    @property
    def all_variants(self) -> tuple[VariantSpec, ...]:
        """Every variant: production ones first, then the shadow one."""
        shadow = (self.shadow_variant,) if self.shadow_variant else ()
        return (self.primary_variant, *self.variants, *shadow)

    def validate(self) -> None:
        """Raise one ``ValueError`` listing every problem with these props."""
        problems = Problems("SingleModelEndpointProps")
        problems.check_shape("model_name", self.model_name, "ModelName")
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")
        for index, variant in enumerate(self.all_variants):
            field = "variant" if index == 0 else f"variants[{variant.variant_name}]"
            check_variant(problems, field, variant)
        problems.check_unique("variant_name", (v.variant_name for v in self.all_variants))
        if self.shadow_variant is not None and self.variants:
            problems.add(
                "shadow_variant",
                self.shadow_variant.variant_name,
                "a shadow test needs exactly one production variant; remove `variants`",
            )
        if self.data_capture is not None:
            self.data_capture.check(problems)
        check_network(problems, self.vpc, self.vpc_subnets, self.security_group)
        problems.raise_if_any()


def check_instance_type(problems: Problems, field: str, instance_type: str) -> None:
    """Check ``instance_type`` is a SageMaker hosting type this package has figures for."""
    if is_unresolved(instance_type):
        return
    if instance_type not in enum_values("ProductionVariantInstanceType"):
        problems.add(
            field,
            instance_type,
            "not an instance type SageMaker hosting offers (botocore enum "
            "ProductionVariantInstanceType), e.g. ml.m5.xlarge, ml.g5.xlarge, ml.g5.12xlarge",
        )
        return
    try:
        instance_spec(instance_type)
    except UnknownInstanceTypeError as error:
        problems.add(field, instance_type, error.args[0])


def check_variant(problems: Problems, field: str, variant: VariantSpec) -> None:
    """Add the problems of one variant, fields under ``field``."""
    problems.check_shape(f"{field}.variant_name", variant.variant_name, "VariantName")
    check_instance_type(problems, f"{field}.instance_type", variant.instance_type)
    problems.check_range(f"{field}.initial_instance_count", variant.initial_instance_count, 1, None)
    if variant.initial_weight < 0:
        problems.add(f"{field}.initial_weight", variant.initial_weight, "must be at least 0")
    if variant.scaling is not None:
        variant.scaling.check(problems, f"{field}.scaling")


def check_network(
    problems: Problems,
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_group: ec2.ISecurityGroup | None,
) -> None:
    """Subnets and security groups only make sense with a VPC."""
    if vpc is None:
        for name, value in (("vpc_subnets", vpc_subnets), ("security_group", security_group)):
            if value is not None:
                problems.add(name, value, "needs `vpc` to be set")


class EndpointNetwork:
    """The VPC placement of an endpoint's models: subnets and a security group."""

    def __init__(
        self,
        scope: Construct,
        *,
        vpc: ec2.IVpc,
        vpc_subnets: ec2.SubnetSelection | None,
        security_group: ec2.ISecurityGroup | None,
    ) -> None:
        if security_group is None:
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
            security_group = created
        self.security_group = security_group
        self.subnet_ids = vpc.select_subnets(**_selection_kwargs(vpc_subnets)).subnet_ids

    def model_vpc_config(self) -> sagemaker.CfnModel.VpcConfigProperty:
        return sagemaker.CfnModel.VpcConfigProperty(
            security_group_ids=[self.security_group.security_group_id],
            subnets=self.subnet_ids,
        )


def _selection_kwargs(selection: ec2.SubnetSelection | None) -> dict:
    if selection is None:
        return {}
    keys = ("availability_zones", "one_per_az", "subnet_filters", "subnet_group_name")
    keys += ("subnets", "subnet_type")
    return {k: getattr(selection, k) for k in keys if getattr(selection, k) is not None}


def execution_role_for(
    scope: Construct,
    *,
    role: iam.IRole | None,
    containers: Sequence[ModelContainer],
    artifact_key: kms.IKey | None,
    in_vpc: bool,
) -> iam.IRole:
    """``role`` extended with image pull and artifact read for ``containers``, or a new
    least-privilege :class:`HostingRole` (construct ID ``ExecutionRole``) with them."""
    images = list(dict.fromkeys(c.image for c in containers))
    urls = list(dict.fromkeys(c.model_data_url for c in containers if c.model_data_url))
    if role is None:
        hosting = HostingRole(
            scope,
            "ExecutionRole",
            HostingRoleProps(
                images=images, model_data_urls=urls, artifact_key=artifact_key, in_vpc=in_vpc
            ),
        )
        return hosting.role
    for image in images:
        grant_image_pull(role, image)
    for url in urls:
        grant_model_artifacts(role, url, artifact_key)
    return role


def storage_key(
    scope: Construct, instance_types: Sequence[str], key: kms.IKey | None
) -> kms.IKey | None:
    """The endpoint-config KMS key: set only when every variant's storage is EBS."""
    nvme = [t for t in instance_types if not storage_key_applies(t)]
    return volume_encryption_key(scope, nvme[0] if nvme else instance_types[0], key)


def invocation_metric(
    endpoint_name: str, variant_name: str, metric_name: str, statistic: str
) -> cloudwatch.Metric:
    """A per-minute ``AWS/SageMaker`` metric of one endpoint variant."""
    return cloudwatch.Metric(
        namespace="AWS/SageMaker",
        metric_name=metric_name,
        dimensions_map={"EndpointName": endpoint_name, "VariantName": variant_name},
        statistic=statistic,
        period=Duration.minutes(1),
    )


class SingleModelEndpoint(Construct):
    """One model on dedicated instances: ``AWS::SageMaker::Model`` per variant, an endpoint
    config and an endpoint, with optional instance scaling, data capture, shadow and
    weighted variants, network isolation and VPC placement.

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``model`` (the production variant's), ``models`` (by variant name), ``execution_role``,
    ``security_group`` (None outside a VPC), ``data_capture_bucket`` (None without
    capture), ``storage_key``, ``scalable_targets`` (by variant name).
    Construct IDs: ``Model`` (production variant), ``Model-<variant>`` (other variants),
    ``EndpointConfig``, ``Endpoint``, ``Scaling-<variant>``, ``ExecutionRole``,
    ``SecurityGroup``, ``DataCapture``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: SingleModelEndpointProps
    ) -> None:
        super().__init__(scope, construct_id)
        props.validate()
        self.props = props
        variants = props.all_variants

        self.network = (
            EndpointNetwork(
                self,
                vpc=props.vpc,
                vpc_subnets=props.vpc_subnets,
                security_group=props.security_group,
            )
            if props.vpc is not None
            else None
        )
        self.security_group = self.network.security_group if self.network else None
        self.execution_role = execution_role_for(
            self,
            role=props.execution_role,
            containers=[v.container for v in variants],
            artifact_key=props.artifact_key,
            in_vpc=props.vpc is not None,
        )

        self.models: dict[str, sagemaker.CfnModel] = {}
        for index, variant in enumerate(variants):
            model_id = "Model" if index == 0 else f"Model-{variant.variant_name}"
            self.models[variant.variant_name] = self._model(model_id, variant.container)
        self.model = self.models[props.variant_name]

        self.data_capture_bucket: s3.IBucket | None = None
        self.data_capture_key: kms.IKey | None = None
        data_capture = self._data_capture(props.data_capture) if props.data_capture else None

        self.storage_key = storage_key(
            self, [v.instance_type for v in variants], props.encryption_key
        )
        shadow_count = 1 if props.shadow_variant else 0
        production = variants[: len(variants) - shadow_count]
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[self._variant_property(v) for v in production],
            shadow_production_variants=(
                [self._variant_property(props.shadow_variant)] if props.shadow_variant else None
            ),
            data_capture_config=data_capture,
            kms_key_id=self.storage_key.key_arn if self.storage_key else None,
        )
        if self.storage_key is None:
            acknowledge_config_without_key(
                self.endpoint_config,
                next(v.instance_type for v in variants if not storage_key_applies(v.instance_type)),
            )
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=props.endpoint_name,
        )
        self.endpoint_name: str = self.endpoint.attr_endpoint_name
        self.endpoint_arn: str = self.endpoint.attr_endpoint_arn

        self.scalable_targets: dict[str, appscaling.ScalableTarget] = {}
        for variant in production:
            if variant.scaling is not None:
                self.scalable_targets[variant.variant_name] = add_instance_scaling(
                    self,
                    f"Scaling-{variant.variant_name}",
                    endpoint=self.endpoint,
                    variant_name=variant.variant_name,
                    scaling=variant.scaling,
                )

    def _model(self, construct_id: str, container: ModelContainer) -> sagemaker.CfnModel:
        model = sagemaker.CfnModel(
            self,
            construct_id,
            execution_role_arn=self.execution_role.role_arn,
            primary_container=container.to_container_property(),
            enable_network_isolation=self.props.network_isolation or None,
            vpc_config=self.network.model_vpc_config() if self.network else None,
            tags=[{"key": "fm_platform:model-name", "value": self.props.model_name}],
        )
        for policy in role_policies(self.execution_role):
            model.node.add_dependency(policy)
        return model

    def _variant_property(
        self, variant: VariantSpec
    ) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        return sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=variant.variant_name,
            model_name=self.models[variant.variant_name].attr_model_name,
            instance_type=variant.instance_type,
            initial_instance_count=variant.initial_instance_count,
            initial_variant_weight=variant.initial_weight,
        )

    def _data_capture(
        self, capture: DataCaptureProps
    ) -> sagemaker.CfnEndpointConfig.DataCaptureConfigProperty:
        key = capture.encryption_key
        bucket = capture.bucket
        if bucket is None:
            created = SecureBucket(
                self, "DataCapture", SecureBucketProps(purpose="SageMaker endpoint data capture")
            )
            bucket = created.bucket
            key = key or created.encryption_key
        key = (
            key
            or bucket.encryption_key
            or customer_managed_key(
                self, "DataCaptureKey", purpose="SageMaker endpoint data capture"
            )
        )
        self.data_capture_bucket = bucket
        self.data_capture_key = key
        grant_capture_write(self.execution_role, bucket, capture.prefix, key)
        modes = [("Input", capture.capture_requests), ("Output", capture.capture_responses)]
        return sagemaker.CfnEndpointConfig.DataCaptureConfigProperty(
            enable_capture=True,
            initial_sampling_percentage=capture.sampling_percentage,
            destination_s3_uri=f"s3://{bucket.bucket_name}/{capture.prefix}",
            kms_key_id=key.key_arn,
            capture_options=[
                sagemaker.CfnEndpointConfig.CaptureOptionProperty(capture_mode=mode)
                for mode, wanted in modes
                if wanted
            ],
        )

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` invoke this endpoint (streaming included)."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(INVOKE_ACTIONS), resource_arns=[self.endpoint_arn]
        )

    def metric_invocations(self, variant_name: str | None = None) -> cloudwatch.Metric:
        """Invocations per minute (sum) of a variant; by default the production variant."""
        variant = variant_name or self.props.variant_name
        return invocation_metric(self.endpoint_name, variant, "Invocations", "Sum")

    def metric_model_latency(self, variant_name: str | None = None) -> cloudwatch.Metric:
        """Average model latency (microseconds) of a variant; by default the production
        variant."""
        variant = variant_name or self.props.variant_name
        return invocation_metric(self.endpoint_name, variant, "ModelLatency", "Average")


def grant_capture_write(role: iam.IRole, bucket: s3.IBucket, prefix: str, key: kms.IKey) -> None:
    """Let ``role`` write captured data under ``prefix`` of ``bucket`` encrypted with
    ``key``."""
    objects = bucket.arn_for_objects(f"{prefix}/*")
    role.add_to_principal_policy(iam.PolicyStatement(actions=["s3:PutObject"], resources=[objects]))
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=["kms:Encrypt", "kms:GenerateDataKey"], resources=[key.key_arn])
    )
    acknowledge_wildcard_resource(
        role,
        f"SageMaker data capture writes objects with generated names under the {prefix}/ "
        "prefix of the capture bucket; writing is limited to that prefix.",
        objects,
    )
