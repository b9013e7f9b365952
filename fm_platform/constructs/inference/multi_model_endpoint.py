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

from fm_platform.constructs.inference.endpoint_base import (
    VariantEndpoint,
    VariantEndpointProps,
    check_instance_type,
)
from fm_platform.constructs.inference.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.validation import Problems, is_unresolved

VARIANT_NAME = "AllTraffic"


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointProps(VariantEndpointProps):
    """Options for :class:`MultiModelEndpoint`.

    models_s3_prefix: the S3 prefix (``s3://bucket/path/``, ending in ``/``) whose
        ``.tar.gz`` objects are the models; invoke one with ``--target-model <key under the
        prefix>``. Models are added and removed by copying objects, no deployment needed.
    image: a container image that supports multi-model hosting (e.g. the SageMaker PyTorch
        inference image, which runs TorchServe, or Triton).
    instance_type: a CPU type, or a type with exactly one NVIDIA GPU.
    environment: environment variables of the container; by default none.
    initial_instance_count: instances at creation; by default 1.
    scaling: instance-level autoscaling; by default the instance count stays fixed.

    Also the fields of :class:`VariantEndpointProps` (``network_isolation``, ``vpc``,
    ``vpc_subnets``, ``security_group``, ``encryption_key``, ``artifact_key``,
    ``execution_role``, ``endpoint_name``); the created execution role reads every object
    under the prefix.
    """

    models_s3_prefix: str
    image: str
    instance_type: str
    environment: Mapping[str, str] = field(default_factory=dict)
    initial_instance_count: int = 1
    scaling: InstanceScaling | None = None

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem with these props.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "MultiModelEndpointProps")
        prefix = self.models_s3_prefix
        if not is_unresolved(prefix) and not (
            prefix.startswith("s3://") and prefix.endswith("/") and len(prefix) > len("s3://x/")
        ):
            problems.add(
                "models_s3_prefix", prefix, "must be an S3 prefix s3://<bucket>/<path>/ ending in /"
            )
        check_instance_type(problems, "instance_type", self.instance_type)
        check_multi_model_hardware(problems, "instance_type", self.instance_type)
        problems.check_range("initial_instance_count", self.initial_instance_count, 1, None)
        if self.scaling is not None:
            self.scaling.check(problems)
        self.check_endpoint(problems)
        problems.raise_if_any()


def check_multi_model_hardware(problems: Problems, field: str, instance_type: str) -> None:
    """Multi-model endpoints run on CPU types or types with exactly one NVIDIA GPU."""
    if is_unresolved(instance_type):
        return
    try:
        spec = instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return  # reported by check_instance_type
    if spec.accelerator == "none":
        return
    if spec.accelerator == "nvidia-gpu" and spec.accelerator_count == 1:
        return
    problems.add(
        field,
        instance_type,
        f"has {spec.accelerator_count} x {spec.accelerator} accelerators; a multi-model "
        "endpoint needs a CPU instance type (e.g. ml.m5.xlarge) or one with exactly one "
        "NVIDIA GPU (e.g. ml.g5.xlarge); host multi-accelerator or Inferentia/Trainium "
        "models with inference components or a single-model endpoint",
    )


class MultiModelEndpoint(VariantEndpoint):
    """Many models in one container (``Mode: MultiModel``) on shared instances.

    Attributes: ``model``, ``endpoint_config``, ``endpoint``, ``endpoint_name``,
    ``endpoint_arn``, ``execution_role``, ``network`` and ``security_group`` (None outside a
    VPC),
    ``storage_key``, ``scalable_target`` (None without scaling), ``variant_name``.
    Construct IDs: ``Model``, ``EndpointConfig``, ``Endpoint``, ``Scaling``,
    ``ExecutionRole``, ``SecurityGroup``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: MultiModelEndpointProps) -> None:
        """Create the endpoint, its config and its model under ``scope``; ``props`` is validated
        first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.variant_name = VARIANT_NAME
        container = ModelContainer(image=props.image, model_data_url=props.models_s3_prefix)
        self._prepare_models(props, [container])
        self.model = self._add_model(
            "Model",
            sagemaker.CfnModel.ContainerDefinitionProperty(
                image=props.image,
                mode="MultiModel",
                model_data_url=props.models_s3_prefix,
                environment=dict(props.environment) or None,
            ),
        )
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=self.variant_name,
                    model_name=self.model.attr_model_name,
                    instance_type=props.instance_type,
                    initial_instance_count=props.initial_instance_count,
                    initial_variant_weight=1.0,
                )
            ],
        )
        self.storage_key = encrypt_endpoint_config(
            self, self.endpoint_config, [props.instance_type], props.encryption_key
        )
        self._create_endpoint(self.endpoint_config, props.endpoint_name)
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

    def metric_model_loading_wait_time(self) -> cloudwatch.Metric:
        """Average time (microseconds) requests waited for their model to load (cold
        starts)."""
        return self.metric("ModelLoadingWaitTime")
