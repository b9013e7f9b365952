"""One alarm per serverless endpoint: errors, latency over the objective, concurrency near
its maximum.

Metrics ("Alarms and logs for tracking metrics from serverless endpoints", SageMaker
Developer Guide, https://docs.aws.amazon.com/sagemaker/latest/dg/serverless-endpoints-monitoring.html:
"an exhaustive list of metrics for serverless endpoints"): ``Invocation5XXErrors`` and
``ModelLatency`` (microseconds) as on real-time endpoints, in ``AWS/SageMaker`` with the
dimensions ``EndpointName`` and ``VariantName``, and
``ServerlessConcurrentExecutionsUtilization``, "the number of concurrent executions
divided by the maximum concurrency" (Average, Max, Min), with the same dimensions and
namespace as the other invocation metrics (the page names none). Invocations beyond the
maximum concurrency are throttled ("Serverless Inference", "Concurrent invocations"), so
the concurrency condition fires before callers are refused. An idle endpoint publishes
nothing: missing data is not breaching. The conditions share one alarm, as for models
(:mod:`~fm_platform.constructs.observability.conditions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import SAGEMAKER_NAMESPACE
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.constructs.observability.conditions import (
    Condition,
    error_rate,
    latency_over,
)
from fm_platform.constructs.observability.endpoint_alarm import VariantHealthAlarm
from fm_platform.constructs.observability.model_alarm import DEFAULT_MINUTES
from fm_platform.core.options import Props, checked, options_values
from fm_platform.rules.observability import (
    check_alarm_minutes,
    check_latency_objective,
    check_percent,
)
from fm_platform.rules.problems import Problems

CONCURRENCY_METRIC = "ServerlessConcurrentExecutionsUtilization"
#: A minute whose peak concurrency reaches this share of the maximum is unhealthy: this
#: package's policy, a margin before invocations are throttled at 100%.
DEFAULT_CONCURRENCY_PERCENT = 90.0


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointAlarmOptions:
    """Plain options of :class:`ServerlessEndpointAlarm` (a serverless endpoint's
    ``alarms`` keys in the configuration too). The alarm fires when, in each of ``minutes``
    consecutive minutes, at least one condition held; its value says which (1 errors, 2
    latency, 4 concurrency near its maximum, for the conditions watched, in that order).

    enabled: whether the stacks create the endpoint's alarm; by default True.
    error_rate_percent: the share of requests answered with a 5xx error that makes a minute
        unhealthy (the Average of ``Invocation5XXErrors``); by default 5. None: errors are
        not watched.
    latency_objective_ms: the p50 latency objective of the model in milliseconds
        (``ModelLatency``, without the cold start, which ``OverheadLatency`` and
        ``ModelSetupTime`` hold); by default none (the fleet stacks take the catalog's
        ``latency_p50_ms``).
    concurrency_percent: a minute whose peak concurrent invocations reach this share of
        ``max_concurrency`` is unhealthy (the Maximum of
        ``ServerlessConcurrentExecutionsUtilization``; beyond 100% requests are throttled);
        by default 90. None: concurrency is not watched.
    minutes: consecutive unhealthy minutes before the alarm fires (1-1440); by default 10.
    """

    enabled: bool = True
    error_rate_percent: float | None = 5.0
    latency_objective_ms: int | None = None
    concurrency_percent: float | None = DEFAULT_CONCURRENCY_PERCENT
    minutes: int = DEFAULT_MINUTES

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_percent(problems, "error_rate_percent", self.error_rate_percent)
        check_latency_objective(problems, "latency_objective_ms", self.latency_objective_ms)
        check_percent(problems, "concurrency_percent", self.concurrency_percent)
        check_alarm_minutes(problems, "minutes", self.minutes)
        watches = (
            self.error_rate_percent is not None
            or self.latency_objective_ms is not None
            or self.concurrency_percent is not None
        )
        if self.enabled and not watches:
            problems.add(
                "error_rate_percent, latency_objective_ms, concurrency_percent",
                None,
                "nothing to watch: set at least one (or enabled: false)",
            )


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointAlarmProps(ServerlessEndpointAlarmOptions, Props):
    """Options for :class:`ServerlessEndpointAlarm`: the fields of
    :class:`ServerlessEndpointAlarmOptions`, and

    endpoint: the serverless endpoint to watch (a ``ServerlessEndpoint``, or one imported
        with ``ServerlessEndpoint.from_endpoint_*``; its ``variant_name``).
    label: the endpoint's name in the alarm's name (``<stack>-<label>-health``) and
        description, e.g. its logical name in the stack.
    topic_arn: the SNS topic the alarm sends its ALARM state to.
    """

    endpoint: IEndpoint
    label: str
    topic_arn: str

    def _subject(self) -> str:
        return f"ServerlessEndpointAlarmProps {self.label!r}"

    def _check(self, problems: Problems) -> None:
        options = ServerlessEndpointAlarmOptions(
            **options_values(ServerlessEndpointAlarmOptions, self)
        )
        checked(problems, options).check(problems)


def serverless_conditions(props: ServerlessEndpointAlarmProps) -> list[Condition]:
    """The conditions ``props`` watch on the serverless endpoint, in bit order."""
    dimensions = props.endpoint.metric_dimensions()
    watched = []
    if props.error_rate_percent is not None:
        watched.append(error_rate(dimensions, props.error_rate_percent))
    if props.latency_objective_ms is not None:
        watched.append(latency_over(dimensions, props.latency_objective_ms))
    if props.concurrency_percent is not None:
        watched.append(
            Condition(
                "concurrency",
                SAGEMAKER_NAMESPACE,
                CONCURRENCY_METRIC,
                dimensions,
                "Maximum",
                ">=",
                props.concurrency_percent / 100,
                f"concurrent invocations at or above {props.concurrency_percent:g}% of the "
                "maximum concurrency (requests beyond it are throttled)",
            )
        )
    return watched


class ServerlessEndpointAlarm(VariantHealthAlarm):
    """An alarm on one serverless endpoint: an ``AWS::CloudWatch::Alarm`` named
    ``<stack>-<label>-health`` whose ALARM state goes to ``topic_arn``; missing data is not
    breaching (an idle endpoint publishes nothing). Its description names the endpoint,
    what each value means and the ``fmp`` command to look further.

    Attributes: ``alarm_name``, ``alarm_arn``, ``conditions`` (what it watches, in bit
    order) and ``minutes``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: ServerlessEndpointAlarmProps
    ) -> None:
        """Create the alarm under ``scope``; ``props`` is validated first."""
        props.validate()
        super().__init__(
            scope, construct_id, "serverless endpoint", props, serverless_conditions(props)
        )
