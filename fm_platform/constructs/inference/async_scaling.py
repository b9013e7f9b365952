"""Scaling of an asynchronous endpoint on its backlog, down to zero instances.

The way the SageMaker Developer Guide documents it ("Autoscale an asynchronous endpoint",
https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html): the
variant's instance count (``sagemaker:variant:DesiredInstanceCount`` of
``endpoint/<name>/variant/<variant>``) is registered with ``MinCapacity`` 0, a
target-tracking policy holds ``ApproximateBacklogSizePerInstance`` (namespace
``AWS/SageMaker``, dimension ``EndpointName``, statistic Average) at a target, and, since
target tracking only scales out from zero once the backlog exceeds the target, a step
policy adds one instance when an alarm sees ``HasBacklogWithoutCapacity`` (1 while requests
are queued and no instance runs, else 0; "Monitor asynchronous endpoint",
https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html) at 1 or more
for two of two 1-minute periods.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from fm_platform.constructs.inference.instance_scaling import (
    VARIANT_INSTANCE_COUNT_DIMENSION,
    autoscaling_service_linked_role_arn,
    variant_resource_id,
)
from fm_platform.rules.asynchronous import check_async_scaling
from fm_platform.rules.problems import Problems

NAMESPACE = "AWS/SageMaker"
BACKLOG_PER_INSTANCE = "ApproximateBacklogSizePerInstance"
HAS_BACKLOG_WITHOUT_CAPACITY = "HasBacklogWithoutCapacity"
# The wake-up alarm and step policy as the guide's example sets them.
WAKE_PERIOD_SECONDS = 60
WAKE_EVALUATION_PERIODS = 2
WAKE_DATAPOINTS_TO_ALARM = 2
WAKE_THRESHOLD = 1
_POLICY = appscaling.CfnScalingPolicy


@dataclass(frozen=True, kw_only=True)
class AsyncScaling:
    """How an asynchronous endpoint scales its instances on its queue (the configuration's
    ``scaling`` keys of an asynchronous endpoint too).

    max_instances: the most instances; by default 1.
    min_instances: the fewest instances; 0 scales to zero when the queue is empty (requests
        wait in the queue until an instance is back); by default 0.
    target_backlog_per_instance: the queued requests per instance that target tracking
        holds the endpoint at (metric ``ApproximateBacklogSizePerInstance``); by default 5
        (the value of the AWS guide's example).
    scale_in_cooldown_seconds: wait after a scale-in before the next; by default 300.
    scale_out_cooldown_seconds: wait after a scale-out before the next; by default 60.
    wake_cooldown_seconds: the cooldown of the step policy that starts an instance from
        zero; by default 300 (the AWS guide's example). Only used with ``min_instances`` 0.
    """

    max_instances: int = 1
    min_instances: int = 0
    target_backlog_per_instance: float = 5.0
    scale_in_cooldown_seconds: int = 300
    scale_out_cooldown_seconds: int = 60
    wake_cooldown_seconds: int = 300

    @property
    def scales_to_zero(self) -> bool:
        """True when the endpoint may run no instance."""
        return self.min_instances == 0

    def check(self, problems: Problems, field: str = "scaling") -> None:
        """Add every problem with these settings to ``problems``, fields under ``field``."""
        check_async_scaling(
            problems,
            field,
            min_instances=self.min_instances,
            max_instances=self.max_instances,
            target_backlog_per_instance=self.target_backlog_per_instance,
            scale_in_cooldown_seconds=self.scale_in_cooldown_seconds,
            scale_out_cooldown_seconds=self.scale_out_cooldown_seconds,
            wake_cooldown_seconds=self.wake_cooldown_seconds,
        )


class AsyncAutoScaling(Construct):
    """Application Auto Scaling of one asynchronous endpoint's variant, as CloudFormation
    resources (checked by :class:`AsyncEndpoint`, which creates it).

    Resources (construct IDs): ``Target`` (scalable target through Application Auto
    Scaling's SageMaker service-linked role; its resource ID reads the endpoint's name, so
    it is registered once the endpoint exists), ``Backlog`` (target-tracking policy on
    ``ApproximateBacklogSizePerInstance``), and with ``min_instances`` 0 ``Wake`` (step
    policy: +1 instance) with ``WakeAlarm`` (``HasBacklogWithoutCapacity`` >= 1).
    Attributes: ``target``, ``backlog_policy``, ``wake_policy`` and ``wake_alarm`` (the last
    two None when the endpoint keeps an instance).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        endpoint_name: str,
        variant_name: str,
        scaling: AsyncScaling,
    ) -> None:
        """Create the scalable target, its policies and alarm under ``scope``."""
        super().__init__(scope, construct_id)
        dimensions = [_POLICY.MetricDimensionProperty(name="EndpointName", value=endpoint_name)]
        self.target = appscaling.CfnScalableTarget(
            self,
            "Target",
            service_namespace="sagemaker",
            resource_id=variant_resource_id(endpoint_name, variant_name),
            scalable_dimension=VARIANT_INSTANCE_COUNT_DIMENSION,
            min_capacity=scaling.min_instances,
            max_capacity=scaling.max_instances,
            role_arn=autoscaling_service_linked_role_arn(self),
        )
        self.backlog_policy = appscaling.CfnScalingPolicy(
            self,
            "Backlog",
            policy_name="BacklogPerInstance",
            policy_type="TargetTrackingScaling",
            scaling_target_id=self.target.ref,
            target_tracking_scaling_policy_configuration=(
                _POLICY.TargetTrackingScalingPolicyConfigurationProperty(
                    target_value=scaling.target_backlog_per_instance,
                    customized_metric_specification=_POLICY.CustomizedMetricSpecificationProperty(
                        metric_name=BACKLOG_PER_INSTANCE,
                        namespace=NAMESPACE,
                        dimensions=dimensions,
                        statistic="Average",
                    ),
                    scale_in_cooldown=scaling.scale_in_cooldown_seconds,
                    scale_out_cooldown=scaling.scale_out_cooldown_seconds,
                )
            ),
        )
        self.wake_policy: appscaling.CfnScalingPolicy | None = None
        self.wake_alarm: cloudwatch.CfnAlarm | None = None
        if scaling.scales_to_zero:
            self._add_wake(endpoint_name, scaling)

    def _add_wake(self, endpoint_name: str, scaling: AsyncScaling) -> None:
        self.wake_policy = appscaling.CfnScalingPolicy(
            self,
            "Wake",
            policy_name="HasBacklogWithoutCapacity",
            policy_type="StepScaling",
            scaling_target_id=self.target.ref,
            step_scaling_policy_configuration=_POLICY.StepScalingPolicyConfigurationProperty(
                adjustment_type="ChangeInCapacity",
                cooldown=scaling.wake_cooldown_seconds,
                metric_aggregation_type="Average",
                step_adjustments=[
                    _POLICY.StepAdjustmentProperty(
                        metric_interval_lower_bound=0, scaling_adjustment=1
                    )
                ],
            ),
        )
        self.wake_alarm = cloudwatch.CfnAlarm(
            self,
            "WakeAlarm",
            alarm_description=(
                "Requests are queued on an asynchronous endpoint without instances: start one."
            ),
            namespace=NAMESPACE,
            metric_name=HAS_BACKLOG_WITHOUT_CAPACITY,
            dimensions=[
                cloudwatch.CfnAlarm.DimensionProperty(name="EndpointName", value=endpoint_name)
            ],
            statistic="Average",
            period=WAKE_PERIOD_SECONDS,
            evaluation_periods=WAKE_EVALUATION_PERIODS,
            datapoints_to_alarm=WAKE_DATAPOINTS_TO_ALARM,
            threshold=WAKE_THRESHOLD,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="missing",
            alarm_actions=[self.wake_policy.ref],
        )
