"""Asynchronous endpoints: `fmp endpoint invoke-async`, and the backlog `fmp endpoint status`
shows for them.

Backlog metrics (namespace ``AWS/SageMaker``, dimension ``EndpointName``): SageMaker
Developer Guide, "Alarms and logs for tracking metrics from asynchronous endpoints",
section "Monitoring with CloudWatch"
(https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html), and
"Autoscale an asynchronous endpoint"
(https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html), which
tracks ``ApproximateBacklogSizePerInstance``.
"""

from __future__ import annotations

import argparse
from typing import Any

from fm_platform.cli.cloudwatch import MetricQuery, fetch, last_minutes
from fm_platform.cli.context import Context
from fm_platform.cli.limits import check_options, member_shape
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_fields
from fm_platform.cli.target import endpoint_name

BACKLOG_METRICS = ("ApproximateBacklogSize", "ApproximateBacklogSizePerInstance")
# The newest minute with data within this many minutes is shown.
BACKLOG_WINDOW_MINUTES = 15
OPERATION = "InvokeEndpointAsync"


def backlog(ctx: Context, endpoint: str) -> dict[str, Any]:
    """Each backlog metric's newest one-minute average in the last 15 minutes, as
    ``{"Value", "Timestamp"}``, or None without data."""
    start, end = last_minutes(BACKLOG_WINDOW_MINUTES)
    queries = [
        MetricQuery("AWS/SageMaker", metric, {"EndpointName": endpoint}, "Average")
        for metric in BACKLOG_METRICS
    ]
    points = fetch(ctx.clients.client("cloudwatch"), queries, start=start, end=end, period=60)
    return {
        metric: {"Value": found[0][1], "Timestamp": found[0][0]} if found else None
        for metric, found in zip(BACKLOG_METRICS, points, strict=True)
    }


def async_status(ctx: Context, endpoint: dict[str, Any]) -> dict[str, Any] | None:
    """Where an asynchronous endpoint writes results and its backlog; None for an endpoint
    without ``AsyncInferenceConfig``."""
    config = endpoint.get("AsyncInferenceConfig")
    if not config:
        return None
    output = config.get("OutputConfig", {})
    return {
        "S3OutputPath": output.get("S3OutputPath"),
        "S3FailurePath": output.get("S3FailurePath"),
        **backlog(ctx, endpoint["EndpointName"]),
    }


def render_async_fields(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """`Label, value` pairs for the status of an asynchronous endpoint."""
    size, per_instance = (data[metric] for metric in BACKLOG_METRICS)
    if size is None and per_instance is None:
        queued = f"no data in the last {BACKLOG_WINDOW_MINUTES} minutes"
    else:
        value = "-" if size is None else f"{size['Value']:g}"
        each = "-" if per_instance is None else f"{per_instance['Value']:g}"
        newest = max(p["Timestamp"] for p in (size, per_instance) if p is not None)
        queued = f"{value} requests, {each} per instance (at {newest:%H:%M} UTC)"
    return [
        ("Output", data["S3OutputPath"]),
        ("Failures", data["S3FailurePath"]),
        ("Backlog", queued),
    ]


def invoke_async(ctx: Context, args: argparse.Namespace) -> int:
    """Queue one request whose body is in S3; print where its result will be written."""
    given = {
        "InputLocation": ("--input", args.input),
        "ContentType": ("--content-type", args.content_type),
        "Accept": ("--accept", args.accept),
        "InferenceId": ("--inference-id", args.inference_id),
        "InvocationTimeoutSeconds": ("--invocation-timeout", args.invocation_timeout),
        "RequestTTLSeconds": ("--request-ttl", args.request_ttl),
    }
    check_options("sagemaker-runtime", OPERATION, [(o, m, v) for m, (o, v) in given.items()])
    request = {member: value for member, (_, value) in given.items() if value is not None}
    request["EndpointName"] = endpoint_name(ctx, args)
    response = ctx.clients.client("sagemaker-runtime").invoke_endpoint_async(**request)
    data = {
        "InferenceId": response.get("InferenceId"),
        "OutputLocation": response.get("OutputLocation"),
        "FailureLocation": response.get("FailureLocation"),
    }
    ctx.emit(
        data,
        lambda d: render_fields(
            [
                ("Inference ID", d["InferenceId"]),
                ("Output", d["OutputLocation"]),
                ("Failure", d["FailureLocation"]),
            ]
        ),
    )
    return 0


def _range(member: str) -> str:
    limits = member_shape("sagemaker-runtime", OPERATION, member).metadata
    return f"{limits['min']}-{limits['max']}"


def add_command_to(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register `fmp endpoint invoke-async`."""
    parser = add_command(
        commands,
        "invoke-async",
        summary="queue a request to an asynchronous endpoint",
        example="fmp endpoint invoke-async transcribe --input s3://my-bucket/requests/1.json",
        parents=parents,
        json_output=True,
        description="The request body is read from S3 (--input); SageMaker queues it and writes\n"
        "the result to the output location printed here (or, if it fails, to the failure\n"
        "location). `fmp endpoint status` shows the endpoint's backlog.",
    )
    parser.add_argument("--input", required=True, help="S3 URI of the request body")
    parser.add_argument(
        "--content-type", default="application/json", help="request type (default: %(default)s)"
    )
    parser.add_argument("--accept", help="response type wanted (default: the container's)")
    parser.add_argument("--inference-id", help="your ID for the request (default: SageMaker's)")
    parser.add_argument(
        "--invocation-timeout",
        type=int,
        help=f"seconds the model may take, {_range('InvocationTimeoutSeconds')} "
        "(default: the service's)",
    )
    parser.add_argument(
        "--request-ttl",
        type=int,
        help=f"seconds the request may wait in the queue, {_range('RequestTTLSeconds')} "
        "(default: the service's)",
    )
    parser.set_defaults(handler=invoke_async)
