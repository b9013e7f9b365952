"""One alarm watching several conditions, and telling which of them held.

An alarm resource per condition per model would multiply a fleet's resources (a stack
holds at most 500); one alarm per model evaluates a metric math expression instead, the
sum of a power of two per condition that holds in a minute (metric math's comparison
operators give 1 when true and 0 when false; ``FILL(m, 0)`` turns a minute without data
into 0: Amazon CloudWatch User Guide, "Metric math syntax and functions"). The alarm fires
when the sum is at least 1, and its value (in the alarm's state reason, which ``fmp
alarms`` prints) says which conditions held: 1, 2, 4, 8... as listed by :func:`legend`.
An alarm evaluates at most 10 metrics (CloudWatch User Guide, "Alarm data queries",
metric math).

Apart from :func:`alarm_arn_of`, pure Python: :func:`alarm_properties` writes the
``AWS::CloudWatch::Alarm`` properties as JSON-ready data (values may hold CDK tokens), so
that a fleet's thousand alarms cost neither CDK metric objects nor typed L1 structures at
synth.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aws_cdk import Aws

from fm_platform.constructs.inference.endpoint_base import SAGEMAKER_NAMESPACE

#: The period of every datapoint the alarms evaluate.
PERIOD_S = 60
#: CloudWatch's limit on the metrics of one alarm's math expression.
MAX_ALARM_METRICS = 10


@dataclass(frozen=True)
class Condition:
    """One reason for an alarm: the metric ``metric_name`` in ``namespace`` with
    ``dimensions``, its ``statistic`` over a minute, compared with ``threshold`` by
    ``operator`` (``>=`` or ``>``); ``metric_id`` (lower case) names it in the expression
    and ``meaning`` says it in words for the alarm's description."""

    metric_id: str
    namespace: str
    metric_name: str
    dimensions: Mapping[str, str]
    statistic: str
    operator: str
    threshold: float
    meaning: str


#: ``ModelLatency`` is published in microseconds.
MICROSECONDS_PER_MS = 1000


def error_rate(dimensions: Mapping[str, str], percent: float) -> Condition:
    """5xx answers at or above ``percent`` of requests: the Average of
    ``Invocation5XXErrors`` (1 per 5xx answer, 0 otherwise) is the error rate."""
    return Condition(
        "errors",
        SAGEMAKER_NAMESPACE,
        "Invocation5XXErrors",
        dimensions,
        "Average",
        ">=",
        percent / 100,
        f"5xx errors at or above {percent:g}% of requests",
    )


def latency_over(dimensions: Mapping[str, str], objective_ms: int) -> Condition:
    """The p50 of ``ModelLatency`` (microseconds) over ``objective_ms``."""
    return Condition(
        "latency",
        SAGEMAKER_NAMESPACE,
        "ModelLatency",
        dimensions,
        "p50",
        ">",
        objective_ms * MICROSECONDS_PER_MS,
        f"p50 model latency over the {objective_ms} ms objective",
    )


def number(value: float) -> str:
    """``value`` as metric math and people read it: no exponent, no trailing ``.0``."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0")


def bitmask_expression(conditions: Sequence[Condition]) -> str:
    """The sum over ``conditions`` of ``2**i * (FILL(metric, 0) <operator> threshold)``."""
    terms = []
    for index, condition in enumerate(conditions):
        test = (
            f"(FILL({condition.metric_id}, 0) {condition.operator} {number(condition.threshold)})"
        )
        terms.append(test if index == 0 else f"{2**index} * {test}")
    return " + ".join(terms)


def legend(conditions: Sequence[Condition]) -> str:
    """``"1 = <meaning>; 2 = <meaning>"``: what each power of two in the value means."""
    return "; ".join(f"{2**index} = {c.meaning}" for index, c in enumerate(conditions))


def alarm_properties(
    *,
    name: str,
    description: str,
    label: str,
    conditions: Sequence[Condition],
    minutes: int,
    actions: Sequence[str],
) -> dict[str, Any]:
    """The properties of an alarm named ``name`` that fires when, in each of ``minutes``
    consecutive minutes, at least one of ``conditions`` held, and sends its ALARM state to
    ``actions``; missing data is not breaching (no traffic, or nothing running)."""
    if not conditions or len(conditions) > MAX_ALARM_METRICS:
        raise ValueError(
            f"an alarm watches 1 to {MAX_ALARM_METRICS} conditions, not {len(conditions)}"
        )
    queries: list[dict[str, Any]] = [
        {
            "Id": "health",
            "Expression": bitmask_expression(conditions),
            "Label": label,
            "ReturnData": True,
        }
    ]
    for condition in conditions:
        queries.append(
            {
                "Id": condition.metric_id,
                "MetricStat": {
                    "Metric": {
                        "Namespace": condition.namespace,
                        "MetricName": condition.metric_name,
                        "Dimensions": [
                            {"Name": key, "Value": value}
                            for key, value in condition.dimensions.items()
                        ],
                    },
                    "Period": PERIOD_S,
                    "Stat": condition.statistic,
                },
                "ReturnData": False,
            }
        )
    return {
        "AlarmName": name,
        "AlarmDescription": description,
        "Metrics": queries,
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "EvaluationPeriods": minutes,
        "DatapointsToAlarm": minutes,
        "TreatMissingData": "notBreaching",
        "AlarmActions": list(actions),
    }


def alarm_arn_of(name: str) -> str | None:
    """The ARN of the alarm named ``name`` in the deploying stack's account and region
    (``arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>``), written without a
    CloudFormation ``GetAtt`` (a thousand of them cost a fleet's synth seconds); None when
    ``name`` holds a CDK token."""
    if "Token[" in name or "${" in name:
        return None
    return _alarm_arn_prefix() + name


@functools.cache
def _alarm_arn_prefix() -> str:
    # The pseudo parameters' tokens resolve in whichever stack they are used.
    return f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:{Aws.ACCOUNT_ID}:alarm:"
