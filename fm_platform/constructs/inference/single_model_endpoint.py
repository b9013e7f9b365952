"""A SageMaker real-time endpoint serving one model on dedicated instances.

The hosting option for models that need isolation (their own instances, network isolation,
a dedicated security group), data capture, shadow tests or weighted A/B variants; each
variant scales on invocations per instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from aws_cdk import CfnTag
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import (
    VariantEndpoint,
    VariantEndpointOptions,
    VariantEndpointProps,
)
from fm_platform.constructs.inference.imported_endpoint import ImportableByName
from fm_platform.constructs.inference.instance_pools import FallbackPool, variant_pools
from fm_platform.constructs.inference.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.core.compliance import acknowledge_wildcard_resource
from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props, checked
from fm_platform.rules.pools import check_fallback_types
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import scaled_variants_key
from fm_platform.rules.variants import check_data_capture, check_variant


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

    def check(self, problems: Problems, field: str) -> None:
        """Add the problems of this variant, fields under ``field``."""
        if self.container is not None:
            self.container.check(problems, f"{field}.container")
        check_variant(
            problems,
            field,
            variant_name=self.variant_name,
            instance_type=self.instance_type,
            initial_instance_count=self.initial_instance_count,
            initial_weight=self.initial_weight,
        )
        if self.scaling is not None:
            self.scaling.check(problems, f"{field}.scaling")


@dataclass(frozen=True, kw_only=True)
class DataCaptureOptions:
    """Capture of requests and responses (the configuration's ``data_capture`` keys too).

    sampling_percentage: the percentage of requests captured (0-100); by default 100.
    capture_requests / capture_responses: what is captured; by default both.
    prefix: the key prefix captures are written under; by default ``data-capture``.
    """

    sampling_percentage: int = 100
    capture_requests: bool = True
    capture_responses: bool = True
    prefix: str = "data-capture"

    def check(self, problems: Problems, field: str = "data_capture") -> None:
        """Add every problem with these settings to ``problems``."""
        check_data_capture(
            problems,
            field,
            sampling_percentage=self.sampling_percentage,
            capture_requests=self.capture_requests,
            capture_responses=self.capture_responses,
            prefix=self.prefix,
        )


@dataclass(frozen=True, kw_only=True)
class DataCaptureProps(DataCaptureOptions):
    """Capture of requests and responses to an encrypted S3 location: the fields of
    :class:`DataCaptureOptions`, and

    bucket: where captures are written; by default a :class:`SecureBucket` is created.
    encryption_key: the KMS key SageMaker encrypts captures with; by default the created
        bucket's key, else the passed bucket's key, else a new customer-managed key.
    """

    bucket: s3.IBucket | None = None
    encryption_key: kms.IKey | None = None


@dataclass(frozen=True, kw_only=True)
class SingleModelEndpointOptions(VariantEndpointOptions):
    """Plain options of :class:`SingleModelEndpoint` (the keys of an item of the
    configuration's ``inference.single_model_endpoints`` too).

    model_name: a stable logical name of the model (ModelName rules: letters, digits and
        hyphens, at most 63), set as the ``fm_platform:model-name`` tag of its SageMaker
        models. Models and the endpoint config get generated names so that updates can
        replace them.
    instance_type: the instance type of the production variant (a SageMaker hosting
        ``ml.*`` type).
    container: what the model runs; by default the Large Model Inference image and no
        artifacts (the stacks default the artifacts to their bucket).
    initial_instance_count: instances at creation; by default 1.
    variant_name: the production variant's name; by default ``AllTraffic``.
    initial_weight: the production variant's traffic weight; by default 1.0.
    scaling: instance-level autoscaling of the production variant; by default the
        instance count stays fixed.
    variants: further weighted production variants (A/B tests), each with its own model;
        by default none.
    shadow_variant: a shadow variant receiving copies of production requests (responses
        are discarded); by default none. Not combinable with ``variants``.
    data_capture: request/response capture (a :class:`DataCaptureProps` to choose the
        bucket and key); by default off.
    fallback_pools: instance types the production variant falls back to, in this order,
        when ``instance_type`` has no capacity (``InstancePools``, at most 4 besides
        ``instance_type``), each running the variant's model or its own
        (:class:`FallbackPool`); by default none (the variant names ``InstanceType``).

    Also the fields of :class:`VariantEndpointOptions` (``network_isolation``,
    ``endpoint_name``).
    """

    model_name: str
    instance_type: str
    container: ModelContainer = field(default_factory=ModelContainer)
    initial_instance_count: int = 1
    variant_name: str = "AllTraffic"
    initial_weight: float = 1.0
    scaling: InstanceScaling | None = None
    variants: Sequence[VariantSpec] = ()
    shadow_variant: VariantSpec | None = None
    data_capture: DataCaptureOptions | None = None
    fallback_pools: Sequence[FallbackPool] = ()

    @property
    def fallback_types(self) -> tuple[str, ...]:
        """The production variant's fallback instance types, in priority order."""
        return tuple(pool.instance_type for pool in self.fallback_pools or ())

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
        return (self.primary_variant, *(self.variants or ()), *shadow)

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        problems.check_shape("model_name", self.model_name, "ModelName")
        variants = self.all_variants
        for index, variant in enumerate(variants):
            field = "variant" if index == 0 else f"variants[{variant.variant_name}]"
            variant.check(problems, field)
        problems.check_unique("variant_name", (v.variant_name for v in variants))
        if self.shadow_variant is not None and self.variants:
            problems.add(
                "shadow_variant",
                self.shadow_variant.variant_name,
                "a shadow test needs exactly one production variant; remove `variants`",
            )
        if self.data_capture is not None:
            self.data_capture.check(problems)
        check_fallback_types(
            problems,
            instance_type=self.instance_type,
            fallbacks=self.fallback_types,
            reserved=False,
            field="fallback_pools",
        )
        for index, pool in enumerate(self.fallback_pools or ()):
            pool.check(problems, f"fallback_pools[{index}]")
        self.check_endpoint(problems)


@dataclass(frozen=True, kw_only=True)
class SingleModelEndpointProps(VariantEndpointProps, SingleModelEndpointOptions, Props):
    """Options for :class:`SingleModelEndpoint`: the fields of
    :class:`SingleModelEndpointOptions` and of :class:`VariantEndpointProps` (``vpc``,
    ``vpc_subnets``, ``security_group``, ``encryption_key``, ``artifact_key``,
    ``execution_role``); a passed ``execution_role`` also gets data-capture write added.
    """

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        props.check_references(problems)


class SingleModelEndpoint(VariantEndpoint, ImportableByName):
    """One model on dedicated instances: ``AWS::SageMaker::Model`` per variant, an endpoint
    config and an endpoint, with optional instance scaling, data capture, shadow and
    weighted variants, network isolation and VPC placement.

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``variant_name`` (the production variant's), ``model`` (the production variant's),
    ``models`` (by variant name), ``execution_role``, ``network`` and ``security_group``
    (None outside a VPC), ``data_capture_bucket`` (None without capture), ``storage_key``,
    ``scalable_targets`` (by variant name).
    ``pool_models`` (by fallback instance type, the models created for pools with their
    own ``container``).
    Construct IDs: ``Model`` (production variant), ``Model-<variant>`` (other variants),
    ``PoolModel-<instance type>`` (a fallback pool's own model), ``EndpointConfig``,
    ``Endpoint`` (``Endpoint<key>`` when a variant scales: ``replacement_key`` of the
    scaled variants' names and instance types, and of the production variant's pool
    types, which SageMaker cannot update in place), ``Scaling-<variant>``, ``ExecutionRole``,
    ``SecurityGroup``, ``DataCapture``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: SingleModelEndpointProps
    ) -> None:
        """Create the endpoint, its config and its models under ``scope``; ``props`` is validated
        first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.endpoint_name)
        self.variant_name = props.variant_name
        variants = [
            replace(variant, container=variant.container.with_image_for(self))
            for variant in props.all_variants
        ]

        pools = [
            replace(pool, container=pool.container.with_image_for(self))
            if pool.container is not None
            else pool
            for pool in props.fallback_pools or ()
        ]
        self._prepare_models(
            props,
            [v.container for v in variants]
            + [pool.container for pool in pools if pool.container is not None],
        )
        tags = [CfnTag(key="fm_platform:model-name", value=props.model_name)]
        self.models: dict[str, sagemaker.CfnModel] = {}
        for index, variant in enumerate(variants):
            model_id = "Model" if index == 0 else f"Model-{variant.variant_name}"
            container = variant.container.to_container_property(self)
            self.models[variant.variant_name] = self._add_model(model_id, container, tags)
        self.model = self.models[props.variant_name]
        self.pool_models: dict[str, sagemaker.CfnModel] = {
            pool.instance_type: self._add_model(
                f"PoolModel-{pool.instance_type}",
                pool.container.to_container_property(self),
                tags,
            )
            for pool in pools
            if pool.container is not None
        }
        self._pool_overrides = [
            self.pool_models[pool.instance_type].attr_model_name
            if pool.instance_type in self.pool_models
            else pool.model_name_override
            for pool in pools
        ]

        self.data_capture_bucket: s3.IBucket | None = None
        self.data_capture_key: kms.IKey | None = None
        data_capture = self._data_capture(props.data_capture) if props.data_capture else None

        shadow_count = 1 if props.shadow_variant else 0
        production = variants[: len(variants) - shadow_count]
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                self._variant_property(v, props if i == 0 else None)
                for i, v in enumerate(production)
            ],
            shadow_production_variants=(
                [self._variant_property(variants[-1])] if props.shadow_variant else None
            ),
            data_capture_config=data_capture,
        )
        self.storage_key = encrypt_endpoint_config(
            self,
            self.endpoint_config,
            [v.instance_type for v in variants] + list(props.fallback_types),
            props.encryption_key,
        )
        self._create_endpoint(
            self.endpoint_config,
            props.endpoint_name,
            # A scaled variant's instance type cannot change in place: a new endpoint.
            scaled_variants_key(
                ((v.variant_name, v.instance_type) for v in production if v.scaling is not None),
                pool_types=props.fallback_types if props.scaling is not None else (),
            ),
        )

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

    def _variant_property(
        self, variant: VariantSpec, options: SingleModelEndpointOptions | None = None
    ) -> sagemaker.CfnEndpointConfig.ProductionVariantProperty:
        """A variant's property; the production one (with ``options``) gets the pools."""
        fallbacks = options.fallback_types if options is not None else ()
        return self._production_variant(
            variant_name=variant.variant_name,
            model=self.models[variant.variant_name],
            instance_type=variant.instance_type,
            initial_instance_count=variant.initial_instance_count,
            container=variant.container,
            options=options,
            initial_weight=variant.initial_weight,
            pools=variant_pools(variant.instance_type, fallbacks, self._pool_overrides),
        )

    def _data_capture(
        self, capture: DataCaptureOptions
    ) -> sagemaker.CfnEndpointConfig.DataCaptureConfigProperty:
        given = capture if isinstance(capture, DataCaptureProps) else None
        key = given.encryption_key if given else None
        bucket = given.bucket if given else None
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
