"""`fmp cluster status|nodes|connect` against stubbed SageMaker and CloudFormation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fm_platform.cli import cluster
from tests.cli_support import (
    CLUSTER_ARN,
    LAUNCHED,
    StubbedClients,
    hermetic_aws_env,
    node,
    run,
    stack_response,
)

TARGET_PREFIX = "sagemaker-cluster:k2x9abcd1234_"


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def describe_cluster_response(**extra: Any) -> dict[str, Any]:
    return {
        "ClusterName": "fmp-train",
        "ClusterArn": CLUSTER_ARN,
        "ClusterStatus": "InService",
        "InstanceGroups": [
            {
                "InstanceGroupName": "controller",
                "InstanceType": "ml.m5.xlarge",
                "CurrentCount": 1,
                "TargetCount": 1,
                "Status": "InService",
            },
            {
                "InstanceGroupName": "workers",
                "InstanceType": "ml.p5.48xlarge",
                "CurrentCount": 3,
                "TargetCount": 4,
                "Status": "Updating",
            },
        ],
        **extra,
    }


def with_stack(clients: StubbedClients, **outputs: str) -> None:
    clients.stub("cloudformation").add_response(
        "describe_stacks",
        stack_response("FmpTraining", outputs),
        {"StackName": "FmpTraining"},
    )


TRAINING_OUTPUTS = {
    "ClusterName": "fmp-train",
    "ClusterArn": CLUSTER_ARN,
    "ControllerGroupName": "controller",
    "FsxMountPath": "/fsx",
}


def test_status_resolves_the_cluster_from_the_training_stack(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, **TRAINING_OUTPUTS)
    clients.stub("sagemaker").add_response(
        "describe_cluster", describe_cluster_response(), {"ClusterName": "fmp-train"}
    )
    code, out, err = run(["cluster", "status"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[0].split() == ["Cluster", "fmp-train"]
    assert lines[2].split() == ["Status", "InService"]
    assert "Failure" not in out
    header = lines.index(next(line for line in lines if line.startswith("GROUP")))
    assert lines[header].split() == ["GROUP", "TYPE", "STATUS", "CURRENT", "TARGET"]
    assert lines[header + 2].split() == ["workers", "ml.p5.48xlarge", "Updating", "3", "4"]


def test_status_shows_the_failure_message_and_json(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_response(
        "describe_cluster",
        describe_cluster_response(
            ClusterStatus="Failed", FailureMessage="Lifecycle scripts did not run successfully"
        ),
        {"ClusterName": "other"},
    )
    code, out, _ = run(["cluster", "status", "--cluster", "other", "--json"], clients, capsys)
    assert code == 0
    data = json.loads(out)
    assert data["ClusterStatus"] == "Failed"
    assert data["FailureMessage"] == "Lifecycle scripts did not run successfully"
    assert [
        (g["InstanceGroupName"], g["CurrentCount"], g["TargetCount"])
        for g in data["InstanceGroups"]
    ] == [("controller", 1, 1), ("workers", 3, 4)]


def test_status_prints_failure_in_text(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_response(
        "describe_cluster",
        describe_cluster_response(ClusterStatus="Failed", FailureMessage="AZ has no capacity"),
    )
    code, out, _ = run(["cluster", "status", "--cluster", "fmp-train"], clients, capsys)
    assert code == 0
    assert any(
        line.split(None, 1) == ["Failure", "AZ has no capacity"] for line in out.splitlines()
    )


def stub_two_pages(clients: StubbedClients) -> None:
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "list_cluster_nodes",
        {
            "ClusterNodeSummaries": [node("i-0ctl", "controller"), node("i-0w1", "workers")],
            "NextToken": "page-2",
        },
        {"ClusterName": "fmp-train"},
    )
    sagemaker.add_response(
        "list_cluster_nodes",
        {"ClusterNodeSummaries": [node("i-0w2", "workers", status="Pending")]},
        {"ClusterName": "fmp-train", "NextToken": "page-2"},
    )


def test_nodes_follows_pagination_and_groups_tables(capsys: Any) -> None:
    clients = StubbedClients()
    stub_two_pages(clients)
    code, out, err = run(["cluster", "nodes", "--cluster", "fmp-train"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    sections = out.strip().split("\n\n")
    assert [s.splitlines()[0] for s in sections] == ["controller (1 node)", "workers (2 nodes)"]
    workers = sections[1].splitlines()
    assert workers[1].split() == ["INSTANCE", "ID", "GROUP", "TYPE", "STATUS", "LAUNCHED"]
    assert workers[3].split() == [
        "i-0w2",
        "workers",
        "ml.p5.48xlarge",
        "Pending",
        LAUNCHED.isoformat(timespec="seconds"),
    ]


def test_nodes_json_lists_every_page(capsys: Any) -> None:
    clients = StubbedClients()
    stub_two_pages(clients)
    code, out, _ = run(["cluster", "nodes", "--cluster", "fmp-train", "--json"], clients, capsys)
    assert code == 0
    assert [n["InstanceId"] for n in json.loads(out)] == ["i-0ctl", "i-0w1", "i-0w2"]


def stub_connect(clients: StubbedClients, nodes: list[dict[str, Any]], name: str = "fmp-train"):
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response("describe_cluster", describe_cluster_response(), {"ClusterName": name})
    sagemaker.add_response(
        "list_cluster_nodes", {"ClusterNodeSummaries": nodes}, {"ClusterName": name}
    )


NODES = [node("i-0ctl", "controller"), node("i-0w1", "workers"), node("i-0w2", "workers")]


def test_connect_prints_the_controller_target_by_default(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, **TRAINING_OUTPUTS)
    stub_connect(clients, NODES)
    code, out, _ = run(["cluster", "connect", "--print"], clients, capsys)
    assert code == 0
    clients.assert_done()
    assert out.strip() == (
        "aws ssm start-session --target sagemaker-cluster:k2x9abcd1234_controller-i-0ctl"
    )


def test_connect_with_group_takes_its_first_running_node_and_passes_region_profile(
    capsys: Any,
) -> None:
    clients = StubbedClients(region="eu-west-1", profile="ops")
    nodes = [node("i-0ctl", "controller"), node("i-0w1", "workers", "Pending")] + NODES[2:]
    stub_connect(clients, nodes)
    argv = ["cluster", "connect", "--cluster", "fmp-train", "--group", "workers", "--print"]
    code, out, _ = run(argv, clients, capsys)
    assert code == 0
    assert out.split() == [
        "aws",
        "ssm",
        "start-session",
        "--target",
        TARGET_PREFIX + "workers-i-0w2",
        "--region",
        "eu-west-1",
        "--profile",
        "ops",
    ]


def test_connect_with_node_uses_that_nodes_group(capsys: Any) -> None:
    clients = StubbedClients()
    stub_connect(clients, NODES)
    argv = ["cluster", "connect", "--cluster", "fmp-train", "--node", "i-0w1", "--print"]
    code, out, _ = run(argv, clients, capsys)
    assert code == 0
    assert out.split()[4] == TARGET_PREFIX + "workers-i-0w1"


def test_connect_rejects_a_node_outside_the_group(capsys: Any) -> None:
    clients = StubbedClients()
    stub_connect(clients, NODES)
    argv = ["cluster", "connect", "--cluster", "fmp-train", "--node", "i-0w1", "--group"]
    code, out, err = run([*argv, "controller", "--print"], clients, capsys)
    assert code == 1
    assert out == ""
    assert err == "fmp: error: node i-0w1 belongs to group workers, not controller\n"


def test_connect_without_stack_finds_the_controller_from_slurm_config(capsys: Any) -> None:
    clients = StubbedClients()
    response = describe_cluster_response()
    response["InstanceGroups"][0]["SlurmConfig"] = {"NodeType": "Controller"}
    response["InstanceGroups"][0]["InstanceGroupName"] = "head"
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response("describe_cluster", response)
    sagemaker.add_response("list_cluster_nodes", {"ClusterNodeSummaries": [node("i-0h", "head")]})
    code, out, _ = run(["cluster", "connect", "--cluster", "x", "--print"], clients, capsys)
    assert code == 0
    assert TARGET_PREFIX + "head-i-0h" in out


def test_connect_asks_for_a_group_when_the_controller_is_unknown(capsys: Any) -> None:
    clients = StubbedClients()
    stub_connect(clients, NODES, name="x")
    code, _, err = run(["cluster", "connect", "--cluster", "x", "--print"], clients, capsys)
    assert code == 1
    assert err == (
        "fmp: error: cannot tell which group is the Slurm controller: "
        "pass --group (controller, workers)\n"
    )


def test_connect_execs_the_session_command(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    clients = StubbedClients()
    stub_connect(clients, NODES)
    calls = []
    monkeypatch.setattr(cluster.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(cluster.os, "execvp", lambda file, argv: calls.append((file, argv)))
    code, _, _ = run(
        ["cluster", "connect", "--cluster", "fmp-train", "--group", "controller"], clients, capsys
    )
    assert code == 0
    assert calls == [
        ("aws", ["aws", "ssm", "start-session", "--target", TARGET_PREFIX + "controller-i-0ctl"])
    ]


def test_connect_explains_a_missing_aws_cli(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    clients = StubbedClients()
    stub_connect(clients, NODES)
    monkeypatch.setattr(cluster.shutil, "which", lambda name: None)
    code, _, err = run(
        ["cluster", "connect", "--cluster", "fmp-train", "--group", "controller"], clients, capsys
    )
    assert code == 1
    assert err.startswith("fmp: error: the AWS CLI (`aws`) is not on PATH")


def test_cluster_id_is_the_last_part_of_the_arn() -> None:
    assert cluster.cluster_id(CLUSTER_ARN) == "k2x9abcd1234"
