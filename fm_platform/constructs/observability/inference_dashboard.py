"""What an inference stack's dashboard shows, per endpoint and per model.

Per endpoint: instances (with the scaling maximum drawn), invocations, model latency p50
and p90, 4xx and 5xx errors (an asynchronous endpoint: its queue's backlog and oldest
request instead of invocations). A serverless endpoint has no instances: its invocations,
model and overhead latency (the overhead holds cold starts), errors, model setup time (its
cold starts), concurrency over its maximum and memory utilisation, and with provisioned
concurrency that concurrency's use and the requests that spilled over it ("Alarms and logs
for tracking metrics from serverless endpoints", SageMaker Developer Guide). Per model on
an Inference Components endpoint, one line each in the endpoint's widgets: invocations,
latency, errors, copies, invocations per copy, accelerator and accelerator-memory
utilisation, host memory utilisation, requests that found no copy.

Metric names, namespaces, dimensions and statistics: SageMaker Developer Guide, "Amazon
SageMaker AI metrics in Amazon CloudWatch" (``InvocationsPerCopy``: valid statistic Sum;
``ModelLatency`` in microseconds; the ``*Normalized`` utilisation metrics of inference
components in ``/aws/sagemaker/InferenceComponents``, reported by each copy). Copies and
instances are counted as the SampleCount of a per-copy or per-instance metric over one
minute (see :meth:`InferenceComponentModel.metric_copies` and
:meth:`RealtimeEndpoint.metric_instances`). Widgets are built as plain JSON (no CDK metric
objects): a fleet has thousands of these lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fm_platform.constructs.inference.endpoint_base import ENDPOINT_INSTANCE_NAMESPACE
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.constructs.inference.inference_component import (
    COMPONENT_NAMESPACE,
    COPIES_METRIC,
    InferenceComponentModel,
)
from fm_platform.constructs.observability.dashboards import metric_entry
from fm_platform.constructs.observability.layout import GRID_COLUMNS, Limits, Section, Widget

SAGEMAKER = "AWS/SageMaker"
_MINUTE = 60

#: Per model: (widget title, [(namespace, metric, statistic, label suffix)...]).
MODEL_WIDGETS: tuple[tuple[str, tuple[tuple[str, str, str, str], ...]], ...] = (
    ("Invocations per model", ((SAGEMAKER, "Invocations", "Sum", ""),)),
    (
        "Model latency p50 / p90 (microseconds)",
        ((SAGEMAKER, "ModelLatency", "p50", " p50"), (SAGEMAKER, "ModelLatency", "p90", " p90")),
    ),
    (
        "5xx / 4xx errors per model",
        (
            (SAGEMAKER, "Invocation5XXErrors", "Sum", " 5xx"),
            (SAGEMAKER, "Invocation4XXErrors", "Sum", " 4xx"),
        ),
    ),
    ("Copies per model", ((COMPONENT_NAMESPACE, COPIES_METRIC, "SampleCount", ""),)),
    ("Invocations per copy", ((SAGEMAKER, "InvocationsPerCopy", "Sum", ""),)),
    (
        "Accelerator / accelerator memory utilisation per model (%)",
        (
            (COMPONENT_NAMESPACE, "GPUUtilizationNormalized", "Average", " accel"),
            (COMPONENT_NAMESPACE, "GPUMemoryUtilizationNormalized", "Average", " accel mem"),
        ),
    ),
    (
        "Host memory utilisation per model (%)",
        ((COMPONENT_NAMESPACE, "MemoryUtilizationNormalized", "Average", ""),),
    ),
    (
        "Requests that found no copy per model",
        ((SAGEMAKER, "NoCapacityInvocationFailures", "Sum", ""),),
    ),
)
#: Per endpoint variant (single-model and multi-model endpoints).
VARIANT_WIDGETS: tuple[tuple[str, tuple[tuple[str, str, str, str], ...]], ...] = (
    ("Invocations", ((SAGEMAKER, "Invocations", "Sum", "invocations"),)),
    (
        "Model latency p50 / p90 (microseconds)",
        ((SAGEMAKER, "ModelLatency", "p50", "p50"), (SAGEMAKER, "ModelLatency", "p90", "p90")),
    ),
    (
        "5xx / 4xx errors",
        (
            (SAGEMAKER, "Invocation5XXErrors", "Sum", "5xx"),
            (SAGEMAKER, "Invocation4XXErrors", "Sum", "4xx"),
        ),
    ),
)


#: Per serverless endpoint variant (its metrics: module docstring).
SERVERLESS_WIDGETS: tuple[tuple[str, tuple[tuple[str, str, str, str], ...]], ...] = (
    VARIANT_WIDGETS[0],
    (
        "Model latency p50 / p90, overhead p50 (microseconds)",
        (
            (SAGEMAKER, "ModelLatency", "p50", "model p50"),
            (SAGEMAKER, "ModelLatency", "p90", "model p90"),
            (SAGEMAKER, "OverheadLatency", "p50", "overhead p50"),
        ),
    ),
    VARIANT_WIDGETS[2],
    (
        "Cold starts: model setup time (microseconds)",
        (
            (SAGEMAKER, "ModelSetupTime", "Average", "average"),
            (SAGEMAKER, "ModelSetupTime", "Maximum", "maximum"),
        ),
    ),
    (
        "Concurrency / maximum concurrency; memory utilisation (%)",
        (
            (SAGEMAKER, "ServerlessConcurrentExecutionsUtilization", "Maximum", "concurrency"),
            (ENDPOINT_INSTANCE_NAMESPACE, "MemoryUtilization", "Average", "memory %"),
        ),
    ),
)
#: With provisioned concurrency: its use, and the requests beyond it.
PROVISIONED_WIDGET: tuple[str, tuple[tuple[str, str, str, str], ...]] = (
    "Provisioned concurrency: use and spillover",
    (
        (SAGEMAKER, "ServerlessProvisionedConcurrencyUtilization", "Maximum", "use"),
        (SAGEMAKER, "ServerlessProvisionedConcurrencySpilloverInvocations", "Sum", "spillover"),
    ),
)


#: An asynchronous endpoint's queue (dimension ``EndpointName``; "Alarms and logs for
#: tracking metrics from asynchronous endpoints", SageMaker Developer Guide). Its
#: ``Invocations`` are not published, so the queue replaces them.
QUEUE_METRICS = (
    ("ApproximateBacklogSize", "Average", "backlog"),
    ("ApproximateAgeOfOldestRequest", "Maximum", "oldest request age (s)"),
)


@dataclass(frozen=True)
class DashboardEndpoint:
    """An endpoint as the dashboard shows it: ``label`` (its name in the stack), the
    endpoint, its ``kind`` (for the heading), the models placed on it (Inference Components
    endpoints), its instance maximum when it scales (drawn on the instances graph), the
    ARNs of its alarms and its models' alarms, whether it is asynchronous (``queued``: its
    queue is drawn instead of its invocations) and whether it is serverless (no instances:
    :data:`SERVERLESS_WIDGETS`, and :data:`PROVISIONED_WIDGET` with ``provisioned``
    concurrency)."""

    label: str
    endpoint: IEndpoint
    kind: str
    models: Sequence[InferenceComponentModel] = ()
    max_instance_count: int | None = None
    alarm_arns: Sequence[str] = ()
    queued: bool = False
    serverless: bool = False
    provisioned: bool = False


def _graph(title: str, metrics: list[list[Any]], region: str, **extra: Any) -> Widget:
    properties: dict[str, Any] = {
        "title": title,
        "view": "timeSeries",
        "region": region,
        "period": _MINUTE,
        "metrics": metrics,
        **extra,
    }
    return Widget("metric", properties, width=8, height=6, metrics=len(metrics))


def _chunks(
    models: Sequence[InferenceComponentModel], per_widget: int
) -> Iterator[tuple[str, Sequence[InferenceComponentModel]]]:
    """``models`` in runs of ``per_widget``, each with a title suffix when there are
    several."""
    if len(models) <= per_widget:
        yield "", models
        return
    for start in range(0, len(models), per_widget):
        part = models[start : start + per_widget]
        yield f" ({start + 1}-{start + len(part)} of {len(models)})", part


def model_widgets(
    models: Sequence[InferenceComponentModel],
    region: str,
    limits: Limits = Limits(),  # noqa: B008 - frozen
) -> list[Widget]:
    """One widget per entry of :data:`MODEL_WIDGETS` with a line per model (split into
    several widgets when the models' lines exceed a widget's metrics)."""
    widgets = []
    for title, series in MODEL_WIDGETS:
        per_widget = max(1, limits.metrics_per_widget // len(series))
        for suffix, part in _chunks(models, per_widget):
            metrics = [
                metric_entry(
                    namespace,
                    name,
                    [("InferenceComponentName", model.component_name)],
                    stat=stat,
                    label=f"{model.model_name}{label}",
                )
                for model in part
                for namespace, name, stat, label in series
            ]
            widgets.append(_graph(f"{title}{suffix}", metrics, region))
    return widgets


def _variant_metrics(
    endpoint: IEndpoint,
) -> Callable[[str, str, str, str], list[Any]]:
    dimensions = [("EndpointName", endpoint.endpoint_name), ("VariantName", endpoint.variant_name)]

    def entry(namespace: str, name: str, stat: str, label: str) -> list[Any]:
        return metric_entry(namespace, name, dimensions, stat=stat, label=label)

    return entry


def instances_widget(item: DashboardEndpoint, region: str) -> Widget:
    """The variant's instances in service, with its scaling maximum as a line."""
    entry = _variant_metrics(item.endpoint)
    extra: dict[str, Any] = {"yAxis": {"left": {"min": 0}}}
    if item.max_instance_count is not None:
        extra["annotations"] = {
            "horizontal": [{"label": "scaling maximum", "value": item.max_instance_count}]
        }
    metric = entry(
        ENDPOINT_INSTANCE_NAMESPACE, item.endpoint.instance_metric, "SampleCount", "instances"
    )
    return _graph("Instances in service", [metric], region, **extra)


def endpoint_section(
    item: DashboardEndpoint,
    region: str,
    limits: Limits = Limits(),  # noqa: B008 - frozen
) -> Section:
    """A heading, the instances, then the models' widgets (Inference Components
    endpoints) or the variant's (others); a serverless endpoint's own widgets, no
    instances."""
    heading = Widget(
        "text",
        {"markdown": f"### {item.kind} endpoint {item.label} ({item.endpoint.endpoint_name})"},
        width=GRID_COLUMNS,
        height=1,
    )
    if item.serverless:
        entry = _variant_metrics(item.endpoint)
        series = SERVERLESS_WIDGETS + ((PROVISIONED_WIDGET,) if item.provisioned else ())
        widgets = [heading] + [
            _graph(title, [entry(*spec) for spec in specs], region) for title, specs in series
        ]
        return Section(tuple(widgets), tuple(item.alarm_arns))
    widgets = [heading, instances_widget(item, region)]
    if item.models:
        widgets += model_widgets(item.models, region, limits)
    elif item.queued:
        entry = _variant_metrics(item.endpoint)
        queue = [
            metric_entry(
                SAGEMAKER,
                name,
                [("EndpointName", item.endpoint.endpoint_name)],
                stat=stat,
                label=label,
            )
            for name, stat, label in QUEUE_METRICS
        ]
        widgets += [
            _graph(title, [entry(*spec) for spec in series], region)
            for title, series in VARIANT_WIDGETS[1:]
        ]
        widgets.append(_graph("Queue: backlog and oldest request (seconds)", queue, region))
    else:
        entry = _variant_metrics(item.endpoint)
        widgets += [
            _graph(title, [entry(*spec) for spec in series], region)
            for title, series in VARIANT_WIDGETS
        ]
    return Section(tuple(widgets), tuple(item.alarm_arns))
