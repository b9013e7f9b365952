"""One alarm per endpoint variant: errors, latency over the objective, instances pinned at
their maximum.

Metrics (SageMaker Developer Guide, "Amazon SageMaker AI metrics in Amazon CloudWatch"):
``Invocation5XXErrors`` and ``ModelLatency`` (microseconds) in ``AWS/SageMaker`` with the
dimensions ``EndpointName`` and ``VariantName``; the instances as the SampleCount of the
per-instance utilisation metric in ``/aws/sagemaker/Endpoints`` (see
:meth:`RealtimeEndpoint.metric_instances`); any
:class:`~fm_platform.constructs.inference.endpoint_interface.IEndpoint` is watched alike,
created here or imported. On an Inference Components endpoint the models'
own alarms (:class:`~fm_platform.constructs.observability.model_alarm.ModelAlarm`) watch
errors and latency per component; its endpoint alarm watches the instances. The conditions
share one alarm, as for models (:mod:`~fm_platform.constructs.observability.conditions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from aws_cdk import Stack
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import (
    ENDPOINT_INSTANCE_NAMESPACE,
)
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.constructs.observability.conditions import (
    Condition,
    error_rate,
    latency_over,
    legend,
)
from fm_platform.constructs.observability.conditions_alarm import ConditionsAlarm
from fm_platform.constructs.observability.model_alarm import (
    DEFAULT_MINUTES,
)
from fm_platform.core.options import Props, checked, options_values
from fm_platform.rules.observability import (
    check_alarm_minutes,
    check_latency_objective,
    check_percent,
)
from fm_platform.rules.problems import Problems


@dataclass(frozen=True, kw_only=True)
class EndpointAlarmOptions:
    """Plain options of :class:`EndpointAlarm` (an endpoint's ``alarms`` keys in the
    configuration too). The alarm fires when, in each of ``minutes`` consecutive minutes,
    at least one condition held; its value says which (1 errors, 2 latency, 4 instances at
    the maximum, for the conditions watched, in that order).

    enabled: whether the stacks create the endpoint's alarm; by default True.
    error_rate_percent: the share of requests answered with a 5xx error that makes a minute
        unhealthy (the Average of ``Invocation5XXErrors``); by default 5 (none on an
        Inference Components endpoint, whose models are watched one by one). None: errors
        are not watched.
    latency_objective_ms: the p50 latency objective of the endpoint's model(s) in
        milliseconds; by default none (the fleet stacks take a dedicated model's
        ``latency_p50_ms`` from the catalog).
    instances_at_max: a minute with the instances at the scaling maximum is unhealthy; by
        default True. Only for endpoints whose instances scale (maximum above minimum).
    minutes: consecutive unhealthy minutes before the alarm fires (1-1440); by default 10.
    """

    enabled: bool = True
    error_rate_percent: float | None = 5.0
    latency_objective_ms: int | None = None
    instances_at_max: bool = True
    minutes: int = DEFAULT_MINUTES

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_percent(problems, "error_rate_percent", self.error_rate_percent)
        check_latency_objective(problems, "latency_objective_ms", self.latency_objective_ms)
        check_alarm_minutes(problems, "minutes", self.minutes)
        watches = (
            self.error_rate_percent is not None
            or self.latency_objective_ms is not None
            or self.instances_at_max
        )
        if self.enabled and not watches:
            problems.add(
                "error_rate_percent, latency_objective_ms, instances_at_max",
                None,
                "nothing to watch: set at least one (or enabled: false)",
            )


#: The default for an Inference Components endpoint: its instances (errors and latency are
#: watched per model).
COMPONENT_ENDPOINT_ALARMS = EndpointAlarmOptions(error_rate_percent=None)


@dataclass(frozen=True, kw_only=True)
class EndpointAlarmProps(EndpointAlarmOptions, Props):
    """Options for :class:`EndpointAlarm`: the fields of :class:`EndpointAlarmOptions`, and

    endpoint: the endpoint to watch (any :class:`IEndpoint`, its ``variant_name``).
    label: the endpoint's name in the alarm's name (``<stack>-<label>-health``) and
        description, e.g. its logical name in the stack.
    topic_arn: the SNS topic the alarm sends its ALARM state to.
    min_instance_count, max_instance_count: the variant's instance range; by default the
        endpoint's own when it has them (Inference Components endpoints); without both no
        instance condition is watched.
    """

    endpoint: IEndpoint
    label: str
    topic_arn: str
    min_instance_count: int | None = None
    max_instance_count: int | None = None

    def instance_range(self) -> tuple[int, int] | None:
        """The (min, max) instances, from these props or the endpoint; None when unknown."""
        low, high = self.min_instance_count, self.max_instance_count
        if low is None and high is None:
            low = getattr(self.endpoint, "min_instance_count", None)
            high = getattr(self.endpoint, "max_instance_count", None)
        if isinstance(low, int) and isinstance(high, int):
            return low, high
        return None

    def _subject(self) -> str:
        return f"EndpointAlarmProps {self.label!r}"

    def _check(self, problems: Problems) -> None:
        options = EndpointAlarmOptions(**options_values(EndpointAlarmOptions, self))
        checked(problems, options).check(problems)
        if not problems and not endpoint_conditions(self):
            problems.add(
                "error_rate_percent, latency_objective_ms, instances_at_max",
                None,
                "nothing to watch: set at least one (or do not create the alarm)",
            )


def endpoint_conditions(props: EndpointAlarmProps) -> list[Condition]:
    """The conditions ``props`` watch on the endpoint's variant, in bit order."""
    endpoint = props.endpoint
    dimensions = endpoint.metric_dimensions()
    watched = []
    if props.error_rate_percent is not None:
        watched.append(error_rate(dimensions, props.error_rate_percent))
    if props.latency_objective_ms is not None:
        watched.append(latency_over(dimensions, props.latency_objective_ms))
    instances = props.instance_range()
    if props.instances_at_max and instances is not None and instances[1] > instances[0]:
        watched.append(
            Condition(
                "instances",
                ENDPOINT_INSTANCE_NAMESPACE,
                endpoint.instance_metric,
                dimensions,
                "SampleCount",
                ">=",
                instances[1],
                # AWS documents no instance-count metric: the description says how it counts.
                f"instances at the maximum ({instances[1]}; counted as the instances' "
                f"{endpoint.instance_metric} datapoints per minute, AWS publishing no "
                "instance count)",
            )
        )
    return watched


class _VariantHealth(Protocol):
    """What :class:`VariantHealthAlarm` reads of an alarm's props."""

    @property
    def endpoint(self) -> IEndpoint: ...
    @property
    def label(self) -> str: ...
    @property
    def minutes(self) -> int: ...
    @property
    def topic_arn(self) -> str: ...


class VariantHealthAlarm(ConditionsAlarm):
    """The ``<stack>-<label>-health`` alarm of an endpoint's variant: its description
    names ``what`` (``endpoint``, ``serverless endpoint``), the endpoint and variant, what
    each value means and the ``fmp`` command to look further."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        what: str,
        props: _VariantHealth,
        conditions: list[Condition],
    ) -> None:
        endpoint = props.endpoint.endpoint_name
        description = (
            f"fm_platform: {what} {props.label} ({endpoint}, variant "
            f"{props.endpoint.variant_name}): unhealthy in each of {props.minutes} "
            f"consecutive minutes. The value adds up what held: {legend(conditions)}. "
            f"Look further: fmp endpoint metrics {endpoint}"
        )
        super().__init__(
            scope,
            construct_id,
            about=f"{type(self).__name__} {props.label!r}",
            alarm_name=f"{Stack.of(scope).stack_name}-{props.label}-health",
            description=description,
            label=f"{props.label} unhealthy (sum of conditions)",
            conditions=conditions,
            minutes=props.minutes,
            topic_arn=props.topic_arn,
        )


class EndpointAlarm(VariantHealthAlarm):
    """An alarm on one endpoint's variant: an ``AWS::CloudWatch::Alarm`` named
    ``<stack>-<label>-health`` whose ALARM state goes to ``topic_arn``; missing data is not
    breaching (no traffic, or no instance while the endpoint is scaled to zero). Its
    description names the endpoint, what each value means and the ``fmp`` command to look
    further.

    Attributes: ``alarm_name``, ``alarm_arn``, ``conditions`` (what it watches, in bit
    order) and ``minutes``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: EndpointAlarmProps) -> None:
        """Create the alarm under ``scope``; ``props`` is validated first."""
        props.validate()
        super().__init__(scope, construct_id, "endpoint", props, endpoint_conditions(props))
