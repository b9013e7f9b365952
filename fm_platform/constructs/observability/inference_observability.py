"""Alarms and dashboards for a set of endpoints and the models on them, given only what
they watch: the endpoints (any
:class:`~fm_platform.constructs.inference.endpoint_interface.IEndpoint`, created or
imported), the inference components, and the topic the alarms notify.

:func:`watch_inference` adds under a scope an alarm per model (``Model-<model name>``), per
real-time endpoint (``Endpoint-<label>``), per asynchronous endpoint
(``AsyncEndpoint-<label>``) and per serverless endpoint (``ServerlessEndpoint-<label>``),
each as its options say, and their dashboards (``Dashboards``). Without a topic no alarm
is made (an alarm nobody hears is noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aws_cdk import Stack
from aws_cdk import aws_sns as sns
from constructs import Construct

from fm_platform.constructs.inference.endpoint_interface import IAsyncEndpoint, IEndpoint
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.constructs.observability.async_alarm import (
    AsyncEndpointAlarm,
    AsyncEndpointAlarmOptions,
    AsyncEndpointAlarmProps,
)
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
from fm_platform.constructs.observability.serverless_alarm import (
    ServerlessEndpointAlarm,
    ServerlessEndpointAlarmOptions,
    ServerlessEndpointAlarmProps,
)
from fm_platform.core.options import options_values

#: The dashboard headings of the endpoint kinds.
IC_KIND, SINGLE_KIND, MULTI_KIND = "Inference Components", "Single-model", "Multi-model"
ASYNC_KIND, SERVERLESS_KIND = "Asynchronous", "Serverless"


@dataclass(frozen=True, kw_only=True)
class WatchedModel:
    """A model on an Inference Components endpoint and its alarm's options (by default
    :class:`ModelAlarmOptions`')."""

    model: InferenceComponentModel
    alarms: ModelAlarmOptions = field(default_factory=ModelAlarmOptions)


@dataclass(frozen=True, kw_only=True)
class WatchedEndpoint:
    """A real-time endpoint to watch.

    label: its name in alarm names, descriptions and the dashboard heading.
    endpoint: the endpoint (any :class:`IEndpoint`).
    kind: its dashboard heading's kind (``IC_KIND``, ``SINGLE_KIND``, ``MULTI_KIND``).
    alarms: its alarm's options; by default :class:`EndpointAlarmOptions`'.
    min_instance_count, max_instance_count: its variant's instance range, when it scales
        (the alarm's instances-at-maximum condition; the maximum drawn on the dashboard);
        by default unknown: no instance condition, no line.
    models: the models placed on it (Inference Components endpoints); by default none.
    """

    label: str
    endpoint: IEndpoint
    kind: str
    alarms: EndpointAlarmOptions = field(default_factory=EndpointAlarmOptions)
    min_instance_count: int | None = None
    max_instance_count: int | None = None
    models: Sequence[WatchedModel] = ()


@dataclass(frozen=True, kw_only=True)
class WatchedAsyncEndpoint:
    """An asynchronous endpoint to watch: ``label`` (as :class:`WatchedEndpoint`'s), the
    endpoint (any :class:`IAsyncEndpoint`), its alarm's options (by default
    :class:`AsyncEndpointAlarmOptions`') and its instance maximum when it scales (drawn
    on the dashboard; by default none)."""

    label: str
    endpoint: IAsyncEndpoint
    alarms: AsyncEndpointAlarmOptions = field(default_factory=AsyncEndpointAlarmOptions)
    max_instance_count: int | None = None


@dataclass(frozen=True, kw_only=True)
class WatchedServerlessEndpoint:
    """A serverless endpoint to watch: ``label`` (as :class:`WatchedEndpoint`'s), the
    endpoint (any :class:`IEndpoint`: a ``ServerlessEndpoint`` or one imported with its
    ``from_endpoint_*`` methods), its alarm's options (by default
    :class:`ServerlessEndpointAlarmOptions`') and whether it has provisioned concurrency
    (its use drawn on the dashboard; by default none)."""

    label: str
    endpoint: IEndpoint
    alarms: ServerlessEndpointAlarmOptions = field(default_factory=ServerlessEndpointAlarmOptions)
    provisioned: bool = False


@dataclass(frozen=True, kw_only=True)
class InferenceObservabilityProps:
    """What :func:`watch_inference` watches and where it reports.

    endpoints: the real-time endpoints, in dashboard order; by default none.
    async_endpoints: the asynchronous endpoints, after them; by default none.
    serverless_endpoints: the serverless endpoints, last; by default none.
    topic: where the alarms send their ALARM state; by default none, and then no alarm
        is made.
    dashboards: whether to make the dashboards; by default True.
    dashboard_title: the dashboards' title; by default the name of the scope's stack.
    """

    endpoints: Sequence[WatchedEndpoint] = ()
    async_endpoints: Sequence[WatchedAsyncEndpoint] = ()
    serverless_endpoints: Sequence[WatchedServerlessEndpoint] = ()
    topic: sns.ITopic | None = None
    dashboards: bool = True
    dashboard_title: str | None = None


@dataclass(frozen=True)
class InferenceObservability:
    """What :func:`watch_inference` made: the ``topic`` it was given, the alarms by model
    name and by label, and the ``dashboards`` (None when not made)."""

    topic: sns.ITopic | None
    model_alarms: dict[str, ModelAlarm]
    endpoint_alarms: dict[str, EndpointAlarm]
    async_alarms: dict[str, AsyncEndpointAlarm]
    dashboards: Dashboards | None
    serverless_alarms: dict[str, ServerlessEndpointAlarm] = field(default_factory=dict)


def watch_inference(scope: Construct, props: InferenceObservabilityProps) -> InferenceObservability:
    """Add under ``scope`` the alarms ``props`` ask for (with a topic) and the dashboards
    (construct IDs in the module docstring)."""
    topic_arn = props.topic.topic_arn if props.topic is not None else None
    made = InferenceObservability(props.topic, {}, {}, {}, None)
    region = Stack.of(scope).region
    sections: list[Section] = []
    for item in props.endpoints:
        arns = [_model_alarm(scope, made, watched, topic_arn) for watched in item.models]
        arns.append(_endpoint_alarm(scope, made, item, topic_arn))
        dashboard = DashboardEndpoint(
            label=item.label,
            endpoint=item.endpoint,
            kind=item.kind,
            models=[watched.model for watched in item.models],
            max_instance_count=item.max_instance_count,
            alarm_arns=[arn for arn in arns if arn is not None],
        )
        sections.append(endpoint_section(dashboard, region))
    for queued in props.async_endpoints:
        arn = _async_alarm(scope, made, queued, topic_arn)
        dashboard = DashboardEndpoint(
            label=queued.label,
            endpoint=queued.endpoint,
            kind=ASYNC_KIND,
            max_instance_count=queued.max_instance_count,
            alarm_arns=[arn] if arn else [],
            queued=True,
        )
        sections.append(endpoint_section(dashboard, region))
    for serverless in props.serverless_endpoints:
        arn = _serverless_alarm(scope, made, serverless, topic_arn)
        dashboard = DashboardEndpoint(
            label=serverless.label,
            endpoint=serverless.endpoint,
            kind=SERVERLESS_KIND,
            alarm_arns=[arn] if arn else [],
            serverless=True,
            provisioned=serverless.provisioned,
        )
        sections.append(endpoint_section(dashboard, region))
    if not (props.dashboards and sections):
        return made
    title = props.dashboard_title or Stack.of(scope).stack_name
    dashboards = Dashboards(scope, "Dashboards", sections=sections, title=title)
    return InferenceObservability(
        made.topic,
        made.model_alarms,
        made.endpoint_alarms,
        made.async_alarms,
        dashboards,
        made.serverless_alarms,
    )


def _model_alarm(
    scope: Construct, made: InferenceObservability, watched: WatchedModel, topic_arn: str | None
) -> str | None:
    """The model's alarm (with a topic, when its options enable one), by ARN."""
    if topic_arn is None or not watched.alarms.enabled:
        return None
    name = watched.model.model_name
    alarm = ModelAlarm(
        scope,
        f"Model-{name}",
        ModelAlarmProps(
            **options_values(ModelAlarmOptions, watched.alarms),
            model=watched.model,
            topic_arn=topic_arn,
        ),
    )
    made.model_alarms[name] = alarm
    return alarm.alarm_arn


def _endpoint_alarm(
    scope: Construct, made: InferenceObservability, item: WatchedEndpoint, topic_arn: str | None
) -> str | None:
    """The endpoint's alarm (with a topic, when its options enable one and it has
    something to watch), by ARN."""
    if topic_arn is None or not item.alarms.enabled:
        return None
    props = EndpointAlarmProps(
        **options_values(EndpointAlarmOptions, item.alarms),
        endpoint=item.endpoint,
        label=item.label,
        topic_arn=topic_arn,
        min_instance_count=item.min_instance_count,
        max_instance_count=item.max_instance_count,
    )
    if not endpoint_conditions(props):
        return None
    alarm = EndpointAlarm(scope, f"Endpoint-{item.label}", props)
    made.endpoint_alarms[item.label] = alarm
    return alarm.alarm_arn


def _async_alarm(
    scope: Construct,
    made: InferenceObservability,
    item: WatchedAsyncEndpoint,
    topic_arn: str | None,
) -> str | None:
    """The asynchronous endpoint's alarm (with a topic, when its options enable one), by
    ARN."""
    if topic_arn is None or not item.alarms.enabled:
        return None
    alarm = AsyncEndpointAlarm(
        scope,
        f"AsyncEndpoint-{item.label}",
        AsyncEndpointAlarmProps(
            **options_values(AsyncEndpointAlarmOptions, item.alarms),
            endpoint=item.endpoint,
            label=item.label,
            topic_arn=topic_arn,
        ),
    )
    made.async_alarms[item.label] = alarm
    return alarm.alarm_arn


def _serverless_alarm(
    scope: Construct,
    made: InferenceObservability,
    item: WatchedServerlessEndpoint,
    topic_arn: str | None,
) -> str | None:
    """The serverless endpoint's alarm (with a topic, when its options enable one), by
    ARN."""
    if topic_arn is None or not item.alarms.enabled:
        return None
    alarm = ServerlessEndpointAlarm(
        scope,
        f"ServerlessEndpoint-{item.label}",
        ServerlessEndpointAlarmProps(
            **options_values(ServerlessEndpointAlarmOptions, item.alarms),
            endpoint=item.endpoint,
            label=item.label,
            topic_arn=topic_arn,
        ),
    )
    made.serverless_alarms[item.label] = alarm
    return alarm.alarm_arn
