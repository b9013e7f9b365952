"""The alarm resource shared by the model, endpoint and asynchronous-endpoint alarms: one
``AWS::CloudWatch::Alarm`` over the sum of its conditions (see
:mod:`~fm_platform.constructs.observability.conditions`), written as plain CloudFormation
(a typed alarm with CDK metric objects costs a thousand-model fleet several seconds of
synth)."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import CfnResource
from constructs import Construct

from fm_platform.constructs.observability.conditions import (
    Condition,
    alarm_arn_of,
    alarm_properties,
)
from fm_platform.rules.observability import check_alarm_description
from fm_platform.rules.problems import Problems

ALARM_TYPE = "AWS::CloudWatch::Alarm"


class ConditionsAlarm(CfnResource):
    """An alarm named ``alarm_name`` that fires when, in each of ``minutes`` consecutive
    minutes, at least one of ``conditions`` held, sending its ALARM state to ``topic_arn``;
    missing data is not breaching. ``about`` names the alarm in an error (a description
    over CloudWatch's 1024 characters).

    Attributes: ``alarm_name``, ``alarm_arn``, ``conditions`` (what it watches, in bit
    order) and ``minutes``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        about: str,
        alarm_name: str,
        description: str,
        label: str,
        conditions: Sequence[Condition],
        minutes: int,
        topic_arn: str,
    ) -> None:
        """Create the alarm under ``scope``."""
        problems = Problems(about)
        check_alarm_description(problems, "alarm_description", description)
        problems.raise_if_any()
        super().__init__(
            scope,
            construct_id,
            type=ALARM_TYPE,
            properties=alarm_properties(
                name=alarm_name,
                description=description,
                label=label,
                conditions=conditions,
                minutes=minutes,
                actions=[topic_arn],
            ),
        )
        self.alarm_name = alarm_name
        self.alarm_arn: str = alarm_arn_of(alarm_name) or self.get_att("Arn").to_string()
        self.conditions = tuple(conditions)
        self.minutes = minutes
