"""A SageMaker real-time endpoint that hosts models as Inference Components.

The endpoint config's variant names only the instance type and managed instance scaling;
models are placed on it afterwards, one :class:`InferenceComponentModel` each:
``endpoint.add_model(id, options)``, or, from another stack, an
:class:`InferenceComponentModel` given the endpoint itself or one imported with
:meth:`InferenceComponentEndpoint.from_endpoint_attributes` (both implement
:class:`~fm_platform.constructs.inference.endpoint_interface.IInferenceComponentEndpoint`,
and have ``add_model``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import jsii
from aws_cdk import Annotations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IValidation

from fm_platform.constructs.inference.endpoint_base import (
    EndpointVpcConfig,
    RealtimeEndpoint,
    endpoint_network,
)
from fm_platform.constructs.inference.endpoint_interface import (
    IEndpoint,
)
from fm_platform.constructs.inference.execution_role import (
    HostingRole,
    HostingRoleProps,
    depend_on_role_policies,
    role_arn,
)
from fm_platform.constructs.inference.imported_endpoint import EndpointAttributes, ImportedEndpoint
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelOptions,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.instance_pools import variant_pools
from fm_platform.constructs.inference.storage_encryption import encrypt_endpoint_config
from fm_platform.constructs.inference.variant_features import (
    CapacityReservation,
    EndpointMetrics,
    PrefixAwareRouting,
    ScaleInPolicy,
)
from fm_platform.core.options import Props, checked, options_values
from fm_platform.core.tokens import is_unresolved, known
from fm_platform.rules.capacity import CopyDemand, CopyTotals, min_copies_shortfall, shortfalls
from fm_platform.rules.hosting import (
    check_hosting_instance_type,
    check_managed_instance_counts,
    check_vpc_options,
)
from fm_platform.rules.pools import check_fallback_types
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import component_endpoint_key
from fm_platform.rules.variant_features import (
    check_metrics_config,
    check_routing,
    check_variant_host,
    prefix_aware_on_one_instance,
)

INITIAL_COPIES_WARNING = "fm_platform:initialCopiesExceedInstances"
PREFIX_AWARE_WARNING = "fm_platform:prefixAwareOnOneInstance"


@dataclass(frozen=True, kw_only=True)
class InferenceComponentEndpointOptions:
    """Plain options of :class:`InferenceComponentEndpoint` (the keys of an item of the
    configuration's ``inference.ic_endpoints`` too).

    instance_type: the ``ml.*`` instance type (botocore ``ProductionVariantInstanceType``).
    initial_instance_count: instances at creation; by default 1.
    min_instance_count: managed instance scaling minimum; 0 lets the endpoint scale to zero
        instances when every component has scaled to zero copies; by default 1.
    max_instance_count: managed instance scaling maximum; by default 2.
    routing_strategy: how requests are routed to copies (botocore ``RoutingStrategy``); by
        default LEAST_OUTSTANDING_REQUESTS. ``PREFIX_AWARE`` applies only with two or more
        instances: with ``max_instance_count`` 1 it gets a warning
        (``fm_platform:prefixAwareOnOneInstance``).
    network_isolation: run the models placed on this endpoint without network access (set
        on the endpoint config and on every model); by default True: SageMaker reads the
        artifacts from S3 and the images from ECR with the execution role, outside the
        container. Set False only for containers that must reach the network themselves,
        e.g. to download weights from a model hub at startup.
    variant_name: the production variant's name; by default AllTraffic.
    endpoint_name: the endpoint's name; by default CloudFormation generates one. A change
        of instance type or variant name creates a new endpoint beside the old one, which
        cannot take the running endpoint's name: change an explicit name with them.
    scale_in: how managed instance scaling releases instances (:class:`ScaleInPolicy`);
        by default SageMaker's behaviour (no ``ScaleInPolicy``).
    prefix_aware_routing: the settings of ``routing_strategy: PREFIX_AWARE``
        (:class:`PrefixAwareRouting`), required with it; by default none.
    capacity_reservation: serve only from an ML capacity reservation or training plan
        (:class:`CapacityReservation`); by default on-demand capacity.
    inference_ami_version: the variant's inference AMI (botocore
        ``ProductionVariantInferenceAmiVersion``); by default SageMaker's for the type.
    enable_ssm_access: let operators open SSM sessions to the variant's instances; by
        default False.
    instance_provision_timeout_s: seconds SageMaker waits for instances at creation or
        scale-out before it fails them (``VariantInstanceProvisionTimeoutInSeconds``,
        300-3600); by default SageMaker's.
    metrics: the endpoint config's ``MetricsConfig`` (:class:`EndpointMetrics`); by
        default one datapoint a minute, no enhanced metrics and detailed observability
        off (written as ``false``: SageMaker turns it on otherwise).
    fallback_instance_types: instance types SageMaker provisions, in this order, when
        ``instance_type`` has no capacity (``InstancePools``, at most 4 besides
        ``instance_type``); each model's copies must fit each type (or give its own
        resources there, ``per_instance_type``); by default none.
    """

    instance_type: str
    initial_instance_count: int = 1
    min_instance_count: int = 1
    max_instance_count: int = 2
    routing_strategy: str = "LEAST_OUTSTANDING_REQUESTS"
    network_isolation: bool = True
    variant_name: str = "AllTraffic"
    endpoint_name: str | None = None
    scale_in: ScaleInPolicy | None = None
    prefix_aware_routing: PrefixAwareRouting | None = None
    capacity_reservation: CapacityReservation | None = None
    inference_ami_version: str | None = None
    enable_ssm_access: bool = False
    instance_provision_timeout_s: int | None = None
    metrics: EndpointMetrics | None = None
    fallback_instance_types: Sequence[str] = ()

    @property
    def instance_types(self) -> tuple[str, ...]:
        """``instance_type``, then the fallback types: the pools in priority order."""
        return (self.instance_type, *(self.fallback_instance_types or ()))

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_hosting_instance_type(problems, "instance_type", self.instance_type)
        check_managed_instance_counts(
            problems,
            initial_instance_count=self.initial_instance_count,
            min_instance_count=self.min_instance_count,
            max_instance_count=self.max_instance_count,
        )
        prefix = self.prefix_aware_routing
        check_routing(
            problems,
            strategy=self.routing_strategy,
            prefix_length=prefix.prefix_length if prefix else None,
            concurrency_threshold=prefix.concurrency_threshold if prefix else None,
            prefix_aware_given=prefix is not None,
        )
        if self.scale_in is not None:
            self.scale_in.check(problems)
        if self.capacity_reservation is not None:
            self.capacity_reservation.check(problems, self.instance_type)
        check_variant_host(
            problems,
            inference_ami_version=self.inference_ami_version,
            instance_provision_timeout_s=self.instance_provision_timeout_s,
        )
        check_fallback_types(
            problems,
            instance_type=self.instance_type,
            fallbacks=list(self.fallback_instance_types or ()),
            reserved=self.capacity_reservation is not None,
        )
        if self.metrics is not None:
            check_metrics_config(
                problems,
                "metrics",
                publish_frequency_s=self.metrics.publish_frequency_s,
            )
        problems.check_shape("variant_name", self.variant_name, "VariantName")
        problems.check_shape("endpoint_name", self.endpoint_name, "EndpointName")


@dataclass(frozen=True, kw_only=True)
class InferenceComponentEndpointProps(InferenceComponentEndpointOptions, Props):
    """Options for :class:`InferenceComponentEndpoint`: the fields of
    :class:`InferenceComponentEndpointOptions`, and

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
    """

    execution_role: iam.IRole | None = None
    encryption_key: kms.IKey | None = None
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_groups: Sequence[ec2.ISecurityGroup] | None = None

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        check_vpc_options(
            problems,
            props.vpc is not None,
            {"vpc_subnets": props.vpc_subnets, "security_groups": props.security_groups},
        )


class InferenceComponentEndpointBase(RealtimeEndpoint):
    """What a model placed on an Inference Components endpoint needs: its name, variant,
    instance type and counts, execution role, network; and where the copies of the models
    placed on it are counted.

    The minimum copies of every model placed on the endpoint (from any stack) must fit its
    ``max_instance_count`` instances: checked once every model is placed, when the app is
    synthesized. A placement that makes the initial copies exceed
    ``initial_instance_count`` instances gets a warning (``fm_platform:initialCopiesExceed
    Instances``): managed instance scaling adds instances before every copy runs.

    Attributes: ``endpoint_name``, ``endpoint_arn``, ``variant_name``, ``instance_type``,
    ``execution_role``, ``network_isolation``, ``vpc_config`` (None outside a VPC),
    ``min_instance_count``, ``initial_instance_count`` and ``max_instance_count`` (None when
    unknown), ``endpoint`` (the resource; None for an imported endpoint),
    ``component_names`` (the components placed on it) and ``placements`` (what their
    copies reserve).
    """

    # Endpoints hosting inference components report the normalised figure per instance.
    INSTANCE_METRIC = "CPUUtilizationNormalized"
    instance_type: str
    #: The pools' types in priority order (``instance_type`` alone without fallbacks).
    instance_types: tuple[str, ...]
    execution_role: iam.IRole
    network_isolation: bool
    vpc_config: EndpointVpcConfig | None
    min_instance_count: int | None
    initial_instance_count: int | None
    max_instance_count: int | None

    def _start_counting(self) -> None:
        self._component_names: set[str] = set()
        self._totals = CopyTotals(known(self.instance_type), known(self.initial_instance_count))
        # What the copies reserve on each fallback type, checked like the first type's.
        self._fallback_demands: dict[str, list[CopyDemand]] = {
            t: [] for t in self.instance_types[1:]
        }
        self.node.add_validation(_MinimumCopiesFit(self))

    def add_model(
        self,
        construct_id: str,
        options: InferenceComponentModelOptions,
        *,
        artifact_key: kms.IKey | None = None,
        scope: Construct | None = None,
    ) -> InferenceComponentModel:
        """Place a model on this endpoint, as ``Bucket.add_lifecycle_rule`` adds a rule to
        a bucket: an :class:`InferenceComponentModel` serving ``options`` (its artifacts
        encrypted with ``artifact_key``, by default no KMS grant), construct ID
        ``construct_id`` under ``scope``, by default this endpoint. Returns the model."""
        return InferenceComponentModel(
            scope or self,
            construct_id,
            InferenceComponentModelProps(
                **options_values(InferenceComponentModelOptions, options),
                endpoint=self,
                artifact_key=artifact_key,
            ),
        )

    @property
    def component_names(self) -> AbstractSet[str]:
        """The names of the components placed on this endpoint so far (a read-only view;
        :meth:`record_component_name` adds one)."""
        return _ReadOnlyNames(self._component_names)

    def record_component_name(self, name: str) -> None:
        """Record that the component ``name`` (a model's or an adapter's) runs on this
        endpoint."""
        self._component_names.add(name)

    @property
    def placements(self) -> tuple[CopyDemand, ...]:
        """What the copies of the models placed on this endpoint reserve, in order."""
        return tuple(self._totals.demands)

    def place(
        self,
        scope: Construct,
        demand: CopyDemand,
        by_type: Mapping[str, CopyDemand] | None = None,
    ) -> None:
        """Count ``demand`` (a model's copies, placed by ``scope``) on this endpoint, and
        ``by_type`` (by default ``demand``) on each fallback type; warn on ``scope`` when
        with it the initial copies stop fitting ``initial_instance_count`` instances."""
        for instance_type, demands in self._fallback_demands.items():
            demands.append((by_type or {}).get(instance_type, demand))
        fitted = not self._totals.initial_exceeds()
        self._totals.add(demand)
        if fitted and self._totals.initial_exceeds():
            Annotations.of(scope).add_warning_v2(
                INITIAL_COPIES_WARNING,
                "the initial copies of the models on the endpoint need more than its "
                f"initial_instance_count ({self.initial_instance_count}) instances hold: "
                f"{'; '.join(self._totals.initial_shortfalls())}. Managed instance scaling "
                "adds instances before every copy runs; raise initial_instance_count to "
                "start them at once.",
            )

    def minimum_copies_shortfall(self) -> str | None:
        """Why the minimum copies of the models placed so far do not fit
        ``max_instance_count`` instances, or None when they fit (or cannot be checked)."""
        missing = shortfalls(
            self._totals.demands,
            known(self.instance_type),
            known(self.max_instance_count),
            "min_copies",
        )
        for instance_type, demands in self._fallback_demands.items():
            # The endpoint may run on a fallback type alone: its instances must hold them.
            missing += [
                f"on fallback {instance_type}: {line}"
                for line in shortfalls(
                    demands, instance_type, known(self.max_instance_count), "min_copies"
                )
            ]
        return min_copies_shortfall(self.max_instance_count, missing) if missing else None


class _ReadOnlyNames(AbstractSet[str]):
    """A read-only view of a set of names."""

    def __init__(self, names: AbstractSet[str]) -> None:
        self._names = names

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@jsii.implements(IValidation)
class _MinimumCopiesFit:
    """The endpoint's check, run at synth, that its models' minimum copies fit."""

    def __init__(self, endpoint: InferenceComponentEndpointBase) -> None:
        self._endpoint = endpoint

    def validate(self) -> list[str]:
        shortfall = self._endpoint.minimum_copies_shortfall()
        if shortfall is None:
            return []
        demands = self._endpoint.placements
        names = ", ".join(demand.name for demand in demands)
        return [f"invalid inference component placement ({names}): {shortfall}"]


class InferenceComponentEndpoint(InferenceComponentEndpointBase):
    """An endpoint whose instances host Inference Components.

    Resources (construct IDs are stable): ``ExecutionRole`` (unless a role is passed),
    ``VolumeKey`` (EBS-backed types, unless a key is passed), ``SecurityGroup`` (VPC
    without security groups), ``Config`` (no physical name: a change rolls out as a new
    config) and ``Endpoint<key>``: ``replacement_key`` of the instance type and variant
    name, which SageMaker cannot change on an endpoint with components, so a change
    creates a new endpoint (and new components, see :class:`InferenceComponentModel`)
    beside the old one; CloudFormation deletes the old ones once the new are in service.

    Attributes: those of :class:`InferenceComponentEndpointBase`, ``endpoint_config``,
    ``hosting_role`` (None when a role was passed), ``encryption_key`` (None for NVMe
    types), ``network`` (None outside a VPC) and ``security_groups``. :meth:`grant_invoke`
    lets a principal invoke every component on it; the ``metric_*`` methods measure its
    variant.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: InferenceComponentEndpointProps
    ) -> None:
        """Create the endpoint and its config under ``scope``; ``props`` is validated first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.endpoint_name)
        unrouted = prefix_aware_on_one_instance(
            known(props.routing_strategy), known(props.max_instance_count)
        )
        if unrouted is not None:
            Annotations.of(self).add_warning_v2(PREFIX_AWARE_WARNING, unrouted)
        self.instance_type = props.instance_type
        self.instance_types = props.instance_types
        self.variant_name = props.variant_name
        self.network_isolation = props.network_isolation
        self.min_instance_count = props.min_instance_count
        self.initial_instance_count = props.initial_instance_count
        self.max_instance_count = props.max_instance_count

        self.hosting_role: HostingRole | None = None
        if props.execution_role is None:
            self.hosting_role = HostingRole(
                self, "ExecutionRole", HostingRoleProps(in_vpc=props.vpc is not None)
            )
            self.execution_role = self.hosting_role.role
        else:
            self.execution_role = props.execution_role

        groups = props.security_groups or ()
        self.network = endpoint_network(self, props.vpc, props.vpc_subnets, groups)
        self.security_groups: list[ec2.ISecurityGroup] = (
            list(self.network.security_groups) if self.network else []
        )
        self.vpc_config = self.network.vpc_config if self.network else None
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            execution_role_arn=role_arn(self.execution_role),
            enable_network_isolation=props.network_isolation or None,
            vpc_config=self.vpc_config.endpoint_config_property() if self.vpc_config else None,
            # Always written: detailed observability is on unless the config says false.
            metrics_config=(props.metrics or EndpointMetrics()).to_property(),
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=props.variant_name,
                    # A variant with pools names its types there only.
                    instance_type=None if props.fallback_instance_types else props.instance_type,
                    instance_pools=variant_pools(
                        props.instance_type, props.fallback_instance_types
                    ),
                    initial_instance_count=props.initial_instance_count,
                    managed_instance_scaling=(
                        sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                            status="ENABLED",
                            min_instance_count=props.min_instance_count,
                            max_instance_count=props.max_instance_count,
                            scale_in_policy=(
                                props.scale_in.to_property() if props.scale_in else None
                            ),
                        )
                    ),
                    routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                        routing_strategy=props.routing_strategy,
                        prefix_aware_routing_config=(
                            props.prefix_aware_routing.to_property()
                            if props.prefix_aware_routing
                            else None
                        ),
                    ),
                    capacity_reservation_config=(
                        props.capacity_reservation.to_property()
                        if props.capacity_reservation
                        else None
                    ),
                    inference_ami_version=props.inference_ami_version,
                    enable_ssm_access=props.enable_ssm_access or None,
                    variant_instance_provision_timeout_in_seconds=(
                        props.instance_provision_timeout_s
                    ),
                )
            ],
        )
        self.encryption_key = encrypt_endpoint_config(
            self, self.endpoint_config, list(props.instance_types), props.encryption_key
        )
        # The config names the role; its policy must exist before SageMaker uses it.
        depend_on_role_policies(self.endpoint_config, self.execution_role)
        self._create_endpoint(
            self.endpoint_config,
            props.endpoint_name,
            component_endpoint_key(
                instance_type=props.instance_type,
                variant_name=props.variant_name,
                pool_types=props.fallback_instance_types,
            ),
        )
        self._start_counting()

    @classmethod
    def from_endpoint_name(
        cls, scope: Construct, construct_id: str, endpoint_name: str
    ) -> IEndpoint:
        """An existing Inference Components endpoint, by name, to invoke, measure and alarm
        (its variant AllTraffic; its ARN built in ``scope``'s account and region). To place
        models on it, import it with :meth:`from_endpoint_attributes`."""
        return ImportedEndpoint(
            scope,
            construct_id,
            EndpointAttributes(endpoint_name=endpoint_name),
            instance_metric=cls.INSTANCE_METRIC,
        )

    @classmethod
    def from_endpoint_arn(cls, scope: Construct, construct_id: str, endpoint_arn: str) -> IEndpoint:
        """An existing Inference Components endpoint, by ARN (its name read from it,
        lower-cased as ARNs hold it), to invoke, measure and alarm."""
        return ImportedEndpoint(
            scope,
            construct_id,
            EndpointAttributes(endpoint_arn=endpoint_arn),
            instance_metric=cls.INSTANCE_METRIC,
        )

    @staticmethod
    def from_endpoint_attributes(
        scope: Construct, construct_id: str, attrs: InferenceComponentEndpointAttributes
    ) -> ImportedInferenceComponentEndpoint:
        """An existing Inference Components endpoint (deployed elsewhere) to place models
        on (``add_model``), described by ``attrs``. Nothing is created."""
        return ImportedInferenceComponentEndpoint(scope, construct_id, attrs)


@dataclass(frozen=True, kw_only=True)
class InferenceComponentEndpointAttributes(EndpointAttributes):
    """An Inference Components endpoint deployed elsewhere, to place models on: the fields
    of :class:`EndpointAttributes` (``endpoint_name``, ``endpoint_arn``, ``variant_name``),
    and

    instance_type: its instance type (models are checked against it).
    execution_role: the role its models run as (each model adds its image and artifacts).
    network_isolation: whether its models run without network access; by default True, as
        this package's endpoints do.
    vpc_config: the VPC its models run in; by default none.
    min_instance_count, initial_instance_count, max_instance_count: its managed instance
        scaling counts when known (models' copies are checked against the known ones); by
        default unknown.
    """

    instance_type: str
    execution_role: iam.IRole
    network_isolation: bool = True
    vpc_config: EndpointVpcConfig | None = None
    min_instance_count: int | None = None
    initial_instance_count: int | None = None
    max_instance_count: int | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these attributes in ``problems`` (values that are
        tokens are not checked)."""
        super().check(problems)
        check_hosting_instance_type(problems, "instance_type", known(self.instance_type))
        check_managed_instance_counts(
            problems,
            initial_instance_count=known(self.initial_instance_count),
            min_instance_count=known(self.min_instance_count),
            max_instance_count=known(self.max_instance_count),
        )


class ImportedInferenceComponentEndpoint(InferenceComponentEndpointBase):
    """An Inference Components endpoint deployed elsewhere (see
    :meth:`InferenceComponentEndpoint.from_endpoint_attributes`); its instance type and
    known counts are checked like an endpoint's, and the models placed on it are counted
    like an endpoint's."""

    def __init__(
        self, scope: Construct, construct_id: str, attrs: InferenceComponentEndpointAttributes
    ) -> None:
        """Describe the endpoint under ``scope``; ``attrs`` are validated first. Its
        account and region (``env``) are those of its ARN."""
        attrs.validate()
        name, arn = attrs.name_and_arn(scope)
        super().__init__(scope, construct_id, environment_from_arn=arn)
        self.endpoint = None
        self._endpoint_name, self._endpoint_arn = name, arn
        self.variant_name = attrs.variant_name
        self.instance_type = attrs.instance_type
        self.instance_types = (attrs.instance_type,)
        self.execution_role = attrs.execution_role
        self.network_isolation = attrs.network_isolation
        self.vpc_config = attrs.vpc_config
        self.min_instance_count = attrs.min_instance_count
        self.initial_instance_count = attrs.initial_instance_count
        self.max_instance_count = attrs.max_instance_count
        if not is_unresolved(attrs.instance_type) and not is_unresolved(self.variant_name):
            # The key the endpoint's own stack uses: components follow its replacements.
            self.replacement_key = component_endpoint_key(
                instance_type=attrs.instance_type, variant_name=self.variant_name
            )
        self._start_counting()
