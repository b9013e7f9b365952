"""TrainingStack: composition, outputs and TrainingConfig.from_mapping. The default stack's
template comes from the session's CLI synth (cfn-lint and cdk-nag run on it in test_app)."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.training.instance_groups import InstanceGroup, NodeRole
from fm_platform.stacks import TrainingConfig, TrainingDataStack, TrainingStack
from tests.support import nag_findings, new_app

OUTPUT_KEYS = {
    "ClusterName",
    "ClusterArn",
    "ControllerGroupName",
    "FsxMountPath",
    "LifecycleScriptsS3Uri",
    "SsmLoginCommand",
}


@pytest.fixture(scope="module")
def stack() -> TrainingStack:
    return TrainingStack(new_app(), "Training")


@pytest.fixture(scope="module")
def template(default_assembly) -> Template:
    return Template.from_json(default_assembly.templates["FmpTraining"])


@pytest.fixture(scope="module")
def data_template(default_assembly) -> Template:
    return Template.from_json(default_assembly.templates["FmpTrainingData"])


def reads_from_data_stack(value: dict, logical_id: str) -> bool:
    """True when ``value`` is the data stack's export for resource ``logical_id``."""
    export = value.get("Fn::ImportValue", "")
    return export.startswith("FmpTrainingData:") and logical_id in export


def only(template: Template, resource_type: str) -> tuple[str, dict]:
    resources = template.find_resources(resource_type)
    assert len(resources) == 1, list(resources)
    return next(iter(resources.items()))


def test_outputs_have_the_keys_the_cli_reads(template):
    assert set(template.to_json()["Outputs"]) == OUTPUT_KEYS


def test_ssm_login_command(template):
    cluster_id, _ = only(template, "AWS::SageMaker::Cluster")
    value = template.to_json()["Outputs"]["SsmLoginCommand"]
    assert value["Value"] == {
        "Fn::Join": [
            "",
            [
                "aws ssm start-session --target sagemaker-cluster:",
                {
                    "Fn::Select": [
                        1,
                        {"Fn::Split": ["/", {"Fn::GetAtt": [cluster_id, "ClusterArn"]}]},
                    ]
                },
                "_controller-<instance-id>",
            ],
        ]
    }
    assert "list-cluster-nodes" in value["Description"]
    assert "fmp cluster nodes" in value["Description"]


def test_outputs_point_at_the_parts(template, data_template):
    outputs = template.to_json()["Outputs"]
    cluster_id, _ = only(template, "AWS::SageMaker::Cluster")
    fsx_id, _ = only(data_template, "AWS::FSx::FileSystem")
    assert outputs["ClusterArn"]["Value"] == {"Fn::GetAtt": [cluster_id, "ClusterArn"]}
    assert outputs["ClusterName"]["Value"] == {"Fn::GetAtt": [cluster_id, "ClusterArn"]}
    assert outputs["ControllerGroupName"]["Value"] == "controller"
    assert outputs["FsxMountPath"]["Value"] == "/fsx"
    # The file system's names are the data stack's outputs (an output may not re-export an
    # import).
    data_outputs = data_template.to_json()["Outputs"]
    assert fsx_id in json.dumps(data_outputs["FsxDnsName"]["Value"])
    assert data_outputs["FsxMountName"]["Value"] == {"Fn::GetAtt": [fsx_id, "LustreMountName"]}
    assert outputs["LifecycleScriptsS3Uri"]["Value"]["Fn::Join"][1][-1] == "/lifecycle-scripts/"


def test_default_cluster_is_the_walkthrough_example(template, data_template):
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert groups["controller"]["InstanceType"] == "ml.m5.12xlarge"
    assert groups["controller"]["InstanceCount"] == 1
    assert groups["workers"]["InstanceType"] == "ml.trn1.32xlarge"
    assert groups["workers"]["InstanceCount"] == 4
    data_template.has_resource_properties("AWS::FSx::FileSystem", {"StorageCapacity": 1200})


def test_cluster_uses_the_data_stacks_network_and_waits_for_the_scripts(
    template, data_template, default_assembly
):
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    fsx_id, fsx = only(data_template, "AWS::FSx::FileSystem")
    upload_id, _ = only(template, "Custom::CDKBucketDeployment")
    # The scripts' S3 URI is read from the upload, so the cluster waits for the files.
    for group in cluster["Properties"]["InstanceGroups"]:
        source = json.dumps(group["LifeCycleConfig"]["SourceS3Uri"])
        assert json.dumps({"Fn::GetAtt": [upload_id, "DestinationBucketArn"]}) in source
    # The file system and the network come first: the cluster stack depends on theirs.
    manifest = json.loads((default_assembly.directory / "manifest.json").read_text())
    assert "FmpTrainingData" in manifest["artifacts"]["FmpTraining"]["dependencies"]
    vpc = cluster["Properties"]["VpcConfig"]
    subnet_id = fsx["Properties"]["SubnetIds"][0]["Ref"]
    group_id = fsx["Properties"]["SecurityGroupIds"][0]["Fn::GetAtt"][0]
    assert reads_from_data_stack(vpc["Subnets"][0], subnet_id)
    assert reads_from_data_stack(vpc["SecurityGroupIds"][0], group_id)
    subnet = data_template.to_json()["Resources"][subnet_id]["Properties"]
    assert subnet["AvailabilityZoneId"] == "use1-az4"
    assert subnet["CidrBlock"].endswith("/17")


def test_upload_runs_in_the_private_subnet_with_https_out_only(template, data_template):
    functions = template.find_resources("AWS::Lambda::Function")
    (function,) = functions.values()
    network = function["Properties"]["VpcConfig"]
    _, fsx = only(data_template, "AWS::FSx::FileSystem")
    assert reads_from_data_stack(network["SubnetIds"][0], fsx["Properties"]["SubnetIds"][0]["Ref"])
    (group_id,) = [
        n for n in data_template.find_resources("AWS::EC2::SecurityGroup") if "Upload" in n
    ]
    assert reads_from_data_stack(network["SecurityGroupIds"][0], group_id)
    group = data_template.to_json()["Resources"][group_id]["Properties"]
    assert "SecurityGroupIngress" not in group
    assert [
        (r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in group["SecurityGroupEgress"]
    ] == [("tcp", 443, 443)]
    (role,) = template.find_resources(
        "AWS::IAM::Role",
        {
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Statement": [{"Principal": {"Service": "lambda.amazonaws.com"}}]
                }
            }
        },
    ).values()
    assert "AWSLambdaVPCAccessExecutionRole" in json.dumps(role["Properties"]["ManagedPolicyArns"])


def _scanner_ids(resource: dict) -> tuple[set[str], set[str]]:
    metadata = resource.get("Metadata", {})
    checkov = {s["id"] for s in metadata.get("checkov", {}).get("skip", [])}
    cfn_nag = {s["id"] for s in metadata.get("cfn_nag", {}).get("rules_to_suppress", [])}
    return checkov, cfn_nag


def test_functions_that_cannot_be_hardened_further_are_acknowledged_for_scanners(
    template, data_template
):
    (upload,) = template.find_resources("AWS::Lambda::Function").values()
    assert _scanner_ids(upload) == ({"CKV_AWS_115", "CKV_AWS_116", "CKV_AWS_173"}, {"W58", "W92"})
    (provider,) = data_template.find_resources("AWS::Lambda::Function").values()
    assert _scanner_ids(provider) == ({"CKV_AWS_115", "CKV_AWS_116", "CKV_AWS_117"}, {"W89", "W92"})
    for entries in (upload["Metadata"]["checkov"]["skip"], provider["Metadata"]["checkov"]["skip"]):
        assert all(len(entry["comment"]) > 40 for entry in entries)


def test_the_cluster_policys_remaining_wildcards_are_acknowledged_for_scanners(template):
    # Every statement on "*" is one AWS's HyperPod guide grants there and EC2 cannot narrow.
    (policy,) = template.find_resources(
        "AWS::IAM::ManagedPolicy",
        {"Properties": {"Description": "HyperPod cluster instances (fm_platform)"}},
    ).values()
    on_star = [
        s["Sid"]
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Resource"] == "*"
    ]
    assert sorted(on_star) == [
        "DescribeClusterNetwork",
        "DescribeSharedFileSystem",
        "ReleaseClusterInterfaces",
    ]
    assert _scanner_ids(policy) == ({"CKV_AWS_109", "CKV_AWS_111"}, {"W13"})
    assert "HyperPod guide grants these EC2 actions" in json.dumps(policy["Metadata"])


def test_access_log_bucket_is_acknowledged_for_scanners(data_template):
    buckets = data_template.find_resources("AWS::S3::Bucket")
    logs = [b for b in buckets.values() if "LoggingConfiguration" not in b["Properties"]]
    (access_logs,) = logs
    assert _scanner_ids(access_logs) == ({"CKV_AWS_18", "CKV_AWS_145"}, {"W35"})


def test_provisioning_parameters_carry_the_fsx_tokens(stack):
    # Rendered into the upload at deploy time; check the document the stack built.
    parameters = stack.provisioning_parameters
    assert parameters["controller_group"] == "controller"
    assert parameters["worker_groups"] == [
        {"instance_group_name": "workers", "partition_name": "dev"}
    ]
    resolved = stack.resolve(parameters)
    assert resolved["fsx_dns_name"] == stack.resolve(stack.file_system.dns_name)
    assert resolved["fsx_mountname"] == stack.resolve(stack.file_system.mount_name)
    assert "LustreMountName" in json.dumps(resolved["fsx_mountname"])
    assert resolved["fsx_mount_path"] == "/fsx"


def test_private_subnet_too_small_for_efa_workers():
    config = TrainingConfig(
        private_subnet_cidr_mask=24,
        instance_groups=(
            InstanceGroup(
                name="controller",
                role=NodeRole.CONTROLLER,
                instance_type="ml.m5.12xlarge",
                instance_count=1,
            ),
            InstanceGroup(
                name="gpu", role=NodeRole.WORKER, instance_type="ml.p5.48xlarge", instance_count=16
            ),
        ),
    )
    with pytest.raises(ValueError) as error:
        TrainingStack(new_app(), "Small", config=config)
    assert "subnet='10.0.0.0/24': 251 usable addresses" in str(error.value)


# --- TrainingConfig.from_mapping ----------------------------------------------------------


def test_from_mapping_reads_every_field():
    config = TrainingConfig.from_mapping(
        {
            "availability_zone_id": "usw2-az1",
            "private_subnet_cidr_mask": 18,
            "storage_capacity_gib": 2400,
            "cluster_name": "llm-train",
            "instance_groups": [
                {
                    "name": "head",
                    "role": "controller",
                    "instance_type": "ml.m5.4xlarge",
                    "instance_count": 1,
                },
                {
                    "name": "login",
                    "role": "login",
                    "instance_type": "ml.m5.xlarge",
                    "instance_count": 1,
                },
                {
                    "name": "gpus",
                    "role": "worker",
                    "instance_type": "ml.p5.48xlarge",
                    "instance_count": 8,
                    "deep_health_checks": ["InstanceStress"],
                    "partition_name": "train",
                },
            ],
        }
    )
    assert config.availability_zone_id == "usw2-az1"
    assert config.private_subnet_cidr_mask == 18
    assert config.storage_capacity_gib == 2400
    assert config.cluster_name == "llm-train"
    assert config.vpc_cidr == "10.0.0.0/16"
    assert [g.role for g in config.instance_groups] == [
        NodeRole.CONTROLLER,
        NodeRole.LOGIN,
        NodeRole.WORKER,
    ]
    assert config.instance_groups[2].deep_health_checks == ("InstanceStress",)
    assert config.instance_groups[2].partition_name == "train"


def test_from_mapping_empty_gives_the_defaults():
    assert TrainingConfig.from_mapping({}) == TrainingConfig()


def test_from_mapping_rejects_an_unknown_key():
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping({"cluster_nme": "x"})
    message = str(error.value)
    assert "cluster_nme='x': unknown key; did you mean cluster_name?" in message
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping({"zzz": "x"})
    assert "allowed keys: instance_groups, availability_zone_id, vpc_cidr" in str(error.value)


def test_from_mapping_rejects_values_of_the_wrong_type():
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping(
            {
                "storage_capacity_gib": "1200",
                "cluster_name": 7,
                "instance_groups": [
                    {
                        "name": "c",
                        "role": "controller",
                        "instance_type": "ml.m5.xlarge",
                        "instance_count": "1",
                        "ebs_volume_gib": None,
                        "deep_health_checks": "InstanceStress",
                    }
                ],
            }
        )
    message = str(error.value)
    assert "storage_capacity_gib='1200': must be an integer" in message
    assert "cluster_name=7: must be a string or null" in message
    assert "instance_groups[0].instance_count='1': must be an integer" in message
    assert "instance_groups[0].deep_health_checks='InstanceStress': must be a list" in message
    assert "ebs_volume_gib" not in message


def test_from_mapping_rejects_bad_groups():
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping(
            {
                "instance_groups": [
                    {
                        "name": "a",
                        "role": "boss",
                        "instance_type": "ml.m5.xlarge",
                        "instance_count": 1,
                    },
                    {
                        "name": "b",
                        "role": "worker",
                        "instance_type": "ml.m5.xlarge",
                        "instance_count": 1,
                        "colour": "red",
                    },
                    {"name": "c", "role": "worker"},
                ]
            }
        )
    message = str(error.value)
    assert "instance_groups[0].role='boss': must be one of controller, login, worker" in message
    assert "instance_groups[1].colour='red': unknown key" in message
    assert "instance_groups[2]=" in message and "instance_type, instance_count" in message


def test_groups_without_a_controller_fail_before_anything_is_built():
    config = TrainingConfig(
        instance_groups=(
            InstanceGroup(
                name="w", role=NodeRole.WORKER, instance_type="ml.m5.xlarge", instance_count=1
            ),
        )
    )
    app = new_app()
    with pytest.raises(ValueError) as error:
        TrainingStack(app, "NoController", config=config)
    assert "invalid TrainingConfig:" in str(error.value)
    assert "exactly one group must have role CONTROLLER" in str(error.value)
    assert app.node.find_child("NoController").node.children == []


@pytest.mark.parametrize("flag", ["weak", "strong", None])
def test_the_pair_uses_exports_whatever_the_apps_reference_flag(flag):
    # The cluster reads the data stack's values through exports (Fn::ImportValue): an export
    # cannot change while imported, so CloudFormation refuses the data-stack update that
    # would orphan the running cluster; imports are resolved when the change set is made.
    context = {} if flag is None else {"@aws-cdk/core:defaultCrossStackReferences": flag}
    app = cdk.App(context=context)
    stack = TrainingStack(app, "Bare")
    assert stack.data.node.id == "BareData"
    assembly = app.synth()
    cluster = json.dumps(assembly.get_stack_by_name("Bare").template)
    assert "Fn::ImportValue" in cluster
    assert "Fn::GetStackOutput" not in cluster
    data = assembly.get_stack_by_name("BareData").template
    assert any("Export" in output for output in data["Outputs"].values())


def test_on_a_bare_app_the_pair_synthesizes_nag_clean():
    app = cdk.App()
    TrainingStack(app, "Bare")
    assert nag_findings(app) == []


def test_a_given_data_stack_is_used():
    app = new_app()
    config = TrainingConfig(storage_capacity_gib=2400)
    data = TrainingDataStack(app, "Shared", config=config)
    stack = TrainingStack(app, "Cluster", config=config, data=data)
    assert stack.data is data
    assert [child.node.id for child in app.node.children] == ["Shared", "Cluster"]


def test_the_file_system_waits_for_every_rule_of_its_security_group(data_template):
    fsx_id, fsx = only(data_template, "AWS::FSx::FileSystem")
    group = fsx["Properties"]["SecurityGroupIds"][0]
    rules = [
        name
        for kind in ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress")
        for name, rule in data_template.find_resources(kind).items()
        if rule["Properties"]["GroupId"] == group
    ]
    assert rules and sorted(rules) == sorted(fsx["DependsOn"])
