"""An alarm on a HyperPod cluster's unhealthy nodes, for scheduled AMI updates to roll back
on.

HyperPod sends ``SageMaker HyperPod Cluster Node Health Event`` to EventBridge when its
health monitoring agent finds a node unhealthy (``detail.HealthSummary.HealthStatus``
``Unhealthy``; SageMaker developer guide, "SageMaker HyperPod cluster events reference" ->
"EventBridge integration", and "Events that Amazon SageMaker AI sends to Amazon
EventBridge"). A rule matching the cluster's events is counted by EventBridge in
``AWS/Events`` ``TriggeredRules`` (dimension ``RuleName``; Amazon EventBridge User Guide,
"Monitoring Amazon EventBridge"); the alarm fires on any match in five minutes.

Order: HyperPod refuses a scheduled update whose rollback alarms do not exist (SageMaker
developer guide, "Update the SageMaker HyperPod platform software of a cluster": the alarms
must exist), so the alarm is created before the cluster. It names the rule by its fixed
name, since the rule filters on the cluster's ARN and is created after the cluster. Whether
EventBridge counts ``TriggeredRules`` for a rule without a target is not documented, so the
rule is given one (:meth:`NodeHealthAlarm.notify`: the notification topic).
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from constructs import Construct

from fm_platform.core.compliance import acknowledge

NODE_HEALTH_EVENT = "SageMaker HyperPod Cluster Node Health Event"
PERIOD_S = 300


#: EventBridge rule names are 1-64 characters (AWS::Events::Rule ``Name``).
_RULE_NAME_MAX = 64
_SUFFIX = "unhealthy-nodes"


def node_health_alarm_name(cluster: Construct) -> str:
    """``<stack name>-<8 hex of the cluster construct's path>-unhealthy-nodes``: fixed, so
    that the cluster names the alarm in its scheduled updates."""
    return f"{Stack.of(cluster).stack_name}-{cluster.node.addr[2:10]}-{_SUFFIX}"


def node_health_rule_name(cluster: Construct) -> str:
    """The rule's fixed name: the alarm's, with the stack name cut to fit 64 characters,
    so that the alarm (created before the cluster) names the rule (created after it)."""
    tail = f"-{cluster.node.addr[2:10]}-{_SUFFIX}"
    return Stack.of(cluster).stack_name[: _RULE_NAME_MAX - len(tail)] + tail


class NodeHealthAlarm(Construct):
    """An EventBridge rule on the unhealthy-node events of one cluster and an alarm on the
    rule's matches.

    The alarm has the fixed name ``alarm_name`` (see :func:`node_health_alarm_name`), so
    that the cluster can name it in ``AutoRollbackConfiguration``; it watches the rule by
    its fixed name ``rule_name`` and is made before the cluster (the owner adds that
    dependency), while the rule, which filters on the cluster's ARN, is made after it. The
    alarm has no action of its own: HyperPod reads its state during an update (with
    ``rolls_back_updates``; without, the alarm shows the nodes' health on a dashboard). The
    rule sends its events to the topic given to :meth:`notify`.

    Attributes: ``rule``, ``alarm`` (both L1), ``alarm_name``, ``rule_name``. Construct IDs
    ``Rule`` and ``Alarm`` are stable.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        cluster_arn: str,
        alarm_name: str,
        rule_name: str,
        rolls_back_updates: bool = True,
    ) -> None:
        """Create the rule ``rule_name`` for the cluster ``cluster_arn`` and the alarm
        ``alarm_name`` under ``scope``; ``rolls_back_updates`` says whether scheduled AMI
        updates roll back on it (by default true), which its descriptions say."""
        super().__init__(scope, construct_id)
        self.alarm_name = alarm_name
        self.rule_name = rule_name
        self.rule = events.CfnRule(
            self,
            "Rule",
            name=rule_name,
            description="Unhealthy nodes of a HyperPod cluster"
            + (" (rolls back scheduled updates)" if rolls_back_updates else ""),
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
                if rolls_back_updates
                else "A node of the HyperPod cluster turned unhealthy (HyperPod's "
                "health-monitoring agent reported it)."
            ),
            namespace="AWS/Events",
            metric_name="TriggeredRules",
            dimensions=[cloudwatch.CfnAlarm.DimensionProperty(name="RuleName", value=rule_name)],
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
            "belong to the observability alarms)."
            if rolls_back_updates
            else "Each unhealthy-node event goes to the notification topic through the "
            "alarm's own rule; the alarm shows their state on the dashboard and needs no "
            "action of its own.",
            "HIPAA.Security-CloudWatchAlarmAction",
            "NIST.800.53.R5-CloudWatchAlarmAction",
        )

    def notify(self, topic_arn: str) -> None:
        """Send the rule's events (each unhealthy node) to the SNS topic ``topic_arn``,
        which must let ``events.amazonaws.com`` publish."""
        self.rule.targets = [events.CfnRule.TargetProperty(id="NotificationTopic", arn=topic_arn)]
