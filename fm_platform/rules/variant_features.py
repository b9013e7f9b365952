"""Rules of the newer production-variant settings of an Inference Components endpoint:
managed scale-in, routing, capacity reservations, instance provisioning, the inference AMI
and the endpoint config's metrics. Limits and enums come from botocore's SageMaker model;
where CloudFormation's schema (cfn-lint's bundled ``AWS::SageMaker::EndpointConfig``) is
narrower, the narrower set is the allowed one, named as such."""

from __future__ import annotations

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import enum_values, member_shape_name, shape_rule

_VARIANT = "ProductionVariant"
_SCALE_IN = "ProductionVariantManagedInstanceScalingScaleInPolicy"
_PREFIX_AWARE = "PrefixAwareRoutingConfig"
_RESERVATION = "ProductionVariantCapacityReservationConfig"

#: ``RoutingStrategy`` values CloudFormation's schema accepts (botocore also has KV_AWARE,
#: which the AWS::SageMaker::EndpointConfig schema in cfn-lint 1.58 rejects).
CLOUDFORMATION_ROUTING_STRATEGIES = ("LEAST_OUTSTANDING_REQUESTS", "PREFIX_AWARE", "RANDOM")
#: ``MetricsConfig.MetricPublishFrequencyInSeconds``: botocore states no limit; the
#: CloudFormation schema's enum.
PUBLISH_FREQUENCIES_S = (10, 30, 60, 120, 180, 240, 300)
#: The publish frequency the copy and instance counts assume: they count the datapoints a
#: utilisation metric gets per minute (the copy and instance counts detailed observability
#: publishes are OpenTelemetry metrics for PromQL, which metric-math alarms cannot use).
COUNTED_FREQUENCY_S = 60


#: What each prefix-aware setting measures (botocore's ``PrefixAwareRoutingConfig``).
_PREFIX_AWARE_MEANING = {
    "prefix_length": "the bytes of the request body (characters of the messages with the "
    "OpenAI-compatible API) that requests must share to go to the same copy: the shared "
    "system prompt and a little more",
    "concurrency_threshold": "the requests in flight on a copy at which the endpoint sends "
    "the next one elsewhere: what the copy that serves the fewest concurrent requests "
    "serves",
}


def check_scale_in(
    problems: Problems,
    field: str,
    *,
    strategy: str | None,
    cooldown_minutes: int | None,
    maximum_step_size: int | None,
) -> None:
    """``ManagedInstanceScaling.ScaleInPolicy``: the strategy (botocore
    ``ManagedInstanceScalingScaleInStrategy``), the cooldown (5-1440 minutes) and the step
    (1-100 instances)."""
    problems.check_shape(f"{field}.strategy", strategy, member_shape_name(_SCALE_IN, "Strategy"))
    problems.check_shape(
        f"{field}.cooldown_minutes",
        cooldown_minutes,
        member_shape_name(_SCALE_IN, "CooldownInMinutes"),
    )
    problems.check_shape(
        f"{field}.maximum_step_size",
        maximum_step_size,
        member_shape_name(_SCALE_IN, "MaximumStepSize"),
    )


def check_routing(
    problems: Problems,
    *,
    strategy: str | None,
    prefix_length: int | None,
    concurrency_threshold: int | None,
    prefix_aware_given: bool,
) -> None:
    """``RoutingConfig``: a strategy botocore and CloudFormation both accept; prefix-aware
    settings (prefix length 1024-65536, concurrency threshold 1-1024) only with
    ``PREFIX_AWARE``, which needs both (botocore's ``PrefixAwareRoutingConfig``: each is
    "Required when RoutingStrategy is PREFIX_AWARE")."""
    if strategy is not None:
        problems.check_shape("routing_strategy", strategy, "RoutingStrategy")
        if strategy in enum_values("RoutingStrategy") and (
            strategy not in CLOUDFORMATION_ROUTING_STRATEGIES
        ):
            problems.add(
                "routing_strategy",
                strategy,
                "not accepted by CloudFormation's AWS::SageMaker::EndpointConfig schema; "
                "allowed: " + ", ".join(CLOUDFORMATION_ROUTING_STRATEGIES),
            )
    if prefix_aware_given and strategy != "PREFIX_AWARE":
        problems.add(
            "prefix_aware_routing",
            strategy,
            "prefix-aware settings need routing_strategy PREFIX_AWARE",
        )
    for key, value, member in (
        ("prefix_length", prefix_length, "PrefixLength"),
        ("concurrency_threshold", concurrency_threshold, "ConcurrencyThreshold"),
    ):
        shape = member_shape_name(_PREFIX_AWARE, member)
        problems.check_shape(f"prefix_aware_routing.{key}", value, shape)
        if strategy == "PREFIX_AWARE" and value is None:
            problems.add(
                f"prefix_aware_routing.{key}",
                value,
                f"required with routing_strategy PREFIX_AWARE (botocore {_PREFIX_AWARE}."
                f"{member}): set {shape_rule(shape).describe_allowed()}, "
                + _PREFIX_AWARE_MEANING[key],
            )


def prefix_aware_on_one_instance(
    strategy: str | None, max_instance_count: int | None
) -> str | None:
    """Why ``PREFIX_AWARE`` routing never applies on an endpoint of at most one instance
    (botocore ``RoutingStrategy``: "The endpoint applies prefix-aware routing only when two
    or more instances can serve the request"), or None: a warning, since the endpoint still
    serves."""
    if strategy != "PREFIX_AWARE" or max_instance_count is None or max_instance_count >= 2:
        return None
    return (
        f"routing_strategy PREFIX_AWARE with max_instance_count {max_instance_count}: the "
        "endpoint applies prefix-aware routing only when two or more instances can serve "
        "the request (botocore RoutingStrategy), so it never does here; allow at least 2 "
        "instances, or route with LEAST_OUTSTANDING_REQUESTS"
    )


def check_capacity_reservation(
    problems: Problems,
    field: str,
    *,
    ml_reservation_arn: str | None,
    reserved_instance_type: str | None,
    instance_type: str | None,
) -> None:
    """``CapacityReservationConfig``: the reservation's ARN (botocore ``MlReservationArn``)
    and, when the reservation's instance type is given, the endpoint's type matching it
    (a reservation holds instances of one type)."""
    problems.check_shape(
        f"{field}.ml_reservation_arn",
        ml_reservation_arn,
        member_shape_name(_RESERVATION, "MlReservationArn"),
    )
    if (
        reserved_instance_type is not None
        and instance_type is not None
        and reserved_instance_type != instance_type
    ):
        problems.add(
            f"{field}.instance_type",
            reserved_instance_type,
            f"the reservation must hold the endpoint's instance type {instance_type}",
        )


def check_variant_host(
    problems: Problems,
    *,
    inference_ami_version: str | None,
    instance_provision_timeout_s: int | None,
) -> None:
    """``InferenceAmiVersion`` (botocore ``ProductionVariantInferenceAmiVersion``) and
    ``VariantInstanceProvisionTimeoutInSeconds`` (300-3600)."""
    problems.check_shape(
        "inference_ami_version",
        inference_ami_version,
        member_shape_name(_VARIANT, "InferenceAmiVersion"),
    )
    problems.check_shape(
        "instance_provision_timeout_s",
        instance_provision_timeout_s,
        member_shape_name(_VARIANT, "VariantInstanceProvisionTimeoutInSeconds"),
    )


def check_metrics_config(
    problems: Problems, field: str, *, publish_frequency_s: int | None
) -> None:
    """``MetricsConfig.MetricPublishFrequencyInSeconds``: one of CloudFormation's values."""
    problems.check_choice(
        f"{field}.publish_frequency_s", publish_frequency_s, PUBLISH_FREQUENCIES_S
    )


def check_counted_frequency(
    problems: Problems, field: str, publish_frequency_s: int | None
) -> None:
    """The publish frequency of an endpoint whose alarms count instances or copies: 60 s
    (or unset), since they count the datapoints a utilisation metric gets per minute."""
    if publish_frequency_s is not None and publish_frequency_s != COUNTED_FREQUENCY_S:
        problems.add(
            f"{field}.publish_frequency_s",
            publish_frequency_s,
            f"{COUNTED_FREQUENCY_S} while the endpoint's alarms count instances or copies "
            "(instances_at_max, copies_at_max): they count the datapoints a utilisation "
            "metric gets per minute (no copy or instance count joins metric math); "
            "turn those conditions off to publish at another frequency",
        )
