"""`fmp job script --eks`: a HyperPodPyTorchJob manifest with auto-resume and task
governance labels."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli_support import StubbedClients, run

ARGV = ["job", "script", "--eks", "--image", "123.dkr.ecr.us-east-1.amazonaws.com/train:1"]


def manifest(argv: list[str], capsys: Any) -> dict[str, Any]:
    code, out, err = run([*ARGV, *argv], StubbedClients(), capsys)
    assert (code, err) == (0, "")
    return json.loads(out)


def test_a_team_job_goes_to_its_namespace_and_queue_with_auto_resume(capsys: Any) -> None:
    argv = ["--nodes", "2", "--tasks-per-node", "8", "--gpus-per-node", "8"]
    argv += ["--team", "research", "--priority", "training", "--toleration", "nvidia.com/gpu"]
    argv += ["--instance-type", "ml.p5.48xlarge", "--", "hyperpodrun", "train.py"]
    job = manifest(argv, capsys)
    assert (job["apiVersion"], job["kind"]) == ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob")
    assert job["metadata"] == {
        "name": "train",
        "namespace": "hyperpod-ns-research",
        "labels": {
            "kueue.x-k8s.io/queue-name": "hyperpod-ns-research-localqueue",
            "kueue.x-k8s.io/priority-class": "training-priority",
        },
    }
    spec = job["spec"]
    assert spec["nprocPerNode"] == "8"
    assert spec["runPolicy"]["jobMaxRetryCount"] == 10
    assert spec["runPolicy"]["restartPolicy"]["maxFullJobRestarts"] == 1
    (replicas,) = spec["replicaSpecs"]
    assert replicas["replicas"] == 2
    pod = replicas["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["hyperpodrun", "train.py"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8}
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.p5.48xlarge"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_without_a_team_the_job_has_no_queue_labels(capsys: Any) -> None:
    job = manifest(["--", "python", "train.py"], capsys)
    assert job["metadata"] == {"name": "train", "namespace": "default"}
    assert "resources" not in job["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]


def test_the_fsx_claim_is_mounted_at_the_mount_path(capsys: Any) -> None:
    argv = ["--team", "research", "--fsx-claim", "fsx-claim", "--fsx-mount", "/fsx"]
    job = manifest([*argv, "--", "hyperpodrun", "train.py"], capsys)
    pod = job["spec"]["replicaSpecs"][0]["template"]["spec"]
    assert pod["volumes"] == [{"name": "fsx", "persistentVolumeClaim": {"claimName": "fsx-claim"}}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "fsx", "mountPath": "/fsx"}]


def test_without_a_claim_nothing_is_mounted(capsys: Any) -> None:
    pod = manifest(["--", "python", "train.py"], capsys)["spec"]["replicaSpecs"][0]["template"]
    assert "volumes" not in pod["spec"]
    assert "volumeMounts" not in pod["spec"]["containers"][0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["job", "script", "--eks", "--", "python"], "--image is required with --eks"),
        ([*ARGV, "--team", "Research", "--", "x"], "--team 'Research' must be a Kubernetes name"),
        ([*ARGV, "--partition", "dev", "--", "x"], "--partition: Slurm options"),
        ([*ARGV, "--gpus-per-node", "-1", "--", "x"], "--gpus-per-node must be 0 or more"),
        ([*ARGV], "give the training command after `--`"),
        ([*ARGV, "--fsx-mount", "/data", "--", "x"], "--fsx-mount with --eks mounts the claim"),
        ([*ARGV, "--fsx-claim", "Fsx_Claim", "--", "x"], "--fsx-claim 'Fsx_Claim' must be"),
        (
            [*ARGV, "--fsx-claim", "fsx-claim", "--fsx-mount", "data", "--", "x"],
            "--fsx-mount 'data' must be an absolute path",
        ),
    ],
)
def test_bad_options_are_one_line_errors(argv: list[str], message: str, capsys: Any) -> None:
    code, _, err = run(argv, StubbedClients(), capsys)
    assert code == 1
    assert message in err
