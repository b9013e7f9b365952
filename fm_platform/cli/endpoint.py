"""`fmp endpoint ...`: SageMaker endpoints and their inference components (status, invoke;
metrics, scale and invoke-async are registered here from their own modules)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from fm_platform.cli import asynchronous, metrics, scale
from fm_platform.cli.asynchronous import async_status, render_async_fields
from fm_platform.cli.components import list_components
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_fields, render_table
from fm_platform.cli.target import endpoint_name, endpoint_options


def status(ctx: Context, args: argparse.Namespace) -> int:
    """Endpoint status, instances per variant and every inference component's copies; for
    an asynchronous endpoint also its output paths and backlog."""
    name = endpoint_name(ctx, args)
    endpoint = ctx.clients.client("sagemaker").describe_endpoint(EndpointName=name)
    data = {
        "EndpointName": endpoint["EndpointName"],
        "EndpointStatus": endpoint["EndpointStatus"],
        "FailureReason": endpoint.get("FailureReason"),
        "ProductionVariants": [
            {
                "VariantName": v["VariantName"],
                "CurrentInstanceCount": v.get("CurrentInstanceCount"),
                "DesiredInstanceCount": v.get("DesiredInstanceCount"),
            }
            for v in endpoint.get("ProductionVariants", [])
        ],
        "InferenceComponents": list_components(ctx, name),
        "AsyncInference": async_status(ctx, endpoint),
    }
    ctx.emit(data, _render_status)
    return 0


def _render_status(data: dict[str, Any]) -> str:
    fields = [("Endpoint", data["EndpointName"]), ("Status", data["EndpointStatus"])]
    if data["FailureReason"]:
        fields.append(("Failure", data["FailureReason"]))
    if data["AsyncInference"]:
        fields += render_async_fields(data["AsyncInference"])
    variants = render_table(
        ["VARIANT", "CURRENT INSTANCES", "DESIRED INSTANCES"],
        [
            [v["VariantName"], v["CurrentInstanceCount"], v["DesiredInstanceCount"]]
            for v in data["ProductionVariants"]
        ],
    )
    sections = [render_fields(fields), variants]
    components = data["InferenceComponents"]
    if components:
        sections.append(
            render_table(
                ["INFERENCE COMPONENT", "VARIANT", "STATUS", "CURRENT COPIES", "DESIRED COPIES"],
                [
                    [c["InferenceComponentName"], c["VariantName"], c["Status"]]
                    + [c["CurrentCopyCount"], c["DesiredCopyCount"]]
                    for c in components
                ],
            )
        )
        sections += [
            f"{c['InferenceComponentName']} failed: {c['FailureReason']}"
            for c in components
            if c["FailureReason"]
        ]
    else:
        sections.append("No inference components on this endpoint.")
    return "\n\n".join(sections)


def _read_body(path: str | None, stdin: BinaryIO) -> bytes:
    if path:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise CliError(f"cannot read --body {path}: {exc.strerror}") from exc
    if stdin.isatty():
        raise CliError("no request body: pass --body FILE or pipe the body on stdin")
    return stdin.read()


def write_stream(events: Iterable[Mapping[str, Any]], out: BinaryIO) -> int:
    """Write each PayloadPart's bytes to `out` as it arrives; returns the bytes written.

    An error event in the stream (ModelStreamError, InternalStreamFailure) is raised by
    botocore as an EventStreamError while iterating.
    """
    written = 0
    for event in events:
        if "PayloadPart" in event:
            chunk = event["PayloadPart"].get("Bytes", b"")
            out.write(chunk)
            out.flush()
            written += len(chunk)
    return written


def invoke(ctx: Context, args: argparse.Namespace) -> int:
    """Send one request to an inference component; print the response (streamed with --stream)."""
    name = endpoint_name(ctx, args)
    request = {
        "EndpointName": name,
        "InferenceComponentName": args.component,
        "ContentType": args.content_type,
        "Body": _read_body(args.body, sys.stdin.buffer),
    }
    if args.accept:
        request["Accept"] = args.accept
    runtime = ctx.clients.client("sagemaker-runtime")
    out = ctx.binary_out()
    if args.stream:
        response = runtime.invoke_endpoint_with_response_stream(**request)
        write_stream(response["Body"], out)
    else:
        response = runtime.invoke_endpoint(**request)
        out.write(response["Body"].read())
    if out.isatty():
        out.write(b"\n")
    out.flush()
    return 0


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp endpoint ...`."""
    parser = add_command(
        subparsers, "endpoint", summary="inference endpoints", example="fmp endpoint status"
    )
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    parents = [common, endpoint_options()]
    add_command(
        commands,
        "status",
        summary="an endpoint, its inference components and, if asynchronous, its backlog",
        example="fmp endpoint status --endpoint NAME --json",
        parents=parents,
        json_output=True,
    ).set_defaults(handler=status)
    inv = add_command(
        commands,
        "invoke",
        summary="send one request to an inference component",
        example="fmp endpoint invoke --endpoint NAME --component llama-7b-chat "
        "--body request.json --stream",
        parents=parents,
    )
    inv.add_argument("--component", required=True, help="inference component name")
    inv.add_argument("--body", help="file holding the request body (default: stdin)")
    inv.add_argument(
        "--content-type", default="application/json", help="request type (default: %(default)s)"
    )
    inv.add_argument("--accept", help="response type wanted (default: the container's)")
    inv.add_argument("--stream", action="store_true", help="stream the response as it is generated")
    inv.set_defaults(handler=invoke)
    metrics.add_command_to(commands, parents)
    scale.add_command_to(commands, parents)
    asynchronous.add_command_to(commands, parents)
