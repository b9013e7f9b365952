"""One alarm per model on an Inference Components endpoint, watching what its users feel:
errors, requests failing for lack of a copy, copies pinned at their maximum, latency over
the model's objective.

Metrics (SageMaker Developer Guide, "Amazon SageMaker AI metrics in Amazon CloudWatch"):
``Invocation5XXErrors`` (1 per 5xx answer, 0 otherwise: its Average is the error rate) and
``ModelLatency`` (microseconds) in ``AWS/SageMaker`` with the dimension
``InferenceComponentName``; ``NoCapacityInvocationFailures`` in ``AWS/SageMaker``, emitted
when a request finds nothing to serve it ("Scale an endpoint to zero instances"); the
copies as the SampleCount of the per-copy ``CPUUtilizationNormalized`` in
``/aws/sagemaker/InferenceComponents`` (detailed observability's copy counts are PromQL
metrics, which metric math cannot combine; see
:meth:`InferenceComponentModel.metric_copies`). The conditions share one alarm (see
:mod:`~fm_platform.constructs.observability.conditions`): one resource per model, written
as plain CloudFormation (a typed alarm with CDK metric objects costs a thousand-model fleet
several seconds of synth).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import SAGEMAKER_NAMESPACE
from fm_platform.constructs.inference.inference_component import (
    COMPONENT_NAMESPACE,
    COPIES_METRIC,
    InferenceComponentModel,
)
from fm_platform.constructs.observability.conditions import (
    Condition,
    error_rate,
    latency_over,
    legend,
)
from fm_platform.constructs.observability.conditions_alarm import ConditionsAlarm
from fm_platform.core.options import Props, checked, options_values
from fm_platform.rules.observability import (
    MAX_ALARM_MINUTES,
    check_alarm_minutes,
    check_latency_objective,
    check_percent,
)
from fm_platform.rules.problems import Problems

#: Consecutive unhealthy minutes before a model's alarm fires, unless its startup is longer.
DEFAULT_MINUTES = 10
#: Time allowed for an instance when a model scales out from zero: SageMaker documents
#: only that "the provisioning process takes several minutes" (SageMaker Developer Guide,
#: "Scale an endpoint to zero instances"); five minutes is this package's allowance.
SCALE_FROM_ZERO_ALLOWANCE_S = 300


@dataclass(frozen=True, kw_only=True)
class ModelAlarmOptions:
    """Plain options of :class:`ModelAlarm` (the ``alarms`` keys of a model in the
    configuration too). The alarm fires when, in each of ``minutes`` consecutive minutes,
    at least one condition held; its value says which (1 errors, 2 no capacity, 4 copies at
    the maximum, 8 latency, for the conditions watched, in that order).

    enabled: whether the stacks create the model's alarm; by default True.
    error_rate_percent: the share of requests answered with a 5xx error that makes a minute
        unhealthy (the Average of ``Invocation5XXErrors``); by default 5. None: errors are
        not watched.
    no_capacity: a minute with a request that found no copy (``NoCapacityInvocationFailures``)
        is unhealthy; by default True.
    copies_at_max: a minute with the copies at the scaling maximum is unhealthy (demand
        above what the model may scale to); by default True. Only for models whose copies
        scale (``max_copies`` above ``min_copies``).
    latency_objective_ms: the model's p50 latency objective in milliseconds; a minute whose
        p50 ``ModelLatency`` is above it is unhealthy. By default none (the fleet stacks
        take the catalog's ``latency_p50_ms``).
    minutes: consecutive unhealthy minutes before the alarm fires (1-1440). By default 10,
        or, for a model that scales to zero, its startup budget when longer: the artifact
        download and container health-check timeouts plus five minutes for an instance
        (requests fail while a first copy starts; that is not worth a page); the
        health-check timeout alone plus five minutes when the component caches its data on
        an endpoint that keeps an instance (a cached start skips the download: an
        estimate, see :mod:`fm_platform.rules.caching`).
    """

    enabled: bool = True
    error_rate_percent: float | None = 5.0
    no_capacity: bool = True
    copies_at_max: bool = True
    latency_objective_ms: int | None = None
    minutes: int | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_percent(problems, "error_rate_percent", self.error_rate_percent)
        check_latency_objective(problems, "latency_objective_ms", self.latency_objective_ms)
        check_alarm_minutes(problems, "minutes", self.minutes)
        watches = (
            self.error_rate_percent is not None
            or self.no_capacity
            or self.copies_at_max
            or self.latency_objective_ms is not None
        )
        if self.enabled and not watches:
            problems.add(
                "error_rate_percent, no_capacity, copies_at_max, latency_objective_ms",
                None,
                "nothing to watch: set at least one (or enabled: false)",
            )


@dataclass(frozen=True, kw_only=True)
class ModelAlarmProps(ModelAlarmOptions, Props):
    """Options for :class:`ModelAlarm`: the fields of :class:`ModelAlarmOptions`, and

    model: the model to watch.
    topic_arn: the SNS topic the alarm sends its ALARM state to (e.g. a
        :class:`~fm_platform.constructs.observability.topic.NotificationTopic`'s).
    alarm_name: by default ``<component name>-health``.
    """

    model: InferenceComponentModel
    topic_arn: str
    alarm_name: str | None = None

    def _subject(self) -> str:
        return f"ModelAlarmProps {self.model.model_name!r}"

    def _check(self, problems: Problems) -> None:
        # The options alone: the model is a CDK construct, and every question about it
        # would be a call into the CDK runtime.
        options = ModelAlarmOptions(**options_values(ModelAlarmOptions, self))
        checked(problems, options).check(problems)
        if not problems and not model_conditions(self):
            problems.add(
                "error_rate_percent, no_capacity, copies_at_max, latency_objective_ms",
                None,
                "nothing to watch: set at least one (or do not create the alarm)",
            )


def model_alarm_minutes(options: ModelAlarmOptions, model: InferenceComponentModel) -> int:
    """``options.minutes``, by default :data:`DEFAULT_MINUTES` or, for a model that scales
    to zero with a known startup budget, that budget in minutes when longer."""
    if options.minutes is not None:
        return options.minutes
    if model.min_copies == 0 and model.startup_timeout_s is not None:
        budget = math.ceil((model.startup_timeout_s + SCALE_FROM_ZERO_ALLOWANCE_S) / 60)
        return min(MAX_ALARM_MINUTES, max(DEFAULT_MINUTES, budget))
    return DEFAULT_MINUTES


def model_conditions(options: ModelAlarmProps) -> list[Condition]:
    """The conditions ``options`` watch on ``options.model``, in bit order."""
    model = options.model
    dimensions = model.metric_dimensions
    watched = []
    if options.error_rate_percent is not None:
        watched.append(error_rate(dimensions, options.error_rate_percent))
    if options.no_capacity:
        watched.append(
            Condition(
                "nocapacity",
                SAGEMAKER_NAMESPACE,
                "NoCapacityInvocationFailures",
                dimensions,
                "Sum",
                ">=",
                1,
                "requests found no copy (NoCapacityInvocationFailures)",
            )
        )
    top, bottom = model.max_copies, model.min_copies
    if options.copies_at_max and top is not None and bottom is not None and top > bottom:
        watched.append(
            Condition(
                "copies",
                COMPONENT_NAMESPACE,
                COPIES_METRIC,
                dimensions,
                "SampleCount",
                ">=",
                top,
                # No copy count joins metric math: the description says how it counts.
                f"copies at the maximum ({top}; counted as the copies' {COPIES_METRIC} "
                "datapoints per minute, AWS publishing no copy count for metric math)",
            )
        )
    if options.latency_objective_ms is not None:
        watched.append(latency_over(dimensions, options.latency_objective_ms))
    return watched


class ModelAlarm(ConditionsAlarm):
    """An alarm on one model: an ``AWS::CloudWatch::Alarm`` named ``alarm_name`` whose ALARM
    state goes to ``topic_arn``; missing data is not breaching (a model scaled to zero has
    no traffic and no copies). Its description names the model, its component and
    endpoint, what each value means and the ``fmp`` command to look further.

    Attributes: ``alarm_name``, ``alarm_arn``, ``conditions`` (what it watches, in bit
    order) and ``minutes``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: ModelAlarmProps) -> None:
        """Create the alarm under ``scope``; ``props`` is validated first."""
        props.validate()
        conditions = model_conditions(props)
        model = props.model
        minutes = model_alarm_minutes(props, model)
        endpoint = model.endpoint.endpoint_name
        description = (
            f"fm_platform: model {model.model_name} (inference component "
            f"{model.component_name}) on endpoint {endpoint}: unhealthy in each of {minutes} "
            f"consecutive minutes. The value adds up what held: {legend(conditions)}. "
            f"Look further: fmp endpoint metrics {endpoint}"
        )
        super().__init__(
            scope,
            construct_id,
            about=f"ModelAlarm {model.model_name!r}",
            alarm_name=props.alarm_name or f"{model.component_name}-health",
            description=description,
            label=f"{model.model_name} unhealthy (sum of conditions)",
            conditions=conditions,
            minutes=minutes,
            topic_arn=props.topic_arn,
        )
