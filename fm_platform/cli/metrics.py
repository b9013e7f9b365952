"""`fmp endpoint metrics`: an endpoint's last hour per model, from CloudWatch.

Metric names, namespace, dimensions and units: SageMaker Developer Guide, "Amazon SageMaker
AI metrics in Amazon CloudWatch" (https://docs.aws.amazon.com/sagemaker/latest/dg/
monitoring-cloudwatch.html): the invocation metrics are in ``AWS/SageMaker``, per variant
(dimensions ``EndpointName``, ``VariantName``) or per inference component (dimension
``InferenceComponentName``, as the components' own alarms use it); ``ModelLatency`` is in
microseconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from fm_platform.cli.cloudwatch import Datapoints, MetricQuery, fetch, last_minutes
from fm_platform.cli.components import list_components
from fm_platform.cli.context import Context
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_table
from fm_platform.cli.target import endpoint_name

NAMESPACE = "AWS/SageMaker"
WINDOW_MINUTES = 60

# Output field, metric, statistic.
_SERIES = (
    ("Invocations", "Invocations", "Sum"),
    ("ModelLatencyP50Ms", "ModelLatency", "p50"),
    ("ModelLatencyP90Ms", "ModelLatency", "p90"),
    ("Invocation4XXErrors", "Invocation4XXErrors", "Sum"),
    ("Invocation5XXErrors", "Invocation5XXErrors", "Sum"),
)
_MICROSECONDS_PER_MS = 1000


def _value(stat: str, points: Datapoints) -> float | None:
    """A Sum adds its buckets; any other statistic is its newest bucket (a window of one
    period normally gives one bucket)."""
    if not points:
        return None
    return sum(value for _, value in points) if stat == "Sum" else points[0][1]


def _number(value: float | None, scale: float = 1) -> float | int | None:
    if value is None:
        return None
    scaled = value / scale
    return int(scaled) if scaled.is_integer() else round(scaled, 1)


def per_model(
    cloudwatch: Any, targets: Sequence[tuple[str, Mapping[str, str]]], minutes: int
) -> dict[str, Any]:
    """The last `minutes` of every `(name, dimensions)` target, one row each."""
    start, end = last_minutes(minutes)
    queries = [
        MetricQuery(NAMESPACE, metric, dimensions, stat)
        for _, dimensions in targets
        for _, metric, stat in _SERIES
    ]
    points = fetch(cloudwatch, queries, start=start, end=end, period=minutes * 60)
    rows = []
    for index, (name, _) in enumerate(targets):
        row: dict[str, Any] = {"Name": name}
        for offset, (field, metric, stat) in enumerate(_SERIES):
            value = _value(stat, points[index * len(_SERIES) + offset])
            row[field] = _number(value, _MICROSECONDS_PER_MS if metric == "ModelLatency" else 1)
        rows.append(row)
    return {"StartTime": start, "EndTime": end, "Rows": rows}


def metrics(ctx: Context, args: argparse.Namespace) -> int:
    """Invocations, latency p50/p90, 4xx/5xx errors and copies (or instances) per model."""
    name = endpoint_name(ctx, args)
    endpoint = ctx.clients.client("sagemaker").describe_endpoint(EndpointName=name)
    components = list_components(ctx, name)
    if components:
        per, capacity_field = "InferenceComponentName", "CurrentCopyCount"
        targets = [
            (c["InferenceComponentName"], {per: c["InferenceComponentName"]}) for c in components
        ]
        capacities = [c["CurrentCopyCount"] for c in components]
    else:
        per, capacity_field = "VariantName", "CurrentInstanceCount"
        variants = endpoint.get("ProductionVariants", [])
        targets = [
            (v["VariantName"], {"EndpointName": name, "VariantName": v["VariantName"]})
            for v in variants
        ]
        capacities = [v.get("CurrentInstanceCount") for v in variants]
    data = per_model(ctx.clients.client("cloudwatch"), targets, WINDOW_MINUTES)
    for row, capacity in zip(data["Rows"], capacities, strict=True):
        row[capacity_field] = capacity
    ctx.emit({"EndpointName": name, "Per": per, **data}, _render)
    return 0


def _render(data: dict[str, Any]) -> str:
    by_component = data["Per"] == "InferenceComponentName"
    title = (
        f"Endpoint {data['EndpointName']}, "
        f"{data['StartTime']:%Y-%m-%d %H:%M} to {data['EndTime']:%H:%M} UTC"
    )
    capacity = "CurrentCopyCount" if by_component else "CurrentInstanceCount"
    table = render_table(
        [
            "INFERENCE COMPONENT" if by_component else "VARIANT",
            "INVOCATIONS",
            "P50 MS",
            "P90 MS",
            "4XX",
            "5XX",
            "COPIES" if by_component else "INSTANCES",
        ],
        [
            [row["Name"], *(row[field] for field, _, _ in _SERIES), row[capacity]]
            for row in data["Rows"]
        ],
    )
    return f"{title}\n\n{table}\n\n'-': no data in CloudWatch for the hour."


def add_command_to(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register `fmp endpoint metrics`."""
    add_command(
        commands,
        "metrics",
        summary="an endpoint's last hour per model: invocations, latency, errors, copies",
        example="fmp endpoint metrics shared-g5",
        parents=parents,
        json_output=True,
        description="Per inference component (per variant on endpoints without components),\n"
        "from CloudWatch (AWS/SageMaker): invocations, model latency p50 and p90 in\n"
        "milliseconds, 4xx and 5xx errors (sums over the hour), and the current copies (or\n"
        "instances).",
    ).set_defaults(handler=metrics)
