"""One model on an Inference Components endpoint: a SageMaker model, its inference
component (dedicated accelerators, CPU and memory per copy) and its own copy scaling."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Literal

from aws_cdk import Annotations, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct
from typing_extensions import Unpack

from fm_platform.constructs.inference.component_naming import (
    component_names_in_stack,
    default_component_name,
)
from fm_platform.constructs.inference.component_placement import (
    ComponentScheduling,
    data_cache_property,
)
from fm_platform.constructs.inference.component_scaling import (
    ComponentAutoScaling,
    ComponentScaling,
)
from fm_platform.constructs.inference.endpoint_base import (
    SAGEMAKER_NAMESPACE,
    MetricOptions,
    create_model,
    sagemaker_metric,
    with_statistic,
)
from fm_platform.constructs.inference.endpoint_interface import IInferenceComponentEndpoint
from fm_platform.constructs.inference.execution_role import (
    add_container_access,
    depend_on_role_policies,
)
from fm_platform.constructs.inference.instance_pools import (
    InstanceTypeResources,
    demands_by_type,
    specifications,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import startup_parameters
from fm_platform.core.compliance import acknowledge
from fm_platform.core.options import checked
from fm_platform.core.rollback_alarms import read_rollback_alarms_statement
from fm_platform.core.tokens import is_unresolved, known
from fm_platform.rules.caching import cached_start_skips_download, caches_by_default
from fm_platform.rules.capacity import CopyDemand, check_fit
from fm_platform.rules.components import (
    check_component_name_free,
    check_copy_resources,
    check_initial_copies,
    check_name_suffix,
    check_rolling_update,
    check_startup_timeouts,
)
from fm_platform.rules.isolation import check_model_isolation
from fm_platform.rules.pools import check_per_type_resources
from fm_platform.rules.problems import Problems

#: Utilisation metrics of inference components, one datapoint per copy (SageMaker
#: Developer Guide, "Amazon SageMaker AI metrics in Amazon CloudWatch", "SageMaker AI
#: inference component metrics").
COMPONENT_NAMESPACE = "/aws/sagemaker/InferenceComponents"
COPIES_METRIC = "CPUUtilizationNormalized"


@dataclass(frozen=True, kw_only=True)
class RollingUpdate:
    """How an update replaces a component's copies, a batch at a time.

    batch_size: percent of the copies (or copies, with ``COPY_COUNT``) updated per batch,
        5%-50% of the component's copies as AWS requires (botocore
        ``InferenceComponentRollingUpdatePolicy.MaximumBatchSize``; see
        :func:`~fm_platform.rules.components.check_batch_share`); by default 50: AWS's
        largest batch, the fewest steps, half of two or more copies being at least one.
    batch_unit: ``CAPACITY_PERCENT`` or ``COPY_COUNT``; by default CAPACITY_PERCENT, the
        unit whose batch stays within 5%-50% whatever the copy count (a component of one
        copy has no such batch of whole copies).
    wait_interval_s: seconds to watch each batch before the next (0-3600); by default 120.
    maximum_execution_timeout_s: seconds before the update is rolled back (600-28800); by
        default SageMaker's.
    rollback_alarms: metric alarms (or their names, at most 10) that roll the update back
        when they fire; the endpoint's execution role is granted
        ``cloudwatch:DescribeAlarms`` on each (SageMaker reads their state with it); by
        default none.
    rollback_batch_size: percent of the copies (or copies, in ``batch_unit``) restored per
        batch in a rollback; by default SageMaker's (all at once).
    """

    batch_size: int = 50
    batch_unit: Literal["COPY_COUNT", "CAPACITY_PERCENT"] = "CAPACITY_PERCENT"
    wait_interval_s: int = 120
    maximum_execution_timeout_s: int | None = None
    rollback_alarms: Sequence[cloudwatch.IAlarm | str] = ()
    rollback_batch_size: int | None = None

    def check(
        self, problems: Problems, prefix: str = "rolling_update", copies: int | None = None
    ) -> None:
        """Record every problem of these settings in ``problems``; ``copies``: the
        component's copy count, which the batch is a share of."""
        check_rolling_update(
            problems,
            prefix,
            copies=copies,
            batch_size=self.batch_size,
            batch_unit=self.batch_unit,
            wait_interval_s=self.wait_interval_s,
            maximum_execution_timeout_s=self.maximum_execution_timeout_s,
            rollback_batch_size=self.rollback_batch_size,
            rollback_alarms=len(self.rollback_alarms or ()),
        )

    def to_property(
        self,
    ) -> sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty:
        ic = sagemaker.CfnInferenceComponent
        rollback = (
            ic.AutoRollbackConfigurationProperty(
                alarms=[
                    ic.AlarmProperty(alarm_name=a if isinstance(a, str) else a.alarm_name)
                    for a in self.rollback_alarms
                ]
            )
            if self.rollback_alarms
            else None
        )
        return ic.InferenceComponentDeploymentConfigProperty(
            rolling_update_policy=ic.InferenceComponentRollingUpdatePolicyProperty(
                maximum_batch_size=ic.InferenceComponentCapacitySizeProperty(
                    type=self.batch_unit, value=self.batch_size
                ),
                wait_interval_in_seconds=self.wait_interval_s,
                maximum_execution_timeout_in_seconds=self.maximum_execution_timeout_s,
                rollback_maximum_batch_size=(
                    ic.InferenceComponentCapacitySizeProperty(
                        type=self.batch_unit, value=self.rollback_batch_size
                    )
                    if self.rollback_batch_size is not None
                    else None
                ),
            ),
            auto_rollback_configuration=rollback,
        )


@dataclass(frozen=True, kw_only=True)
class InferenceComponentModelOptions:
    """Plain options of :class:`InferenceComponentModel` (the keys of an item of an
    endpoint's ``models`` in the configuration too).

    model_name: a stable logical name (1-63 letters, digits and hyphens); with the stack's
        name it names the component unless ``component_name`` is given.
    accelerators: accelerator devices each copy needs; 0 for CPU models.
    min_memory_mib: host memory reserved for each copy (at least 128).
    container: the model's image, artifacts and environment; by default the Large Model
        Inference image and no artifacts (the stacks default the artifacts to their bucket).
    cpu_cores: CPU cores reserved for each copy (at least 0.25); by default none reserved.
    max_memory_mib: host memory limit of each copy; by default no limit.
    initial_copies: the component's ``CopyCount`` (at least 1, also for models that scale
        to zero: scaling takes them to zero). CloudFormation sends it at creation and again
        with every update of the component (a new image, artifacts, environment or
        resources), so an update sets the running copies to it and autoscaling moves them
        on from there; by default ``scaling.min_copies`` (at least 1), else 1.
    model_data_download_timeout_s: seconds to download the artifacts (60-3600); by default
        60 + 15 per GiB of the weights (``container.model_size_gib``; a 13 GiB 7B model:
        255), within 60-3600; without a weights size, per GiB of ``min_memory_mib``, which
        holds the weights (an upper bound).
    container_startup_health_check_timeout_s: seconds for the container to pass its health
        check (60-3600); by default 300 + 10 per GiB of the weights (a 13 GiB model: 430),
        within 60-3600; without a weights size, per GiB of ``min_memory_mib``.
    rolling_update: how updates replace copies; by default SageMaker's update behaviour.
    scaling: autoscaling of the copy count; by default none: the count stays at
        ``initial_copies``.
    component_name: the inference component's name, used to invoke the model; by default
        ``<stack name>-<model_name>-<key>``, ``<key>`` being the endpoint's
        ``replacement_key`` (8 hex digits of its instance type and variant name: a new
        instance type creates a new component beside the old one under a new name; the
        stack's outputs give it), trimmed with a hash to 63 characters (see
        :func:`~fm_platform.rules.components.component_name_for`), so that copies of the
        stack in one account and region do not collide (component names are unique per
        account and region). An explicit name is used as given; give a distinct one to
        place the same model on two endpoints of one stack, and a new one with a new
        instance type (the replacement cannot take the running component's name).
    name_suffix: what follows the default component name (``<stack name>-<model_name>-
        <key>-<name_suffix>``, letters, digits and hyphens); by default nothing. A model
        moved to another endpoint of the same instance type and variant name (the same
        key) needs one: its new component is created before the old one is deleted and
        cannot take its name. The fleet stacks give a moved model its new endpoint's name.
        Applies to the default name only: not with ``component_name``.
    scheduling: how the copies are placed on instances and Availability Zones
        (:class:`ComponentScheduling`); by default SageMaker's placement.
    enable_caching: cache the artifacts and image on each instance, so that a copy
        started on an instance that had one starts faster (``DataCacheConfig``); by default
        True for a model that may scale to zero copies on an endpoint whose every instance
        type has local NVMe storage (see :mod:`fm_platform.rules.caching`), else
        SageMaker's choice (it caches on types with large local NVMe storage).
    per_instance_type: what each copy reserves on the endpoint's fallback instance types
        (:class:`InstanceTypeResources`; the fields above apply to its first type); with
        any, the component gets one ``Specifications`` entry per type; by default the
        fields above apply on every type, which each copy must fit.
    network_isolation: run this model without network access; by default the endpoint's
        setting. False (a model downloading its weights from the internet) needs an
        endpoint that is not network-isolated: the endpoint's setting applies to every
        container on it (:mod:`fm_platform.rules.isolation`).
    """

    model_name: str
    accelerators: int
    min_memory_mib: int
    container: ModelContainer = field(default_factory=ModelContainer)
    cpu_cores: float | None = None
    max_memory_mib: int | None = None
    initial_copies: int | None = None
    model_data_download_timeout_s: int | None = None
    container_startup_health_check_timeout_s: int | None = None
    rolling_update: RollingUpdate | None = None
    scaling: ComponentScaling | None = None
    component_name: str | None = None
    name_suffix: str | None = None
    scheduling: ComponentScheduling | None = None
    enable_caching: bool | None = None
    per_instance_type: Sequence[InstanceTypeResources] = ()
    network_isolation: bool | None = None

    @property
    def copies_at_creation(self) -> int:
        """``initial_copies``, by default the scaling minimum (at least 1), else 1."""
        if self.initial_copies is not None:
            return self.initial_copies
        if self.scaling is not None and self.scaling.min_copies is not None:
            return max(self.scaling.min_copies, 1)
        return 1

    @property
    def min_copies(self) -> int | None:
        """The fewest copies the component keeps: the scaling minimum, else its copies."""
        return self.scaling.min_copies if self.scaling is not None else self.copies_at_creation

    def demand(self, component_name: str | None = None) -> CopyDemand:
        """What this model's copies reserve, named ``component_name`` (by default the
        explicit ``component_name``, else ``model_name``)."""
        return CopyDemand(
            name=component_name or self.component_name or self.model_name,
            accelerators=self.accelerators,
            cpu_cores=self.cpu_cores,
            min_memory_mib=self.min_memory_mib,
            min_copies=self.min_copies,
            initial_copies=self.copies_at_creation,
        )

    def check(
        self,
        problems: Problems,
        *,
        instance_type: str | None = None,
        fallback_types: Sequence[str] = (),
    ) -> None:
        """Record every problem of these options in ``problems``; ``instance_type``: the
        endpoint's, which each copy must fit; ``fallback_types``: its fallback types, which
        each copy must fit too unless :attr:`per_instance_type` gives its resources
        there."""
        problems.check_shape("model_name", self.model_name, "InferenceComponentName")
        problems.check_shape("component_name", self.component_name, "InferenceComponentName")
        check_name_suffix(problems, "name_suffix", self.name_suffix, self.component_name)
        if self.container is not None:
            self.container.check(problems)
        check_copy_resources(
            problems,
            instance_type=instance_type,
            accelerators=self.accelerators,
            cpu_cores=self.cpu_cores,
            min_memory_mib=self.min_memory_mib,
            max_memory_mib=self.max_memory_mib,
        )
        own = {entry.instance_type for entry in self.per_instance_type or ()}
        for fallback in fallback_types:
            if fallback not in own:
                check_fit(
                    problems,
                    f"on fallback {fallback}",
                    fallback,
                    accelerators=self.accelerators,
                    cpu_cores=self.cpu_cores,
                    min_memory_mib=self.min_memory_mib,
                )
        for index, entry in enumerate(self.per_instance_type or ()):
            if entry.container is not None:
                entry.container.check(problems, f"per_instance_type[{index}].container")
        check_per_type_resources(
            problems,
            fallback_types=fallback_types,
            given=[
                (e.instance_type, e.accelerators, e.cpu_cores, e.min_memory_mib)
                for e in self.per_instance_type or ()
            ],
        )
        scaling = self.scaling
        if scaling is not None:
            scaling.check(problems)
        check_initial_copies(
            problems,
            self.initial_copies,
            self.copies_at_creation,
            (scaling.min_copies, scaling.max_copies) if scaling is not None else None,
        )
        check_startup_timeouts(
            problems,
            self.model_data_download_timeout_s,
            self.container_startup_health_check_timeout_s,
        )
        if self.rolling_update is not None:
            self.rolling_update.check(problems, copies=self.copies_at_creation)
        if self.scheduling is not None:
            self.scheduling.check(problems)


@dataclass(frozen=True, kw_only=True)
class InferenceComponentModelProps(InferenceComponentModelOptions):
    """Options for :class:`InferenceComponentModel`: the fields of
    :class:`InferenceComponentModelOptions`, and

    endpoint: the endpoint to place the model on (an
        :class:`~fm_platform.constructs.inference.endpoint_interface.IInferenceComponentEndpoint`):
        an :class:`InferenceComponentEndpoint` (possibly of another stack) or one imported
        with :meth:`InferenceComponentEndpoint.from_endpoint_attributes`.
    artifact_key: the KMS key encrypting the model artifacts; by default no KMS grant.
    """

    endpoint: IInferenceComponentEndpoint
    artifact_key: kms.IKey | None = None

    def validate(
        self,
        into: Problems | None = None,
        *,
        component_name: str | None = None,
        taken: AbstractSet[str] = frozenset(),
    ) -> None:
        """Raise one ``ValueError`` listing every problem in these props (with ``into``,
        record them there instead; see :meth:`Problems.within`). The component is named
        ``component_name`` (by default the explicit ``component_name``, else ``model_name``),
        which must be none of the ``taken`` names nor a name already placed on the
        endpoint."""
        problems = Problems.within(into, f"InferenceComponentModelProps {self.model_name!r}")
        props = checked(problems, self)
        endpoint = self.endpoint
        instance_type = endpoint.instance_type if endpoint is not None else None
        name = component_name or props.component_name or props.model_name
        fallbacks = tuple(getattr(endpoint, "instance_types", ())[1:])
        props.check(
            problems,
            instance_type=known(instance_type),
            fallback_types=[t for t in fallbacks if known(t) is not None],
        )
        placed = endpoint.component_names if endpoint is not None else set()
        check_component_name_free(problems, "component_name", name, name in placed or name in taken)
        check_model_isolation(
            problems,
            "network_isolation",
            props.network_isolation,
            getattr(endpoint, "network_isolation", None),
        )
        problems.raise_if_any()


class InferenceComponentModel(Construct):
    """A model served by an inference component with dedicated compute per copy.

    Resources (stable construct IDs): ``Model`` (no physical name: a change creates a new
    model and updates the component in place), ``Model-<instance type>`` (the model of a
    ``per_instance_type`` entry with its own ``container``), ``Component<key>`` (the endpoint's
    ``replacement_key``: a replaced endpoint gets new components) and, with ``scaling``,
    ``Scaling`` (see :class:`ComponentAutoScaling`). The endpoint's execution role is
    granted pull on the image, read on the artifacts and, with rollback alarms,
    ``cloudwatch:DescribeAlarms`` on them.

    Attributes: ``model_name``, ``name_suffix`` (the option: what follows the default
    component name, also its adapters'), ``model``, ``type_models`` (by instance type, the
    models of ``per_instance_type`` entries with their own container), ``component``,
    ``component_name``, ``endpoint``
    (the endpoint the model is placed on), ``scaling`` (None without autoscaling),
    ``min_copies`` and ``max_copies`` (the copy range; both the fixed copies without
    scaling; None when unknown at synth), ``caching`` (``EnableCaching``: the option, else
    :func:`~fm_platform.rules.caching.caches_by_default`; None: SageMaker's choice),
    ``startup_timeout_s`` (the artifact download and container health-check timeouts
    added up, the health check alone when a cached start skips the download: caching on an
    endpoint that keeps an instance; None when SageMaker's defaults apply).
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: InferenceComponentModelProps
    ) -> None:
        """Create the model, its inference component and its scaling under ``scope``;
        ``props`` is validated first."""
        super().__init__(scope, construct_id)
        self.endpoint: IInferenceComponentEndpoint = props.endpoint
        self.model_name = props.model_name
        self.name_suffix = props.name_suffix
        self.component_name = props.component_name or default_component_name(
            self, props.model_name, self.endpoint.replacement_key, props.name_suffix
        )
        in_stack = component_names_in_stack(self)
        props.validate(component_name=self.component_name, taken=in_stack)
        in_stack.add(self.component_name)
        self.endpoint.record_component_name(self.component_name)
        demand = props.demand(self.component_name)
        self.endpoint.place(
            self,
            demand,
            demands_by_type(demand, self.endpoint.instance_types, props.per_instance_type),
        )
        role = self.endpoint.execution_role

        typed = {
            entry.instance_type: entry.container
            for entry in props.per_instance_type or ()
            if entry.container is not None
        }
        add_container_access(self, role, [props.container, *typed.values()], props.artifact_key)
        isolation = (
            self.endpoint.network_isolation
            if props.network_isolation is None
            else props.network_isolation
        )
        self.model = create_model(
            self,
            "Model",
            role=role,
            container=props.container.to_container_property(self),
            network_isolation=isolation,
            vpc_config=self.endpoint.vpc_config,
        )
        self.type_models: dict[str, sagemaker.CfnModel] = {
            instance_type: create_model(
                self,
                f"Model-{instance_type}",
                role=role,
                container=container.to_container_property(self),
                network_isolation=isolation,
                vpc_config=self.endpoint.vpc_config,
            )
            for instance_type, container in typed.items()
        }
        weights = props.container.model_size_gib
        if weights is None and not is_unresolved(props.min_memory_mib):
            weights = props.min_memory_mib / 1024  # the copy's memory holds its weights
        startup = startup_parameters(
            weights,
            download_s=props.model_data_download_timeout_s,
            health_check_s=props.container_startup_health_check_timeout_s,
        )
        self.min_copies: int | None = known(props.min_copies)
        self.caching: bool | None = (
            props.enable_caching
            if props.enable_caching is not None
            else caches_by_default(self.min_copies, self.endpoint.instance_types)
        )
        self.component = self._component(props, startup)
        self._grant_rollback_alarms(props.rolling_update)
        self.max_copies: int | None = (
            known(props.scaling.max_copies) if props.scaling else self.min_copies
        )
        minimum = self.endpoint.min_instance_count
        skips_download = cached_start_skips_download(
            self.caching, keeps_instances=minimum is not None and minimum > 0
        )
        self.startup_timeout_s = _startup_seconds(startup, skips_download=skips_download)

        self.scaling: ComponentAutoScaling | None = None
        if props.scaling is not None:
            self.scaling = ComponentAutoScaling(
                self,
                "Scaling",
                component_name=self.component_name,
                component=self.component,
                scaling=props.scaling,
            )
            minimum = self.endpoint.min_instance_count
            if props.scaling.scales_to_zero and minimum:
                Annotations.of(self).add_warning_v2(
                    "fm_platform:endpointKeepsInstances",
                    f"{self.component_name} scales to zero copies, but its endpoint keeps "
                    f"min_instance_count={minimum} instances running; set the endpoint's "
                    "min_instance_count to 0 to stop paying for idle instances.",
                )

    def _grant_rollback_alarms(self, rolling_update: RollingUpdate | None) -> None:
        """Let the execution role read the rollback alarms' state before the component
        can be updated (:mod:`fm_platform.core.rollback_alarms`): in the role's policy,
        or, for a role of another stack (an endpoint placed on from here), in a policy of
        this stack (``ReadRollbackAlarms``), so that the role's stack names no alarm of
        this one."""
        if rolling_update is None or not rolling_update.rollback_alarms:
            return
        role = self.endpoint.execution_role
        statement = read_rollback_alarms_statement(self, rolling_update.rollback_alarms)
        if Stack.of(role) is Stack.of(self):
            role.add_to_principal_policy(statement)
            depend_on_role_policies(self.component, role)
            return
        policy = iam.Policy(self, "ReadRollbackAlarms", roles=[role], statements=[statement])
        acknowledge(
            policy,
            "The endpoint's execution role lives in another stack; the read of this "
            "component's rollback alarms is kept in this stack with the component, so that "
            "the role's stack does not depend on this one.",
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
        )
        self.component.node.add_dependency(policy)

    def _component(
        self,
        props: InferenceComponentModelProps,
        startup: sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty | None,
    ) -> sagemaker.CfnInferenceComponent:
        ic = sagemaker.CfnInferenceComponent
        own = ic.InferenceComponentComputeResourceRequirementsProperty(
            number_of_accelerator_devices_required=props.accelerators or None,
            number_of_cpu_cores_required=props.cpu_cores,
            min_memory_required_in_mb=props.min_memory_mib,
            max_memory_required_in_mb=props.max_memory_mib,
        )
        scheduling = props.scheduling.to_property() if props.scheduling is not None else None
        data_cache = data_cache_property(self.caching)
        per_type = None
        if props.per_instance_type:
            resources = {t: own for t in self.endpoint.instance_types}
            for entry in props.per_instance_type:
                resources[entry.instance_type] = (
                    ic.InferenceComponentComputeResourceRequirementsProperty(
                        number_of_accelerator_devices_required=entry.accelerators or None,
                        number_of_cpu_cores_required=entry.cpu_cores,
                        min_memory_required_in_mb=entry.min_memory_mib,
                        max_memory_required_in_mb=entry.max_memory_mib,
                    )
                )
            per_type = specifications(
                model_names={
                    t: self.type_models.get(t, self.model).attr_model_name
                    for t in self.endpoint.instance_types
                },
                instance_types=self.endpoint.instance_types,
                resources=resources,
                startup=startup,
                scheduling=scheduling,
                data_cache=data_cache,
            )
        return ic(
            self,
            f"Component{self.endpoint.replacement_key or ''}",
            endpoint_name=self.endpoint.endpoint_name,
            variant_name=self.endpoint.variant_name,
            inference_component_name=self.component_name,
            # One specification per instance type, or one for every type.
            specifications=per_type,
            specification=(
                None
                if per_type
                else ic.InferenceComponentSpecificationProperty(
                    model_name=self.model.attr_model_name,
                    compute_resource_requirements=own,
                    startup_parameters=startup,
                    scheduling_config=scheduling,
                    data_cache_config=data_cache,
                )
            ),
            runtime_config=ic.InferenceComponentRuntimeConfigProperty(
                copy_count=props.copies_at_creation
            ),
            deployment_config=(
                props.rolling_update.to_property() if props.rolling_update else None
            ),
        )

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` invoke the endpoint (InvokeEndpoint and
        InvokeEndpointWithResponseStream); callers name this component in each request."""
        return self.endpoint.grant_invoke(grantee)

    # -- metrics: every method takes the same options -------------------------------------

    @property
    def metric_dimensions(self) -> dict[str, str]:
        """The dimensions of this component's metrics (``InferenceComponentName``), plain
        values for alarms and dashboards built without CDK metric objects."""
        return {"InferenceComponentName": self.component_name}

    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = SAGEMAKER_NAMESPACE,
        **options: Unpack[MetricOptions],
    ) -> cloudwatch.Metric:
        """A metric of this component (dimension ``InferenceComponentName``): by default
        the Average over 1 minute. Utilisation metrics (``CPUUtilizationNormalized``,
        ``GPUUtilizationNormalized``, ``GPUMemoryUtilizationNormalized``, ...) live in
        namespace ``/aws/sagemaker/InferenceComponents``."""
        return sagemaker_metric(metric_name, self.metric_dimensions, namespace=namespace, **options)

    def metric_invocations(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Requests sent to this component (by default the Sum)."""
        return self.metric("Invocations", **with_statistic(options, cloudwatch.Stats.SUM))

    def metric_model_latency(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Time the model took to respond, in microseconds (by default the Average)."""
        return self.metric("ModelLatency", **options)

    def metric_invocation_5xx_errors(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Requests this component answered with a 5xx error (by default the Sum; the
        Average is the share of requests, as SageMaker sends 1 per error and 0 otherwise)."""
        return self.metric("Invocation5XXErrors", **with_statistic(options, cloudwatch.Stats.SUM))

    def metric_copies(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """The component's running copies: every copy reports ``CPUUtilizationNormalized``
        (namespace ``/aws/sagemaker/InferenceComponents``) once per publishing period, 60 s
        unless the endpoint config changes it, so its SampleCount over one minute counts
        the copies (by default that SampleCount over 1 minute). The copy counts detailed
        observability publishes (copies per Availability Zone) are OpenTelemetry metrics
        queried with PromQL (SageMaker Developer Guide, "OpenTelemetry metrics
        reference"), without a namespace and dimensions a ``cloudwatch.Metric`` or metric
        math can name, and only where detailed observability is on; see
        docs/endpoint-options.md."""
        return self.metric(
            COPIES_METRIC,
            **with_statistic(options, cloudwatch.Stats.SAMPLE_COUNT),
            namespace=COMPONENT_NAMESPACE,
        )

    def metric_no_capacity_failures(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """Requests that found no copy of this component to serve them (by default the
        Sum)."""
        return self.metric(
            "NoCapacityInvocationFailures", **with_statistic(options, cloudwatch.Stats.SUM)
        )


def _startup_seconds(
    startup: sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty | None,
    *,
    skips_download: bool,
) -> int | None:
    """The download and health-check timeouts added up (the health check alone when a
    cached start ``skips_download``); None unless both are known."""
    if startup is None:
        return None
    download = startup.model_data_download_timeout_in_seconds
    health = startup.container_startup_health_check_timeout_in_seconds
    if not isinstance(download, int) or not isinstance(health, int):
        return None
    if is_unresolved(download) or is_unresolved(health):
        return None
    return health if skips_download else download + health
