"""Per-model autoscaling of an inference component's copy count.

Target tracking on a per-copy metric moves the copy count between ``min_copies`` and
``max_copies``. Target tracking cannot scale out from zero copies (no copy, no per-copy
metric), so a component that scales to zero also gets a step-scaling policy adding one
copy, driven by an alarm on ``NoCapacityInvocationFailures`` (requests that found no copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import Duration
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from constructs import Construct, IDependable

from fm_platform.constructs.inference.instance_scaling import autoscaling_service_linked_role
from fm_platform.validation import Problems

ScalingMetric = Literal["invocations_per_copy", "concurrent_requests_per_copy"]

_METRICS = appscaling.PredefinedMetric
_PREDEFINED = {
    "invocations_per_copy": _METRICS.SAGEMAKER_INFERENCE_COMPONENT_INVOCATIONS_PER_COPY,
    "concurrent_requests_per_copy": (
        _METRICS.SAGEMAKER_INFERENCE_COMPONENT_CONCURRENT_REQUESTS_PER_COPY_HIGH_RESOLUTION
    ),
}


@dataclass(frozen=True, kw_only=True)
class ComponentScaling:
    """How one inference component scales its copies.

    max_copies: the most copies.
    min_copies: the fewest copies; 0 scales to zero when idle (the first request after
        that fails and brings one copy back); by default 1.
    metric: the per-copy metric to track: ``invocations_per_copy`` (invocations per copy
        per minute) or ``concurrent_requests_per_copy`` (in-flight requests per copy,
        high resolution); by default ``invocations_per_copy``.
    target_value: the metric value to hold each copy at; by default 10.
    scale_in_cooldown: wait after a scale-in before the next; by default 5 minutes.
    scale_out_cooldown: wait after a scale-out before the next; by default 1 minute.
    """

    max_copies: int
    min_copies: int = 1
    metric: ScalingMetric = "invocations_per_copy"
    target_value: float = 10.0
    scale_in_cooldown: Duration = Duration.minutes(5)
    scale_out_cooldown: Duration = Duration.minutes(1)

    @property
    def scales_to_zero(self) -> bool:
        return self.min_copies == 0

    def check(self, problems: Problems, prefix: str = "scaling") -> None:
        """Record every problem of these settings in ``problems``."""
        problems.check_range(f"{prefix}.min_copies", self.min_copies, 0, None)
        problems.check_range(f"{prefix}.max_copies", self.max_copies, 1, None)
        if self.min_copies > self.max_copies:
            problems.add(
                f"{prefix}.min_copies",
                self.min_copies,
                f"must not exceed max_copies ({self.max_copies})",
            )
        problems.check_choice(f"{prefix}.metric", self.metric, _PREDEFINED)
        if self.target_value <= 0:
            problems.add(f"{prefix}.target_value", self.target_value, "must be greater than 0")


class ComponentAutoScaling(Construct):
    """Application Auto Scaling for one inference component.

    Resources (stable construct IDs): ``Target`` (scalable target on
    ``inference-component/<name>``, depending on ``component``), ``Target/Tracking``, and
    for scale to zero ``ScaleOutFromZero`` (step policy, +1 copy) with
    ``NoCapacityAlarm``. Attributes: ``target``, ``tracking_policy``,
    ``scale_out_from_zero`` and ``no_capacity_alarm`` (None unless scaling to zero).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        component_name: str,
        component: IDependable,
        scaling: ComponentScaling,
    ) -> None:
        super().__init__(scope, construct_id)
        self.target = appscaling.ScalableTarget(
            self,
            "Target",
            service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
            resource_id=f"inference-component/{component_name}",
            scalable_dimension="sagemaker:inference-component:DesiredCopyCount",
            min_capacity=scaling.min_copies,
            max_capacity=scaling.max_copies,
            # The service-linked role: no role per model is needed.
            role=autoscaling_service_linked_role(self, "ServiceLinkedRole"),
        )
        self.target.node.add_dependency(component)
        self.tracking_policy = self.target.scale_to_track_metric(
            "Tracking",
            target_value=scaling.target_value,
            predefined_metric=_PREDEFINED[scaling.metric],
            scale_in_cooldown=scaling.scale_in_cooldown,
            scale_out_cooldown=scaling.scale_out_cooldown,
        )
        self.scale_out_from_zero: appscaling.StepScalingAction | None = None
        self.no_capacity_alarm: cloudwatch.Alarm | None = None
        if scaling.scales_to_zero:
            self._add_scale_out_from_zero(component_name, scaling)

    def _add_scale_out_from_zero(self, component_name: str, scaling: ComponentScaling) -> None:
        self.scale_out_from_zero = appscaling.StepScalingAction(
            self,
            "ScaleOutFromZero",
            scaling_target=self.target,
            adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
            metric_aggregation_type=appscaling.MetricAggregationType.MAXIMUM,
            cooldown=scaling.scale_out_cooldown,
        )
        self.scale_out_from_zero.add_adjustment(adjustment=1, lower_bound=0)
        self.no_capacity_alarm = cloudwatch.Alarm(
            self,
            "NoCapacityAlarm",
            alarm_description=(
                f"Requests to inference component {component_name} found no copy: scale "
                "out from zero."
            ),
            metric=cloudwatch.Metric(
                namespace="AWS/SageMaker",
                metric_name="NoCapacityInvocationFailures",
                dimensions_map={"InferenceComponentName": component_name},
                statistic=cloudwatch.Stats.MAXIMUM,
                period=Duration.minutes(1),
            ),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.no_capacity_alarm.add_alarm_action(
            cloudwatch_actions.ApplicationScalingAction(self.scale_out_from_zero)
        )
