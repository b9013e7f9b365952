"""`fmp job submit|queue|logs|cancel` against stubbed SageMaker and CloudFormation clients
and a stubbed Session Manager session; `fmp cluster kubeconfig`."""

from __future__ import annotations

import base64
import json
import subprocess
from typing import Any

import pytest

from fm_platform.cli import job_remote
from fm_platform.cli.main import main
from tests.cli_support import (
    CLUSTER_ARN,
    StubbedClients,
    hermetic_aws_env,
    node,
    run,
    stack_response,
)
from tests.test_cli_cluster import TRAINING_OUTPUTS, describe_cluster_response

TARGET = "sagemaker-cluster:k2x9abcd1234_controller-i-0ctl"
NODES = [node("i-0ctl", "controller"), node("i-0w1", "workers")]


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


class Session:
    """Stands for `aws ssm start-session`: records the command lines it was run with."""

    def __init__(self, returncode: int = 0) -> None:
        self.argv: list[list[str]] = []
        self.returncode = returncode

    def __call__(self, argv: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        self.argv.append(argv)
        return subprocess.CompletedProcess(argv, self.returncode)

    @property
    def command(self) -> str:
        (argv,) = self.argv
        assert argv[argv.index("--document-name") + 1] == "AWS-StartInteractiveCommand"
        assert argv[argv.index("--target") + 1] == TARGET
        (command,) = json.loads(argv[argv.index("--parameters") + 1])["command"]
        return command


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Session:
    stub = Session()
    monkeypatch.setattr(job_remote.subprocess, "run", stub)
    monkeypatch.setattr(job_remote.shutil, "which", lambda name: f"/usr/bin/{name}")
    return stub


def slurm_cluster(**describe: Any) -> StubbedClients:
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "describe_stacks",
        stack_response("FmpTraining", TRAINING_OUTPUTS),
        {"StackName": "FmpTraining"},
    )
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "describe_cluster", describe_cluster_response(**describe), {"ClusterName": "fmp-train"}
    )
    if not describe:
        sagemaker.add_response(
            "list_cluster_nodes", {"ClusterNodeSummaries": NODES}, {"ClusterName": "fmp-train"}
        )
    return clients


SCRIPT = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --output=/fsx/logs/%x-%j.out
#SBATCH --error=/fsx/logs/%x-%j.err
srun --auto-resume=1 python train.py
"""


def test_submit_sends_the_script_to_sbatch_on_the_controller(
    capsys: Any, session: Session, tmp_path: Any
) -> None:
    script = tmp_path / "train.sbatch"
    script.write_text(SCRIPT)
    clients = slurm_cluster()
    code, _, err = run(["job", "submit", str(script)], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    prepare, rest = session.command.split(" && ")
    assert prepare == "mkdir -p /fsx/logs"
    encoded = rest.removeprefix("echo ").removesuffix(" | base64 -d | sbatch")
    assert base64.b64decode(encoded).decode() == SCRIPT


def test_queue_runs_squeue(capsys: Any, session: Session) -> None:
    code, _, _ = run(["job", "queue", "--user", "alice"], slurm_cluster(), capsys)
    assert code == 0
    assert session.command == "squeue --user=alice"


def test_cancel_runs_scancel_and_passes_the_sessions_status(capsys: Any, session: Session) -> None:
    session.returncode = 255
    code, _, _ = run(["job", "cancel", "1234_5"], slurm_cluster(), capsys)
    assert code == 255
    assert session.command == "scancel 1234_5"


def test_logs_reads_the_output_file_slurm_names_else_the_scripts_pattern(
    capsys: Any, session: Session
) -> None:
    code, _, _ = run(["job", "logs", "1234", "--lines", "20"], slurm_cluster(), capsys)
    assert code == 0
    command = session.command
    assert "scontrol show job 1234" in command
    assert "ls /fsx/logs/*-1234.out" in command
    assert 'tail -n 20 "$f"' in command


def test_logs_command_is_valid_shell() -> None:
    result = subprocess.run(
        ["bash", "-n", "-c", job_remote.logs_command("1234", "/fsx", 100)], check=False
    )
    assert result.returncode == 0


def test_print_shows_the_session_command_without_running_it(capsys: Any, session: Session) -> None:
    code, out, _ = run(["job", "queue", "--print"], slurm_cluster(), capsys)
    assert code == 0
    assert session.argv == []
    assert out.startswith(f"aws ssm start-session --target {TARGET} --document-name ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["job", "cancel", "12;rm"], "job id '12;rm' must be a Slurm job id"),
        (["job", "logs", "1", "--lines", "0"], "--lines must be at least 1"),
        (["job", "logs", "1", "--fsx-mount", "fsx"], "--fsx-mount 'fsx' must be an absolute"),
    ],
)
def test_bad_options_are_one_line_errors(argv: list[str], message: str, capsys: Any) -> None:
    code, out, err = run(argv, StubbedClients(), capsys)
    assert code == 1
    assert message in err


def test_submit_of_a_file_without_sbatch_lines_is_refused(capsys: Any, tmp_path: Any) -> None:
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    code, _, err = run(["job", "submit", str(script)], StubbedClients(), capsys)
    assert code == 1
    assert "has no #SBATCH line: write one with `fmp job script`" in err


def test_without_the_session_manager_plugin_the_error_says_what_to_install(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        job_remote.shutil, "which", lambda name: None if name == job_remote.PLUGIN else "/bin/x"
    )
    code, _, err = run(["job", "queue"], slurm_cluster(), capsys)
    assert code == 1
    assert "Session Manager plugin (`session-manager-plugin`) is not on PATH" in err
    assert "session-manager-working-with-install-plugin" in err


def test_without_the_aws_cli_the_error_says_what_to_install(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_remote.shutil, "which", lambda name: None)
    code, _, err = run(["job", "queue"], slurm_cluster(), capsys)
    assert code == 1
    assert "the AWS CLI (`aws`) is not on PATH" in err


def test_without_credentials_the_error_says_how_to_sign_in(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code = main(["job", "queue", "--cluster", "c"])
    err = capsys.readouterr().err
    assert code == 1
    assert "no AWS credentials" in err and "--profile" in err


def test_an_eks_cluster_is_pointed_at_kubectl(capsys: Any, session: Session) -> None:
    clients = slurm_cluster(
        Orchestrator={"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:1:cluster/e"}}
    )
    code, _, err = run(["job", "queue"], clients, capsys)
    assert code == 1
    assert "orchestrated by Amazon EKS, not Slurm" in err
    assert "fmp cluster kubeconfig" in err
    assert session.argv == []


def test_kubeconfig_prints_the_update_kubeconfig_command(capsys: Any) -> None:
    clients = StubbedClients(region="us-west-2", profile="ops")
    clients.stub("cloudformation").add_response(
        "describe_stacks",
        stack_response("FmpTraining", {"EksClusterName": "Eks-abc", "ClusterArn": CLUSTER_ARN}),
        {"StackName": "FmpTraining"},
    )
    code, out, _ = run(["cluster", "kubeconfig"], clients, capsys)
    assert code == 0
    assert out.strip() == (
        "aws eks update-kubeconfig --name Eks-abc --region us-west-2 --profile ops"
    )


def test_kubeconfig_of_a_slurm_stack_says_what_to_use_instead(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "describe_stacks",
        stack_response("FmpTraining", TRAINING_OUTPUTS),
        {"StackName": "FmpTraining"},
    )
    code, _, err = run(["cluster", "kubeconfig"], clients, capsys)
    assert code == 1
    assert "stack FmpTraining has no output EksClusterName" in err
    assert "fmp cluster connect" in err
