"""Per-model autoscaling of an inference component's copy count.

Target tracking on a per-copy metric moves the copy count between ``min_copies`` and
``max_copies``. Target tracking cannot scale out from zero copies (no copy, no per-copy
metric), so a component that scales to zero also gets a step-scaling policy adding one
copy, driven by an alarm on ``NoCapacityInvocationFailures`` (requests that found no copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import CfnResource
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from fm_platform.constructs.inference.instance_scaling import autoscaling_service_linked_role_arn
from fm_platform.rules.problems import Problems
from fm_platform.rules.scaling import check_component_scaling

ScalingMetric = Literal["invocations_per_copy", "concurrent_requests_per_copy"]

# The PredefinedMetricType values (CloudFormation's ScalingPolicy schema, checked by
# cfn-lint) of Application Auto Scaling's per-copy metrics of inference components.
_PREDEFINED = {
    "invocations_per_copy": "SageMakerInferenceComponentInvocationsPerCopy",
    "concurrent_requests_per_copy": (
        "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
    ),
}
_POLICY = appscaling.CfnScalingPolicy


@dataclass(frozen=True, kw_only=True)
class ComponentScaling:
    """How one inference component scales its copies (the configuration's ``scaling`` keys
    of a model too).

    max_copies: the most copies.
    min_copies: the fewest copies; 0 scales to zero when idle (the first request after
        that fails and brings one copy back); by default 1.
    metric: the per-copy metric to track: ``invocations_per_copy`` (invocations per copy
        per minute) or ``concurrent_requests_per_copy`` (in-flight requests per copy,
        high resolution); by default ``invocations_per_copy``.
    target_value: the metric value to hold each copy at; by default 10.
    scale_in_cooldown_seconds: wait after a scale-in before the next; by default 300.
    scale_out_cooldown_seconds: wait after a scale-out before the next; by default 60.
    """

    max_copies: int
    min_copies: int = 1
    metric: ScalingMetric = "invocations_per_copy"
    target_value: float = 10.0
    scale_in_cooldown_seconds: int = 300
    scale_out_cooldown_seconds: int = 60

    @property
    def scales_to_zero(self) -> bool:
        return self.min_copies == 0

    def check(self, problems: Problems, prefix: str = "scaling") -> None:
        """Record every problem of these settings in ``problems``."""
        check_component_scaling(
            problems,
            prefix,
            min_copies=self.min_copies,
            max_copies=self.max_copies,
            metric=self.metric,
            metrics=_PREDEFINED,
            target_value=self.target_value,
            scale_in_cooldown_seconds=self.scale_in_cooldown_seconds,
            scale_out_cooldown_seconds=self.scale_out_cooldown_seconds,
        )


class ComponentAutoScaling(Construct):
    """Application Auto Scaling for one inference component, as CloudFormation resources.

    Resources (stable construct IDs, the same logical IDs as aws-cdk-lib's scaling
    constructs give): ``Target/Resource`` (scalable target on ``inference-component/<name>``
    through Application Auto Scaling's SageMaker service-linked role, depending on
    ``component``), ``Target/Tracking/Resource`` (target-tracking policy ``TargetTracking``),
    and for scale to zero ``ScaleOutFromZero/Resource`` (step policy ``ScaleOutFromZero``,
    +1 copy) with ``NoCapacityAlarm/Resource``. Attributes: ``target``, ``tracking_policy``,
    ``scale_out_from_zero`` and ``no_capacity_alarm`` (the last two None unless scaling to
    zero).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        component_name: str,
        component: CfnResource,
        scaling: ComponentScaling,
    ) -> None:
        """Create the component's scalable target, policies and alarm under ``scope``."""
        super().__init__(scope, construct_id)
        # Plain constructs holding "Resource" children keep the logical IDs of the
        # aws-cdk-lib L2s used before. CloudFormation identifies a scalable target by its
        # resource ID, dimension and namespace: one under a new logical ID cannot be
        # created while the old one exists (the update fails with AlreadyExists), and
        # deleting the old one would deregister it with its policies. A logical ID costs
        # one call into the CDK runtime either way (a holder, or an override).
        target_scope = Construct(self, "Target")
        self.target = appscaling.CfnScalableTarget(
            target_scope,
            "Resource",
            service_namespace="sagemaker",
            resource_id=f"inference-component/{component_name}",
            scalable_dimension="sagemaker:inference-component:DesiredCopyCount",
            min_capacity=scaling.min_copies,
            max_capacity=scaling.max_copies,
            # The service-linked role: no role per model is needed.
            role_arn=autoscaling_service_linked_role_arn(self),
        )
        # The resource ID names the component literally: register it once it exists.
        self.target.add_resource_dependency(component)
        target_id = self.target.ref
        self.tracking_policy = appscaling.CfnScalingPolicy(
            Construct(target_scope, "Tracking"),
            "Resource",
            policy_name="TargetTracking",
            policy_type="TargetTrackingScaling",
            scaling_target_id=target_id,
            target_tracking_scaling_policy_configuration=(
                _POLICY.TargetTrackingScalingPolicyConfigurationProperty(
                    target_value=scaling.target_value,
                    predefined_metric_specification=_POLICY.PredefinedMetricSpecificationProperty(
                        predefined_metric_type=_PREDEFINED[scaling.metric]
                    ),
                    scale_in_cooldown=scaling.scale_in_cooldown_seconds,
                    scale_out_cooldown=scaling.scale_out_cooldown_seconds,
                )
            ),
        )
        self.scale_out_from_zero: appscaling.CfnScalingPolicy | None = None
        self.no_capacity_alarm: cloudwatch.CfnAlarm | None = None
        if scaling.scales_to_zero:
            self._add_scale_out_from_zero(component_name, scaling, target_id)

    def _add_scale_out_from_zero(
        self, component_name: str, scaling: ComponentScaling, target_id: str
    ) -> None:
        self.scale_out_from_zero = appscaling.CfnScalingPolicy(
            Construct(self, "ScaleOutFromZero"),
            "Resource",
            policy_name="ScaleOutFromZero",
            policy_type="StepScaling",
            scaling_target_id=target_id,
            step_scaling_policy_configuration=_POLICY.StepScalingPolicyConfigurationProperty(
                adjustment_type="ChangeInCapacity",
                cooldown=scaling.scale_out_cooldown_seconds,
                metric_aggregation_type="Maximum",
                step_adjustments=[
                    _POLICY.StepAdjustmentProperty(
                        metric_interval_lower_bound=0, scaling_adjustment=1
                    )
                ],
            ),
        )
        self.no_capacity_alarm = cloudwatch.CfnAlarm(
            Construct(self, "NoCapacityAlarm"),
            "Resource",
            alarm_description=(
                f"Requests to inference component {component_name} found no copy: scale "
                "out from zero."
            ),
            namespace="AWS/SageMaker",
            metric_name="NoCapacityInvocationFailures",
            dimensions=[
                cloudwatch.CfnAlarm.DimensionProperty(
                    name="InferenceComponentName", value=component_name
                )
            ],
            statistic="Maximum",
            period=60,
            threshold=1,
            evaluation_periods=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=[self.scale_out_from_zero.ref],
        )
