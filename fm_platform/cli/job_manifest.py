"""`fmp job script --eks`: a HyperPodPyTorchJob manifest for the HyperPod training operator
(SageMaker developer guide, "Using the training operator to run jobs"), with its restart
policy (auto-resume) and, for a team of task governance, its queue and priority labels
("Task governance": namespace ``hyperpod-ns-<team>``, local queue
``hyperpod-ns-<team>-localqueue``, priority class ``<name>-priority``).

Written as JSON, which kubectl reads as it reads YAML (``kubectl apply -f job.json``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fm_platform.cli.errors import CliError

_KUBE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: The port HyperPod's elastic agent listens on in the training container (same source).
AGENT_PORT = 8080
#: Process restarts before the whole job restarts, within the evaluation period, as the
#: developer guide's example sets them.
RESTART_POLICY = {
    "numRestartBeforeFullJobRestart": 3,
    "evalPeriodSeconds": 21600,
    "maxFullJobRestarts": 1,
}


@dataclass(frozen=True, kw_only=True)
class ManifestSpec:
    """What goes into the manifest.

    team: by default none: the job goes to the ``default`` namespace without queue labels.
    priority: a task-governance priority class name; by default none.
    instance_type: the nodes' type (``nodeSelector``); by default any node.
    tolerations: taint keys the pods tolerate (``operator: Exists``); by default none.
    fsx_claim: the FSx for Lustre file system's PersistentVolumeClaim in the job's namespace
        (the training stack's ``FsxClaimName`` output), mounted at ``fsx_mount``; by default
        the file system is not mounted.
    fsx_mount: where the claim is mounted in the container (the stack's ``FsxMountPath``
        output); by default ``/fsx``.
    """

    command: tuple[str, ...]
    image: str
    nodes: int = 1
    procs_per_node: int = 1
    gpus_per_node: int = 0
    job_name: str = "train"
    team: str | None = None
    priority: str | None = None
    instance_type: str | None = None
    tolerations: tuple[str, ...] = ()
    max_retries: int = 10
    fsx_claim: str | None = None
    fsx_mount: str = "/fsx"

    def validate(self) -> None:
        """Raise one CliError listing every invalid option."""
        problems = []
        for option, count in (("--nodes", self.nodes), ("--tasks-per-node", self.procs_per_node)):
            if count < 1:
                problems.append(f"{option} must be at least 1, got {count}")
        if self.gpus_per_node < 0:
            problems.append(f"--gpus-per-node must be 0 or more, got {self.gpus_per_node}")
        if self.max_retries < 0:
            problems.append(f"--max-retries must be 0 or more, got {self.max_retries}")
        for option, value in (
            ("--job-name", self.job_name),
            ("--team", self.team),
            ("--priority", self.priority),
            ("--fsx-claim", self.fsx_claim),
        ):
            if value is not None and not (len(value) <= 63 and _KUBE_NAME.match(value)):
                problems.append(
                    f"{option} {value!r} must be a Kubernetes name: lower-case letters, "
                    "digits and hyphens"
                )
        if not self.fsx_mount.startswith("/"):
            problems.append(f"--fsx-mount {self.fsx_mount!r} must be an absolute path")
        if not self.image:
            problems.append("--image is required with --eks: the training container image")
        if not self.command:
            problems.append("give the training command after `--`, e.g. `-- hyperpodrun ...`")
        if problems:
            raise CliError("; ".join(problems))


def render_manifest(spec: ManifestSpec) -> str:
    """The manifest text for ``spec`` (validated first)."""
    spec.validate()
    metadata: dict[str, Any] = {"name": spec.job_name, "namespace": "default"}
    if spec.team:
        metadata["namespace"] = f"hyperpod-ns-{spec.team}"
        labels = {"kueue.x-k8s.io/queue-name": f"hyperpod-ns-{spec.team}-localqueue"}
        if spec.priority:
            labels["kueue.x-k8s.io/priority-class"] = f"{spec.priority}-priority"
        metadata["labels"] = labels
    resources: dict[str, Any] = {}
    if spec.gpus_per_node:
        gpus = {"nvidia.com/gpu": spec.gpus_per_node}
        resources = {"limits": gpus, "requests": gpus}
    container: dict[str, Any] = {
        "name": "pytorch",
        "image": spec.image,
        "command": list(spec.command),
        "ports": [{"containerPort": AGENT_PORT}],
    }
    if resources:
        container["resources"] = resources
    pod: dict[str, Any] = {"containers": [container]}
    if spec.fsx_claim:
        container["volumeMounts"] = [{"name": "fsx", "mountPath": spec.fsx_mount}]
        pod["volumes"] = [{"name": "fsx", "persistentVolumeClaim": {"claimName": spec.fsx_claim}}]
    if spec.instance_type:
        pod["nodeSelector"] = {"node.kubernetes.io/instance-type": spec.instance_type}
    if spec.tolerations:
        pod["tolerations"] = [
            {"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in spec.tolerations
        ]
    manifest = {
        "apiVersion": "sagemaker.amazonaws.com/v1",
        "kind": "HyperPodPyTorchJob",
        "metadata": metadata,
        "spec": {
            "nprocPerNode": str(spec.procs_per_node),
            "replicaSpecs": [{"name": "pods", "replicas": spec.nodes, "template": {"spec": pod}}],
            # Auto-resume: the operator restarts failed processes, then the whole job, up to
            # max_retries times; HyperPod replaces faulty nodes meanwhile.
            "runPolicy": {
                "jobMaxRetryCount": spec.max_retries,
                "restartPolicy": dict(RESTART_POLICY),
                "cleanPodPolicy": "All",
            },
        },
    }
    return json.dumps(manifest, indent=2) + "\n"
