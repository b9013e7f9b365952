"""`make destroy`'s listing (scripts/leftovers.py, scripts/destroy_leftovers.py): what
remains after destroying every stack of the default app, computed from its templates,
offline; the names recorded from CloudFormation before the destroy (stubbed here)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import CloudAssembly
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from destroy_leftovers import main, record  # noqa: E402
from docs_assembly import Assembly  # noqa: E402
from leftovers import Deployed, Leftovers, destroy_order  # noqa: E402

# The replacement key of an ml.g5.12xlarge endpoint with variant AllTraffic.
KEY = "62e167c0"


@pytest.fixture(scope="module")
def leftovers(default_assembly: CloudAssembly) -> Leftovers:
    return Leftovers(Assembly.load(default_assembly.directory))


def test_stacks_are_destroyed_dependents_first(leftovers):
    assert destroy_order(leftovers.assembly) == [
        "FmpInference",
        "FmpInferenceArtifacts",
        "FmpTraining",
        "FmpTrainingData",
    ]


def test_every_retained_resource_is_listed_and_nothing_else(default_assembly, leftovers):
    for stack, template in default_assembly.templates.items():
        retained = {
            f"{r['Type']} {lid}"
            for lid, r in template["Resources"].items()
            if r.get("DeletionPolicy") == "Retain"
        }
        listed = {" ".join(item.what.split()[:2]) for item in leftovers.retained(stack)}
        assert listed == retained, stack
    # The cluster stack keeps nothing.
    assert leftovers.retained("FmpTraining") == []


def positions(leftovers: Leftovers, stack: str) -> dict[str, int]:
    return {item.what.split()[1]: n for n, item in enumerate(leftovers.retained(stack))}


def test_the_order_removes_what_uses_a_resource_before_the_resource(leftovers):
    data = positions(leftovers, "FmpTrainingData")
    file_system = data["FileSystem0A147049"]
    for needed in (
        "NetworkClusterSecurityGroup6FC78C02",
        "NetworkVpcPrivateSubnet1Subnet6DD86AE6",
        "FileSystemKeyA5484887",
        "NetworkVpc7FB7348F",
    ):
        assert file_system < data[needed], needed
    assert data["NetworkClusterSecurityGroup6FC78C02"] < data["NetworkVpc7FB7348F"]
    assert data["NetworkVpcPrivateSubnet1Subnet6DD86AE6"] < data["NetworkVpc7FB7348F"]
    # A bucket before the bucket it logs to and before its key.
    bucket = data["LifecycleScriptsBucketC326695E"]
    assert bucket < data["LifecycleScriptsBucketAccessLogsA77EAF12"]
    assert bucket < data["LifecycleScriptsBucketKey51EF4DE8"]


def test_each_retained_resource_comes_with_its_commands(leftovers):
    by_id = {item.what.split()[1]: item for item in leftovers.retained("FmpTrainingData")}
    assert by_id["FileSystem0A147049"].commands == (
        "aws fsx delete-file-system --file-system-id <FileSystem0A147049>",
    )
    assert by_id["NetworkVpc7FB7348F"].commands == (
        "aws ec2 delete-vpc --vpc-id <NetworkVpc7FB7348F>",
    )
    assert by_id["LifecycleScriptsBucketC326695E"].commands[-1] == (
        "aws s3api delete-bucket --bucket <LifecycleScriptsBucketC326695E>"
    )
    key = by_id["LifecycleScriptsBucketKey51EF4DE8"]
    assert key.commands == (
        "aws kms schedule-key-deletion --key-id <LifecycleScriptsBucketKey51EF4DE8> "
        "--pending-window-in-days 7",
    )
    # Attached resources go with their owner.
    policy = by_id["LifecycleScriptsBucketPolicy1CE64A07"]
    assert (policy.commands, policy.note) == ((), "goes with LifecycleScriptsBucketC326695E")
    rule = by_id["NetworkClusterSecurityGroupAllTrafficToSelf02D12224"]
    assert rule.note == "goes with NetworkClusterSecurityGroup6FC78C02"


def test_the_retained_vpcs_default_security_group_gets_its_rules_back(leftovers):
    (group,) = leftovers.default_security_groups("FmpTrainingData")
    assert (
        group.what == "the default security group of AWS::EC2::VPC NetworkVpc7FB7348F (Network/Vpc)"
    )
    assert "inbound all traffic from the group itself" in group.note
    assert "Name=vpc-id,Values=<NetworkVpc7FB7348F>" in group.commands[0]
    assert "revoke-security-group-ingress" in group.commands[1]
    assert "revoke-security-group-egress" in group.commands[2]
    assert leftovers.default_security_groups("FmpInference") == []


def test_the_log_groups_the_services_create_are_listed(leftovers):
    inference = {item.name for item in leftovers.log_groups("FmpInference")}
    assert {
        f"/aws/sagemaker/InferenceComponents/FmpInference-llama-7b-chat-{KEY}",
        f"/aws/sagemaker/InferenceComponents/FmpInference-llama-13b-{KEY}",
        f"/aws/sagemaker/InferenceComponents/FmpInference-flan-t5-xl-{KEY}",
        *(
            f"/aws/sagemaker/Endpoints/<EndpointName of {logical_id}>"
            for logical_id in (
                f"IcEndpointsharedg5EndpointEndpoint{KEY}368092A3",
                "SingleModelEndpointsummarizerEndpoint829f941f8CFDCC3C",
                "MultiModelEndpointsmallmodelsEndpoint8a468dd3553869E2",
                "AsyncEndpointbatchsummarizerEndpoint829f941fFA3A380D",
            )
        ),
    } == inference
    (cluster,) = leftovers.log_groups("FmpTraining")  # not the upload function: own group
    assert cluster.name == "/aws/sagemaker/Clusters/<cluster name>/<ClusterEB0386A7>"
    (function,) = leftovers.log_groups("FmpTrainingData")
    assert function.name.startswith("/aws/lambda/<CustomVpcRestrictDefaultSG")


def test_recorded_names_fill_the_listing_and_undeployed_stacks_drop_out(default_assembly):
    deployed = {
        "FmpTrainingData": Deployed(
            "arn:aws:cloudformation:us-east-1:111122223333:stack/FmpTrainingData/1",
            resources={"FileSystem0A147049": "fs-0123", "NetworkVpc7FB7348F": "vpc-0abc"},
        ),
        "FmpInference": Deployed(
            "arn:aws:cloudformation:us-east-1:111122223333:stack/FmpInference/2",
            outputs={"EndpointSummarizer": "Summarizer-AbC123"},
        ),
    }
    leftovers = Leftovers(Assembly.load(default_assembly.directory), deployed)
    assert leftovers.stacks == ["FmpInference", "FmpTrainingData"]
    by_id = {item.what.split()[1]: item for item in leftovers.retained("FmpTrainingData")}
    assert by_id["FileSystem0A147049"].name == "fs-0123"
    assert by_id["FileSystem0A147049"].commands == (
        "aws fsx delete-file-system --file-system-id fs-0123",
    )
    (group,) = leftovers.default_security_groups("FmpTrainingData")
    assert "Name=vpc-id,Values=vpc-0abc" in group.commands[0]
    names = {item.name for item in leftovers.log_groups("FmpInference")}
    assert "/aws/sagemaker/Endpoints/Summarizer-AbC123" in names


def test_the_cluster_log_group_is_found_by_the_id_in_the_clusters_arn(default_assembly):
    arn = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcd1234efgh"
    deployed = {"FmpTraining": Deployed("id", resources={"ClusterEB0386A7": arn})}
    leftovers = Leftovers(Assembly.load(default_assembly.directory), deployed)
    (cluster,) = leftovers.log_groups("FmpTraining")
    assert cluster.name == "/aws/sagemaker/Clusters/<cluster name>/abcd1234efgh"
    assert "ends_with(logGroupName, '/abcd1234efgh')" in cluster.commands[0]


def test_the_record_holds_each_deployed_stacks_ids_and_outputs():
    client = boto3.client("cloudformation", region_name="us-east-1")
    stack_id = "arn:aws:cloudformation:us-east-1:111122223333:stack/FmpTraining/1"
    with Stubber(client) as stub:
        stub.add_client_error(
            "describe_stacks",
            service_error_code="ValidationError",
            service_message="Stack with id FmpInference does not exist",
            expected_params={"StackName": "FmpInference"},
        )
        stub.add_response(
            "describe_stacks",
            {
                "Stacks": [
                    {
                        "StackName": "FmpTraining",
                        "StackId": stack_id,
                        "CreationTime": "2026-12-01T00:00:00Z",
                        "StackStatus": "CREATE_COMPLETE",
                        "Outputs": [{"OutputKey": "ClusterName", "OutputValue": "c-1"}],
                    }
                ]
            },
            {"StackName": "FmpTraining"},
        )
        stub.add_response(
            "list_stack_resources",
            {
                "StackResourceSummaries": [
                    {
                        "LogicalResourceId": "ClusterEB0386A7",
                        "PhysicalResourceId": "arn:aws:sagemaker:us-east-1:1:cluster/abc",
                        "ResourceType": "AWS::SageMaker::Cluster",
                        "LastUpdatedTimestamp": "2026-12-01T00:00:00Z",
                        "ResourceStatus": "CREATE_COMPLETE",
                    }
                ]
            },
            {"StackName": "FmpTraining"},
        )
        recorded = record(client, ["FmpInference", "FmpTraining"])
    assert recorded == {
        "FmpTraining": Deployed(
            stack_id,
            {"ClusterName": "c-1"},
            {"ClusterEB0386A7": "arn:aws:sagemaker:us-east-1:1:cluster/abc"},
        )
    }


def test_the_script_lists_from_a_recorded_file(default_assembly, tmp_path, capsys):
    recorded = tmp_path / "deployed.json"
    deployed = {"FmpTraining": Deployed("id", resources={"ClusterEB0386A7": "arn:x/c-9"})}
    recorded.write_text(json.dumps({name: asdict(d) for name, d in deployed.items()}))
    assert main([str(default_assembly.directory), "--deployed", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("What remains after destroying FmpTraining:")
    assert "/aws/sagemaker/Clusters/<cluster name>/c-9" in out
    assert "FmpTrainingData" not in out
