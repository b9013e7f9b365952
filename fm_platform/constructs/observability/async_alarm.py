"""One alarm per asynchronous endpoint: requests failing, and the queue not draining.

Metrics ("Alarms and logs for tracking metrics from asynchronous endpoints", SageMaker
Developer Guide, https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html):
``Invocation5XXErrors`` in ``AWS/SageMaker`` with ``EndpointName`` and ``VariantName`` (1
per request answered with a 5xx, 0 otherwise: its Average is the error rate; a failed
request is also written to the failure location and announced on the endpoint's error
topic), and ``ApproximateAgeOfOldestRequest`` (seconds) with ``EndpointName`` only. An idle
queue publishes nothing: missing data is not breaching, so an endpoint scaled to zero with
nothing queued stays OK. The conditions share one alarm, as for models
(:mod:`~fm_platform.constructs.observability.conditions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import SAGEMAKER_NAMESPACE
from fm_platform.constructs.inference.endpoint_interface import IAsyncEndpoint
from fm_platform.constructs.observability.conditions import (
    Condition,
    error_rate,
    legend,
)
from fm_platform.constructs.observability.conditions_alarm import ConditionsAlarm
from fm_platform.constructs.observability.model_alarm import DEFAULT_MINUTES
from fm_platform.core.options import Props, checked, options_values
from fm_platform.rules.observability import (
    MAX_ALARM_MINUTES,
    check_alarm_minutes,
    check_percent,
)
from fm_platform.rules.problems import Problems

OLDEST_REQUEST_METRIC = "ApproximateAgeOfOldestRequest"
#: A request waiting longer than the longest invocation SageMaker allows
#: (``InvocationTimeoutSeconds``, at most 3600 s: InvokeEndpointAsync API reference) means
#: the queue is not draining: instances do not start, or too few process too slowly.
DEFAULT_OLDEST_REQUEST_MINUTES = 60
SECONDS_PER_MINUTE = 60


@dataclass(frozen=True, kw_only=True)
class AsyncEndpointAlarmOptions:
    """Plain options of :class:`AsyncEndpointAlarm` (an asynchronous endpoint's ``alarms``
    keys in the configuration too). The alarm fires when, in each of ``minutes``
    consecutive minutes, at least one condition held; its value says which (1 errors, 2
    oldest request too old, for the conditions watched, in that order).

    enabled: whether the stacks create the endpoint's alarm; by default True.
    error_rate_percent: the share of requests that failed with a 5xx error that makes a
        minute unhealthy (the Average of ``Invocation5XXErrors``); by default 5. None:
        errors are not watched.
    oldest_request_minutes: a minute whose oldest queued request
        (``ApproximateAgeOfOldestRequest``) has waited longer than this is unhealthy
        (1-1440); by default 60, the longest an invocation may run. None: the queue's age
        is not watched.
    minutes: consecutive unhealthy minutes before the alarm fires (1-1440); by default 10.
    """

    enabled: bool = True
    error_rate_percent: float | None = 5.0
    oldest_request_minutes: int | None = DEFAULT_OLDEST_REQUEST_MINUTES
    minutes: int = DEFAULT_MINUTES

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_percent(problems, "error_rate_percent", self.error_rate_percent)
        problems.check_range(
            "oldest_request_minutes", self.oldest_request_minutes, 1, MAX_ALARM_MINUTES
        )
        check_alarm_minutes(problems, "minutes", self.minutes)
        if self.enabled and self.error_rate_percent is None and self.oldest_request_minutes is None:
            problems.add(
                "error_rate_percent, oldest_request_minutes",
                None,
                "nothing to watch: set at least one (or enabled: false)",
            )


@dataclass(frozen=True, kw_only=True)
class AsyncEndpointAlarmProps(AsyncEndpointAlarmOptions, Props):
    """Options for :class:`AsyncEndpointAlarm`: the fields of
    :class:`AsyncEndpointAlarmOptions`, and

    endpoint: the asynchronous endpoint to watch (an :class:`IAsyncEndpoint`: an
        ``AsyncEndpoint`` or one imported with ``AsyncEndpoint.from_endpoint_*``).
    label: the endpoint's name in the alarm's name (``<stack>-<label>-health``) and
        description, e.g. its logical name in the stack.
    topic_arn: the SNS topic the alarm sends its ALARM state to.
    """

    endpoint: IAsyncEndpoint
    label: str
    topic_arn: str

    def _subject(self) -> str:
        return f"AsyncEndpointAlarmProps {self.label!r}"

    def _check(self, problems: Problems) -> None:
        options = AsyncEndpointAlarmOptions(**options_values(AsyncEndpointAlarmOptions, self))
        checked(problems, options).check(problems)


def async_conditions(props: AsyncEndpointAlarmProps) -> list[Condition]:
    """The conditions ``props`` watch on the asynchronous endpoint, in bit order."""
    endpoint = props.endpoint
    watched = []
    if props.error_rate_percent is not None:
        watched.append(error_rate(endpoint.metric_dimensions(), props.error_rate_percent))
    if props.oldest_request_minutes is not None:
        watched.append(
            Condition(
                "oldest",
                SAGEMAKER_NAMESPACE,
                OLDEST_REQUEST_METRIC,
                {"EndpointName": endpoint.endpoint_name},
                "Maximum",
                ">",
                props.oldest_request_minutes * SECONDS_PER_MINUTE,
                f"oldest queued request older than {props.oldest_request_minutes} minutes",
            )
        )
    return watched


class AsyncEndpointAlarm(ConditionsAlarm):
    """An alarm on one asynchronous endpoint: an ``AWS::CloudWatch::Alarm`` named
    ``<stack>-<label>-health`` whose ALARM state goes to ``topic_arn``; missing data is not
    breaching (an idle queue publishes nothing). Its description names the endpoint and its
    model, what each value means and where failed requests land.

    Attributes: ``alarm_name``, ``alarm_arn``, ``conditions`` (what it watches, in bit
    order) and ``minutes``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: AsyncEndpointAlarmProps) -> None:
        """Create the alarm under ``scope``; ``props`` is validated first."""
        props.validate()
        conditions = async_conditions(props)
        endpoint = props.endpoint
        model = f", model {endpoint.model_name}" if endpoint.model_name is not None else ""
        failures = (
            f"Failed requests are written to {endpoint.failure_location}. "
            if endpoint.failure_location is not None
            else ""
        )
        description = (
            f"fm_platform: asynchronous endpoint {props.label} ({endpoint.endpoint_name}"
            f"{model}): unhealthy in each of {props.minutes} consecutive minutes. The value "
            f"adds up what held: {legend(conditions)}. {failures}"
            f"Look further: fmp endpoint metrics {endpoint.endpoint_name}"
        )
        super().__init__(
            scope,
            construct_id,
            about=f"AsyncEndpointAlarm {props.label!r}",
            alarm_name=f"{Stack.of(scope).stack_name}-{props.label}-health",
            description=description,
            label=f"{props.label} unhealthy (sum of conditions)",
            conditions=conditions,
            minutes=props.minutes,
            topic_arn=props.topic_arn,
        )
