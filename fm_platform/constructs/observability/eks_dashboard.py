"""What an EKS-orchestrated training stack's dashboard shows besides the cluster's groups and
file system: the EKS control plane and the HyperPod nodes found unhealthy.

EKS control plane metrics (Amazon EKS User Guide, "Monitor cluster data with Amazon
CloudWatch", "Basic metrics in Amazon CloudWatch": vended for free in ``AWS/EKS`` for
Kubernetes 1.28 and later, every minute, dimension ``ClusterName``):
``apiserver_request_total`` and its ``_4XX``, ``_5XX`` and ``_429`` counts (Sum),
``apiserver_request_duration_seconds_GET_P99`` and ``_POST_P99`` (Average, seconds),
``scheduler_pending_pods`` and ``scheduler_schedule_attempts_total`` (Sum).

HyperPod publishes no CloudWatch metric of its own for an EKS cluster without the
CloudWatch Observability add-on (its Container Insights metrics), which the stack does not
install: unhealthy nodes are counted from HyperPod's node health events, as the rule of
:class:`~fm_platform.constructs.training.node_health_alarm.NodeHealthAlarm` matches them
(``AWS/Events`` ``TriggeredRules``, dimension ``RuleName``).
"""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.constructs.observability.dashboards import metric_entry
from fm_platform.constructs.observability.layout import GRID_COLUMNS, Section, Widget
from fm_platform.constructs.observability.training_dashboard import graph_widget

EKS_NAMESPACE = "AWS/EKS"
_REQUESTS = ("apiserver_request_total", "4XX", "5XX", "429")
_LATENCY = ("GET", "POST")


def eks_section(
    cluster_name: str,
    region: str,
    *,
    node_health_rule: str | None = None,
    alarm_arns: Sequence[str] = (),
) -> Section:
    """The EKS control plane's widgets (see the module docstring), and the unhealthy-node
    events the rule ``node_health_rule`` matched, with the status of ``alarm_arns``."""
    cluster = [("ClusterName", cluster_name)]
    total = _REQUESTS[0]
    requests = [metric_entry(EKS_NAMESPACE, total, cluster, stat="Sum", label="all")]
    requests += [
        metric_entry(EKS_NAMESPACE, f"{total}_{code}", cluster, stat="Sum", label=code)
        for code in _REQUESTS[1:]
    ]
    widgets = [
        Widget(
            "text",
            {"markdown": "### EKS control plane and HyperPod node health"},
            width=GRID_COLUMNS,
            height=1,
        ),
        graph_widget("Kubernetes API requests", requests, region),
        graph_widget(
            "Kubernetes API latency, p99 (seconds)",
            [
                metric_entry(
                    EKS_NAMESPACE,
                    f"apiserver_request_duration_seconds_{verb}_P99",
                    cluster,
                    stat="Average",
                    label=verb,
                )
                for verb in _LATENCY
            ],
            region,
        ),
        graph_widget(
            "Scheduler: pending pods and scheduling attempts",
            [
                metric_entry(
                    EKS_NAMESPACE, "scheduler_pending_pods", cluster, stat="Sum", label="pending"
                ),
                metric_entry(
                    EKS_NAMESPACE,
                    "scheduler_schedule_attempts_total",
                    cluster,
                    stat="Sum",
                    label="attempts",
                ),
            ],
            region,
        ),
    ]
    if node_health_rule is not None:
        widgets.append(
            graph_widget(
                "HyperPod nodes found unhealthy (events)",
                [
                    metric_entry(
                        "AWS/Events",
                        "TriggeredRules",
                        [("RuleName", node_health_rule)],
                        stat="Sum",
                        label="unhealthy-node events",
                    )
                ],
                region,
            )
        )
    return Section(tuple(widgets), tuple(alarm_arns))
