"""`fmp cluster scale|update-software`: change a HyperPod cluster's size or its nodes' software
(UpdateCluster, UpdateClusterSoftware)."""

from __future__ import annotations

import argparse
from typing import Any

from botocore.model import ServiceModel, Shape

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.outputs import resolve_cluster
from fm_platform.cli.parsing import add_command
from fm_platform.cli.shapes import check_fields, request_shape

# ClusterInstanceGroupDetails (DescribeCluster) names what was asked for a group
# differently from ClusterInstanceGroupSpecification (UpdateCluster): TargetCount is "the
# number of instances you specified", MinCount the minimum; nested structures report it as
# Desired<Member> next to Current<Member> (DesiredInstanceTypes, DesiredLabels, ...).
_ASKED_AS = {"InstanceCount": "TargetCount", "MinInstanceCount": "MinCount"}
# The image is changed by UpdateClusterSoftware (`fmp cluster update-software`) only: scale
# does not send it, so UpdateCluster leaves each group's image as it is.
_NOT_RESENT = ("ImageId", "ImageReleaseVersion")


def _sagemaker(ctx: Context) -> Any:
    return ctx.clients.client("sagemaker")


def _describe(client: Any, name: str) -> dict[str, Any]:
    return client.describe_cluster(ClusterName=name)


def _group_names(cluster: dict[str, Any]) -> list[str]:
    return [g["InstanceGroupName"] for g in cluster["InstanceGroups"]]


def _project(value: Any, shape: Shape) -> Any:
    """``value`` (from a response) reduced to what ``shape`` (of a request) takes."""
    if shape.type_name == "structure":
        result = {}
        for name, member in shape.members.items():
            source = name if name in value else f"Desired{name}"
            if source in value:
                result[name] = _project(value[source], member)
        return result
    if shape.type_name == "list":
        return [_project(item, shape.member) for item in value]
    if shape.type_name == "map":
        return {key: _project(item, shape.value) for key, item in value.items()}
    return value


def resend_group(model: ServiceModel, details: dict[str, Any]) -> dict[str, Any]:
    """An UpdateCluster instance group that asks for what ``details`` (a DescribeCluster
    instance group) says was asked: every member the request takes, with the target count
    as ``InstanceCount``; the image is not sent."""
    shape = request_shape(model, "UpdateCluster", "InstanceGroups[]")
    asked = {member: details[source] for member, source in _ASKED_AS.items() if source in details}
    spec = _project({**details, **asked}, shape)
    for member in _NOT_RESENT:
        spec.pop(member, None)
    return spec


def scale(ctx: Context, args: argparse.Namespace) -> int:
    """Set one group's instance count; every other group is sent again as it is."""
    client = _sagemaker(ctx)
    model = client.meta.service_model
    check_fields(
        model,
        "UpdateCluster",
        [
            ("GROUP", "InstanceGroups[].InstanceGroupName", args.group),
            ("COUNT", "InstanceGroups[].InstanceCount", args.count),
        ],
    )
    name = resolve_cluster(ctx.clients, args.cluster, args.stack).name
    check_fields(model, "UpdateCluster", [("cluster", "ClusterName", name)])
    cluster = _describe(client, name)
    groups = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}
    if args.group not in groups:
        raise CliError(
            f"group {args.group} is not in cluster {name} "
            f"(groups: {', '.join(_group_names(cluster))})"
        )
    current = groups[args.group]
    target = current.get("TargetCount", current.get("CurrentCount", 0))
    if args.count == target:
        print(
            f"Group {args.group} already asks for {target} instances: nothing sent.", file=ctx.out
        )
        return 0
    running = current.get("CurrentCount", 0)
    if args.count < running and not args.yes:
        raise CliError(
            f"scaling {args.group} to {args.count} instances terminates {running - args.count} "
            f"of its {running} running nodes and the jobs on them: pass --yes to go ahead"
        )
    request = [resend_group(model, g) for g in cluster["InstanceGroups"]]
    for group in request:
        if group["InstanceGroupName"] == args.group:
            group["InstanceCount"] = args.count
    response = client.update_cluster(ClusterName=name, InstanceGroups=request)
    others = len(request) - 1
    print(
        f"UpdateCluster accepted for {response['ClusterArn']}: {args.group} {target} -> "
        f"{args.count} instances ({others} other group{'s' if others != 1 else ''} sent "
        "again unchanged). Follow with: fmp cluster status",
        file=ctx.out,
    )
    return 0


def update_software(ctx: Context, args: argparse.Namespace) -> int:
    """Patch the nodes' image (all groups, or those named), rolling in batches if asked."""
    if not args.yes:
        raise CliError(
            "updating the software replaces or restarts nodes and stops the jobs on them: "
            "pass --yes to go ahead"
        )
    client = _sagemaker(ctx)
    model = client.meta.service_model
    fields: list[tuple[str, str, Any]] = [
        ("--group", "InstanceGroups[].InstanceGroupName", g) for g in args.group
    ]
    if args.group:
        fields.append(("--group", "InstanceGroups", args.group))
    if args.image_id is not None:
        fields.append(("--image-id", "ImageId", args.image_id))
    batch = args.batch_count if args.batch_count is not None else args.batch_percent
    if batch is not None:
        fields.append(
            ("batch size", "DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize.Value", batch)
        )
    if args.wait_s is not None:
        fields.append(("--wait-s", "DeploymentConfig.WaitIntervalInSeconds", args.wait_s))
    path = "DeploymentConfig.AutoRollbackConfiguration"
    fields += [("--rollback-alarm", f"{path}[].AlarmName", a) for a in args.rollback_alarm]
    if args.rollback_alarm:
        fields.append(("--rollback-alarm", path, args.rollback_alarm))
    check_fields(model, "UpdateClusterSoftware", fields)
    name = resolve_cluster(ctx.clients, args.cluster, args.stack).name
    check_fields(model, "UpdateClusterSoftware", [("cluster", "ClusterName", name)])
    if args.group:
        known = _group_names(_describe(client, name))
        unknown = [g for g in args.group if g not in known]
        if unknown:
            raise CliError(
                f"group {', '.join(unknown)} not in cluster {name} (groups: {', '.join(known)})"
            )
    request: dict[str, Any] = {"ClusterName": name}
    if args.group:
        request["InstanceGroups"] = [{"InstanceGroupName": g} for g in args.group]
    if args.image_id is not None:
        request["ImageId"] = args.image_id
    deployment: dict[str, Any] = {}
    if batch is not None:
        kind = "INSTANCE_COUNT" if args.batch_count is not None else "CAPACITY_PERCENTAGE"
        deployment["RollingUpdatePolicy"] = {"MaximumBatchSize": {"Type": kind, "Value": batch}}
    if args.wait_s is not None:
        deployment["WaitIntervalInSeconds"] = args.wait_s
    if args.rollback_alarm:
        deployment["AutoRollbackConfiguration"] = [{"AlarmName": a} for a in args.rollback_alarm]
    if deployment:
        request["DeploymentConfig"] = deployment
    response = client.update_cluster_software(**request)
    scope = ", ".join(args.group) if args.group else "every group"
    print(
        f"UpdateClusterSoftware accepted for {response['ClusterArn']} ({scope}). "
        "Follow with: fmp cluster status",
        file=ctx.out,
    )
    return 0


def add_actions(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register `scale` and `update-software` under `fmp cluster`."""
    scaler = add_command(
        commands,
        "scale",
        summary="set one instance group's instance count (UpdateCluster)",
        description="Every other group is sent again as DescribeCluster reports it (target\n"
        "count, lifecycle scripts, Slurm role, ...), so only GROUP changes; the image is not\n"
        "sent (see update-software). Fewer instances than the group runs terminates\n"
        "nodes: that needs --yes. GROUP and COUNT are checked against\n"
        "UpdateCluster's request in botocore's model before anything is sent.",
        example="fmp cluster scale workers 8",
        parents=parents,
    )
    scaler.add_argument("group", metavar="GROUP", help="instance group name")
    scaler.add_argument("count", metavar="COUNT", type=int, help="instances the group asks for")
    scaler.add_argument("--yes", action="store_true", help="allow terminating nodes")
    scaler.set_defaults(handler=scale)
    software = add_command(
        commands,
        "update-software",
        summary="patch the nodes' image (UpdateClusterSoftware)",
        description="Replaces or restarts nodes with the newest HyperPod image (or --image-id),\n"
        "in every group unless --group names some; the jobs on them stop, so it needs --yes.\n"
        "Without a batch size HyperPod updates a group's nodes all at once. Every value is\n"
        "checked against UpdateClusterSoftware's request in botocore's model first.",
        example="fmp cluster update-software --group workers --batch-percent 25 --yes",
        parents=parents,
    )
    software.add_argument(
        "--group", action="append", default=[], help="instance group to update (repeatable)"
    )
    software.add_argument("--image-id", help="an AMI ID, or 'default' (the newest HyperPod image)")
    batch = software.add_mutually_exclusive_group()
    batch.add_argument("--batch-count", type=int, help="nodes updated at a time")
    batch.add_argument("--batch-percent", type=int, help="percent of a group updated at a time")
    software.add_argument("--wait-s", type=int, help="seconds to wait between batches")
    software.add_argument(
        "--rollback-alarm",
        action="append",
        default=[],
        help="CloudWatch alarm that rolls the update back when it fires (repeatable)",
    )
    software.add_argument("--yes", action="store_true", help="allow restarting nodes")
    software.set_defaults(handler=update_software)
