"""`fmp job script`: an sbatch script for a resilient distributed training job; `fmp job
submit | queue | logs | cancel` (:mod:`fm_platform.cli.job_remote`) run Slurm on the
cluster."""

from __future__ import annotations

import argparse
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fm_platform.cli import job_remote
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.job_manifest import ManifestSpec, render_manifest
from fm_platform.cli.outputs import TRAINING_STACK
from fm_platform.cli.parsing import add_command

_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_PARTITION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """What goes into the sbatch script.

    partition: the Slurm partition; by default the line is left out and Slurm uses the
        cluster's default partition.
    checkpoint_dir: by default `<fsx_mount>/checkpoints/<job_name>`.
    """

    command: tuple[str, ...]
    nodes: int = 1
    tasks_per_node: int = 1
    partition: str | None = None
    job_name: str = "train"
    fsx_mount: str = "/fsx"
    checkpoint_dir: str | None = None
    master_port: int = 29500

    def validate(self) -> None:
        """Raise one CliError listing every invalid option."""
        problems = []
        if self.nodes < 1:
            problems.append(f"--nodes must be at least 1, got {self.nodes}")
        if self.tasks_per_node < 1:
            problems.append(f"--tasks-per-node must be at least 1, got {self.tasks_per_node}")
        if not _JOB_NAME.match(self.job_name):
            problems.append(
                f"--job-name {self.job_name!r} must be 1-128 letters, digits, '.', '_' or '-'"
            )
        if self.partition is not None and not _PARTITION.match(self.partition):
            problems.append(
                f"--partition {self.partition!r} must be letters, digits, '.', '_' or '-'"
            )
        for option, path in (
            ("--fsx-mount", self.fsx_mount),
            ("--checkpoint-dir", self.checkpoint_dir),
        ):
            if path is not None and (not path.startswith("/") or any(c.isspace() for c in path)):
                problems.append(f"{option} {path!r} must be an absolute path without spaces")
        if not 1024 <= self.master_port <= 65535:
            problems.append(f"--master-port must be 1024-65535, got {self.master_port}")
        if not self.command:
            problems.append("give the training command after `--`, e.g. `-- python train.py`")
        if problems:
            raise CliError("; ".join(problems))

    @property
    def checkpoint_path(self) -> str:
        return self.checkpoint_dir or posixpath.join(self.fsx_mount, "checkpoints", self.job_name)

    @property
    def log_dir(self) -> str:
        return posixpath.join(self.fsx_mount, "logs")


def shell_word(arg: str) -> str:
    """`arg` as one shell word that still expands `$VARS` (so $CHECKPOINT_DIR works)."""
    if _PLAIN_WORD.match(arg):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    return f'"{escaped}"'


def render_script(spec: JobSpec) -> str:
    """The sbatch script text for `spec` (validated first)."""
    spec.validate()
    directives = [
        f"--job-name={spec.job_name}",
        f"--nodes={spec.nodes}",
        f"--ntasks-per-node={spec.tasks_per_node}",
        *([f"--partition={spec.partition}"] if spec.partition else []),
        "--exclusive",
        f"--output={spec.log_dir}/%x-%j.out",
        f"--error={spec.log_dir}/%x-%j.err",
    ]
    command = " ".join(shell_word(arg) for arg in spec.command)
    lines = [
        "#!/bin/bash",
        *(f"#SBATCH {d}" for d in directives),
        "#",
        f"# Submit with: mkdir -p {spec.log_dir} && sbatch <this file>",
        "# (Slurm opens the log files before the script starts, so their directory must exist.)",
        "",
        "set -euo pipefail",
        "",
        "# Checkpoints go to the shared FSx for Lustre file system, visible from every node.",
        f"export CHECKPOINT_DIR={shlex.quote(spec.checkpoint_path)}",
        'mkdir -p "$CHECKPOINT_DIR"',
        "",
        "# Rendezvous for torch.distributed and similar launchers: the job's first node.",
        'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
        "export MASTER_ADDR",
        f"export MASTER_PORT={spec.master_port}",
        "",
        "# On HyperPod, --auto-resume=1 lets the cluster replace a faulty node and re-run this",
        "# step from the top. The training command must therefore resume from its latest",
        "# checkpoint in $CHECKPOINT_DIR (and start fresh when there is none).",
        "SRUN_ARGS=()",
        "if [ -d /opt/sagemaker_cluster ]; then",
        "    SRUN_ARGS+=(--auto-resume=1)",
        "fi",
        "",
        f'srun "${{SRUN_ARGS[@]}}" {command}',
        "",
    ]
    return "\n".join(lines)


def _manifest(args: argparse.Namespace, command: tuple[str, ...]) -> str:
    """The HyperPodPyTorchJob manifest of `--eks`; Slurm-only options are refused."""
    slurm_only = [
        option
        for option, value, default in (
            ("--partition", args.partition, None),
            ("--checkpoint-dir", args.checkpoint_dir, None),
            ("--master-port", args.master_port, 29500),
        )
        if value != default
    ]
    if slurm_only:
        raise CliError(f"{', '.join(slurm_only)}: Slurm options, not read with --eks")
    if args.fsx_mount != "/fsx" and not args.fsx_claim:
        raise CliError(
            "--fsx-mount with --eks mounts the claim of --fsx-claim: give it (the training "
            "stack's FsxClaimName output)"
        )
    return render_manifest(
        ManifestSpec(
            command=command,
            image=args.image or "",
            nodes=args.nodes,
            procs_per_node=args.tasks_per_node,
            gpus_per_node=args.gpus_per_node,
            job_name=args.job_name,
            team=args.team,
            priority=args.priority,
            instance_type=args.instance_type,
            tolerations=tuple(args.toleration or ()),
            max_retries=args.max_retries,
            fsx_claim=args.fsx_claim,
            fsx_mount=args.fsx_mount,
        )
    )


def script(ctx: Context, args: argparse.Namespace) -> int:
    """Write the sbatch script (the manifest with --eks) to --output or stdout."""
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.eks:
        _write(ctx, args.output, _manifest(args, tuple(command)), executable=False)
        return 0
    spec = JobSpec(
        command=tuple(command),
        nodes=args.nodes,
        tasks_per_node=args.tasks_per_node,
        partition=args.partition,
        job_name=args.job_name,
        fsx_mount=args.fsx_mount,
        checkpoint_dir=args.checkpoint_dir,
        master_port=args.master_port,
    )
    _write(ctx, args.output, render_script(spec), executable=True)
    return 0


def _write(ctx: Context, output: str | None, text: str, *, executable: bool) -> None:
    if not output:
        ctx.out.write(text)
        return
    path = Path(output)
    try:
        path.write_text(text)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from exc
    if executable:
        path.chmod(0o755)


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp job ...`: `script` writes a file only; the others reach the cluster."""
    parser = add_command(
        subparsers,
        "job",
        summary="Slurm training jobs",
        example="fmp job script --nodes 4 -- python train.py",
    )
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    gen = add_command(
        commands,
        "script",
        summary="write an sbatch script for a distributed training job",
        example="fmp job script --nodes 4 --tasks-per-node 8 -o train.sbatch -- "
        "python train.py --ckpt '$CHECKPOINT_DIR'",
        description="Runs the training command given after `--` on every node with srun "
        "(auto-resume on HyperPod). $VARS in the command expand when the job runs.",
    )
    gen.add_argument("--nodes", type=int, default=1, help="nodes (default: %(default)s)")
    gen.add_argument(
        "--tasks-per-node", type=int, default=1, help="tasks per node (default: %(default)s)"
    )
    gen.add_argument("--partition", help="Slurm partition (default: the cluster's default)")
    gen.add_argument("--job-name", default="train", help="job name (default: %(default)s)")
    gen.add_argument(
        "--fsx-mount", default="/fsx", help="FSx for Lustre mount path (default: %(default)s)"
    )
    gen.add_argument(
        "--checkpoint-dir", help="checkpoint directory (default: <fsx-mount>/checkpoints/<job>)"
    )
    gen.add_argument(
        "--master-port", type=int, default=29500, help="rendezvous port (default: %(default)s)"
    )
    gen.add_argument("--output", "-o", help="file to write (default: stdout)")
    eks = gen.add_argument_group("EKS (orchestrator eks: a HyperPodPyTorchJob manifest)")
    eks.add_argument(
        "--eks", action="store_true", help="write a training-operator job manifest instead"
    )
    eks.add_argument("--image", help="training container image (required with --eks)")
    eks.add_argument(
        "--gpus-per-node", type=int, default=0, help="nvidia.com/gpu per pod (default: none)"
    )
    eks.add_argument("--team", help="task-governance team: its namespace and queue")
    eks.add_argument("--priority", help="task-governance priority class")
    eks.add_argument("--instance-type", help="run on nodes of this type (default: any)")
    eks.add_argument(
        "--toleration", action="append", help="a taint key the pods tolerate (repeatable)"
    )
    eks.add_argument(
        "--max-retries", type=int, default=10, help="job restarts (default: %(default)s)"
    )
    eks.add_argument(
        "--fsx-claim",
        help="mount this FSx for Lustre claim at --fsx-mount (the training stack's "
        "FsxClaimName output; default: no mount)",
    )
    gen.add_argument("command", nargs=argparse.REMAINDER, help="training command, after --")
    gen.set_defaults(handler=script)
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument(
        "--cluster", help="cluster name (default: output ClusterName of the training stack)"
    )
    target.add_argument(
        "--stack", default=TRAINING_STACK, help="training stack name (default: %(default)s)"
    )
    job_remote.add_actions(commands, [common, target])
