"""`fmp job submit | queue | logs | cancel`: Slurm commands run on the cluster's controller
node (or a node of ``--group``) through a Session Manager session.

HyperPod nodes are reached as ``sagemaker-cluster:<cluster-id>_<group>-<instance-id>``
targets of ``aws ssm start-session`` (SageMaker developer guide, "Access your SageMaker
HyperPod cluster nodes"); the command runs with the ``AWS-StartInteractiveCommand``
document, so the AWS CLI and the Session Manager plugin must be installed. The session
passes the command's output through; the AWS CLI's exit status is the session's, not the
remote command's.
"""

from __future__ import annotations

import argparse
import base64
import json
import posixpath
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from fm_platform.cli.cluster import (
    controller_group,
    describe_cluster,
    list_nodes,
    node_options,
    pick_node,
    session_command,
)
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.outputs import resolve_cluster
from fm_platform.cli.parsing import add_command

PLUGIN = "session-manager-plugin"
PLUGIN_HELP = (
    "https://docs.aws.amazon.com/systems-manager/latest/userguide/"
    "session-manager-working-with-install-plugin.html"
)
DOCUMENT = "AWS-StartInteractiveCommand"
_JOB_ID = re.compile(r"^[0-9]+(_[0-9]+)?$")
_LOG_DIRECTIVE = re.compile(r"^#SBATCH\s+--(?:output|error)=(\S+)", re.MULTILINE)


def remote_command(ctx: Context, args: argparse.Namespace, command: str) -> list[str]:
    """The ``aws ssm start-session`` command line that runs ``command`` on the controller
    (or the node of ``--group``/``--node``) of a Slurm cluster."""
    ref = resolve_cluster(ctx.clients, args.cluster, args.stack)
    cluster = describe_cluster(ctx, ref.name)
    if "Eks" in (cluster.get("Orchestrator") or {}):
        raise CliError(
            f"cluster {ref.name} is orchestrated by Amazon EKS, not Slurm: submit jobs with "
            "kubectl (`fmp cluster kubeconfig` points it at the cluster)"
        )
    group = args.group or (None if args.node else controller_group(ref, cluster))
    node = pick_node(list_nodes(ctx, ref.name), group, args.node)
    session = session_command(
        cluster["ClusterArn"],
        node["InstanceGroupName"],
        node["InstanceId"],
        ctx.clients.region,
        ctx.clients.profile,
    )
    return [
        *session,
        *("--document-name", DOCUMENT),
        *("--parameters", json.dumps({"command": [command]})),
    ]


def check_tools() -> None:
    """The AWS CLI and the Session Manager plugin are on PATH, else a CliError saying what
    to install."""
    if shutil.which("aws") is None:
        raise CliError(
            "the AWS CLI (`aws`) is not on PATH: install AWS CLI v2 and the Session Manager "
            f"plugin ({PLUGIN_HELP})"
        )
    if shutil.which(PLUGIN) is None:
        raise CliError(
            f"the Session Manager plugin (`{PLUGIN}`) is not on PATH: the AWS CLI needs it to "
            f"run commands on HyperPod nodes; install it ({PLUGIN_HELP})"
        )


def run_remote(ctx: Context, args: argparse.Namespace, command: str) -> int:
    """Run ``command`` on the node (``--print``: print the session command instead)."""
    argv = remote_command(ctx, args, command)
    if args.print:
        print(shlex.join(argv), file=ctx.out)
        return 0
    check_tools()
    ctx.out.flush()
    return subprocess.run(argv, check=False).returncode


def submit_command(script: str) -> str:
    """The shell command that creates the script's log directories and submits it to
    sbatch on standard input (sent base64-encoded: one line, no quoting)."""
    directories = sorted({posixpath.dirname(p) for p in _LOG_DIRECTIVE.findall(script)} - {""})
    encoded = base64.b64encode(script.encode()).decode()
    prepare = f"mkdir -p {' '.join(shlex.quote(d) for d in directories)} && " if directories else ""
    return f"{prepare}echo {encoded} | base64 -d | sbatch"


def logs_command(job_id: str, fsx_mount: str, lines: int) -> str:
    """The shell command that prints the last ``lines`` of a job's output file: the one
    Slurm names (``scontrol show job``), else ``<fsx>/logs/<name>-<id>.out`` as ``fmp job
    script`` writes it (Slurm forgets finished jobs after a few minutes)."""
    pattern = posixpath.join(fsx_mount, "logs", f"*-{job_id}.out")
    return (
        f"f=$(scontrol show job {job_id} 2>/dev/null | sed -n 's/^ *StdOut=//p'); "
        f'[ -n "$f" ] || f=$(ls {pattern} 2>/dev/null | head -n 1); '
        f'if [ -n "$f" ]; then tail -n {lines} "$f"; '
        f'else echo "no output file for job {job_id} (looked in {pattern})" >&2; exit 1; fi'
    )


def _job_id(value: str) -> str:
    if not _JOB_ID.match(value):
        raise CliError(f"job id {value!r} must be a Slurm job id such as 1234 or 1234_5")
    return value


def submit(ctx: Context, args: argparse.Namespace) -> int:
    """Submit a local sbatch script (e.g. from `fmp job script`)."""
    path = Path(args.script)
    try:
        text = path.read_text()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from exc
    if "#SBATCH" not in text:
        raise CliError(f"{path} has no #SBATCH line: write one with `fmp job script`")
    return run_remote(ctx, args, submit_command(text))


def queue(ctx: Context, args: argparse.Namespace) -> int:
    """The Slurm queue (squeue)."""
    return run_remote(ctx, args, "squeue" + (f" --user={args.user}" if args.user else ""))


def logs(ctx: Context, args: argparse.Namespace) -> int:
    """The end of a job's output file on the shared file system."""
    if args.lines < 1:
        raise CliError(f"--lines must be at least 1, got {args.lines}")
    if not args.fsx_mount.startswith("/") or any(c.isspace() for c in args.fsx_mount):
        raise CliError(f"--fsx-mount {args.fsx_mount!r} must be an absolute path without spaces")
    return run_remote(ctx, args, logs_command(_job_id(args.job_id), args.fsx_mount, args.lines))


def cancel(ctx: Context, args: argparse.Namespace) -> int:
    """Cancel a job (scancel)."""
    return run_remote(ctx, args, f"scancel {_job_id(args.job_id)}")


def add_actions(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register submit, queue, logs and cancel under `fmp job`."""
    remote = [*parents, node_options()]
    sub = add_command(
        commands,
        "submit",
        summary="submit an sbatch script on the controller node (Session Manager)",
        example="fmp job submit train.sbatch",
        parents=remote,
    )
    sub.add_argument("script", help="the sbatch script (e.g. from `fmp job script`)")
    sub.set_defaults(handler=submit)
    que = add_command(
        commands,
        "queue",
        summary="the Slurm queue (squeue) on the controller node",
        example="fmp job queue",
        parents=remote,
    )
    que.add_argument("--user", help="only this user's jobs")
    que.set_defaults(handler=queue)
    log = add_command(
        commands,
        "logs",
        summary="the end of a job's output file on the shared file system",
        example="fmp job logs 1234 --lines 200",
        parents=remote,
    )
    log.add_argument("job_id", help="Slurm job id")
    log.add_argument("--lines", type=int, default=100, help="lines (default: %(default)s)")
    log.add_argument(
        "--fsx-mount", default="/fsx", help="FSx for Lustre mount path (default: %(default)s)"
    )
    log.set_defaults(handler=logs)
    can = add_command(
        commands,
        "cancel",
        summary="cancel a job (scancel)",
        example="fmp job cancel 1234",
        parents=remote,
    )
    can.add_argument("job_id", help="Slurm job id")
    can.set_defaults(handler=cancel)
