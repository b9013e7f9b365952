"""`fmp alarms`: which of the project's CloudWatch alarms are firing.

The project's stacks are found by their template description: every stack the app and the
fleet build has one starting with "fm_platform" (fm_platform/app.py, stacks/training.py,
stacks/fleet.py), whatever names the configuration or the plan gives them, which a list of
known stack names would miss. --stack names the stacks instead (an embedding app's own
stacks carry their own descriptions). The alarms are each stack's
``AWS::CloudWatch::Alarm`` resources.
"""

from __future__ import annotations

import argparse
from typing import Any

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.limits import member_shape
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_table

PROJECT_DESCRIPTION_PREFIX = "fm_platform"
ALARM_RESOURCE_TYPE = "AWS::CloudWatch::Alarm"
FIRING = "ALARM"


def project_stacks(ctx: Context) -> list[str]:
    """Stacks not deleted whose template description starts with "fm_platform"."""
    statuses = member_shape("cloudformation", "ListStacks", "StackStatusFilter").member
    live = [status for status in statuses.metadata["enum"] if status != "DELETE_COMPLETE"]
    pages = (
        ctx.clients.client("cloudformation")
        .get_paginator("list_stacks")
        .paginate(StackStatusFilter=live)
    )
    return [
        stack["StackName"]
        for page in pages
        for stack in page.get("StackSummaries", [])
        if stack.get("TemplateDescription", "").startswith(PROJECT_DESCRIPTION_PREFIX)
    ]


def stack_alarm_names(ctx: Context, stacks: list[str]) -> dict[str, str]:
    """Alarm name -> stack, for every alarm resource the stacks have created."""
    paginator = ctx.clients.client("cloudformation").get_paginator("list_stack_resources")
    return {
        resource["PhysicalResourceId"]: stack
        for stack in stacks
        for page in paginator.paginate(StackName=stack)
        for resource in page.get("StackResourceSummaries", [])
        if resource["ResourceType"] == ALARM_RESOURCE_TYPE and resource.get("PhysicalResourceId")
    }


def describe_alarms(ctx: Context, names: list[str], state: str | None) -> list[dict[str, Any]]:
    """DescribeAlarms for `names` (as many names per call as the API takes), only those in
    `state` unless it is None."""
    per_call = member_shape("cloudwatch", "DescribeAlarms", "AlarmNames").metadata["max"]
    paginator = ctx.clients.client("cloudwatch").get_paginator("describe_alarms")
    alarms = []
    for offset in range(0, len(names), per_call):
        request: dict[str, Any] = {"AlarmNames": names[offset : offset + per_call]}
        if state:
            request["StateValue"] = state
        for page in paginator.paginate(**request):
            alarms += page.get("MetricAlarms", [])
    return alarms


def alarms(ctx: Context, args: argparse.Namespace) -> int:
    """The firing alarms (every alarm with --all) of the project's stacks, oldest first."""
    stacks = args.stack or project_stacks(ctx)
    if not stacks:
        where = f" in region {ctx.clients.region}" if ctx.clients.region else ""
        raise CliError(
            f"no stack with a description starting {PROJECT_DESCRIPTION_PREFIX!r}{where}: "
            "check --region/--profile, or name the stacks with --stack"
        )
    owners = stack_alarm_names(ctx, stacks)
    found = describe_alarms(ctx, sorted(owners), None if args.all else FIRING)
    rows = [
        {
            "AlarmName": alarm["AlarmName"],
            "StateValue": alarm["StateValue"],
            "Since": alarm.get("StateTransitionedTimestamp") or alarm.get("StateUpdatedTimestamp"),
            "Stack": owners[alarm["AlarmName"]],
            "StateReason": alarm.get("StateReason"),
        }
        for alarm in found
    ]
    rows.sort(key=lambda row: (row["Since"] is None, row["Since"] or 0, row["AlarmName"]))
    data = {"Stacks": stacks, "AlarmsChecked": len(owners), "Alarms": rows}
    ctx.emit(data, _render_all if args.all else _render_firing)
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    return render_table(
        ["ALARM", "STATE", "SINCE", "STACK", "REASON"],
        [[r["AlarmName"], r["StateValue"], r["Since"], r["Stack"], r["StateReason"]] for r in rows],
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _checked(data: dict[str, Any]) -> str:
    stacks = data["Stacks"]
    alarms, listed = _count(data["AlarmsChecked"], "alarm"), _count(len(stacks), "stack")
    return f"{alarms} in {listed} ({', '.join(stacks)})"


def _render_firing(data: dict[str, Any]) -> str:
    if not data["Alarms"]:
        return f"No alarm is firing: {_checked(data)}."
    return f"{_table(data['Alarms'])}\n\n{len(data['Alarms'])} firing of {_checked(data)}."


def _render_all(data: dict[str, Any]) -> str:
    if not data["Alarms"]:
        return f"No alarms: {_checked(data)}."
    return f"{_table(data['Alarms'])}\n\n{_checked(data)}."


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp alarms`."""
    parser = add_command(
        subparsers,
        "alarms",
        summary="the project's CloudWatch alarms that are firing",
        example="fmp alarms",
        parents=[common],
        json_output=True,
        description="Alarms in state ALARM, the longest-firing first, from every stack whose\n"
        "description starts with 'fm_platform' (the training, inference and fleet stacks,\n"
        "whatever their names), or from the stacks named with --stack.",
    )
    parser.add_argument(
        "--stack",
        action="append",
        metavar="NAME",
        help="a stack to look in (repeatable; default: the project's stacks)",
    )
    parser.add_argument(
        "--all", action="store_true", help="every alarm, whatever its state (OK, INSUFFICIENT_DATA)"
    )
    parser.set_defaults(handler=alarms)
