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
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.hosting import (
    ModelContainer,
    acknowledge_config_without_key,
    role_policies,
)
from fm_platform.constructs.instance_scaling import InstanceScaling, add_instance_scaling
from fm_platform.constructs.single_model_endpoint import (
    INVOKE_ACTIONS,
    EndpointNetwork,
    check_instance_type,
    check_network,
    execution_role_for,
    invocation_metric,
    storage_key,
)
from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.validation import Problems, is_unresolved

VARIANT_NAME = "AllTraffic"


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointProps:
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
    network_isolation: run the container without network access; by default False.
    vpc, vpc_subnets, security_group: VPC placement as for a single-model endpoint; by
        default SageMaker's own network, and with a VPC a dedicated security group without
        ingress.
    encryption_key: KMS key of the storage volumes; by default a customer-managed key for
        EBS-backed types and none for types with local NVMe storage.
    artifact_key: KMS key encrypting the model objects; by default no decrypt grant.
    execution_role: the role the container runs as; by default a least-privilege role that
        reads every object under the prefix.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    """

    models_s3_prefix: str
    image: str
    instance_type: str
    environment: Mapping[str, str] = field(default_factory=dict)
    initial_instance_count: int = 1
    scaling: InstanceScaling | None = None
    network_isolation: bool = False
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_group: ec2.ISecurityGroup | None = None
    encryption_key: kms.IKey | None = None
    artifact_key: kms.IKey | None = None
    execution_role: iam.IRole | None = None
    endpoint_name: str | None = None

    def validate(self) -> None:
        """Raise one ``ValueError`` listing every problem with these props."""
        problems = Problems("MultiModelEndpointProps")
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
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")
        if self.scaling is not None:
            self.scaling.check(problems)
        check_network(problems, self.vpc, self.vpc_subnets, self.security_group)
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


class MultiModelEndpoint(Construct):
    """Many models in one container (``Mode: MultiModel``) on shared instances.

    Attributes: ``model``, ``endpoint_config``, ``endpoint``, ``endpoint_name``,
    ``endpoint_arn``, ``execution_role``, ``security_group`` (None outside a VPC),
    ``storage_key``, ``scalable_target`` (None without scaling), ``variant_name``.
    Construct IDs: ``Model``, ``EndpointConfig``, ``Endpoint``, ``Scaling``,
    ``ExecutionRole``, ``SecurityGroup``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: MultiModelEndpointProps) -> None:
        super().__init__(scope, construct_id)
        props.validate()
        self.props = props
        self.variant_name = VARIANT_NAME
        network = (
            EndpointNetwork(
                self,
                vpc=props.vpc,
                vpc_subnets=props.vpc_subnets,
                security_group=props.security_group,
            )
            if props.vpc is not None
            else None
        )
        self.security_group = network.security_group if network else None
        container = ModelContainer(image=props.image, model_data_url=props.models_s3_prefix)
        self.execution_role = execution_role_for(
            self,
            role=props.execution_role,
            containers=[container],
            artifact_key=props.artifact_key,
            in_vpc=props.vpc is not None,
        )
        self.model = sagemaker.CfnModel(
            self,
            "Model",
            execution_role_arn=self.execution_role.role_arn,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image=props.image,
                mode="MultiModel",
                model_data_url=props.models_s3_prefix,
                environment=dict(props.environment) or None,
            ),
            enable_network_isolation=props.network_isolation or None,
            vpc_config=network.model_vpc_config() if network else None,
        )
        for policy in role_policies(self.execution_role):
            self.model.node.add_dependency(policy)
        self.storage_key = storage_key(self, [props.instance_type], props.encryption_key)
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
            kms_key_id=self.storage_key.key_arn if self.storage_key else None,
        )
        if self.storage_key is None:
            acknowledge_config_without_key(self.endpoint_config, props.instance_type)
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=props.endpoint_name,
        )
        self.endpoint_name: str = self.endpoint.attr_endpoint_name
        self.endpoint_arn: str = self.endpoint.attr_endpoint_arn
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

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` invoke any model of this endpoint."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(INVOKE_ACTIONS), resource_arns=[self.endpoint_arn]
        )

    def metric_invocations(self) -> cloudwatch.Metric:
        """Invocations per minute (sum) across all models."""
        return invocation_metric(self.endpoint_name, self.variant_name, "Invocations", "Sum")

    def metric_model_latency(self) -> cloudwatch.Metric:
        """Average model latency (microseconds) across all models."""
        return invocation_metric(self.endpoint_name, self.variant_name, "ModelLatency", "Average")

    def metric_model_loading_wait_time(self) -> cloudwatch.Metric:
        """Average time (microseconds) requests waited for their model to load (cold
        starts)."""
        return invocation_metric(
            self.endpoint_name, self.variant_name, "ModelLoadingWaitTime", "Average"
        )
