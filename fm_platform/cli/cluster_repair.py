"""`fmp cluster replace-node|reboot-node`: replace or reboot given nodes of a HyperPod cluster
(BatchReplaceClusterNodes, BatchRebootClusterNodes), by instance id."""

from __future__ import annotations

import argparse
from typing import Any

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.outputs import resolve_cluster
from fm_platform.cli.parsing import add_command
from fm_platform.cli.shapes import check_fields
from fm_platform.cli.tables import render_table

# action -> (operation, client method, what happens to the node, why --yes)
_ACTIONS = {
    "replace-node": (
        "BatchReplaceClusterNodes",
        "batch_replace_cluster_nodes",
        "replacement started",
        "replacing a node terminates it and destroys its root and secondary volumes",
    ),
    "reboot-node": (
        "BatchRebootClusterNodes",
        "batch_reboot_cluster_nodes",
        "reboot started",
        "rebooting a node stops the jobs on it",
    ),
}


def run_batch(ctx: Context, args: argparse.Namespace) -> int:
    """Send the nodes to the batch operation; print one row per node; exit 1 if any failed."""
    operation, method, done, warning = _ACTIONS[args.action]
    if not args.yes:
        raise CliError(f"{warning}: pass --yes to go ahead")
    client = ctx.clients.client("sagemaker")
    model = client.meta.service_model
    fields: list[tuple[str, str, Any]] = [("NODE", "NodeIds[]", n) for n in args.nodes]
    fields.append(("NODE", "NodeIds", args.nodes))
    check_fields(model, operation, fields)
    name = resolve_cluster(ctx.clients, args.cluster, args.stack).name
    check_fields(model, operation, [("cluster", "ClusterName", name)])
    response = getattr(client, method)(ClusterName=name, NodeIds=args.nodes)
    data = {
        "Successful": response.get("Successful", []),
        "Failed": [
            {"NodeId": f["NodeId"], "ErrorCode": f["ErrorCode"], "Message": f["Message"]}
            for f in response.get("Failed", [])
        ],
    }
    ctx.emit(data, lambda d: _render(d, done))
    return 1 if data["Failed"] else 0


def _render(data: dict[str, Any], done: str) -> str:
    rows = [[node, done, ""] for node in data["Successful"]]
    rows += [[f["NodeId"], f"failed: {f['ErrorCode']}", f["Message"]] for f in data["Failed"]]
    return render_table(["NODE", "RESULT", "DETAIL"], rows)


def add_actions(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register `replace-node` and `reboot-node` under `fmp cluster`."""
    for action, summary, example in (
        (
            "replace-node",
            "replace nodes with new hardware (BatchReplaceClusterNodes)",
            "fmp cluster replace-node i-0123456789abcdef0 --yes",
        ),
        (
            "reboot-node",
            "reboot nodes (BatchRebootClusterNodes)",
            "fmp cluster reboot-node i-0123456789abcdef0 i-0fedcba9876543210 --yes",
        ),
    ):
        operation, _, _, warning = _ACTIONS[action]
        parser = add_command(
            commands,
            action,
            summary=summary,
            description="Nodes are instance ids as `fmp cluster nodes` lists them; their form and\n"
            f"number are checked against {operation}'s request in botocore's\n"
            f"model before anything is sent. Needs --yes:\n{warning}.\n"
            "Exits 1 when a node fails (its error code and message are printed).",
            example=example,
            parents=parents,
            json_output=True,
        )
        parser.add_argument("nodes", metavar="NODE", nargs="+", help="instance id")
        parser.add_argument("--yes", action="store_true", help="confirm")
        parser.set_defaults(handler=run_batch)
