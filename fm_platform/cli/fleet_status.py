"""`fmp fleet status PLAN`: every model of a deployed fleet plan in one table.

Per model: its endpoint, kind, copies (Inference Components) or instances now against the
plan's minimum-maximum, invocations and 5xx errors in the last hour, and its alarm's state.
The calls do not grow with the models one by one: one DescribeStacks per plan stack (the
endpoint names from its ``Endpoint<Name>`` outputs), GetMetricData in batches of 500
queries, and one DescribeAlarms listing per stack by name prefix (every alarm of a fleet
stack is named ``<stack>-...``: ``<component>-health`` per model, ``<stack>-<endpoint>-
health`` per endpoint).

"Now" counts are CloudWatch's: the SampleCount of the per-copy ``CPUUtilizationNormalized``
(namespace ``/aws/sagemaker/InferenceComponents``) or per-instance ``CPUUtilization``
(``/aws/sagemaker/Endpoints``) in the last complete minute, as the stacks' dashboards count
them (SageMaker publishes no copy-count metric); ``-`` where nothing was published.
"""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from botocore.exceptions import ClientError

from fm_platform.cli import cloudwatch
from fm_platform.cli.cloudwatch import MetricQuery, fetch
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_table
from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan, read_plan
from fm_platform.rules.components import component_name_for
from fm_platform.rules.replacement import component_endpoint_key

SAGEMAKER = "AWS/SageMaker"
COMPONENTS = "/aws/sagemaker/InferenceComponents"
INSTANCES = "/aws/sagemaker/Endpoints"
VARIANT = "AllTraffic"
HEADERS = ["MODEL", "ENDPOINT", "KIND", "NOW", "PLANNED", "INVOCATIONS 1H", "5XX 1H", "ALARM"]


def _output_id(name: str) -> str:
    """The stack output naming endpoint ``name`` (as :class:`InferenceStack` writes it)."""
    return "Endpoint" + "".join(part.capitalize() for part in name.split("-"))


def _endpoint_names(ctx: Context, plan: Plan) -> dict[str, str | None]:
    """Plan endpoint -> deployed SageMaker endpoint name (None: its stack has no output)."""
    cloudformation = ctx.clients.client("cloudformation")
    names: dict[str, str | None] = {}
    for stack in plan.stacks:
        try:
            described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
        except ClientError as error:
            if "does not exist" not in str(error):
                raise
            described = {}
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
        for endpoint in plan.endpoints_in(stack):
            names[endpoint.name] = outputs.get(_output_id(endpoint.name))
    return names


def _alarm_states(ctx: Context, plan: Plan) -> dict[str, str]:
    paginator = ctx.clients.client("cloudwatch").get_paginator("describe_alarms")
    return {
        alarm["AlarmName"]: alarm["StateValue"]
        for stack in plan.stacks
        for page in paginator.paginate(
            AlarmNamePrefix=f"{stack}-", AlarmTypes=["MetricAlarm", "CompositeAlarm"]
        )
        for alarm in page.get("MetricAlarms", []) + page.get("CompositeAlarms", [])
    }


def _rows(plan: Plan, names: dict[str, str | None]) -> list[dict[str, Any]]:
    rows = []
    for endpoint in plan.endpoints.values():
        for model in endpoint.models:
            p = plan.placements[model]
            ic = KINDS[endpoint.kind].packs_devices
            rows.append(
                {
                    "Model": model,
                    "Endpoint": endpoint.name,
                    "EndpointName": names.get(endpoint.name),
                    "Kind": endpoint.kind,
                    "Counts": "copies" if ic else "instances",
                    "PlannedMin": p.min_copies if ic else endpoint.min_instances,
                    "PlannedMax": p.max_copies if ic else endpoint.max_instances,
                    "Component": _component_name(endpoint, p) if ic else None,
                    "Alarm": _alarm_name(endpoint, p),
                    "Adapters": list(p.adapters),
                }
            )
    return rows


def _component_name(endpoint: EndpointPlan, placement: Placement) -> str:
    """The component name the fleet stacks give ``placement``'s model on ``endpoint``: the
    stack, the model, the endpoint's replacement key (its instance type, variant and
    fallback pools' types) and, for a moved model, its endpoint's name."""
    key = component_endpoint_key(
        instance_type=endpoint.instance_type,
        variant_name=VARIANT,
        pool_types=endpoint.fallback_types,
    )
    return component_name_for(endpoint.stack, placement.name, key, placement.component_suffix)


def _alarm_name(endpoint: EndpointPlan, placement: Placement) -> str:
    if KINDS[endpoint.kind].packs_devices:
        return f"{_component_name(endpoint, placement)}-health"
    return f"{endpoint.stack}-{endpoint.name}-health"


def _queries(row: dict[str, Any]) -> list[MetricQuery]:
    if row["Component"] is not None:
        dims = {"InferenceComponentName": row["Component"]}
        now = MetricQuery(COMPONENTS, "CPUUtilizationNormalized", dims, "SampleCount")
    else:
        dims = {"EndpointName": row["EndpointName"] or "", "VariantName": VARIANT}
        now = MetricQuery(INSTANCES, "CPUUtilization", dims, "SampleCount")
    return [
        now,
        MetricQuery(SAGEMAKER, "Invocations", dims, "Sum"),
        MetricQuery(SAGEMAKER, "Invocation5XXErrors", dims, "Sum"),
    ]


def fleet_status(ctx: Context, args: argparse.Namespace) -> int:
    """Every model of the plan at ``args.plan``, deployed figures beside the planned ones."""
    try:
        plan = read_plan(args.plan)
    except ValueError as error:
        raise CliError(str(error)) from None
    if plan is None:
        raise CliError(f"no plan file {args.plan}: run fmp plan CATALOG first")
    names = _endpoint_names(ctx, plan)
    rows = _rows(plan, names)
    live = [r for r in rows if r["EndpointName"] is not None]
    queries = [q for r in live for q in _queries(r)]
    end = cloudwatch.utc_now().replace(second=0, microsecond=0)
    hour = fetch(
        ctx.clients.client("cloudwatch"),
        queries,
        start=end - datetime.timedelta(hours=1),
        end=end,
        period=3600,
    )
    minute = fetch(
        ctx.clients.client("cloudwatch"),
        queries[0::3],
        start=end - datetime.timedelta(minutes=5),
        end=end,
        period=60,
    )
    for index, row in enumerate(live):
        points = minute[index]
        row["Now"] = int(points[0][1]) if points else None
        row["Invocations1h"] = int(sum(v for _, v in hour[3 * index + 1]))
        row["Errors5xx1h"] = int(sum(v for _, v in hour[3 * index + 2]))
    states = _alarm_states(ctx, plan)
    for row in rows:
        row.setdefault("Now", None)
        row.setdefault("Invocations1h", None)
        row.setdefault("Errors5xx1h", None)
        row["AlarmState"] = states.get(row["Alarm"])
    data = {
        "Plan": str(args.plan),
        "Catalog": plan.catalog,
        "Stacks": plan.stacks,
        "Models": rows,
        "NotDeployed": sorted({r["Endpoint"] for r in rows if r["EndpointName"] is None}),
    }
    ctx.emit(data, _render)
    return 0


def _dash(value: Any) -> Any:
    return "-" if value is None else value


def _render(data: dict[str, Any]) -> str:
    table = render_table(
        HEADERS,
        [
            [
                r["Model"] + (f" (+{len(r['Adapters'])} adapters)" if r["Adapters"] else ""),
                r["EndpointName"] or f"{r['Endpoint']} (not deployed)",
                r["Kind"],
                f"{_dash(r['Now'])} {r['Counts']}",
                f"{r['PlannedMin']}-{r['PlannedMax']}",
                _dash(r["Invocations1h"]),
                _dash(r["Errors5xx1h"]),
                _dash(r["AlarmState"]),
            ]
            for r in data["Models"]
        ],
    )
    firing = sum(1 for r in data["Models"] if r["AlarmState"] == "ALARM")
    summary = (
        f"{len(data['Models'])} models of catalog {data['Catalog']} in "
        f"{len(data['Stacks'])} stacks; {firing} alarms firing"
    )
    if data["NotDeployed"]:
        summary += f"; not deployed: {', '.join(data['NotDeployed'])}"
    return f"{table}\n\n{summary}."


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp fleet status`."""
    parser = add_command(
        subparsers, "fleet", summary="a deployed fleet plan", example="fmp fleet status PLAN"
    )
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = add_command(
        commands,
        "status",
        summary="every model of a deployed plan: copies or instances now and planned, "
        "invocations and errors in the last hour, alarm state",
        example="fmp fleet status examples/catalog.plan.json --json",
        parents=[common],
        json_output=True,
    )
    status.add_argument("plan", help="the plan file (fmp plan writes <catalog>.plan.json)")
    status.set_defaults(handler=fleet_status)
