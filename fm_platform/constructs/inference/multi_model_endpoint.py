"""A SageMaker multi-model endpoint: one shared container serving every model under an S3
prefix, loading and unloading models on demand.

The hosting option for fleets of small (under ~1B parameters) models of similar size and
framework that tolerate cold starts; CPU or single-GPU instances only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.container_image import ContainerImage
from fm_platform.constructs.inference.endpoint_base import (
    MetricOptions,
    VariantEndpoint,
    VariantEndpointOptions,
    VariantEndpointProps,
)
from fm_platform.constructs.inference.imported_endpoint import ImportableByName
from fm_platform.constructs.inference.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.inference.model_container import ModelContainer, plain_environment
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.core.options import Props, checked
from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.hosting import (
    check_hosting_instance_type,
    check_multi_model_hardware,
    check_s3_prefix,
)
from fm_platform.rules.model_container import check_environment
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import scaled_variants_key

VARIANT_NAME = "AllTraffic"


def multi_model_image(instance_type: str | None) -> ContainerImage:
    """The PyTorch inference image (TorchServe, which serves multi-model endpoints) for
    ``instance_type``, from the image table: the GPU flavour for NVIDIA GPU types, else the
    CPU one."""
    try:
        gpu = instance_type is not None and instance_spec(instance_type).accelerator == (
            "nvidia-gpu"
        )
    except UnknownInstanceTypeError:
        gpu = False  # the endpoint's validation reports the type
    return ContainerImage.from_family("pytorch", "gpu" if gpu else "cpu")


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointOptions(VariantEndpointOptions):
    """Plain options of :class:`MultiModelEndpoint` (the keys of an item of the
    configuration's ``inference.multi_model_endpoints`` too).

    models_s3_prefix: the S3 prefix (``s3://bucket/path/``, ending in ``/``) whose
        ``.tar.gz`` objects are the models; invoke one with ``--target-model <key under the
        prefix>``. Models are added and removed by copying objects, no deployment needed.
    instance_type: a CPU type, or a type with exactly one NVIDIA GPU.
    image: a container image that supports multi-model hosting (e.g. the SageMaker PyTorch
        inference image, which runs TorchServe, or Triton), as a URI or a
        :class:`ContainerImage`; by default the PyTorch inference Deep Learning Container
        of the stack's region, its GPU flavour for NVIDIA GPU types, else its CPU one.
    environment: environment variables of the container; by default none.
    initial_instance_count: instances at creation; by default 1.
    scaling: instance-level autoscaling; by default the instance count stays fixed.
    model_size_gib: the size of the largest model under the prefix, in GiB; the startup
        timeouts and the storage volume follow from it; by default unknown (see
        :class:`VariantEndpointOptions`).

    Also the fields of :class:`VariantEndpointOptions` (``network_isolation``,
    ``endpoint_name``, startup timeouts, ``volume_size_gb``).
    """

    models_s3_prefix: str
    instance_type: str
    image: str | ContainerImage | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    initial_instance_count: int = 1
    scaling: InstanceScaling | None = None
    model_size_gib: float | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_s3_prefix(problems, "models_s3_prefix", self.models_s3_prefix)
        check_environment(problems, "environment", plain_environment(self.environment))
        check_hosting_instance_type(problems, "instance_type", self.instance_type)
        check_multi_model_hardware(problems, "instance_type", self.instance_type)
        problems.check_range("initial_instance_count", self.initial_instance_count, 1, None)
        if self.model_size_gib is not None and self.model_size_gib <= 0:
            problems.add("model_size_gib", self.model_size_gib, "must be greater than 0")
        if self.scaling is not None:
            self.scaling.check(problems)
        self.check_endpoint(problems)

    def container_image(self) -> ContainerImage:
        """The image as a :class:`ContainerImage`: ``image``, else the default."""
        if self.image is not None:
            return ContainerImage.of(self.image)
        return multi_model_image(self.instance_type)


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointProps(VariantEndpointProps, MultiModelEndpointOptions, Props):
    """Options for :class:`MultiModelEndpoint`: the fields of
    :class:`MultiModelEndpointOptions` and of :class:`VariantEndpointProps` (``vpc``,
    ``vpc_subnets``, ``security_group``, ``encryption_key``, ``artifact_key``,
    ``execution_role``); the created execution role reads every object under the prefix.
    """

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        props.check_references(problems)


class MultiModelEndpoint(VariantEndpoint, ImportableByName):
    """Many models in one container (``Mode: MultiModel``) on shared instances.

    Attributes: ``model``, ``endpoint_config``, ``endpoint``, ``endpoint_name``,
    ``endpoint_arn``, ``execution_role``, ``network`` and ``security_group`` (None outside a
    VPC), ``storage_key``, ``scalable_target`` (None without scaling), ``variant_name``.
    Construct IDs: ``Model``, ``EndpointConfig``, ``Endpoint`` (``Endpoint<key>`` with
    scaling: ``replacement_key`` of the scaled variant's instance type), ``Scaling``,
    ``ExecutionRole``, ``SecurityGroup``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: MultiModelEndpointProps) -> None:
        """Create the endpoint, its config and its model under ``scope``; ``props`` is
        validated first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.endpoint_name)
        self.variant_name = VARIANT_NAME
        container = ModelContainer(
            image=props.container_image(),
            model_data_url=props.models_s3_prefix,
            model_size_gib=props.model_size_gib,
        )
        self._prepare_models(props, [container])
        self.model = self._add_model(
            "Model",
            sagemaker.CfnModel.ContainerDefinitionProperty(
                image=container.image_uri(self),
                mode="MultiModel",
                model_data_url=props.models_s3_prefix,
                environment=dict(props.environment) or None,
            ),
        )
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                self._production_variant(
                    variant_name=self.variant_name,
                    model=self.model,
                    instance_type=props.instance_type,
                    initial_instance_count=props.initial_instance_count,
                    container=container,
                    options=props,
                    # Each model is a .tar.gz, extracted beside its archive.
                    archives=True,
                )
            ],
        )
        self.storage_key = encrypt_endpoint_config(
            self, self.endpoint_config, [props.instance_type], props.encryption_key
        )
        self._create_endpoint(
            self.endpoint_config,
            props.endpoint_name,
            # A scaled variant's instance type cannot change in place: a new endpoint.
            scaled_variants_key(
                [(self.variant_name, props.instance_type)] if props.scaling is not None else []
            ),
        )
        self.scalable_target: appscaling.ScalableTarget | None = (
            add_instance_scaling(
                self,
                "Scaling",
                endpoint=self.endpoint,
                variant_name=self.variant_name,
                scaling=props.scaling,
            )
            if props.scaling is not None
            else None
        )

    def metric_model_loading_wait_time(
        self, variant_name: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Time requests waited for their model to load (cold starts), in microseconds (by
        default the Average)."""
        return self.metric("ModelLoadingWaitTime", variant_name, **options)
