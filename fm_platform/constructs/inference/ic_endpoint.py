"""A SageMaker real-time endpoint that hosts models as Inference Components.

The endpoint config's variant names only the instance type and managed instance scaling;
models are placed on it afterwards, one :class:`InferenceComponentModel` each, possibly from
other stacks through an :class:`EndpointReference`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import (
    EndpointVpcConfig,
    RealtimeEndpoint,
    check_instance_type,
    check_network,
    endpoint_network,
)
from fm_platform.constructs.inference.endpoint_capacity import CopyDemand
from fm_platform.constructs.inference.execution_role import (
    HostingRole,
    HostingRoleProps,
    depend_on_role_policies,
)
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.specs.sagemaker_model import member_shape_name
from fm_platform.validation import Problems, is_unresolved


@dataclass(frozen=True, kw_only=True)
class EndpointReference:
    """What a model needs to place an inference component on an endpoint; safe to pass to
    constructs in other stacks (CDK turns the names into exports and imports).

    endpoint_name, variant_name, instance_type, execution_role: the endpoint's.
    network_isolation: whether models placed on it run without network access; by default
        True (the endpoint's default).
    vpc_config: the subnets and security groups its models use; None outside a VPC.
    min_instance_count, initial_instance_count, max_instance_count: its instance counts,
        when known; models placed on it are checked against the known ones.
    endpoint_arn: its ARN, when known (else built from the name).
    endpoint: the endpoint resource, when known: components depend on it.
    component_names: the components placed through this reference, so that two components
        with one name on the endpoint are reported; the endpoint's own ``reference`` is
        shared by every model using it.
    placements: what the components placed through this reference reserve, so that their
        copies are checked against the instances together.
    """

    endpoint_name: str
    variant_name: str
    instance_type: str
    execution_role: iam.IRole
    network_isolation: bool = True
    vpc_config: EndpointVpcConfig | None = None
    min_instance_count: int | None = None
    initial_instance_count: int | None = None
    max_instance_count: int | None = None
    endpoint_arn: str | None = None
    endpoint: Construct | None = None
    component_names: set[str] = field(default_factory=set, compare=False, hash=False)
    placements: list[CopyDemand] = field(default_factory=list, compare=False, hash=False)

    def arn_for(self, scope: Construct) -> str:
        """The endpoint's ARN: ``endpoint_arn`` when known, else built in ``scope``'s
        account and region from the name (endpoint ARNs use the lower-cased name)."""
        if self.endpoint_arn is not None:
            return self.endpoint_arn
        name = self.endpoint_name
        return Stack.of(scope).format_arn(
            service="sagemaker",
            resource="endpoint",
            resource_name=name if is_unresolved(name) else name.lower(),
        )


@dataclass(frozen=True, kw_only=True)
class InferenceEndpointProps:
    """Options for :class:`InferenceEndpoint`.

    instance_type: the ``ml.*`` instance type (botocore ``ProductionVariantInstanceType``).
    initial_instance_count: instances at creation; by default 1.
    min_instance_count: managed instance scaling minimum; 0 lets the endpoint scale to zero
        instances when every component has scaled to zero copies; by default 1.
    max_instance_count: managed instance scaling maximum; by default 2.
    routing_strategy: how requests are routed to copies (botocore ``RoutingStrategy``); by
        default LEAST_OUTSTANDING_REQUESTS.
    execution_role: the role SageMaker uses for the endpoint's models; by default a
        least-privilege :class:`HostingRole` that each model extends with its own grants.
    encryption_key: KMS key for the instances' EBS storage volumes; by default a
        customer-managed key for EBS-backed types. Types with local NVMe storage get no key
        (hardware-encrypted; a passed key is ignored with a warning).
    vpc: the VPC to run the endpoint's containers in; by default none (SageMaker's network).
    vpc_subnets: subnets within ``vpc``; by default CDK's default selection (the private
        subnets, else the isolated ones).
    security_groups: security groups for the containers; by default, with a VPC, a
        dedicated security group with no ingress and HTTPS egress is created.
    network_isolation: run the models placed on this endpoint without network access (set
        on the endpoint config and on every model); by default True: SageMaker reads the
        artifacts from S3 and the images from ECR with the execution role, outside the
        container. Set False only for containers that must reach the network themselves,
        e.g. to download weights from a model hub at startup.
    variant_name: the production variant's name; by default AllTraffic.
    endpoint_name: the endpoint's name; by default CloudFormation generates one.
    """

    instance_type: str
    initial_instance_count: int = 1
    min_instance_count: int = 1
    max_instance_count: int = 2
    routing_strategy: str = "LEAST_OUTSTANDING_REQUESTS"
    execution_role: iam.IRole | None = None
    encryption_key: kms.IKey | None = None
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_groups: Sequence[ec2.ISecurityGroup] | None = None
    network_isolation: bool = True
    variant_name: str = "AllTraffic"
    endpoint_name: str | None = None

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem in these props.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "InferenceEndpointProps")
        check_instance_type(problems, "instance_type", self.instance_type)
        problems.check_shape(
            "initial_instance_count",
            self.initial_instance_count,
            member_shape_name("ProductionVariant", "InitialInstanceCount"),
        )
        scaling = "ProductionVariantManagedInstanceScaling"
        problems.check_shape(
            "min_instance_count",
            self.min_instance_count,
            member_shape_name(scaling, "MinInstanceCount"),
        )
        problems.check_shape(
            "max_instance_count",
            self.max_instance_count,
            member_shape_name(scaling, "MaxInstanceCount"),
        )
        counts = (self.initial_instance_count, self.min_instance_count, self.max_instance_count)
        if not any(is_unresolved(count) for count in counts):  # else known at deploy only
            self._check_counts(problems)
        problems.check_shape("routing_strategy", self.routing_strategy, "RoutingStrategy")
        problems.check_shape("variant_name", self.variant_name, "VariantName")
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")
        check_network(
            problems, self.vpc, vpc_subnets=self.vpc_subnets, security_groups=self.security_groups
        )
        problems.raise_if_any()

    def _check_counts(self, problems: Problems) -> None:
        if self.min_instance_count > self.max_instance_count:
            problems.add(
                "min_instance_count",
                self.min_instance_count,
                f"must not exceed max_instance_count ({self.max_instance_count})",
            )
        elif not (
            self.min_instance_count <= self.initial_instance_count <= self.max_instance_count
        ):
            problems.add(
                "initial_instance_count",
                self.initial_instance_count,
                f"must lie between min_instance_count ({self.min_instance_count}) and "
                f"max_instance_count ({self.max_instance_count})",
            )


class InferenceEndpoint(RealtimeEndpoint):
    """An endpoint whose instances host Inference Components.

    Resources (construct IDs are stable): ``ExecutionRole`` (unless a role is passed),
    ``VolumeKey`` (EBS-backed types, unless a key is passed), ``SecurityGroup`` (VPC
    without security groups), ``Config`` (no physical name: a change rolls out as a new
    config) and ``Endpoint``.

    Attributes: ``endpoint``, ``endpoint_config``, ``endpoint_name``, ``endpoint_arn``,
    ``variant_name``, ``instance_type``, ``execution_role``, ``hosting_role`` (None when a
    role was passed), ``encryption_key`` (None for NVMe types), ``network`` (None outside a
    VPC), ``security_groups``, ``network_isolation``, ``min_instance_count`` and
    ``reference``. :meth:`grant_invoke` lets a principal invoke every component on it.
    """

    def __init__(self, scope: Construct, construct_id: str, props: InferenceEndpointProps) -> None:
        """Create the endpoint and its config under ``scope``; ``props`` is validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.instance_type = props.instance_type
        self.variant_name = props.variant_name
        self.network_isolation = props.network_isolation
        self.min_instance_count = props.min_instance_count

        self.hosting_role: HostingRole | None = None
        if props.execution_role is None:
            self.hosting_role = HostingRole(
                self, "ExecutionRole", HostingRoleProps(in_vpc=props.vpc is not None)
            )
            self.execution_role: iam.IRole = self.hosting_role.role
        else:
            self.execution_role = props.execution_role

        groups = props.security_groups or ()
        self.network = endpoint_network(self, props.vpc, props.vpc_subnets, groups)
        self.security_groups: list[ec2.ISecurityGroup] = (
            list(self.network.security_groups) if self.network else []
        )
        vpc_config = self.network.vpc_config if self.network else None
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            execution_role_arn=self.execution_role.role_arn,
            enable_network_isolation=props.network_isolation or None,
            vpc_config=vpc_config.endpoint_config_property() if vpc_config else None,
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=props.variant_name,
                    instance_type=props.instance_type,
                    initial_instance_count=props.initial_instance_count,
                    managed_instance_scaling=(
                        sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                            status="ENABLED",
                            min_instance_count=props.min_instance_count,
                            max_instance_count=props.max_instance_count,
                        )
                    ),
                    routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                        routing_strategy=props.routing_strategy
                    ),
                )
            ],
        )
        self.encryption_key = encrypt_endpoint_config(
            self, self.endpoint_config, [props.instance_type], props.encryption_key
        )
        # The config names the role; its policy must exist before SageMaker uses it.
        depend_on_role_policies(self.endpoint_config, self.execution_role)

        self._create_endpoint(self.endpoint_config, props.endpoint_name)
        self.reference = EndpointReference(
            endpoint_name=self.endpoint_name,
            variant_name=props.variant_name,
            instance_type=props.instance_type,
            execution_role=self.execution_role,
            network_isolation=props.network_isolation,
            vpc_config=vpc_config,
            min_instance_count=props.min_instance_count,
            initial_instance_count=props.initial_instance_count,
            max_instance_count=props.max_instance_count,
            endpoint_arn=self.endpoint_arn,
            endpoint=self.endpoint,
        )
