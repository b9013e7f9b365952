"""What a training stack's dashboard shows: the instance groups, the nodes that ran the
lifecycle scripts per group, the shared file system's throughput and free capacity, and
the lifecycle scripts' errors.

HyperPod publishes no node-count metric for Slurm clusters; the nodes per group are
counted from the lifecycle log's streams (``LifecycleConfig/<group>/<instance>``, one per
node that ran the scripts, a replaced node included) with a CloudWatch Logs Insights query.
FSx for Lustre metrics (Amazon FSx for Lustre User Guide, "Monitoring with Amazon
CloudWatch"): ``DataReadBytes`` and ``DataWriteBytes`` (their Sum over a period divided by
the period's seconds is the throughput), ``FreeDataStorageCapacity`` (Sum: free bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fm_platform.constructs.observability.dashboards import metric_entry
from fm_platform.constructs.observability.layout import GRID_COLUMNS, Section, Widget
from fm_platform.constructs.observability.training_alarms import (
    FREE_CAPACITY_METRIC,
    FSX_NAMESPACE,
    LIFECYCLE_ERRORS_METRIC,
)

_PERIOD_S = 300


@dataclass(frozen=True)
class TrainingDashboardInputs:
    """What the dashboard draws: the cluster's ``groups`` (name, instance type, count), the
    lifecycle log group (None when unknown), the file system and the threshold its alarm
    uses, the lifecycle errors metric's namespace, and the alarms to show."""

    groups: Sequence[tuple[str, str, int]]
    lifecycle_log_group: str | None
    lifecycle_namespace: str | None
    file_system_id: str
    free_capacity_threshold_bytes: float | None
    alarm_arns: Sequence[str] = ()


def graph_widget(title: str, metrics: list[list[object]], region: str, **extra: object) -> Widget:
    properties = {
        "title": title,
        "view": "timeSeries",
        "region": region,
        "period": _PERIOD_S,
        "metrics": metrics,
        **extra,
    }
    return Widget("metric", properties, width=8, height=6, metrics=len(metrics))


def nodes_query(log_group: str) -> str:
    """The Logs Insights query counting, per group, the nodes whose lifecycle logs are in
    ``log_group`` in the dashboard's time range."""
    return (
        f"SOURCE '{log_group}' | filter @logStream like /^LifecycleConfig\\// "
        '| parse @logStream "LifecycleConfig/*/*" as group, instance '
        "| stats count_distinct(instance) as nodes by group"
    )


def training_section(inputs: TrainingDashboardInputs, region: str) -> Section:
    """The cluster's widgets (see the module docstring), in one section."""
    groups = ", ".join(f"{name} {count} x {kind}" for name, kind, count in inputs.groups)
    widgets = [
        Widget(
            "text",
            {"markdown": f"### HyperPod cluster: configured groups {groups}"},
            width=GRID_COLUMNS,
            height=1,
        )
    ]
    if inputs.lifecycle_log_group is not None:
        widgets.append(
            Widget(
                "log",
                {
                    "title": "Nodes that ran the lifecycle scripts, per group (time range)",
                    "region": region,
                    "query": nodes_query(inputs.lifecycle_log_group),
                    "view": "table",
                },
                width=8,
                height=6,
            )
        )
    fs = [("FileSystemId", inputs.file_system_id)]
    widgets.append(
        graph_widget(
            "FSx for Lustre throughput (bytes/s)",
            [
                [{"expression": "read / PERIOD(read)", "label": "read", "id": "readrate"}],
                [{"expression": "write / PERIOD(write)", "label": "write", "id": "writerate"}],
                metric_entry(
                    FSX_NAMESPACE, "DataReadBytes", fs, stat="Sum", id="read", visible=False
                ),
                metric_entry(
                    FSX_NAMESPACE, "DataWriteBytes", fs, stat="Sum", id="write", visible=False
                ),
            ],
            region,
        )
    )
    extra: dict[str, object] = {"yAxis": {"left": {"min": 0}}}
    if inputs.free_capacity_threshold_bytes is not None:
        extra["annotations"] = {
            "horizontal": [
                {"label": "alarm threshold", "value": inputs.free_capacity_threshold_bytes}
            ]
        }
    widgets.append(
        graph_widget(
            "FSx for Lustre free capacity (bytes)",
            [metric_entry(FSX_NAMESPACE, FREE_CAPACITY_METRIC, fs, stat="Sum", label="free")],
            region,
            **extra,
        )
    )
    if inputs.lifecycle_namespace is not None:
        widgets.append(
            graph_widget(
                "Lifecycle script errors",
                [
                    metric_entry(
                        inputs.lifecycle_namespace,
                        LIFECYCLE_ERRORS_METRIC,
                        [],
                        stat="Sum",
                        label="ERROR lines",
                    )
                ],
                region,
            )
        )
    return Section(tuple(widgets), tuple(inputs.alarm_arns))
