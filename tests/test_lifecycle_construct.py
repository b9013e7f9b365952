"""LifecycleScripts: the upload of the node scripts and the read grant for the cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.training.lifecycle import (
    LifecycleScripts,
    LifecycleScriptsProps,
    SharedUser,
    default_assets_path,
)
from fm_platform.core.compliance import acknowledge
from tests.lifecycle_support import asset_module
from tests.support import nag_findings, new_app

# Stateful resources: their logical IDs are a contract (a change replaces them).
BUCKET_ID, KEY_ID = "LifecycleBucket112BBEDB", "LifecycleBucketKeyEBDF4D58"
PARAMS: dict[str, Any] = {
    "version": "1.0.0",
    "workload_manager": "slurm",
    "controller_group": "controller",
    "login_group": "login",
    "worker_groups": [{"instance_group_name": "workers", "partition_name": "dev"}],
    "fsx_mountname": "abcdefgh",
    "fsx_mount_path": "/fsx",
}


def build(stack: cdk.Stack, **overrides: Any) -> tuple[LifecycleScripts, iam.Role]:
    """LifecycleScripts with an FSx DNS name token, and a cluster-like role granted read."""
    dns = cdk.Fn.import_value("FsxDnsName")
    props = LifecycleScriptsProps(
        provisioning_parameters={**PARAMS, "fsx_dns_name": dns}, **overrides
    )
    scripts = LifecycleScripts(stack, "Lifecycle", props)
    role = iam.Role(
        stack, "ClusterRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com")
    )
    scripts.grant_read(role)
    return scripts, role


@pytest.fixture(scope="module")
def built() -> tuple[cdk.Stack, LifecycleScripts]:
    stack = cdk.Stack(new_app(), "Training")
    scripts, _ = build(stack)
    return stack, scripts


@pytest.fixture(scope="module")
def template(built: tuple[cdk.Stack, LifecycleScripts]) -> Template:
    return Template.from_stack(built[0])


def policy_statements(template: Template, logical_prefix: str, kind: str) -> list[dict]:
    policies = template.find_resources(kind)
    (policy,) = [p for name, p in policies.items() if name.startswith(logical_prefix)]
    return policy["Properties"]["PolicyDocument"]["Statement"]


def test_upload_goes_under_the_prefix_extracted_retained_and_pruned(template: Template) -> None:
    template.has_resource_properties(
        "Custom::CDKBucketDeployment",
        {
            "DestinationBucketKeyPrefix": "lifecycle-scripts/",
            "DestinationBucketName": {"Ref": BUCKET_ID},
            "Extract": True,
            "Prune": True,
            "RetainOnDelete": True,
            "SourceObjectKeys": Match.array_with([Match.string_like_regexp(r"\.zip$")]),
        },
    )


def test_provisioning_parameters_carry_the_token(template: Template) -> None:
    (deployment,) = template.find_resources("Custom::CDKBucketDeployment").values()
    markers = json.dumps(deployment["Properties"]["SourceMarkers"])
    assert '{"Fn::ImportValue": "FsxDnsName"}' in markers
    # One source is the scripts folder, the other the JSON document with the marker.
    assert len(deployment["Properties"]["SourceObjectKeys"]) == 2


def test_provisioning_parameters_file_content(
    built: tuple[cdk.Stack, LifecycleScripts], template: Template
) -> None:
    stack, _ = built
    out = Path(stack.node.root.synth().directory)
    (document,) = [p.read_text() for p in out.glob("asset.*/provisioning_parameters.json")]
    # The token becomes a marker the upload replaces with the quoted deploy-time value.
    (deployment,) = template.find_resources("Custom::CDKBucketDeployment").values()
    (marker,) = [m for m in deployment["Properties"]["SourceMarkers"] if m]
    ((name, value),) = marker.items()
    assert value == {"Fn::Join": ["", ['"', {"Fn::ImportValue": "FsxDnsName"}, '"']]}
    parsed = json.loads(document.replace(name, '"fs-0123.fsx.us-east-1.amazonaws.com"'))
    assert parsed == {**PARAMS, "fsx_dns_name": "fs-0123.fsx.us-east-1.amazonaws.com"}


def test_uploaded_folder_holds_the_scripts(built: tuple[cdk.Stack, LifecycleScripts]) -> None:
    stack, _ = built
    out = Path(stack.node.root.synth().directory)
    folders = [p.parent for p in out.glob("asset.*/on_create.sh")]
    assert len(folders) == 1
    assert (folders[0] / "provision.py").is_file()
    assert not (folders[0] / "__pycache__").exists()


def test_bucket_is_encrypted_versioned_and_tls_only(template: Template) -> None:
    name = BUCKET_ID
    bucket = template.to_json()["Resources"][name]
    assert bucket["DeletionPolicy"] == "Retain"
    props = bucket["Properties"]
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": name},
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            },
        },
    )


def test_s3_uri_names_bucket_and_prefix_after_the_upload(
    built: tuple[cdk.Stack, LifecycleScripts],
) -> None:
    stack, scripts = built
    resolved = json.dumps(stack.resolve(scripts.s3_uri))
    assert resolved.startswith('{"Fn::Join": ["", ["s3://"')
    assert resolved.endswith('"/lifecycle-scripts/"]]}')
    # The bucket name is read from the upload's custom resource, so users wait for it.
    assert "LifecycleUploadCustomResource" in resolved
    assert scripts.on_create_script == "on_create.sh"
    assert scripts.prefix == "lifecycle-scripts"


def test_grant_read_is_object_level_get_and_bucket_list(template: Template) -> None:
    bucket_arn = {"Fn::GetAtt": [BUCKET_ID, "Arn"]}
    statements = policy_statements(template, "ClusterRole", "AWS::IAM::Policy")
    assert statements == [
        {
            "Action": "s3:GetObject",
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", [bucket_arn, "/lifecycle-scripts/*"]]},
        },
        {"Action": "s3:ListBucket", "Effect": "Allow", "Resource": bucket_arn},
        {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": {"Fn::GetAtt": [KEY_ID, "Arn"]}},
    ]


def test_upload_handler_gets_exact_permissions(template: Template) -> None:
    name = BUCKET_ID
    statements = policy_statements(template, "LifecycleUploadPolicy", "AWS::IAM::ManagedPolicy")
    by_action = {json.dumps(s["Action"]): s for s in statements}
    assert set(by_action) == {
        '"s3:GetObject"',
        '"s3:ListBucket"',
        '["s3:DeleteObject", "s3:PutObject"]',
        '["logs:CreateLogStream", "logs:PutLogEvents"]',
        '["kms:Decrypt", "kms:GenerateDataKey"]',
    }
    assert len(by_action['"s3:GetObject"']["Resource"]) == 2  # the two staged zip files
    assert by_action['["s3:DeleteObject", "s3:PutObject"]']["Resource"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [name, "Arn"]}, "/lifecycle-scripts/*"]]
    }
    assert "*" not in json.dumps([s["Action"] for s in statements])
    # No inline policy on the handler's role: everything is in the managed policy.
    roles = template.find_resources("AWS::IAM::Policy")
    assert [n for n in roles if n.startswith("LifecycleUploadRole")] == []


def test_upload_waits_for_its_policy_and_logs_encrypted(template: Template) -> None:
    resources = template.to_json()["Resources"]
    (cr_id,) = [n for n, r in resources.items() if r["Type"] == "Custom::CDKBucketDeployment"]
    assert any(d.startswith("LifecycleUploadPolicy") for d in resources[cr_id]["DependsOn"])
    template.has_resource_properties(
        "AWS::Logs::LogGroup",
        {"KmsKeyId": {"Fn::GetAtt": [Match.string_like_regexp("LifecycleUploadLogsKey"), "Arn"]}},
    )
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {"LoggingConfig": {"LogGroup": {"Ref": Match.string_like_regexp("LifecycleUploadLogs")}}},
    )


def test_cloudwatch_logs_may_use_the_upload_key_for_the_upload_log_group_only(
    template: Template,
) -> None:
    # CloudWatch Logs User Guide (encrypting log data with AWS KMS): the key policy names
    # the log group in kms:EncryptionContext:aws:logs:arn. The group's name is generated
    # (<stack name>-<logical ID>-<suffix>), so a retained group never blocks a new stack.
    resources = template.to_json()["Resources"]
    (group_id,) = [n for n, r in resources.items() if r["Type"] == "AWS::Logs::LogGroup"]
    assert "LogGroupName" not in resources[group_id]["Properties"]
    (key,) = [
        r
        for name, r in resources.items()
        if r["Type"] == "AWS::KMS::Key" and name.startswith("LifecycleUploadLogsKey")
    ]
    (statement,) = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if "Service" in s["Principal"] and "logs." in json.dumps(s["Principal"])
    ]
    condition = statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    parts = condition["Fn::Join"][1]
    rendered = "".join(p if isinstance(p, str) else p["Ref"] for p in parts)
    assert rendered == (
        f"arn:AWS::Partition:logs:AWS::Region:AWS::AccountId:log-group:Training-{group_id}-*"
    )


def test_stateful_logical_ids_are_pinned(template: Template) -> None:
    resources = template.to_json()["Resources"]
    assert resources[BUCKET_ID]["Type"] == "AWS::S3::Bucket"
    assert resources[KEY_ID]["Type"] == "AWS::KMS::Key"
    assert resources[KEY_ID]["DeletionPolicy"] == "Retain"


@pytest.mark.slow
def test_cfn_lint_finds_nothing(template: Template) -> None:
    matches = lint(json.dumps(template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    # W3005: aws-cdk-lib's BucketDeployment handler states DependsOn its role, which GetAtt
    # already implies; harmless and not ours to change.
    assert [str(m) for m in matches if m.rule.id != "W3005"] == []


def test_app_is_nag_clean() -> None:
    app = new_app()
    stack = cdk.Stack(app, "Training")
    scripts, role = build(stack)
    acknowledge(
        role,
        "Test role standing in for the cluster role: reads every lifecycle object.",
        scripts.read_grant_finding,
        "HIPAA.Security-IAMNoInlinePolicy",
        "NIST.800.53.R5-IAMNoInlinePolicy",
    )
    assert nag_findings(app) == []


def test_existing_bucket_and_custom_prefix() -> None:
    stack = cdk.Stack(new_app(), "Training")
    bucket = s3.Bucket.from_bucket_name(stack, "Existing", "sagemaker-team-scripts")
    scripts, _ = build(stack, bucket=bucket, prefix="hyperpod/v2")
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::S3::Bucket", 0)
    template.has_resource_properties(
        "Custom::CDKBucketDeployment",
        {
            "DestinationBucketName": "sagemaker-team-scripts",
            "DestinationBucketKeyPrefix": "hyperpod/v2/",
        },
    )
    assert stack.resolve(scripts.s3_uri)["Fn::Join"][1][-1] == "/hyperpod/v2/"
    assert scripts.read_grant_finding == (
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::sagemaker-team-scripts/hyperpod/v2/*]"
    )


def error_of(**overrides: Any) -> str:
    props = {"provisioning_parameters": PARAMS, **overrides}
    with pytest.raises(ValueError) as caught:
        LifecycleScripts(cdk.Stack(new_app(), "S"), "Lifecycle", LifecycleScriptsProps(**props))
    return str(caught.value)


def test_missing_assets_folder_is_rejected(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    message = error_of(assets_path=str(missing))
    assert f"assets_path={str(missing)!r}: must be an existing folder" in message


def test_assets_folder_without_on_create_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "other.sh").write_text("#!/bin/bash\n")
    message = error_of(assets_path=str(tmp_path))
    assert f"assets_path={str(tmp_path)!r}: must contain on_create.sh" in message


def test_assets_folder_with_its_own_parameters_file_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "on_create.sh").write_text("#!/bin/bash\n")
    (tmp_path / "provisioning_parameters.json").write_text("{}")
    message = error_of(assets_path=str(tmp_path))
    assert "must not contain provisioning_parameters.json" in message


@pytest.mark.parametrize("prefix", ["/lifecycle", "lifecycle/", "a//b", "", "has space"])
def test_bad_prefix_is_rejected(prefix: str) -> None:
    message = error_of(prefix=prefix)
    assert f"prefix={prefix!r}: must be an S3 key prefix" in message


@pytest.mark.parametrize("key", ["controller_group", "worker_groups"])
def test_missing_required_parameter_is_named(key: str) -> None:
    params = {k: v for k, v in PARAMS.items() if k != key}
    message = error_of(provisioning_parameters=params)
    assert f"provisioning_parameters.{key}=None: is required" in message


def test_malformed_worker_group_is_rejected() -> None:
    params = {**PARAMS, "worker_groups": [{"instance_group_name": "workers"}]}
    message = error_of(provisioning_parameters=params)
    assert "provisioning_parameters.worker_groups[0]={'instance_group_name': 'workers'}" in message
    assert "instance_group_name and partition_name" in message


def test_every_problem_is_reported_at_once() -> None:
    message = error_of(provisioning_parameters={}, prefix="/x/")
    assert message.count("\n  - ") == 3


def test_default_assets_path_is_the_package_folder() -> None:
    assert (Path(default_assets_path()) / "on_create.sh").is_file()


def test_second_instance_shares_the_upload_lambda() -> None:
    stack = cdk.Stack(new_app(), "Training")
    first, _ = build(stack)
    props = LifecycleScriptsProps(provisioning_parameters=PARAMS, prefix="other")
    second = LifecycleScripts(stack, "Second", props)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Lambda::Function", 1)
    template.resource_count_is("AWS::IAM::Role", 2)  # the upload role and the test's role
    assert second.upload_log_group is None
    assert first.upload_log_group is not None
    policies = template.find_resources("AWS::IAM::ManagedPolicy")
    roles = {name[:6]: p["Properties"]["Roles"] for name, p in policies.items()}
    assert roles["Second"] == roles["Lifecy"] == [{"Ref": "LifecycleUploadRoleBC9FB9EB"}]


def _bucket_names(template: Template) -> list[dict]:
    return [
        b["Properties"]["BucketName"]
        for b in template.find_resources("AWS::S3::Bucket").values()
        if "BucketName" in b["Properties"]
    ]


def test_bucket_name_starts_with_sagemaker_and_is_unique_per_stack_creation(
    template: Template,
) -> None:
    (name,) = _bucket_names(template)
    prefix, guid = name["Fn::Join"][1]
    assert prefix.startswith("sagemaker-lc-") and len(prefix) == len("sagemaker-lc-") + 9
    assert guid == {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}
    # The stack ID's GUID has 36 characters: the name stays within S3's 63.
    assert len(prefix) + 36 <= 63


def test_two_lifecycle_buckets_in_one_stack_have_different_names() -> None:
    stack = cdk.Stack(new_app(), "Training")
    build(stack)
    LifecycleScripts(stack, "Second", LifecycleScriptsProps(provisioning_parameters=PARAMS))
    names = [json.dumps(n) for n in _bucket_names(Template.from_stack(stack))]
    assert len(names) == len(set(names)) == 2


def test_a_bucket_not_named_sagemaker_gets_a_warning() -> None:
    stack = cdk.Stack(new_app(), "Training")
    bucket = s3.Bucket.from_bucket_name(stack, "Existing", "team-scripts")
    build(stack, bucket=bucket)
    Annotations.from_stack(stack).has_warning(
        "*", Match.string_like_regexp("'team-scripts' does not start with 'sagemaker-'")
    )


def test_upload_in_a_vpc_runs_in_the_given_subnet_with_https_out_only() -> None:
    app = new_app()
    stack = cdk.Stack(app, "Training")
    vpc = ec2.Vpc(
        stack,
        "Vpc",
        max_azs=1,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name="Private", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        ],
        gateway_endpoints={
            "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3)
        },
    )
    scripts, role = build(stack, vpc=vpc, subnet=vpc.isolated_subnets[0])
    template = Template.from_stack(stack)
    functions = template.find_resources("AWS::Lambda::Function")
    (function,) = [f for n, f in functions.items() if "CDKBucketDeployment" in n]
    network = function["Properties"]["VpcConfig"]
    assert network["SubnetIds"] == [
        {"Ref": stack.get_logical_id(vpc.isolated_subnets[0].node.default_child)}
    ]
    (group_id,) = [n for n in template.find_resources("AWS::EC2::SecurityGroup") if "Upload" in n]
    assert network["SecurityGroupIds"] == [{"Fn::GetAtt": [group_id, "GroupId"]}]
    egress = template.to_json()["Resources"][group_id]["Properties"]["SecurityGroupEgress"]
    assert [(r["IpProtocol"], r["FromPort"], r["CidrIp"]) for r in egress] == [
        ("tcp", 443, "0.0.0.0/0")
    ]
    roles = template.find_resources("AWS::IAM::Role")
    upload_role = next(r for n, r in roles.items() if n.startswith("LifecycleUploadRole"))
    assert "AWSLambdaVPCAccessExecutionRole" in json.dumps(upload_role["Properties"])
    # In a VPC, cdk-nag has nothing to say about the function's network.
    checkov = {e["id"] for e in function["Metadata"]["checkov"]["skip"]}
    assert "CKV_AWS_117" not in checkov
    acknowledge(
        role,
        "Test role standing in for the cluster role: reads every lifecycle object.",
        scripts.read_grant_finding,
        "HIPAA.Security-IAMNoInlinePolicy",
        "NIST.800.53.R5-IAMNoInlinePolicy",
    )
    assert nag_findings(app) == []


def test_upload_outside_a_vpc_is_acknowledged_as_such(template: Template) -> None:
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    assert "VpcConfig" not in function["Properties"]
    checkov = {e["id"] for e in function["Metadata"]["checkov"]["skip"]}
    cfn_nag = {e["id"] for e in function["Metadata"]["cfn_nag"]["rules_to_suppress"]}
    assert checkov == {"CKV_AWS_115", "CKV_AWS_116", "CKV_AWS_117", "CKV_AWS_173"}
    assert cfn_nag == {"W58", "W89", "W92"}


def test_vpc_without_subnet_is_rejected() -> None:
    stack = cdk.Stack(new_app(), "S")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=0)
    message = error_of(vpc=vpc)
    assert "vpc/subnet='only vpc': give both to run the upload function in the VPC" in message


# --- managed Slurm mode and shared users ---------------------------------------------------

NODE_SETUP = {"version": 1, "mode": "managed", "fsx_mount_path": "/fsx"}


def _synthesized(stack: cdk.Stack) -> Path:
    return Path(stack.node.root.synth().directory)


def test_managed_mode_uploads_the_node_setup_and_no_provisioning_parameters() -> None:
    stack = cdk.Stack(new_app(), "Managed")
    LifecycleScripts(
        stack,
        "Lifecycle",
        LifecycleScriptsProps(node_setup={**NODE_SETUP, "home_mount_path": "/home"}),
    )
    out = _synthesized(stack)
    (document,) = [p.read_text() for p in out.glob("asset.*/fmp_node_setup.json")]
    assert json.loads(document) == {**NODE_SETUP, "home_mount_path": "/home"}
    assert list(out.glob("asset.*/provisioning_parameters.json")) == []
    assert list(out.glob("asset.*/shared_users.txt")) == []


def test_shared_users_are_uploaded_as_the_scripts_read_them() -> None:
    stack = cdk.Stack(new_app(), "Users")
    users = (SharedUser(name="alice", uid=2001), SharedUser(name="bob", uid=2002, home="/h/bob"))
    scripts, _ = build(stack, shared_users=users)
    (text,) = [p.read_text() for p in _synthesized(stack).glob("asset.*/shared_users.txt")]
    assert text == "alice,2001\nbob,2002,/h/bob\n"
    # The upload may read the third staged asset too.
    (deployment,) = (
        Template.from_stack(stack).find_resources("Custom::CDKBucketDeployment").values()
    )
    assert len(deployment["Properties"]["SourceObjectKeys"]) == 3
    statements = policy_statements(
        Template.from_stack(stack), "LifecycleUploadPolicy", "AWS::IAM::ManagedPolicy"
    )
    (get,) = [s for s in statements if s["Action"] == "s3:GetObject"]
    assert len(get["Resource"]) == 3
    # The scripts read exactly this format (node_users.py).
    node_users = asset_module("node_users")
    parsed = node_users.read_users(text, "/fsx/home", (1000, 60000))
    assert [(u.name, u.uid, u.home) for u in parsed] == [
        ("alice", 2001, "/fsx/home/alice"),
        ("bob", 2002, "/h/bob"),
    ]


@pytest.mark.parametrize(
    ("given", "said"),
    [({"node_setup": NODE_SETUP}, "both"), ({"provisioning_parameters": None}, "neither")],
)
def test_exactly_one_mode_file(given: dict[str, Any], said: str) -> None:
    message = error_of(**given)
    assert f"provisioning_parameters/node_setup={said!r}: give exactly one" in message


def test_a_bad_node_setup_is_named() -> None:
    message = error_of(
        provisioning_parameters=None, node_setup={**NODE_SETUP, "fsx_mount_path": "fsx"}
    )
    assert "node_setup.fsx_mount_path='fsx': must be an absolute, normalized path" in message


def test_assets_folder_with_a_node_setup_or_configured_users_file_is_rejected(
    tmp_path: Path,
) -> None:
    (tmp_path / "on_create.sh").write_text("#!/bin/bash\n")
    (tmp_path / "fmp_node_setup.json").write_text("{}")
    (tmp_path / "shared_users.txt").write_text("carol,2003\n")
    message = error_of(
        assets_path=str(tmp_path), shared_users=(SharedUser(name="alice", uid=2001),)
    )
    assert "must not contain fmp_node_setup.json" in message
    assert "must not contain shared_users.txt: it is written from shared_users" in message


def test_bad_shared_users_are_named() -> None:
    message = error_of(shared_users=(SharedUser(name="Alice", uid=10),))
    assert "shared_users[0].name='Alice'" in message
    assert "shared_users[0].uid=10: must be between 1000 and 60000" in message
