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


# --- scale, update-software, replace-node, reboot-node ------------------------------------

ROLE = "arn:aws:iam::111122223333:role/fmp-cluster"
LIFECYCLE = {"SourceS3Uri": "s3://sagemaker-lc-1234/lifecycle-scripts/", "OnCreate": "on_create.sh"}


def group_details(name: str, target: int, current: int | None = None, **extra: Any):
    """One DescribeCluster instance group, as HyperPod reports a Slurm group."""
    return {
        "InstanceGroupName": name,
        "InstanceType": "ml.p5.48xlarge",
        "CurrentCount": target if current is None else current,
        "TargetCount": target,
        "Status": "InService",
        "ExecutionRole": ROLE,
        "LifeCycleConfig": LIFECYCLE,
        "ThreadsPerCore": 1,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}],
        "CurrentImageId": "ami-0123456789abcdef0",
        "DesiredImageId": "ami-0123456789abcdef0",
        "CurrentImageReleaseVersion": "1.2.3",
        "DesiredImageReleaseVersion": "1.2.3",
        **extra,
    }


def scalable_cluster() -> dict[str, Any]:
    controller = group_details("controller", 1, SlurmConfig={"NodeType": "Controller"})
    controller["InstanceType"] = "ml.m5.12xlarge"
    workers = group_details(
        "workers",
        4,
        3,
        MinCount=2,
        OnStartDeepHealthChecks=["InstanceStress", "InstanceConnectivity"],
        SlurmConfig={"NodeType": "Compute", "PartitionNames": ["dev"]},
    )
    # A flexible group: instance types reported as current and desired.
    flex = group_details(
        "flex",
        2,
        InstanceRequirements={
            "CurrentInstanceTypes": ["ml.g5.xlarge"],
            "DesiredInstanceTypes": ["ml.g5.xlarge", "ml.g6.xlarge"],
        },
    )
    del flex["InstanceType"]
    return {
        "ClusterName": "fmp-train",
        "ClusterArn": CLUSTER_ARN,
        "ClusterStatus": "InService",
        "InstanceGroups": [controller, workers, flex],
    }


def resent(name: str, count: int, **extra: Any) -> dict[str, Any]:
    """What scale sends for a group: the request's members only, no counts reported, no image."""
    return {
        "InstanceCount": count,
        "InstanceGroupName": name,
        "InstanceType": "ml.p5.48xlarge",
        "LifeCycleConfig": LIFECYCLE,
        "ExecutionRole": ROLE,
        "ThreadsPerCore": 1,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}],
        **extra,
    }


def expected_update(workers: int) -> dict[str, Any]:
    controller = resent("controller", 1, SlurmConfig={"NodeType": "Controller"})
    controller["InstanceType"] = "ml.m5.12xlarge"
    flex = resent(
        "flex", 2, InstanceRequirements={"InstanceTypes": ["ml.g5.xlarge", "ml.g6.xlarge"]}
    )
    del flex["InstanceType"]
    return {
        "ClusterName": "fmp-train",
        "InstanceGroups": [
            controller,
            resent(
                "workers",
                workers,
                MinInstanceCount=2,
                OnStartDeepHealthChecks=["InstanceStress", "InstanceConnectivity"],
                SlurmConfig={"NodeType": "Compute", "PartitionNames": ["dev"]},
            ),
            flex,
        ],
    }


def stub_scale(clients: StubbedClients, workers: int | None) -> None:
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response("describe_cluster", scalable_cluster(), {"ClusterName": "fmp-train"})
    if workers is not None:
        sagemaker.add_response(
            "update_cluster", {"ClusterArn": CLUSTER_ARN}, expected_update(workers)
        )


def test_scale_resends_every_group_and_changes_only_the_count(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, **TRAINING_OUTPUTS)
    stub_scale(clients, 6)
    code, out, err = run(["cluster", "scale", "workers", "6"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out == (
        f"UpdateCluster accepted for {CLUSTER_ARN}: workers 4 -> 6 instances (2 other groups "
        "sent again unchanged). Follow with: fmp cluster status\n"
    )


def test_scale_in_needs_yes(capsys: Any) -> None:
    clients = StubbedClients()
    stub_scale(clients, None)
    argv = ["cluster", "scale", "workers", "2", "--cluster", "fmp-train"]
    code, out, err = run(argv, clients, capsys)
    assert (code, out) == (1, "")
    assert err == (
        "fmp: error: scaling workers to 2 instances terminates 1 of its 3 running nodes and "
        "the jobs on them: pass --yes to go ahead\n"
    )
    clients.assert_done()  # described, nothing updated
    stub_scale(clients, 2)
    code, _, _ = run([*argv, "--yes"], clients, capsys)
    assert code == 0
    clients.assert_done()


def test_scale_below_the_target_but_not_the_running_nodes_needs_no_yes(capsys: Any) -> None:
    # workers ask for 4 and run 3: asking for 3 stops a launch, terminates nothing.
    clients = StubbedClients()
    stub_scale(clients, 3)
    argv = ["cluster", "scale", "workers", "3", "--cluster", "fmp-train"]
    code, out, _ = run(argv, clients, capsys)
    assert code == 0
    assert "workers 4 -> 3 instances" in out
    clients.assert_done()


def test_scale_to_the_asked_count_sends_nothing(capsys: Any) -> None:
    clients = StubbedClients()
    stub_scale(clients, None)
    code, out, _ = run(
        ["cluster", "scale", "workers", "4", "--cluster", "fmp-train"], clients, capsys
    )
    assert code == 0
    assert out == "Group workers already asks for 4 instances: nothing sent.\n"
    clients.assert_done()


def test_scale_names_the_groups_when_the_group_is_unknown(capsys: Any) -> None:
    clients = StubbedClients()
    stub_scale(clients, None)
    code, _, err = run(["cluster", "scale", "gpu", "4", "--cluster", "fmp-train"], clients, capsys)
    assert code == 1
    assert err == (
        "fmp: error: group gpu is not in cluster fmp-train (groups: controller, workers, flex)\n"
    )


def test_scale_checks_group_and_count_against_the_model_before_any_call(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker")  # no response queued: any call would fail the test
    code, out, err = run(["cluster", "scale", "gpu_nodes", "7000"], clients, capsys)
    assert (code, out) == (1, "")
    assert err == (
        "fmp: error: GROUP gpu_nodes: underscores are not allowed "
        "(ClusterInstanceGroupName: matching [a-zA-Z0-9](-*[a-zA-Z0-9])*; 1-63 characters); "
        "COUNT 7000: above the maximum 6758 (ClusterInstanceCount: 0-6758)\n"
    )
    clients.assert_done()


def test_scale_reports_a_group_the_request_cannot_carry_in_one_line(capsys: Any) -> None:
    clients = StubbedClients()
    cluster = scalable_cluster()
    del cluster["InstanceGroups"][0]["ExecutionRole"]
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response("describe_cluster", cluster)
    sagemaker.add_response("update_cluster", {"ClusterArn": CLUSTER_ARN})
    code, _, err = run(["cluster", "scale", "workers", "5", "--cluster", "x"], clients, capsys)
    assert code == 1
    assert err == (
        "fmp: error: the request does not fit botocore's model of the API: Missing required "
        'parameter in InstanceGroups[0]: "ExecutionRole"\n'
    )


def test_update_software_needs_yes(capsys: Any) -> None:
    code, _, err = run(["cluster", "update-software", "--cluster", "x"], StubbedClients(), capsys)
    assert code == 1
    assert err.startswith("fmp: error: updating the software replaces or restarts nodes")


def test_update_software_of_named_groups_in_batches(capsys: Any) -> None:
    clients = StubbedClients()
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response("describe_cluster", scalable_cluster(), {"ClusterName": "fmp-train"})
    sagemaker.add_response(
        "update_cluster_software",
        {"ClusterArn": CLUSTER_ARN},
        {
            "ClusterName": "fmp-train",
            "InstanceGroups": [{"InstanceGroupName": "workers"}, {"InstanceGroupName": "flex"}],
            "ImageId": "default",
            "DeploymentConfig": {
                "RollingUpdatePolicy": {
                    "MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 25}
                },
                "WaitIntervalInSeconds": 300,
                "AutoRollbackConfiguration": [{"AlarmName": "fmp-node-health"}],
            },
        },
    )
    argv = ["cluster", "update-software", "--cluster", "fmp-train", "--group", "workers"]
    argv += ["--group", "flex", "--image-id", "default", "--batch-percent", "25"]
    argv += ["--wait-s", "300", "--rollback-alarm", "fmp-node-health", "--yes"]
    code, out, err = run(argv, clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out == (
        f"UpdateClusterSoftware accepted for {CLUSTER_ARN} (workers, flex). "
        "Follow with: fmp cluster status\n"
    )


def test_update_software_of_every_group_sends_only_the_cluster(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, **TRAINING_OUTPUTS)
    clients.stub("sagemaker").add_response(
        "update_cluster_software",
        {"ClusterArn": CLUSTER_ARN},
        {
            "ClusterName": "fmp-train",
            "DeploymentConfig": {
                "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}}
            },
        },
    )
    code, out, _ = run(
        ["cluster", "update-software", "--batch-count", "1", "--yes"], clients, capsys
    )
    assert code == 0
    clients.assert_done()
    assert "(every group)" in out


def test_update_software_rejects_an_unknown_group(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_response("describe_cluster", scalable_cluster())
    argv = ["cluster", "update-software", "--cluster", "x", "--group", "gpu", "--yes"]
    code, _, err = run(argv, clients, capsys)
    assert code == 1
    assert err == "fmp: error: group gpu not in cluster x (groups: controller, workers, flex)\n"
    clients.assert_done()


def test_update_software_checks_every_value_against_the_model(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker")
    argv = ["cluster", "update-software", "--cluster", "x", "--image-id", "ami-xyz"]
    argv += ["--batch-count", "0", "--wait-s", "4000", "--yes"]
    argv += [arg for n in range(11) for arg in ("--rollback-alarm", f"alarm-{n}")]
    code, _, err = run(argv, clients, capsys)
    assert code == 1
    assert err == (
        "fmp: error: --image-id ami-xyz: 'x', 'y' and 'z' are not allowed (ImageId: "
        "matching (ami-[0-9a-fA-F]{8,17}|default); 7-21 characters); batch size 0: below the "
        "minimum 1 (NodeUnavailabilityValue: at least 1); --wait-s 4000: above the maximum 3600 "
        "(WaitTimeIntervalInSeconds: 0-3600); --rollback-alarm: 11 given; AutoRollbackAlarms "
        "takes 1-10 items\n"
    )
    clients.assert_done()


NODE_A, NODE_B = "i-0123456789abcdef0", "i-0fedcba9876543210"


def test_replace_node_needs_yes(capsys: Any) -> None:
    code, _, err = run(["cluster", "replace-node", NODE_A], StubbedClients(), capsys)
    assert code == 1
    assert err == (
        "fmp: error: replacing a node terminates it and destroys its root and secondary "
        "volumes: pass --yes to go ahead\n"
    )


def test_replace_node_reports_each_node_and_fails_when_one_failed(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_response(
        "batch_replace_cluster_nodes",
        {
            "Successful": [NODE_A],
            "Failed": [
                {
                    "NodeId": NODE_B,
                    "ErrorCode": "InvalidInstanceStatus",
                    "Message": "controller nodes cannot be replaced",
                }
            ],
        },
        {"ClusterName": "fmp-train", "NodeIds": [NODE_A, NODE_B]},
    )
    argv = ["cluster", "replace-node", NODE_A, NODE_B, "--cluster", "fmp-train", "--yes"]
    code, out, err = run(argv, clients, capsys)
    assert (code, err) == (1, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[0].split() == ["NODE", "RESULT", "DETAIL"]
    assert lines[1].split() == [NODE_A, "replacement", "started", "-"]
    assert lines[2].split(None, 3) == [
        NODE_B,
        "failed:",
        "InvalidInstanceStatus",
        "controller nodes cannot be replaced",
    ]


def test_reboot_node_from_the_stack_with_json(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, **TRAINING_OUTPUTS)
    clients.stub("sagemaker").add_response(
        "batch_reboot_cluster_nodes",
        {"Successful": [NODE_A, NODE_B]},
        {"ClusterName": "fmp-train", "NodeIds": [NODE_A, NODE_B]},
    )
    code, out, _ = run(
        ["cluster", "reboot-node", NODE_A, NODE_B, "--yes", "--json"], clients, capsys
    )
    assert code == 0
    clients.assert_done()
    assert json.loads(out) == {"Successful": [NODE_A, NODE_B], "Failed": []}


def test_node_ids_are_checked_against_the_model(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker")
    many = [f"i-{n:017x}" for n in range(26)]
    code, _, err = run(["cluster", "reboot-node", "i-0w1", *many, "--yes"], clients, capsys)
    assert code == 1
    assert err == (
        "fmp: error: NODE i-0w1: 'w' is not allowed (ClusterNodeId: "
        "matching i-[a-f0-9]{8}(?:[a-f0-9]{9})?; 1-256 characters); NODE: 27 given; "
        "BatchRebootClusterNodesRequestNodeIdsList takes 1-25 items\n"
    )
    clients.assert_done()
