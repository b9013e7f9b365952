"""The newer settings of an Inference Components endpoint's production variant and config,
each a small typed option (the configuration's keys of the same names too), and the L1
properties they become.

- :class:`ScaleInPolicy`: how managed instance scaling releases instances;
- :class:`PrefixAwareRouting`: the settings of ``PREFIX_AWARE`` routing;
- :class:`CapacityReservation`: serve from an ML capacity reservation (training plan);
- :class:`EndpointMetrics`: the endpoint config's ``MetricsConfig``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.rules.problems import Problems
from fm_platform.rules.variant_features import check_capacity_reservation, check_scale_in

_Config = sagemaker.CfnEndpointConfig


@dataclass(frozen=True, kw_only=True)
class ScaleInPolicy:
    """How managed instance scaling releases instances (``ManagedInstanceScaling.
    ScaleInPolicy``).

    strategy: ``CONSOLIDATION`` (moves copies onto fewer instances and releases the emptied
        ones) or ``IDLE_RELEASE`` (releases only instances that host no copy); by default
        IDLE_RELEASE, which never moves a running copy.
    cooldown_minutes: minutes between two scale-ins (5-1440); by default SageMaker's.
    maximum_step_size: the most instances released in one scale-in (1-100); by default
        SageMaker's.
    """

    strategy: Literal["CONSOLIDATION", "IDLE_RELEASE"] = "IDLE_RELEASE"
    cooldown_minutes: int | None = None
    maximum_step_size: int | None = None

    def check(self, problems: Problems, field: str = "scale_in") -> None:
        """Record every problem of these settings in ``problems``."""
        check_scale_in(
            problems,
            field,
            strategy=self.strategy,
            cooldown_minutes=self.cooldown_minutes,
            maximum_step_size=self.maximum_step_size,
        )

    def to_property(self) -> _Config.ScaleInPolicyProperty:
        return _Config.ScaleInPolicyProperty(
            strategy=self.strategy,
            cooldown_in_minutes=self.cooldown_minutes,
            maximum_step_size=self.maximum_step_size,
        )


@dataclass(frozen=True, kw_only=True)
class PrefixAwareRouting:
    """Settings of ``PREFIX_AWARE`` routing (requests sharing a prompt prefix go to the
    copy that has it cached); ``routing_strategy: PREFIX_AWARE`` needs both (botocore:
    "Required when RoutingStrategy is PREFIX_AWARE"), so there is no default.

    prefix_length: the bytes of the request body (characters of the messages with the
        OpenAI-compatible API) compared (1024-65536): cover the shared system prompt and
        enough of each request to spread the load.
    concurrency_threshold: requests a copy may have in flight before the endpoint sends
        the next one to another copy or instance (1-1024); it applies to every copy of
        every component on the variant, so give what the smallest copy serves.
    """

    prefix_length: int | None = None
    concurrency_threshold: int | None = None

    def to_property(self) -> _Config.PrefixAwareRoutingConfigProperty:
        return _Config.PrefixAwareRoutingConfigProperty(
            prefix_length=self.prefix_length, concurrency_threshold=self.concurrency_threshold
        )


@dataclass(frozen=True, kw_only=True)
class CapacityReservation:
    """Serve only from an ML capacity reservation (``CapacityReservationConfig`` with
    ``capacity-reservations-only``): a reservation or training plan for inference.

    ml_reservation_arn: the reservation's ARN (``arn:aws:sagemaker:<region>:<account>:
        <type>/<id>``).
    instance_type: the instance type the reservation holds, checked against the
        endpoint's; by default unchecked.

    The endpoint's instance type must be the reservation's, and an endpoint uses one
    reservation. When the reservation expires the endpoint stops serving: invocations fail
    with a capacity error until it is deployed with a new reservation's ARN or without this
    option (on-demand capacity) (SageMaker Developer Guide, "Using training plans for
    SageMaker inference endpoints"). Either is a new endpoint config, updated in place.
    """

    ml_reservation_arn: str
    instance_type: str | None = None

    def check(self, problems: Problems, instance_type: str | None) -> None:
        """Record every problem of these settings (on an endpoint of ``instance_type``)."""
        check_capacity_reservation(
            problems,
            "capacity_reservation",
            ml_reservation_arn=self.ml_reservation_arn,
            reserved_instance_type=self.instance_type,
            instance_type=instance_type,
        )

    def to_property(self) -> _Config.CapacityReservationConfigProperty:
        return _Config.CapacityReservationConfigProperty(
            capacity_reservation_preference="capacity-reservations-only",
            ml_reservation_arn=self.ml_reservation_arn,
        )


@dataclass(frozen=True, kw_only=True)
class EndpointMetrics:
    """The endpoint config's ``MetricsConfig``.

    enhanced: enhanced metrics (per-instance and per-accelerator dimensions); by default
        False.
    detailed_observability: detailed observability: OpenTelemetry metrics queried with
        PromQL (container, per-GPU and host metrics, copies per Availability Zone), at
        extra CloudWatch cost; by default False, written as ``false`` (SageMaker turns it
        on for every new endpoint config that does not say, botocore
        ``MetricsConfig.EnableDetailedObservability``).
    publish_frequency_s: seconds between datapoints (10, 30, 60, 120, 180, 240 or 300); by
        default SageMaker's 60. The alarms and dashboards count instances and copies by the
        datapoints a utilisation metric gets per minute, which assumes 60: another value
        is refused while they do.
    """

    enhanced: bool = False
    detailed_observability: bool = False
    publish_frequency_s: int | None = None

    def to_property(self) -> _Config.MetricsConfigProperty:
        return _Config.MetricsConfigProperty(
            enable_enhanced_metrics=self.enhanced,
            enable_detailed_observability=self.detailed_observability,
            metric_publish_frequency_in_seconds=self.publish_frequency_s,
        )
