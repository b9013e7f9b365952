"""One model on an Inference Components endpoint: a SageMaker model, its inference
component (dedicated accelerators, CPU and memory per copy) and its own copy scaling."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from aws_cdk import Annotations, Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.component_naming import (
    component_names_in_stack,
    default_component_name,
)
from fm_platform.constructs.inference.component_scaling import (
    ComponentAutoScaling,
    ComponentScaling,
)
from fm_platform.constructs.inference.endpoint_base import (
    create_model,
    grant_endpoint_invoke,
    sagemaker_metric,
)
from fm_platform.constructs.inference.endpoint_capacity import (
    CopyDemand,
    check_min_copies_fit,
    place_copies,
)
from fm_platform.constructs.inference.execution_role import grant_containers
from fm_platform.constructs.inference.ic_endpoint import EndpointReference, InferenceEndpoint
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.startup_timeouts import startup_parameters
from fm_platform.constructs.scopes import inherit_stack
from fm_platform.specs.fit import check_fit
from fm_platform.specs.sagemaker_model import member_shape_name
from fm_platform.validation import Problems, is_unresolved

_STARTUP = "InferenceComponentStartupParameters"
_ROLLING = "InferenceComponentRollingUpdatePolicy"


@dataclass(frozen=True, kw_only=True)
class RollingUpdate:
    """How an update replaces a component's copies, a batch at a time.

    batch_size: copies (or percent of copies) updated per batch; by default 1.
    batch_unit: ``COPY_COUNT`` or ``CAPACITY_PERCENT``; by default COPY_COUNT.
    wait_interval_s: seconds to watch each batch before the next (0-3600); by default 120.
    maximum_execution_timeout_s: seconds before the update is rolled back (600-28800); by
        default SageMaker's.
    rollback_alarms: alarms that roll the update back when they fire; by default none.
    """

    batch_size: int = 1
    batch_unit: Literal["COPY_COUNT", "CAPACITY_PERCENT"] = "COPY_COUNT"
    wait_interval_s: int = 120
    maximum_execution_timeout_s: int | None = None
    rollback_alarms: Sequence[cloudwatch.IAlarm] = ()

    def check(self, problems: Problems, prefix: str = "rolling_update") -> None:
        """Record every problem of these settings in ``problems``."""
        problems.check_choice(
            f"{prefix}.batch_unit", self.batch_unit, ("COPY_COUNT", "CAPACITY_PERCENT")
        )
        high = 100 if self.batch_unit == "CAPACITY_PERCENT" else None
        problems.check_range(f"{prefix}.batch_size", self.batch_size, 1, high)
        problems.check_shape(
            f"{prefix}.wait_interval_s",
            self.wait_interval_s,
            member_shape_name(_ROLLING, "WaitIntervalInSeconds"),
        )
        problems.check_shape(
            f"{prefix}.maximum_execution_timeout_s",
            self.maximum_execution_timeout_s,
            member_shape_name(_ROLLING, "MaximumExecutionTimeoutInSeconds"),
        )

    def to_property(
        self,
    ) -> sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty:
        ic = sagemaker.CfnInferenceComponent
        rollback = (
            ic.AutoRollbackConfigurationProperty(
                alarms=[ic.AlarmProperty(alarm_name=a.alarm_name) for a in self.rollback_alarms]
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
            ),
            auto_rollback_configuration=rollback,
        )


@dataclass(frozen=True, kw_only=True)
class InferenceComponentModelProps:
    """Options for :class:`InferenceComponentModel`.

    model_name: a stable logical name (1-63 letters, digits and hyphens); with the stack's
        name it names the component unless ``component_name`` is given.
    endpoint: the endpoint to place the model on (an :class:`InferenceEndpoint` or its
        ``reference``, possibly from another stack).
    container: the model's image, artifacts and environment.
    accelerators: accelerator devices each copy needs; 0 for CPU models.
    min_memory_mib: host memory reserved for each copy (at least 128).
    cpu_cores: CPU cores reserved for each copy (at least 0.25); by default none reserved.
    max_memory_mib: host memory limit of each copy; by default no limit.
    initial_copies: the component's ``CopyCount`` (at least 1, also for models that scale
        to zero: scaling takes them to zero). CloudFormation sends it at creation and again
        with every update of the component (a new image, artifacts, environment or
        resources), so an update sets the running copies to it and autoscaling moves them
        on from there; by default ``scaling.min_copies`` (at least 1), else 1.
    model_data_download_timeout_s: seconds to download the artifacts (60-3600); by default
        60 + 15 per GiB of ``min_memory_mib`` (a 32 GiB copy: 540), within 60-3600.
    container_startup_health_check_timeout_s: seconds for the container to pass its health
        check (60-3600); by default 300 + 10 per GiB of ``min_memory_mib`` (a 32 GiB copy:
        620), within 60-3600.
    rolling_update: how updates replace copies; by default SageMaker's update behaviour.
    scaling: autoscaling of the copy count; by default none: the count stays at
        ``initial_copies``.
    component_name: the inference component's name, used to invoke the model; by default
        ``<stack name>-<model_name>`` (trimmed with a hash to 63 characters, see
        :func:`component_name_for`), so that copies of the stack in one account and region
        do not collide (component names are unique per account and region). An explicit
        name is used as given; give a distinct one to place the same model on two
        endpoints of one stack.
    artifact_key: the KMS key encrypting the model artifacts; by default no KMS grant.
    """

    model_name: str
    endpoint: EndpointReference | InferenceEndpoint
    container: ModelContainer
    accelerators: int
    min_memory_mib: int
    cpu_cores: float | None = None
    max_memory_mib: int | None = None
    initial_copies: int | None = None
    model_data_download_timeout_s: int | None = None
    container_startup_health_check_timeout_s: int | None = None
    rolling_update: RollingUpdate | None = None
    scaling: ComponentScaling | None = None
    component_name: str | None = None
    artifact_key: kms.IKey | None = None

    @property
    def reference(self) -> EndpointReference:
        endpoint = self.endpoint
        return endpoint.reference if isinstance(endpoint, InferenceEndpoint) else endpoint

    @property
    def copies_at_creation(self) -> int:
        """``initial_copies``, by default the scaling minimum (at least 1), else 1."""
        if self.initial_copies is not None:
            return self.initial_copies
        return max(self.scaling.min_copies, 1) if self.scaling is not None else 1

    @property
    def min_copies(self) -> int:
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
        reference = self.reference
        name = component_name or self.component_name or self.model_name
        problems.check_shape("model_name", self.model_name, "InferenceComponentName")
        problems.check_shape("component_name", self.component_name, "InferenceComponentName")
        if name in reference.component_names or name in taken:
            problems.add(
                "component_name",
                name,
                "must be unique on the endpoint and in the stack (component names are "
                "unique per account and region); another component already uses it",
            )
        problems.check_range("accelerators", self.accelerators, 0, None)
        if self.cpu_cores is not None and self.cpu_cores < 0.25:
            problems.add("cpu_cores", self.cpu_cores, "must be at least 0.25")
        requirements = "InferenceComponentComputeResourceRequirements"
        problems.check_shape(
            "min_memory_mib",
            self.min_memory_mib,
            member_shape_name(requirements, "MinMemoryRequiredInMb"),
        )
        if self.max_memory_mib is not None and self.max_memory_mib < self.min_memory_mib:
            problems.add(
                "max_memory_mib",
                self.max_memory_mib,
                f"must be at least min_memory_mib ({self.min_memory_mib})",
            )
        check_fit(
            problems,
            "",
            reference.instance_type,
            accelerators=self.accelerators,
            cpu_cores=self.cpu_cores,
            min_memory_mib=self.min_memory_mib,
        )
        self._check_copies(problems)
        if not problems:
            self._check_capacity(problems, name)
        problems.check_shape(
            "model_data_download_timeout_s",
            self.model_data_download_timeout_s,
            member_shape_name(_STARTUP, "ModelDataDownloadTimeoutInSeconds"),
        )
        problems.check_shape(
            "container_startup_health_check_timeout_s",
            self.container_startup_health_check_timeout_s,
            member_shape_name(_STARTUP, "ContainerStartupHealthCheckTimeoutInSeconds"),
        )
        if self.rolling_update is not None:
            self.rolling_update.check(problems)
        problems.raise_if_any()

    def _check_copies(self, problems: Problems) -> None:
        problems.check_range("initial_copies", self.initial_copies, 1, None)
        if self.scaling is None:
            return
        self.scaling.check(problems)
        low, high = max(self.scaling.min_copies, 1), self.scaling.max_copies
        copies = self.copies_at_creation
        if low <= high and not low <= copies <= high:
            problems.add(
                "initial_copies",
                copies,
                f"must lie between {low} and scaling.max_copies ({high})",
            )

    def _check_capacity(self, problems: Problems, component_name: str) -> None:
        """The minimum copies of every model placed on the endpoint, this one included,
        must fit its ``max_instance_count`` instances."""
        reference = self.reference
        check_min_copies_fit(
            problems,
            "scaling.min_copies" if self.scaling is not None else "initial_copies",
            [*reference.placements, self.demand(component_name)],
            reference.instance_type,
            reference.max_instance_count,
        )


class InferenceComponentModel(Construct):
    """A model served by an inference component with dedicated compute per copy.

    Resources (stable construct IDs): ``Model`` (no physical name: a change creates a new
    model and updates the component in place), ``Component`` and, with ``scaling``,
    ``Scaling`` (see :class:`ComponentAutoScaling`). The endpoint's execution role is
    granted pull on the image and read on the artifacts.

    Attributes: ``model``, ``component``, ``component_name``, ``endpoint`` (the reference),
    ``scaling`` (None without autoscaling).
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: InferenceComponentModelProps
    ) -> None:
        """Create the model, its inference component and its scaling under ``scope``; ``props`` is
        validated first."""
        super().__init__(scope, construct_id)
        inherit_stack(self, scope)
        self.component_name = props.component_name or default_component_name(self, props.model_name)
        in_stack = component_names_in_stack(self)
        props.validate(component_name=self.component_name, taken=in_stack)
        in_stack.add(self.component_name)
        self.endpoint = props.reference
        self.endpoint.component_names.add(self.component_name)
        place_copies(self, self.endpoint, props.demand(self.component_name))
        role = self.endpoint.execution_role

        container = props.container.with_image_for(self)
        grant_containers(role, [container], props.artifact_key)
        self.model = create_model(
            self,
            "Model",
            role=role,
            container=container.to_container_property(),
            network_isolation=self.endpoint.network_isolation,
            vpc_config=self.endpoint.vpc_config,
        )
        self.component = self._component(props)
        if self.endpoint.endpoint is not None and not is_unresolved(self.endpoint.endpoint_name):
            # A literal endpoint name carries no reference, so order the creation here.
            self.component.node.add_dependency(self.endpoint.endpoint)

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

    def _component(self, props: InferenceComponentModelProps) -> sagemaker.CfnInferenceComponent:
        ic = sagemaker.CfnInferenceComponent
        startup = startup_parameters(
            props.min_memory_mib,
            download_s=props.model_data_download_timeout_s,
            health_check_s=props.container_startup_health_check_timeout_s,
        )
        return ic(
            self,
            "Component",
            endpoint_name=self.endpoint.endpoint_name,
            variant_name=self.endpoint.variant_name,
            inference_component_name=self.component_name,
            specification=ic.InferenceComponentSpecificationProperty(
                model_name=self.model.attr_model_name,
                compute_resource_requirements=(
                    ic.InferenceComponentComputeResourceRequirementsProperty(
                        number_of_accelerator_devices_required=props.accelerators or None,
                        number_of_cpu_cores_required=props.cpu_cores,
                        min_memory_required_in_mb=props.min_memory_mib,
                        max_memory_required_in_mb=props.max_memory_mib,
                    )
                ),
                startup_parameters=startup,
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
        return grant_endpoint_invoke(grantee, self.endpoint.arn_for(self))

    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = "AWS/SageMaker",
        statistic: str = cloudwatch.Stats.AVERAGE,
        period: Duration | None = None,
    ) -> cloudwatch.Metric:
        """A metric of this component (dimension ``InferenceComponentName``) over ``period``
        (by default 1 minute); utilisation metrics live in
        ``/aws/sagemaker/InferenceComponents``."""
        return sagemaker_metric(
            metric_name,
            {"InferenceComponentName": self.component_name},
            statistic=statistic,
            namespace=namespace,
            period=period,
        )

    def metric_invocations(self, period: Duration | None = None) -> cloudwatch.Metric:
        """Requests sent to this component (Sum)."""
        return self.metric("Invocations", statistic=cloudwatch.Stats.SUM, period=period)

    def metric_model_latency(self, period: Duration | None = None) -> cloudwatch.Metric:
        """Time the model took to respond, in microseconds (Average)."""
        return self.metric("ModelLatency", period=period)

    def metric_no_capacity_failures(self, period: Duration | None = None) -> cloudwatch.Metric:
        """Requests that found no copy of this component to serve them (Sum)."""
        return self.metric(
            "NoCapacityInvocationFailures", statistic=cloudwatch.Stats.SUM, period=period
        )
