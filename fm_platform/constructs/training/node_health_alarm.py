"""An alarm on a HyperPod cluster's unhealthy nodes, for scheduled AMI updates to roll back
on.

HyperPod sends ``SageMaker HyperPod Cluster Node Health Event`` to EventBridge when its
health monitoring agent finds a node unhealthy (``detail.HealthSummary.HealthStatus``
``Unhealthy``; SageMaker developer guide, "SageMaker HyperPod cluster events reference" ->
"EventBridge integration", and "Events that Amazon SageMaker AI sends to Amazon
EventBridge"). A rule matching the cluster's events is counted by EventBridge in
``AWS/Events`` ``TriggeredRules`` (dimension ``RuleName``; Amazon EventBridge User Guide,
"Monitoring Amazon EventBridge"); the alarm fires on any match in five minutes.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from constructs import Construct

from fm_platform.core.compliance import acknowledge

NODE_HEALTH_EVENT = "SageMaker HyperPod Cluster Node Health Event"
PERIOD_S = 300


def node_health_alarm_name(cluster: Construct) -> str:
    """``<stack name>-<8 hex of the cluster construct's path>-unhealthy-nodes``: fixed, so
    that the cluster names the alarm while the alarm is created after it."""
    return f"{Stack.of(cluster).stack_name}-{cluster.node.addr[2:10]}-unhealthy-nodes"


class NodeHealthAlarm(Construct):
    """An EventBridge rule on the unhealthy-node events of one cluster and an alarm on the
    rule's matches.

    The alarm has the fixed name ``alarm_name`` (see :func:`node_health_alarm_name`), so
    that the cluster can name it in ``AutoRollbackConfiguration`` while the rule, which
    filters on the cluster's ARN, is created after the cluster. It has no action of its
    own: HyperPod reads its state during an update.

    Attributes: ``rule``, ``alarm`` (both L1), ``alarm_name``. Construct IDs ``Rule`` and
    ``Alarm`` are stable.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, cluster_arn: str, alarm_name: str
    ) -> None:
        """Create the rule for the cluster ``cluster_arn`` and the alarm ``alarm_name``
        under ``scope``."""
        super().__init__(scope, construct_id)
        self.alarm_name = alarm_name
        self.rule = events.CfnRule(
            self,
            "Rule",
            description="Unhealthy nodes of a HyperPod cluster (rolls back scheduled updates)",
            state="ENABLED",
            event_pattern={
                "source": ["aws.sagemaker"],
                "detail-type": [NODE_HEALTH_EVENT],
                "detail": {
                    "ClusterArn": [cluster_arn],
                    "HealthSummary": {"HealthStatus": ["Unhealthy"]},
                },
            },
        )
        self.alarm = cloudwatch.CfnAlarm(
            self,
            "Alarm",
            alarm_name=self.alarm_name,
            alarm_description=(
                "A node of the HyperPod cluster turned unhealthy: a scheduled AMI update in "
                "progress rolls back."
            ),
            namespace="AWS/Events",
            metric_name="TriggeredRules",
            dimensions=[
                cloudwatch.CfnAlarm.DimensionProperty(name="RuleName", value=self.rule.ref)
            ],
            statistic="Sum",
            period=PERIOD_S,
            evaluation_periods=1,
            threshold=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching",
        )
        acknowledge(
            self.alarm,
            "HyperPod reads this alarm's state while it updates the cluster's AMI and rolls "
            "the update back when it fires; it needs no action of its own (notifications "
            "belong to the observability alarms).",
            "HIPAA.Security-CloudWatchAlarmAction",
            "NIST.800.53.R5-CloudWatchAlarmAction",
        )
