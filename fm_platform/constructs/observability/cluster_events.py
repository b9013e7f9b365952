"""A HyperPod cluster's health and state events, routed to a notification topic.

Event source and detail types (SageMaker Developer Guide, "Events that Amazon SageMaker AI
sends to Amazon EventBridge",
https://docs.aws.amazon.com/sagemaker/latest/dg/automating-sagemaker-with-eventbridge.html,
sections "SageMaker HyperPod cluster node health" and "SageMaker HyperPod cluster state
change"; and "SageMaker HyperPod cluster events reference",
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-cluster-events-reference.html):
source ``aws.sagemaker``; ``SageMaker HyperPod Cluster Node
Health Event`` when HyperPod detects an unhealthy node or an unhealthy node turns healthy
again (``detail.HealthSummary``: ``HealthStatus``, ``HealthStatusReason``,
``RepairAction``, ``Recommendation``), and ``SageMaker HyperPod Cluster State Change`` for
the cluster's status transitions (``detail.ClusterStatus``, ``FailureMessage``, each
group's ``CurrentCount`` and ``TargetCount``). Both carry the cluster's ARN as
``detail.ClusterArn``, which the rule matches (as the cluster's node-health rollback alarm,
:mod:`fm_platform.constructs.training.node_health_alarm`, does). The third type,
``SageMaker HyperPod Cluster Event``, is sent only for clusters with
``NodeProvisioningMode: Continuous`` (``node_provisioning: continuous``); it reports every
provisioning, scaling and patching step, and is not routed here.
"""

from __future__ import annotations

from aws_cdk import aws_events as events
from constructs import Construct

EVENT_SOURCE = "aws.sagemaker"
NODE_HEALTH = "SageMaker HyperPod Cluster Node Health Event"
STATE_CHANGE = "SageMaker HyperPod Cluster State Change"


def cluster_event_pattern(cluster_arn: str, *, unhealthy_nodes: bool = True) -> dict[str, object]:
    """The EventBridge pattern of ``cluster_arn``'s node health and state change events;
    without ``unhealthy_nodes``, node health events other than ``Unhealthy`` (another rule,
    the node-health rollback alarm's, delivers those; EventBridge User Guide, "Content
    filtering": ``$or`` and ``anything-but``)."""
    if unhealthy_nodes:
        return {
            "source": [EVENT_SOURCE],
            "detail-type": [NODE_HEALTH, STATE_CHANGE],
            "detail": {"ClusterArn": [cluster_arn]},
        }
    return {
        "source": [EVENT_SOURCE],
        "$or": [
            {"detail-type": [STATE_CHANGE], "detail": {"ClusterArn": [cluster_arn]}},
            {
                "detail-type": [NODE_HEALTH],
                "detail": {
                    "ClusterArn": [cluster_arn],
                    "HealthSummary": {"HealthStatus": [{"anything-but": ["Unhealthy"]}]},
                },
            },
        ],
    }


class ClusterEvents(Construct):
    """An EventBridge rule (``Rule``) sending a HyperPod cluster's node health and state
    change events, as EventBridge delivers them (JSON), to an SNS topic. The topic must
    let ``events.amazonaws.com`` publish (a
    :class:`~fm_platform.constructs.observability.topic.NotificationTopic` does).

    Attributes: ``rule`` (the ``CfnRule``).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        cluster_arn: str,
        topic_arn: str,
        unhealthy_nodes: bool = True,
    ) -> None:
        """Route ``cluster_arn``'s events to ``topic_arn`` (``Unhealthy`` node events only
        with ``unhealthy_nodes``, see :func:`cluster_event_pattern`)."""
        super().__init__(scope, construct_id)
        self.rule = events.CfnRule(
            self,
            "Rule",
            description="fm_platform: HyperPod node health and cluster state changes",
            event_pattern=cluster_event_pattern(cluster_arn, unhealthy_nodes=unhealthy_nodes),
            state="ENABLED",
            targets=[events.CfnRule.TargetProperty(id="NotificationTopic", arn=topic_arn)],
        )
