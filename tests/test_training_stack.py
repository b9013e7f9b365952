"""TrainingStack: composition, outputs and TrainingConfig.from_mapping. The default stack's
template comes from the session's CLI synth (cfn-lint and cdk-nag run on it in test_app)."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint

from fm_platform.app import build_app
from fm_platform.config import load_config
from fm_platform.constructs.observability.training_alarms import SDK_FUNCTION_ID
from fm_platform.constructs.training.home_filesystem import HomeFileSystemOptions
from fm_platform.constructs.training.hyperpod import NodeProvisioning, SlurmMode
from fm_platform.constructs.training.instance_groups import (
    Capacity,
    InstanceGroup,
    NodeRole,
    ScheduledUpdate,
)
from fm_platform.constructs.training.lifecycle import SharedUser
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks import TrainingConfig, TrainingDataStack, TrainingStack
from tests.conftest import APP_CONFIG
from tests.support import (
    ROOT,
    deleted_but_needed,
    nag_findings,
    new_app,
    normalized,
    open_findings,
    stateful_changes,
)

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


def upload_function(template: Template) -> dict:
    """The cluster stack's upload function (not the stack's AWS SDK custom resource
    function, which finds the lifecycle log group for the lifecycle-error alarm)."""
    (function,) = [
        f
        for logical_id, f in template.find_resources("AWS::Lambda::Function").items()
        if not logical_id.startswith(SDK_FUNCTION_ID)
    ]
    return function


def test_upload_runs_in_the_private_subnet_with_https_out_only(template, data_template):
    function = upload_function(template)
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
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    role = template.to_json()["Resources"][role_id]
    statement = role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert statement["Principal"] == {"Service": "lambda.amazonaws.com"}
    assert "AWSLambdaVPCAccessExecutionRole" in json.dumps(role["Properties"]["ManagedPolicyArns"])


def _scanner_ids(resource: dict) -> tuple[set[str], set[str]]:
    metadata = resource.get("Metadata", {})
    checkov = {s["id"] for s in metadata.get("checkov", {}).get("skip", [])}
    cfn_nag = {s["id"] for s in metadata.get("cfn_nag", {}).get("rules_to_suppress", [])}
    return checkov, cfn_nag


def test_functions_that_cannot_be_hardened_further_are_acknowledged_for_scanners(
    template, data_template
):
    upload = upload_function(template)
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
    assert sorted(on_star) == ["DescribeClusterNetwork", "DescribeSharedFileSystem"]
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
                    "partition": "train",
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
    assert config.instance_groups[2].partition == "train"


def test_from_mapping_empty_gives_the_defaults():
    assert TrainingConfig.from_mapping({}) == TrainingConfig()


def test_from_mapping_rejects_an_unknown_key():
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping({"cluster_nme": "x"})
    message = str(error.value)
    assert "cluster_nme='x': unknown key; did you mean cluster_name?" in message
    with pytest.raises(ValueError) as error:
        TrainingConfig.from_mapping({"zzz": "x"})
    assert (
        "allowed keys: instance_groups, slurm_accounting, home_file_system, orchestrator, "
        "eks, availability_zone_id, vpc_cidr" in str(error.value)
    )


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


# --- Slurm modes: today's template in lifecycle mode, every new key in managed mode --------

#: What `cdk synth` adds to templates and an in-process App does not by default.
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True, "aws:cdk:enable-asset-metadata": True}


def _synthesized(config: dict, **context: object) -> dict[str, dict]:
    """The training stacks of the app built from ``config`` (the compliance packs applied:
    an open cdk-nag finding fails the synth and is listed)."""
    app = new_app(context={**CLI_CONTEXT, **context})
    build_app(app, load_config({**config, "deploy_inference": False}))
    try:
        assembly = app.synth()
    except RuntimeError as error:
        raise AssertionError(f"{error}: {open_findings(Path(app.outdir))}") from None
    return {stack.stack_name: stack.template for stack in assembly.stacks}


@pytest.mark.parametrize("mode", [None, "lifecycle"])
def test_lifecycle_mode_deploys_todays_default_template_unchanged(mode):
    # The committed snapshots are the default app's templates before the Slurm modes; the
    # default configuration, with slurm_mode unset or "lifecycle", must build them exactly.
    config = json.loads((ROOT / APP_CONFIG).read_text())
    if mode is not None:
        config["training"]["slurm_mode"] = mode
    templates = _synthesized(config)
    for name in ("FmpTraining", "FmpTrainingData"):
        snapshot = ROOT / "tests" / "__snapshots__" / "test_app"
        committed = json.loads((snapshot / f"test_template_snapshot[{name}].json").read_text())
        assert normalized(templates[name]) == committed, name


#: A configuration that uses every key the Slurm modes brought.
EVERY_NEW_KEY = {
    "training": {
        "slurm_mode": "managed",
        "node_provisioning": "continuous",
        "slurm_accounting": True,
        "home_file_system": {
            "storage_capacity_gib": 128,
            "throughput_capacity_mbps": 128,
            "mount_path": "/home",
        },
        "shared_users": [{"name": "alice", "uid": 2001}, {"name": "bob", "uid": 2002}],
        "instance_groups": [
            {
                "name": "controller",
                "role": "controller",
                "instance_type": "ml.m5.12xlarge",
                "instance_count": 1,
                "capacity": "on_demand",
                "image_id": "ami-0123456789abcdef0",
            },
            {
                "name": "login",
                "role": "login",
                "instance_type": "ml.m5.4xlarge",
                "instance_count": 1,
            },
            {
                "name": "gpus",
                "role": "worker",
                "instance_type": "ml.p5.48xlarge",
                "instance_count": 4,
                "min_count": 2,
                "partition": "train",
                "scheduled_update": {
                    "cron": "cron(0 3 ? * SUN *)",
                    "batch_percent": 25,
                    "wait_s": 600,
                    "rollback_alarms": ["team-training-errors"],
                },
            },
        ],
    }
}


@pytest.fixture(scope="module")
def every_new_key() -> dict[str, dict]:
    return _synthesized(EVERY_NEW_KEY)


@pytest.mark.parametrize("stack", ["FmpTraining", "FmpTrainingData"])
@pytest.mark.slow
def test_every_new_key_synthesizes_cfn_lint_and_nag_clean(every_new_key, stack):
    # Synthesized with the three cdk-nag packs (an open finding fails the fixture).
    matches = lint(json.dumps(every_new_key[stack]), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


@pytest.mark.slow
def test_a_strategy_with_standard_provisioning_synthesizes_cfn_lint_and_nag_clean():
    # slurm_config_strategy cannot go with the continuous provisioning of EVERY_NEW_KEY.
    templates = _synthesized(
        {"training": {"slurm_mode": "managed", "slurm_config_strategy": "Managed"}}
    )
    cluster = json.dumps(templates["FmpTraining"])
    assert '"Orchestrator": {"Slurm": {"SlurmConfigStrategy": "Managed"}}' in cluster
    for template in templates.values():
        matches = lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_every_new_key_reaches_the_cluster(every_new_key):
    resources = every_new_key["FmpTraining"]["Resources"]
    (cluster,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::Cluster"]
    properties = cluster["Properties"]
    assert properties["NodeProvisioningMode"] == "Continuous"
    accounting = properties["Orchestrator"]["Slurm"]["AccountingDatabase"]
    assert "AccountingDatabase" in json.dumps(accounting["Endpoint"])
    assert "AccountingDatabaseSecret" in json.dumps(accounting["SecretArn"])
    groups = {g["InstanceGroupName"]: g for g in properties["InstanceGroups"]}
    gpus = groups["gpus"]
    assert gpus["SlurmConfig"] == {"NodeType": "Compute", "PartitionNames": ["train"]}
    assert gpus["MinInstanceCount"] == 2
    assert gpus["ScheduledUpdateConfig"]["ScheduleExpression"] == "cron(0 3 ? * SUN *)"
    assert groups["controller"]["CapacityRequirements"] == {"OnDemand": {}}
    assert groups["controller"]["ImageId"] == "ami-0123456789abcdef0"
    storage = json.dumps(gpus["InstanceStorageConfigs"])
    assert "FsxLustreConfig" in storage and "FsxOpenZfsConfig" in storage
    assert {r["Type"] for r in resources.values()} >= {
        "AWS::Events::Rule",
        "AWS::CloudWatch::Alarm",
    }


def test_every_new_key_reaches_the_data_stack(every_new_key):
    resources = every_new_key["FmpTrainingData"]["Resources"]
    (database,) = [r for r in resources.values() if r["Type"] == "AWS::RDS::DBCluster"]
    properties = database["Properties"]
    assert properties["Engine"] == "aurora-mysql"
    assert properties["StorageEncrypted"] is True
    assert properties["ServerlessV2ScalingConfiguration"] == {"MinCapacity": 0.5, "MaxCapacity": 2}
    key = properties["KmsKeyId"]["Fn::GetAtt"][0]
    assert resources[key]["Properties"]["EnableKeyRotation"] is True
    # The database admits only the cluster's group, on 3306.
    (group_id,) = [g["Fn::GetAtt"][0] for g in properties["VpcSecurityGroupIds"]]
    ingress = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::EC2::SecurityGroupIngress"
        and r["Properties"]["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}
    ]
    assert sorted(r["SourceSecurityGroupId"]["Fn::GetAtt"][0] for r in ingress) == [
        "NetworkClusterSecurityGroup6FC78C02",
    ]
    assert {(r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in ingress} == {("tcp", 3306, 3306)}
    # The password is generated into Secrets Manager and encrypted with the key; it is not
    # rotated, since slurmdbd keeps the password it started with.
    (secret,) = [r for r in resources.values() if r["Type"] == "AWS::SecretsManager::Secret"]
    assert secret["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    assert "#" in secret["Properties"]["GenerateSecretString"]["ExcludeCharacters"]
    assert not [
        r for r in resources.values() if r["Type"] == "AWS::SecretsManager::RotationSchedule"
    ]
    assert "AccountingRotationSecurityGroup779A81D7" not in resources
    (home,) = [
        r
        for r in resources.values()
        if r["Type"] == "AWS::FSx::FileSystem" and r["Properties"]["FileSystemType"] == "OPENZFS"
    ]
    assert home["Properties"]["StorageCapacity"] == 128
    assert home["Properties"]["OpenZFSConfiguration"]["ThroughputCapacity"] == 128
    outputs = every_new_key["FmpTrainingData"]["Outputs"]
    assert {"HomeFileSystemId", "AccountingDatabaseEndpoint", "AccountingDatabaseSecretArn"} <= set(
        outputs
    )


# The stateful resources this configuration adds, pinned like the default app's (test_app):
# renaming a construct ID would replace them.
PINNED_WITH_EVERY_NEW_KEY = {
    "FmpTraining": {},
    "FmpTrainingData": {
        "NetworkFlowLogKeyF785E5F9": "AWS::KMS::Key",
        "NetworkFlowLogs2BEC3212": "AWS::Logs::LogGroup",
        "FileSystemKeyA5484887": "AWS::KMS::Key",
        "FileSystem0A147049": "AWS::FSx::FileSystem",
        "LifecycleScriptsBucketKey51EF4DE8": "AWS::KMS::Key",
        "LifecycleScriptsBucketC326695E": "AWS::S3::Bucket",
        "LifecycleScriptsBucketAccessLogsA77EAF12": "AWS::S3::Bucket",
        "LifecycleScriptsUploadLogsKey00B8A623": "AWS::KMS::Key",
        "LifecycleScriptsUploadLogs902B8BF1": "AWS::Logs::LogGroup",
        "NotificationsKeyADCFA950": "AWS::KMS::Key",
        "HomeFileSystemKey4AF6A3B0": "AWS::KMS::Key",
        "HomeFileSystem196045E8": "AWS::FSx::FileSystem",
        "AccountingKey4D75B93F": "AWS::KMS::Key",
        "AccountingDatabase4284BBE7": "AWS::RDS::DBCluster",
        "AccountingDatabaseWriterD3BC9D19": "AWS::RDS::DBInstance",
        "FmpTrainingDataAccountingDatabaseSecretE4AB14739e09bcd6492dc35db3cfc59c2ce86989": (
            "AWS::SecretsManager::Secret"
        ),
    },
}
STATEFUL_TYPES = {
    "AWS::KMS::Key",
    "AWS::S3::Bucket",
    "AWS::FSx::FileSystem",
    "AWS::Logs::LogGroup",
    "AWS::RDS::DBCluster",
    "AWS::RDS::DBInstance",
    "AWS::SecretsManager::Secret",
}


@pytest.mark.parametrize("stack", sorted(PINNED_WITH_EVERY_NEW_KEY))
def test_the_new_stateful_resources_keep_their_logical_ids_and_are_retained(every_new_key, stack):
    resources = every_new_key[stack]["Resources"]
    changes = stateful_changes(PINNED_WITH_EVERY_NEW_KEY[stack], resources, STATEFUL_TYPES)
    assert changes == [], "\n".join(changes)


@pytest.mark.parametrize("stack", ["FmpTraining", "FmpTrainingData"])
def test_nothing_the_new_retained_resources_need_is_deleted(every_new_key, stack):
    assert deleted_but_needed(every_new_key[stack]["Resources"]) == set()


def test_the_database_sits_next_to_the_cluster_in_subnets_of_two_zones(every_new_key):
    resources = every_new_key["FmpTrainingData"]["Resources"]
    (group,) = [r for r in resources.values() if r["Type"] == "AWS::RDS::DBSubnetGroup"]
    subnets = [s["Ref"] for s in group["Properties"]["SubnetIds"]]
    private = "NetworkVpcPrivateSubnet1Subnet6DD86AE6"
    assert subnets[0] == private
    zones = [resources[s]["Properties"].get("AvailabilityZone") for s in subnets[1:]]
    assert zones == [{"Fn::Select": [i, {"Fn::GetAZs": ""}]} for i in (0, 1)]
    cidrs = [resources[s]["Properties"]["CidrBlock"] for s in subnets[1:]]
    assert cidrs == ["10.0.129.0/27", "10.0.129.32/27"]  # after the /17 and the /24
    (writer,) = [r for r in resources.values() if r["Type"] == "AWS::RDS::DBInstance"]
    assert writer["Properties"]["AvailabilityZone"] == {"Fn::GetAtt": [private, "AvailabilityZone"]}


def test_managed_mode_uploads_the_node_setup():
    stack = TrainingStack(
        new_app(),
        "Managed",
        config=TrainingConfig.from_mapping(
            {"slurm_mode": "managed", "home_file_system": {"mount_path": "/shared-home"}}
        ),
    )
    assert stack.provisioning_parameters is None
    assert stack.node_setup == {
        "version": 1,
        "mode": "managed",
        "fsx_mount_path": "/fsx",
        "home_mount_path": "/shared-home",
    }


def test_from_mapping_reads_the_new_keys_and_refuses_the_removed_partition_name():
    config = TrainingConfig.from_mapping(EVERY_NEW_KEY["training"])
    assert config.slurm_mode is SlurmMode.MANAGED
    assert config.node_provisioning is NodeProvisioning.CONTINUOUS
    assert config.home_file_system == HomeFileSystemOptions(
        storage_capacity_gib=128, throughput_capacity_mbps=128
    )
    assert config.shared_users == (
        SharedUser(name="alice", uid=2001),
        SharedUser(name="bob", uid=2002),
    )
    gpus = config.instance_groups[2]
    assert gpus.scheduled_update == ScheduledUpdate(
        cron="cron(0 3 ? * SUN *)",
        batch_percent=25,
        wait_s=600,
        rollback_alarms=("team-training-errors",),
    )
    assert config.instance_groups[0].capacity is Capacity.ON_DEMAND
    workers = {"name": "w", "role": "worker", "instance_type": "ml.c5.xlarge", "instance_count": 1}
    with pytest.raises(ValueError, match=r"instance_groups\[1\].partition_name='cpu': unknown key"):
        TrainingConfig.from_mapping(
            {"instance_groups": [CONTROLLER_ITEM, {**workers, "partition_name": "cpu"}]}
        )
    assert TrainingConfig().slurm_mode is SlurmMode.LIFECYCLE


CONTROLLER_ITEM = {
    "name": "controller",
    "role": "controller",
    "instance_type": "ml.m5.12xlarge",
    "instance_count": 1,
}


def _problems(training: dict) -> list[str]:
    with pytest.raises(ValidationError) as error:
        load_config({"training": training, "deploy_inference": False})
    return list(error.value.problems)


def test_bad_values_of_the_new_keys_are_named_by_key():
    worker = {"name": "w", "role": "worker", "instance_type": "ml.c5.xlarge", "instance_count": 2}
    found = _problems(
        {
            "slurm_mode": "automatic",
            "node_provisioning": "eventually",
            "slurm_config_strategy": "Replace",
            "home_file_system": {"storage_capacity_gib": 10, "throughput_capacity_mbps": 70},
            "shared_users": [{"name": "Root", "uid": 0}],
            "instance_groups": [
                CONTROLLER_ITEM,
                {
                    **worker,
                    "partition": "gpu_training",
                    "min_count": 3,
                    "capacity": "spot",
                    "image_id": "ami-1",
                    "scheduled_update": {"cron": "weekly", "batch_count": 0, "wait_s": 7200},
                },
            ],
        }
    )
    text = "\n".join(found)
    for key in (
        "training.slurm_mode='automatic': must be one of managed, lifecycle",
        "training.node_provisioning='eventually': must be one of standard, continuous",
        "training.slurm_config_strategy='Replace': not supported",
        "training.home_file_system.storage_capacity_gib=10: must be between 64 and 524288",
        "training.home_file_system.throughput_capacity_mbps=70: must be one of 64, 128",
        "training.shared_users[0].name='Root'",
        "training.shared_users[0].uid=0: must be between 1000 and 60000",
        "training.instance_groups[1].partition='gpu_training'",
        "training.instance_groups[1].min_count=3: must be at most the group's instance_count (2)",
        "training.instance_groups[1].capacity='spot': HyperPod documents Spot capacity only",
        "training.instance_groups[1].image_id='ami-1'",
        "training.instance_groups[1].scheduled_update.cron='weekly'",
        "training.instance_groups[1].scheduled_update.batch_count=0: below the minimum 1",
        "training.instance_groups[1].scheduled_update.wait_s=7200: above the maximum 3600",
    ):
        assert key in text, key


def test_managed_only_keys_in_lifecycle_mode_are_named_by_key():
    found = "\n".join(
        _problems(
            {
                "slurm_accounting": True,
                "home_file_system": {},
                "node_provisioning": "continuous",
                "slurm_config_strategy": "Merge",
            }
        )
    )
    for key in (
        "training.slurm_accounting=True: needs slurm_mode managed",
        "training.home_file_system='given': needs slurm_mode managed",
        "training.node_provisioning='continuous': needs slurm_mode managed",
        "training.slurm_config_strategy='Merge': needs slurm_mode managed",
    ):
        assert key in found, key


def test_accounting_refuses_standard_provisioning_and_a_strategy():
    found = "\n".join(
        _problems(
            {"slurm_mode": "managed", "slurm_accounting": True, "node_provisioning": "standard"}
        )
        + _problems(
            {"slurm_mode": "managed", "slurm_accounting": True, "slurm_config_strategy": "Merge"}
        )
        + _problems({"slurm_mode": "managed", "mount_path": "/fsx/"})
    )
    assert (
        "training.slurm_accounting=True: an external accounting database needs continuous node "
        "provisioning" in found
    )
    assert "training.slurm_config_strategy='Merge': leave it unset with continuous" in found
    assert "training.mount_path='/fsx/': must not end with '/'" in found


def test_the_stack_checks_the_slurm_features_before_building_anything():
    app = new_app()
    with pytest.raises(ValueError) as error:
        TrainingStack(app, "Early", config=TrainingConfig(slurm_accounting=True))
    assert "slurm_accounting=True: needs slurm_mode managed" in str(error.value)
    assert [child.node.id for child in app.node.children] == ["Early"]
    assert app.node.find_child("Early").node.children == []


def test_the_upload_log_key_serves_the_upload_and_hyperpod_log_groups_only(data_template):
    # The key encrypts the upload function's log group and, associated by the lifecycle
    # alarm, the cluster's lifecycle log group: CloudWatch Logs may use it for those
    # (kms:EncryptionContext:aws:logs:arn), not for any log group of the account.
    (key,) = [
        r
        for name, r in data_template.find_resources("AWS::KMS::Key").items()
        if name.startswith("LifecycleScriptsUploadLogsKey")
    ]
    logs_statements = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if "logs." in json.dumps(s["Principal"])
    ]
    groups = []
    for statement in logs_statements:
        condition = statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
        parts = condition["Fn::Join"][1]
        groups.append("".join(p if isinstance(p, str) else p["Ref"] for p in parts))
    here = "arn:AWS::Partition:logs:AWS::Region:AWS::AccountId:log-group:"
    assert sorted(groups) == [
        f"{here}/aws/sagemaker/Clusters/*",
        f"{here}FmpTrainingData-LifecycleScriptsUploadLogs902B8BF1-*",
    ]
