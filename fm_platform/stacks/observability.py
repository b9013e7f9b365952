"""What the stacks add to be watched (composition only; the constructs live in
:mod:`fm_platform.constructs.observability`): an inference stack's notification topic, an
alarm per model and per endpoint wired to it, and its dashboards; a training deployment's
topic and file-system alarm in its data stack (which outlives the cluster: the cluster
stack retains nothing, and a topic's key is retained), and the cluster's events, the
lifecycle-error alarm and the dashboard in its cluster stack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from fm_platform.config.inference import AsyncEndpointConfig, InferenceComponentModelConfig
from fm_platform.constructs.inference.endpoint_base import RealtimeEndpoint
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.observability.async_alarm import (
    AsyncEndpointAlarm,
    AsyncEndpointAlarmOptions,
    AsyncEndpointAlarmProps,
)
from fm_platform.constructs.observability.cluster_events import ClusterEvents
from fm_platform.constructs.observability.dashboards import Dashboards
from fm_platform.constructs.observability.endpoint_alarm import (
    EndpointAlarm,
    EndpointAlarmOptions,
    EndpointAlarmProps,
    endpoint_conditions,
)
from fm_platform.constructs.observability.inference_dashboard import (
    DashboardEndpoint,
    endpoint_section,
)
from fm_platform.constructs.observability.layout import Section
from fm_platform.constructs.observability.model_alarm import (
    ModelAlarm,
    ModelAlarmOptions,
    ModelAlarmProps,
)
from fm_platform.constructs.observability.topic import (
    NotificationTopic,
    NotificationTopicOptions,
    NotificationTopicProps,
)
from fm_platform.constructs.observability.training_alarms import (
    FileSystemCapacityAlarm,
    FunctionPlacement,
    LifecycleErrorAlarm,
)
from fm_platform.constructs.observability.training_dashboard import (
    TrainingDashboardInputs,
    training_section,
)
from fm_platform.constructs.options import options_values
from fm_platform.constructs.tokens import is_unresolved

if TYPE_CHECKING:
    from fm_platform.stacks.inference import InferenceStack
    from fm_platform.stacks.training import TrainingStack
    from fm_platform.stacks.training_data import TrainingDataStack

IC_KIND, SINGLE_KIND, MULTI_KIND = "Inference Components", "Single-model", "Multi-model"
ASYNC_KIND = "Asynchronous"


class InferenceObservability(Construct):
    """A stack's topic (``Notifications`` in the stack, see :func:`notification_topic`), its
    alarms (``Model-<model name>`` per model, ``Endpoint-<name>`` per real-time endpoint,
    ``AsyncEndpoint-<name>`` per asynchronous endpoint, each as its configuration's
    ``alarms`` say) and its dashboards (``Dashboards``).

    Without ``notifications`` no topic and no alarm are created (an alarm nobody hears is
    noise); without ``dashboards`` no dashboard.

    Attributes: ``topic`` (None without notifications), ``model_alarms``,
    ``endpoint_alarms`` and ``async_alarms`` (by name), ``dashboards`` (None without
    dashboards).
    """

    def __init__(
        self,
        stack: InferenceStack,
        construct_id: str,
        *,
        notifications: NotificationTopicOptions | None,
        dashboards: bool,
    ) -> None:
        """Watch ``stack``'s endpoints and models as its configuration says."""
        super().__init__(stack, construct_id)
        self._stack = stack
        self.topic = notification_topic(stack, notifications, "inference alarms")
        self.model_alarms: dict[str, ModelAlarm] = {}
        self.endpoint_alarms: dict[str, EndpointAlarm] = {}
        self.async_alarms: dict[str, AsyncEndpointAlarm] = {}
        sections: list[Section] = []
        config = stack.config
        region = stack.region
        for ic in config.ic_endpoints:
            endpoint = stack.ic_endpoints[ic.name]
            models = [stack.ic_models[model.model_name] for model in ic.models]
            arns = [self._model_alarm(item) for item in ic.models]
            arns.append(self._endpoint_alarm(ic.name, endpoint, ic.alarms, None))
            sections.append(
                endpoint_section(
                    DashboardEndpoint(
                        label=ic.name,
                        endpoint=endpoint,
                        kind=IC_KIND,
                        models=models,
                        max_instance_count=ic.max_instance_count,
                        alarm_arns=[arn for arn in arns if arn is not None],
                    ),
                    region,
                )
            )
        variant_endpoints: list[
            tuple[str, RealtimeEndpoint, EndpointAlarmOptions, InstanceScaling | None, str]
        ] = [
            *(
                (
                    item.name,
                    stack.single_model_endpoints[item.name],
                    item.alarms,
                    item.scaling,
                    SINGLE_KIND,
                )
                for item in config.single_model_endpoints
            ),
            *(
                (
                    item.name,
                    stack.multi_model_endpoints[item.name],
                    item.alarms,
                    item.scaling,
                    MULTI_KIND,
                )
                for item in config.multi_model_endpoints
            ),
        ]
        for name, variant_endpoint, alarms, scaling, kind in variant_endpoints:
            arn = self._endpoint_alarm(name, variant_endpoint, alarms, scaling)
            sections.append(
                endpoint_section(
                    DashboardEndpoint(
                        label=name,
                        endpoint=variant_endpoint,
                        kind=kind,
                        max_instance_count=scaling.max_instances if scaling else None,
                        alarm_arns=[arn] if arn else [],
                    ),
                    region,
                )
            )
        for queued in config.async_endpoints:
            async_endpoint = stack.async_endpoints[queued.name]
            arn = self._async_alarm(queued)
            backlog_scaling = queued.scaling
            sections.append(
                endpoint_section(
                    DashboardEndpoint(
                        label=queued.name,
                        endpoint=async_endpoint,
                        kind=ASYNC_KIND,
                        max_instance_count=(
                            backlog_scaling.max_instances if backlog_scaling else None
                        ),
                        alarm_arns=[arn] if arn else [],
                        queued=True,
                    ),
                    region,
                )
            )
        self.dashboards: Dashboards | None = None
        if dashboards and sections:
            self.dashboards = Dashboards(
                self, "Dashboards", sections=sections, title=stack.stack_name
            )

    def _model_alarm(self, item: InferenceComponentModelConfig) -> str | None:
        """The model's alarm (when notifications are on and its options enable one), by ARN."""
        options = getattr(item, "alarms", None) or ModelAlarmOptions()
        if self.topic is None or not options.enabled:
            return None
        model = self._stack.ic_models[item.model_name]
        alarm = ModelAlarm(
            self,
            f"Model-{item.model_name}",
            ModelAlarmProps(
                **options_values(ModelAlarmOptions, options),
                model=model,
                topic_arn=self.topic.topic_arn,
            ),
        )
        self.model_alarms[item.model_name] = alarm
        return alarm.alarm_arn

    def _async_alarm(self, item: AsyncEndpointConfig) -> str | None:
        """The asynchronous endpoint's alarm (when notifications are on and its options
        enable one), by ARN."""
        options = item.alarms
        if self.topic is None or not options.enabled:
            return None
        alarm = AsyncEndpointAlarm(
            self,
            f"AsyncEndpoint-{item.name}",
            AsyncEndpointAlarmProps(
                **options_values(AsyncEndpointAlarmOptions, options),
                endpoint=self._stack.async_endpoints[item.name],
                label=item.name,
                topic_arn=self.topic.topic_arn,
            ),
        )
        self.async_alarms[item.name] = alarm
        return alarm.alarm_arn

    def _endpoint_alarm(
        self,
        name: str,
        endpoint: RealtimeEndpoint,
        options: EndpointAlarmOptions,
        scaling: InstanceScaling | None,
    ) -> str | None:
        """The endpoint's alarm (when notifications are on, its options enable one and it
        has something to watch), by ARN."""
        if self.topic is None or not options.enabled:
            return None
        props = EndpointAlarmProps(
            **options_values(EndpointAlarmOptions, options),
            endpoint=endpoint,
            label=name,
            topic_arn=self.topic.topic_arn,
            min_instance_count=scaling.min_instances if scaling else None,
            max_instance_count=scaling.max_instances if scaling else None,
        )
        if not endpoint_conditions(props):
            return None
        alarm = EndpointAlarm(self, f"Endpoint-{name}", props)
        self.endpoint_alarms[name] = alarm
        return alarm.alarm_arn


def notification_topic(
    stack: Stack, notifications: NotificationTopicOptions | None, purpose: str
) -> NotificationTopic | None:
    """``stack``'s topic (``Notifications``, output ``NotificationTopicArn``), or None
    without notifications."""
    if notifications is None:
        return None
    topic = NotificationTopic(
        stack,
        "Notifications",
        NotificationTopicProps(
            **options_values(NotificationTopicOptions, notifications),
            purpose=f"fm_platform {stack.stack_name} {purpose}",
        ),
    )
    CfnOutput(
        stack,
        "NotificationTopicArn",
        value=topic.topic_arn,
        description="Where this deployment's alarms and events are sent: subscribe to be told",
    )
    return topic


def file_system_alarm(
    stack: TrainingDataStack, topic: NotificationTopic | None
) -> FileSystemCapacityAlarm | None:
    """The data stack's file-system alarm (``FileSystemAlarm``) when there is a topic, the
    configuration asks for one and the storage capacity is known at synth."""
    config = stack.config
    percent, capacity = config.fsx_free_capacity_percent, config.storage_capacity_gib
    if topic is None or percent is None or not isinstance(capacity, int) or is_unresolved(capacity):
        return None
    return FileSystemCapacityAlarm(
        stack,
        "FileSystemAlarm",
        file_system_id=stack.file_system.file_system_id,
        capacity_gib=capacity,
        percent=percent,
        topic_arn=topic.topic_arn,
    )


class TrainingObservability(Construct):
    """What the cluster stack adds to be watched, with its data stack's topic: the
    cluster's events (``ClusterEvents``), the lifecycle-script error alarm
    (``LifecycleErrors``), each as the configuration says, and the dashboard
    (``Dashboards``, with the data stack's file-system alarm). Without a topic in the data
    stack only the dashboard is made.

    Attributes: ``cluster_events``, ``lifecycle_errors`` and ``dashboards`` (each None when
    not made).
    """

    def __init__(self, stack: TrainingStack, construct_id: str, *, dashboards: bool) -> None:
        """Watch ``stack``'s cluster as its configuration says."""
        super().__init__(stack, construct_id)
        config, data, cluster = stack.config, stack.data, stack.cluster
        topic: NotificationTopic | None = getattr(data, "notifications", None)
        self.cluster_events: ClusterEvents | None = None
        self.lifecycle_errors: LifecycleErrorAlarm | None = None
        alarms: list[str] = []
        health = cluster.node_health_alarm
        if topic is not None and health is not None:
            # The rollback alarm's rule gets a target (TriggeredRules without one is not
            # documented); it then delivers the unhealthy-node events, once.
            health.notify(topic.topic_arn)
        if topic is not None and config.cluster_events:
            self.cluster_events = ClusterEvents(
                self,
                "ClusterEvents",
                cluster_arn=cluster.cluster_arn,
                topic_arn=topic.topic_arn,
                unhealthy_nodes=health is None,
            )
        if topic is not None and config.lifecycle_error_alarm:
            self.lifecycle_errors = LifecycleErrorAlarm(
                self,
                "LifecycleErrors",
                cluster_arn=cluster.cluster_arn,
                cluster_id=cluster.cluster_id,
                topic_arn=topic.topic_arn,
                placement=FunctionPlacement(
                    vpc=stack.network.vpc,
                    subnet=stack.network.subnet,
                    log_group=data.lifecycle.upload_log_group,
                    log_key=data.lifecycle.upload_log_key,
                ),
            )
            alarms.append(self.lifecycle_errors.alarm.alarm_arn)
        fs_alarm: FileSystemCapacityAlarm | None = getattr(data, "file_system_alarm", None)
        if fs_alarm is not None:
            alarms.append(fs_alarm.alarm.alarm_arn)
        self.dashboards: Dashboards | None = None
        if dashboards:
            errors = self.lifecycle_errors
            inputs = TrainingDashboardInputs(
                groups=[
                    (g.name, g.instance_type, g.instance_count) for g in cluster.instance_groups
                ],
                lifecycle_log_group=errors.log_group_name if errors else None,
                lifecycle_namespace=errors.metric.namespace if errors else None,
                file_system_id=stack.file_system.file_system_id,
                free_capacity_threshold_bytes=fs_alarm.threshold_bytes if fs_alarm else None,
                alarm_arns=alarms,
            )
            self.dashboards = Dashboards(
                self,
                "Dashboards",
                sections=[training_section(inputs, stack.region)],
                title=stack.stack_name,
                substitute=False,
            )
