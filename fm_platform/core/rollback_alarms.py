"""The permission SageMaker needs on the alarms that roll an update back.

SageMaker reads the state of the rollback alarms of a HyperPod cluster update and of an
inference component's rolling update with the execution role: "To use the automatic
rollback functionality, you must add the permission cloudwatch:DescribeAlarms to your IAM
execution role" (SageMaker Developer Guide, HyperPod AMI updates) and "Ensure that your IAM
execution role has permission to perform the cloudwatch:DescribeAlarms action on the
auto-rollback alarms you specify" (SageMaker Developer Guide, deployment guardrails). The
Service Authorization Reference (Amazon CloudWatch, "Actions defined by Amazon CloudWatch")
lists DescribeAlarms with the required resource type ``alarm*``, so the grant names the
alarms' ARNs. The CloudWatch API Reference (DescribeAlarms) adds that composite alarms are
returned only to a permission on ``*``: rollback alarms are metric alarms.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from constructs import IConstruct

DESCRIBE_ALARMS = "cloudwatch:DescribeAlarms"


def alarm_arn(scope: IConstruct, alarm: cloudwatch.IAlarm | str) -> str:
    """The ARN of ``alarm``: its own, or that of the alarm of this name in ``scope``'s
    account and Region."""
    if isinstance(alarm, str):
        return Stack.of(scope).format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=alarm,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
    return alarm.alarm_arn


def read_rollback_alarms_statement(
    scope: IConstruct, alarms: Sequence[cloudwatch.IAlarm | str], sid: str | None = None
) -> iam.PolicyStatement:
    """``cloudwatch:DescribeAlarms`` on each of ``alarms`` (once each)."""
    return iam.PolicyStatement(
        sid=sid,
        actions=[DESCRIBE_ALARMS],
        resources=list(dict.fromkeys(alarm_arn(scope, alarm) for alarm in alarms)),
    )
