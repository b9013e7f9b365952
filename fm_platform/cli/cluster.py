"""`fmp cluster ...`: the HyperPod cluster of the training stack. Reading it (status, nodes,
connect) lives here; changing it in cluster_update (scale, update-software) and
cluster_repair (replace-node, reboot-node)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
from typing import Any

from fm_platform.cli import cluster_repair, cluster_update
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.outputs import (
    TRAINING_STACK,
    ClusterRef,
    require_output,
    resolve_cluster,
    stack_outputs,
)
from fm_platform.cli.parsing import add_command
from fm_platform.cli.tables import render_fields, render_table


def _ref(ctx: Context, args: argparse.Namespace) -> ClusterRef:
    return resolve_cluster(ctx.clients, args.cluster, args.stack)


def describe_cluster(ctx: Context, name: str) -> dict[str, Any]:
    """DescribeCluster of ``name``, without the response metadata."""
    response = ctx.clients.client("sagemaker").describe_cluster(ClusterName=name)
    response.pop("ResponseMetadata", None)
    return response


def list_nodes(ctx: Context, name: str) -> list[dict[str, Any]]:
    """Every node of the cluster, across all pages of ListClusterNodes."""
    paginator = ctx.clients.client("sagemaker").get_paginator("list_cluster_nodes")
    return [
        node
        for page in paginator.paginate(ClusterName=name)
        for node in page.get("ClusterNodeSummaries", [])
    ]


def cluster_id(arn: str) -> str:
    """The cluster id: the last part of the cluster ARN (`...:cluster/<id>`)."""
    return arn.rsplit("/", 1)[-1]


def status(ctx: Context, args: argparse.Namespace) -> int:
    """State, failure message and instance groups (current/target counts)."""
    cluster = describe_cluster(ctx, _ref(ctx, args).name)
    data = {
        "ClusterName": cluster.get("ClusterName"),
        "ClusterArn": cluster["ClusterArn"],
        "ClusterStatus": cluster["ClusterStatus"],
        "FailureMessage": cluster.get("FailureMessage"),
        "InstanceGroups": [
            {
                "InstanceGroupName": g.get("InstanceGroupName"),
                "InstanceType": g.get("InstanceType"),
                "Status": g.get("Status"),
                "CurrentCount": g.get("CurrentCount"),
                "TargetCount": g.get("TargetCount"),
            }
            for g in cluster["InstanceGroups"]
        ],
    }
    ctx.emit(data, _render_status)
    return 0


def _render_status(data: dict[str, Any]) -> str:
    fields = [
        ("Cluster", data["ClusterName"]),
        ("ARN", data["ClusterArn"]),
        ("Status", data["ClusterStatus"]),
    ]
    if data["FailureMessage"]:
        fields.append(("Failure", data["FailureMessage"]))
    groups = render_table(
        ["GROUP", "TYPE", "STATUS", "CURRENT", "TARGET"],
        [
            [g["InstanceGroupName"], g["InstanceType"], g["Status"]]
            + [g["CurrentCount"], g["TargetCount"]]
            for g in data["InstanceGroups"]
        ],
    )
    return f"{render_fields(fields)}\n\n{groups}"


def nodes(ctx: Context, args: argparse.Namespace) -> int:
    """Every node, grouped by instance group."""
    found = list_nodes(ctx, _ref(ctx, args).name)
    data = [
        {
            "InstanceId": n["InstanceId"],
            "InstanceGroupName": n["InstanceGroupName"],
            "InstanceType": n["InstanceType"],
            "Status": n["InstanceStatus"]["Status"],
            "LaunchTime": n["LaunchTime"],
        }
        for n in found
    ]
    ctx.emit(data, _render_nodes)
    return 0


def _render_nodes(data: list[dict[str, Any]]) -> str:
    if not data:
        return "The cluster has no nodes."
    groups: dict[str, list[dict[str, Any]]] = {}
    for node in data:
        groups.setdefault(node["InstanceGroupName"], []).append(node)
    sections = []
    for group, members in groups.items():
        table = render_table(
            ["INSTANCE ID", "GROUP", "TYPE", "STATUS", "LAUNCHED"],
            [
                [n["InstanceId"], group, n["InstanceType"], n["Status"], n["LaunchTime"]]
                for n in members
            ],
        )
        count = f"{len(members)} node{'s' if len(members) != 1 else ''}"
        sections.append(f"{group} ({count})\n{table}")
    return "\n\n".join(sections)


def controller_group(ref: ClusterRef, cluster: dict[str, Any]) -> str:
    """The Slurm controller's group: the stack's output, else the group whose SlurmConfig
    says Controller."""
    if ref.controller_group:
        return ref.controller_group
    groups = cluster["InstanceGroups"]
    for group in groups:
        if group.get("SlurmConfig", {}).get("NodeType") == "Controller":
            return group["InstanceGroupName"]
    names = ", ".join(g["InstanceGroupName"] for g in groups)
    raise CliError(f"cannot tell which group is the Slurm controller: pass --group ({names})")


def pick_node(
    found: list[dict[str, Any]], group: str | None, node_id: str | None
) -> dict[str, Any]:
    """The node ``node_id`` (checked against ``group``), else the group's first running
    node."""
    if node_id:
        match = [n for n in found if n["InstanceId"] == node_id]
        if not match:
            raise CliError(f"node {node_id} is not in the cluster: see `fmp cluster nodes`")
        if group and match[0]["InstanceGroupName"] != group:
            raise CliError(
                f"node {node_id} belongs to group {match[0]['InstanceGroupName']}, not {group}"
            )
        return match[0]
    members = [n for n in found if n["InstanceGroupName"] == group]
    if not members:
        raise CliError(f"group {group} has no nodes: see `fmp cluster nodes`")
    running = [n for n in members if n["InstanceStatus"]["Status"] == "Running"]
    return (running or members)[0]


def session_command(
    cluster_arn: str, group: str, instance_id: str, region: str | None, profile: str | None
) -> list[str]:
    """`aws ssm start-session` to one HyperPod node."""
    target = f"sagemaker-cluster:{cluster_id(cluster_arn)}_{group}-{instance_id}"
    command = ["aws", "ssm", "start-session", "--target", target]
    if region:
        command += ["--region", region]
    if profile:
        command += ["--profile", profile]
    return command


def connect(ctx: Context, args: argparse.Namespace) -> int:
    """Session Manager shell on a node: the controller's first node unless told otherwise."""
    ref = _ref(ctx, args)
    cluster = describe_cluster(ctx, ref.name)
    found = list_nodes(ctx, ref.name)
    group = args.group or (None if args.node else controller_group(ref, cluster))
    node = pick_node(found, group, args.node)
    command = session_command(
        cluster["ClusterArn"],
        node["InstanceGroupName"],
        node["InstanceId"],
        ctx.clients.region,
        ctx.clients.profile,
    )
    if args.print:
        print(shlex.join(command), file=ctx.out)
        return 0
    if shutil.which(command[0]) is None:
        raise CliError(
            "the AWS CLI (`aws`) is not on PATH: install AWS CLI v2 and the Session Manager "
            "plugin, or use --print"
        )
    ctx.out.flush()
    os.execvp(command[0], command)
    return 0  # pragma: no cover - execvp does not return


def kubeconfig_command(cluster_name: str, region: str | None, profile: str | None) -> list[str]:
    """`aws eks update-kubeconfig` for the EKS cluster that orchestrates the HyperPod
    cluster."""
    command = ["aws", "eks", "update-kubeconfig", "--name", cluster_name]
    if region:
        command += ["--region", region]
    if profile:
        command += ["--profile", profile]
    return command


def kubeconfig(ctx: Context, args: argparse.Namespace) -> int:
    """Print the command that points kubectl at the training stack's EKS cluster."""
    outputs = stack_outputs(ctx.clients, args.stack)
    name = require_output(
        outputs,
        args.stack,
        "EksClusterName",
        "the cluster is orchestrated by Slurm (training.orchestrator is not eks): use "
        "`fmp cluster connect` instead",
    )
    print(
        shlex.join(kubeconfig_command(name, ctx.clients.region, ctx.clients.profile)), file=ctx.out
    )
    return 0


def node_options() -> argparse.ArgumentParser:
    """The options of a command run on one node over Session Manager (``fmp cluster
    connect``, ``fmp job submit`` and the others): ``--group``, ``--node``, ``--print``."""
    node = argparse.ArgumentParser(add_help=False)
    node.add_argument("--group", help="instance group (default: the Slurm controller group)")
    node.add_argument("--node", help="instance id (default: the first running node of the group)")
    node.add_argument(
        "--print", action="store_true", help="print the session command instead of running it"
    )
    return node


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp cluster ...`."""
    parser = add_command(
        subparsers, "cluster", summary="the HyperPod cluster", example="fmp cluster status"
    )
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument(
        "--cluster", help="cluster name (default: output ClusterName of the training stack)"
    )
    target.add_argument(
        "--stack", default=TRAINING_STACK, help="training stack name (default: %(default)s)"
    )
    parents = [common, target]
    add_command(
        commands,
        "status",
        summary="state and instance groups of the cluster",
        example="fmp cluster status --stack FmpTraining",
        parents=parents,
        json_output=True,
    ).set_defaults(handler=status)
    add_command(
        commands,
        "nodes",
        summary="every node of the cluster, by instance group",
        example="fmp cluster nodes --json",
        parents=parents,
        json_output=True,
    ).set_defaults(handler=nodes)
    add_command(
        commands,
        "connect",
        summary="open a shell on a node (aws ssm start-session)",
        example="fmp cluster connect --group workers --print",
        parents=[*parents, node_options()],
    ).set_defaults(handler=connect)
    add_command(
        commands,
        "kubeconfig",
        summary="print the command that points kubectl at the EKS cluster (orchestrator eks)",
        example="fmp cluster kubeconfig --stack FmpTraining",
        parents=[common, target],
    ).set_defaults(handler=kubeconfig)
    cluster_update.add_actions(commands, parents)
    cluster_repair.add_actions(commands, parents)
