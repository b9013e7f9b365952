"""A SageMaker serverless endpoint: one model on compute SageMaker provisions per request,
for small CPU models with sporadic traffic (no instances to pay for while idle; a cold
start after idle periods unless concurrency is provisioned).

Serverless Inference has no GPUs and no instance type: the variant names only its memory
and concurrency (``ServerlessConfig``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import CfnTag
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import RealtimeEndpoint, create_model
from fm_platform.constructs.inference.execution_role import execution_role_for
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.core.compliance import acknowledge
from fm_platform.core.options import checked
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import replacement_key
from fm_platform.rules.serverless import check_serverless


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointOptions:
    """Plain options of :class:`ServerlessEndpoint`.

    model_name: a stable logical name of the model (ModelName rules), set as the
        ``fm_platform:model-name`` tag of its SageMaker model.
    container: what the model runs (a CPU image: Serverless Inference has no GPUs); by
        default the Large Model Inference image and no artifacts.
    memory_size_mib: memory of each invocation's compute, 1024-6144 in steps of 1024
        (vCPUs grow with it); by default 2048.
    max_concurrency: the most invocations served at once (1-200); by default 5.
    provisioned_concurrency: invocations kept warm, without cold starts (1-200, at most
        ``max_concurrency``), billed while idle; by default none.
    variant_name: the variant's name; by default ``AllTraffic``.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    network_isolation: run the container without network access; by default True.
    """

    model_name: str
    container: ModelContainer = field(default_factory=ModelContainer)
    memory_size_mib: int = 2048
    max_concurrency: int = 5
    provisioned_concurrency: int | None = None
    variant_name: str = "AllTraffic"
    endpoint_name: str | None = None
    network_isolation: bool = True

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        problems.check_shape("model_name", self.model_name, "ModelName")
        if self.container is not None:
            self.container.check(problems)
        check_serverless(
            problems,
            memory_size_mib=self.memory_size_mib,
            max_concurrency=self.max_concurrency,
            provisioned_concurrency=self.provisioned_concurrency,
        )
        problems.check_shape("variant_name", self.variant_name, "VariantName")
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointProps(ServerlessEndpointOptions):
    """Options for :class:`ServerlessEndpoint`: the fields of
    :class:`ServerlessEndpointOptions`, and

    execution_role: the role the model runs as; by default a least-privilege role.
    artifact_key: the KMS key encrypting the model artifacts; by default no decrypt grant.
    """

    execution_role: iam.IRole | None = None
    artifact_key: kms.IKey | None = None

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem in these props.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "ServerlessEndpointProps")
        checked(problems, self).check(problems)
        problems.raise_if_any()


class ServerlessEndpoint(RealtimeEndpoint):
    """One model behind a serverless endpoint: ``Model``, ``EndpointConfig`` (no physical
    name) and ``Endpoint<key>`` (a key of its own, so that it never updates an
    instance-based endpoint of the same construct ID in place), with ``ExecutionRole``
    unless a role is passed.

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``variant_name``, ``model``, ``execution_role``. Invoke grants and ``metric_*`` as on
    every endpoint (serverless endpoints report no per-instance utilisation).
    """

    def __init__(self, scope: Construct, construct_id: str, props: ServerlessEndpointProps) -> None:
        """Create the endpoint, its config and its model under ``scope``; ``props`` is
        validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.variant_name = props.variant_name
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
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
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
        acknowledge(
            self.endpoint_config,
            "A serverless endpoint has no instances and no storage volume in the account "
            "for the endpoint config's KMS key to encrypt; SageMaker runs it on compute it "
            "manages, so no key is set.",
            "HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured",
            "NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured",
        )
        # Its own key: a construct ID reused between a serverless and an instance-based
        # endpoint gives a new endpoint rather than an update from one to the other.
        self._create_endpoint(
            self.endpoint_config, props.endpoint_name, replacement_key({"serverless": True})
        )
