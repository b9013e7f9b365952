"""What a training cluster adds to be watched, given only what it watches: the cluster,
its lifecycle scripts' log group, its file system and the topic alarms and events go to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from aws_cdk import Stack
from aws_cdk import aws_sns as sns
from constructs import Construct

from fm_platform.constructs.observability.cluster_events import ClusterEvents
from fm_platform.constructs.observability.dashboards import Dashboards
from fm_platform.constructs.observability.layout import Section
from fm_platform.constructs.observability.training_alarms import (
    FileSystemCapacityAlarm,
    FunctionPlacement,
    LifecycleErrorAlarm,
)
from fm_platform.constructs.observability.training_dashboard import (
    TrainingDashboardInputs,
    training_section,
)
from fm_platform.constructs.training.node_health_alarm import NodeHealthAlarm


class WatchedGroup(Protocol):
    """What the dashboard draws of an instance group (``InstanceGroup`` and
    ``EksInstanceGroup`` fit)."""

    @property
    def name(self) -> str: ...

    @property
    def instance_type(self) -> str: ...

    @property
    def instance_count(self) -> int: ...


class WatchedCluster(Protocol):
    """What the cluster's observability needs from it (``HyperPodCluster`` and
    ``HyperPodEksCluster`` fit): its ARN, its ID (the last part of the ARN, which HyperPod
    names its log groups after) and its instance groups (drawn on the dashboard)."""

    @property
    def cluster_arn(self) -> str: ...

    @property
    def cluster_id(self) -> str: ...

    @property
    def instance_groups(self) -> Sequence[WatchedGroup]: ...

    @property
    def node_health_alarm(self) -> NodeHealthAlarm | None:
        """The scheduled updates' rollback alarm, or None without scheduled updates."""
        ...


@dataclass(frozen=True, kw_only=True)
class TrainingObservabilityProps:
    """What :class:`TrainingObservability` watches and where it reports.

    cluster: the HyperPod cluster (a :class:`WatchedCluster`: its ARN, ID and instance
        groups).
    placement: where the lifecycle-error alarm's function runs and which log group it reads
        (the lifecycle scripts' upload log group); needed by ``lifecycle_error_alarm``, by
        default none.
    file_system_id: the shared file system drawn on the dashboard.
    topic: where alarms and events go; by default none, and then only the dashboard is made.
    cluster_events: send the cluster's events to the topic; by default True.
    lifecycle_error_alarm: alarm on errors the lifecycle scripts log; by default True.
    file_system_alarm: the file system's capacity alarm (made elsewhere, e.g. in the stack
        that keeps the file system), drawn on the dashboard; by default none.
    dashboards: whether to make the dashboard; by default True.
    dashboard_title: the dashboard's title; by default the name of the scope's stack.
    sections: more dashboard sections after the cluster's (an orchestrator's own, such as
        the EKS control plane's); by default none.
    """

    cluster: WatchedCluster
    file_system_id: str
    placement: FunctionPlacement | None = None
    topic: sns.ITopic | None = None
    cluster_events: bool = True
    lifecycle_error_alarm: bool = True
    file_system_alarm: FileSystemCapacityAlarm | None = None
    dashboards: bool = True
    dashboard_title: str | None = None
    sections: Sequence[Section] = ()


class TrainingObservability(Construct):
    """The cluster's events (``ClusterEvents``) and lifecycle-script error alarm
    (``LifecycleErrors``), each as ``props`` say and only with a topic, and the dashboard
    (``Dashboards``, with the file-system alarm when given).

    Attributes: ``cluster_events``, ``lifecycle_errors`` and ``dashboards`` (each None when
    not made).
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: TrainingObservabilityProps
    ) -> None:
        """Watch ``props.cluster`` under ``scope``."""
        super().__init__(scope, construct_id)
        cluster, topic = props.cluster, props.topic
        self.cluster_events: ClusterEvents | None = None
        self.lifecycle_errors: LifecycleErrorAlarm | None = None
        alarms: list[str] = []
        health = cluster.node_health_alarm
        if topic is not None and health is not None:
            # The rollback alarm's rule gets a target (TriggeredRules without one is not
            # documented); it then delivers the unhealthy-node events, once.
            health.notify(topic.topic_arn)
        if topic is not None and props.cluster_events:
            self.cluster_events = ClusterEvents(
                self,
                "ClusterEvents",
                cluster_arn=cluster.cluster_arn,
                topic_arn=topic.topic_arn,
                unhealthy_nodes=health is None,
            )
        if topic is not None and props.lifecycle_error_alarm:
            if props.placement is None:
                raise ValueError(
                    "TrainingObservabilityProps.placement=None: the lifecycle error alarm "
                    "runs a function; give its placement or set lifecycle_error_alarm=False"
                )
            self.lifecycle_errors = LifecycleErrorAlarm(
                self,
                "LifecycleErrors",
                cluster_arn=cluster.cluster_arn,
                cluster_id=cluster.cluster_id,
                topic_arn=topic.topic_arn,
                placement=props.placement,
            )
            alarms.append(self.lifecycle_errors.alarm.alarm_arn)
        fs_alarm = props.file_system_alarm
        if fs_alarm is not None:
            alarms.append(fs_alarm.alarm.alarm_arn)
        self.dashboards: Dashboards | None = None
        if props.dashboards:
            errors = self.lifecycle_errors
            inputs = TrainingDashboardInputs(
                groups=[
                    (g.name, g.instance_type, g.instance_count) for g in cluster.instance_groups
                ],
                lifecycle_log_group=errors.log_group_name if errors else None,
                lifecycle_namespace=errors.metric.namespace if errors else None,
                file_system_id=props.file_system_id,
                free_capacity_threshold_bytes=fs_alarm.threshold_bytes if fs_alarm else None,
                alarm_arns=alarms,
            )
            stack = Stack.of(self)
            self.dashboards = Dashboards(
                self,
                "Dashboards",
                sections=[training_section(inputs, stack.region), *props.sections],
                title=props.dashboard_title or stack.stack_name,
                substitute=False,
            )
