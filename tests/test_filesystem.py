"""SharedFileSystem: FSx for Lustre PERSISTENT_2 / LZ4 / 2.15, customer-managed key,
retained, Lustre ports within the cluster security group, optional S3 link; validation."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.constructs.training.filesystem import (
    DataRepositoryAssociationProps,
    SharedFileSystem,
    SharedFileSystemProps,
)
from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
from tests.support import nag_findings, new_app


def _build(app: cdk.App, *, with_repository: bool, **fs_options) -> tuple[cdk.Stack, dict]:
    """A stack with the cluster network, a data bucket and the file system."""
    stack = cdk.Stack(app, "Storage")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    repository = None
    bucket = None
    if with_repository:
        bucket = SecureBucket(stack, "Data", SecureBucketProps(purpose="training data"))
        repository = DataRepositoryAssociationProps(bucket=bucket.bucket, bucket_prefix="datasets/")
    file_system = SharedFileSystem(
        stack,
        "SharedFs",
        SharedFileSystemProps(
            vpc=network.vpc,
            subnet=network.subnet,
            security_group=network.security_group,
            data_repository=repository,
            **fs_options,
        ),
    )
    return stack, {"network": network, "file_system": file_system, "bucket": bucket}


@pytest.fixture(scope="module")
def built():
    stack, parts = _build(new_app(), with_repository=True)
    return parts, Template.from_stack(stack)


@pytest.fixture(scope="module")
def template(built) -> Template:
    return built[1]


def _only(template: Template, kind: str) -> tuple[str, dict]:
    found = template.find_resources(kind)
    assert len(found) == 1, f"expected one {kind}, found {sorted(found)}"
    return next(iter(found.items()))


def test_file_system_is_persistent_2_lz4_lustre_2_15(template):
    _, file_system = _only(template, "AWS::FSx::FileSystem")
    properties = file_system["Properties"]
    assert properties["FileSystemType"] == "LUSTRE"
    assert properties["FileSystemTypeVersion"] == "2.15"
    assert properties["StorageCapacity"] == 1200
    assert properties["LustreConfiguration"] == {
        "DeploymentType": "PERSISTENT_2",
        "PerUnitStorageThroughput": 250,
        "DataCompressionType": "LZ4",
    }


def test_file_system_is_in_the_private_subnet_and_cluster_group(built, template):
    parts, _ = built
    _, file_system = _only(template, "AWS::FSx::FileSystem")
    stack = cdk.Stack.of(parts["network"])
    network = parts["network"]
    assert file_system["Properties"]["SubnetIds"] == [stack.resolve(network.subnet.subnet_id)]
    assert file_system["Properties"]["SecurityGroupIds"] == [
        stack.resolve(network.security_group.security_group_id)
    ]


def test_file_system_and_its_key_are_retained(template):
    _, file_system = _only(template, "AWS::FSx::FileSystem")
    assert file_system["DeletionPolicy"] == "Retain"
    assert file_system["UpdateReplacePolicy"] == "Retain"
    key_id = file_system["Properties"]["KmsKeyId"]["Ref"]
    key = template.to_json()["Resources"][key_id]
    assert key["Type"] == "AWS::KMS::Key"
    assert key["DeletionPolicy"] == "Retain"
    assert key["Properties"]["EnableKeyRotation"] is True


def test_stable_logical_ids(template):
    resources = template.to_json()["Resources"]
    file_system_id, _ = _only(template, "AWS::FSx::FileSystem")
    assert file_system_id.startswith("SharedFsFileSystem")
    assert any(
        k.startswith("SharedFsKey") and v["Type"] == "AWS::KMS::Key" for k, v in resources.items()
    )


def _group_rules(template: Template, group_id: str) -> dict[str, dict]:
    """Every separate ingress/egress rule resource of the security group ``group_id``."""
    return {
        logical_id: rule
        for kind in ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress")
        for logical_id, rule in template.find_resources(kind).items()
        if rule["Properties"]["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}
    }


def test_file_system_is_created_after_every_rule_of_its_group(template):
    _, file_system = _only(template, "AWS::FSx::FileSystem")
    group_id = file_system["Properties"]["SecurityGroupIds"][0]["Fn::GetAtt"][0]
    rules = _group_rules(template, group_id)
    assert any(r["Type"] == "AWS::EC2::SecurityGroupIngress" for r in rules.values())
    assert set(rules) <= set(file_system.get("DependsOn", []))


def test_the_group_admitting_itself_gets_no_overlapping_lustre_rules(template):
    # The cluster group admits all traffic from itself: that covers TCP 988 and 1018-1023.
    ingress = [
        r["Properties"] for r in template.find_resources("AWS::EC2::SecurityGroupIngress").values()
    ]
    assert [(r["IpProtocol"], r.get("FromPort"), r.get("ToPort")) for r in ingress] == [
        ("-1", None, None)
    ]


def test_a_group_of_your_own_gets_the_lustre_rule_and_the_file_system_waits_for_it():
    stack = cdk.Stack(new_app(), "Byo")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=0)
    group = ec2.SecurityGroup(stack, "Group", vpc=vpc)
    SharedFileSystem(
        stack,
        "Fs",
        SharedFileSystemProps(vpc=vpc, subnet=vpc.isolated_subnets[0], security_group=group),
    )
    template = Template.from_stack(stack)
    group_id = stack.get_logical_id(group.node.default_child)
    rules = _group_rules(template, group_id)
    assert [
        (r["Properties"]["IpProtocol"], r["Properties"]["FromPort"], r["Properties"]["ToPort"])
        for r in rules.values()
    ] == [("tcp", 988, 1023)]
    _, file_system = _only(template, "AWS::FSx::FileSystem")
    assert set(rules) <= set(file_system["DependsOn"])


def test_no_rule_admits_an_address_range(template):
    for rule in template.find_resources("AWS::EC2::SecurityGroupIngress").values():
        assert "CidrIp" not in rule["Properties"]
        assert "CidrIpv6" not in rule["Properties"]


def test_attributes(built):
    parts, _ = built
    file_system = parts["file_system"]
    stack = cdk.Stack.of(file_system)
    assert file_system.mount_path == "/fsx"
    assert stack.resolve(file_system.file_system_id) == {
        "Ref": stack.resolve(file_system.file_system.node.default_child.logical_id)
    }
    assert stack.resolve(file_system.mount_name)["Fn::GetAtt"][1] == "LustreMountName"
    assert ".fsx." in json.dumps(stack.resolve(file_system.dns_name))
    assert file_system.data_repository_association is not None
    assert file_system.encryption_key.node.id == "Key"


def test_data_repository_links_datasets_with_auto_import_and_export(built, template):
    parts, _ = built
    stack = cdk.Stack.of(parts["network"])
    _, association = _only(template, "AWS::FSx::DataRepositoryAssociation")
    properties = association["Properties"]
    file_system_id, _ = _only(template, "AWS::FSx::FileSystem")
    assert properties["FileSystemId"] == {"Ref": file_system_id}
    assert properties["FileSystemPath"] == "/s3"
    assert properties["DataRepositoryPath"] == {
        "Fn::Join": ["", ["s3://", stack.resolve(parts["bucket"].bucket.bucket_name), "/datasets/"]]
    }
    assert properties["BatchImportMetaDataOnCreate"] is True
    everything = ["NEW", "CHANGED", "DELETED"]
    assert properties["S3"] == {
        "AutoImportPolicy": {"Events": everything},
        "AutoExportPolicy": {"Events": everything},
    }


def test_bucket_key_lets_fsx_service_linked_role_use_it_through_s3(built):
    parts, _ = built
    bucket_key = parts["bucket"].encryption_key
    stack = cdk.Stack.of(bucket_key)
    statements = stack.resolve(bucket_key.node.default_child.key_policy)["Statement"]
    fsx_statements = [s for s in statements if s.get("Sid") == "AllowFsxLustreThroughS3"]
    assert len(fsx_statements) == 1
    statement = fsx_statements[0]
    assert {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*"} <= set(statement["Action"])
    role_arn = json.dumps(statement["Condition"]["ArnLike"]["aws:PrincipalArn"])
    assert "s3.data-source.lustre.fsx.amazonaws.com/AWSServiceRoleForFSxS3Access_*" in role_arn
    assert "kms:ViaService" in statement["Condition"]["StringEquals"]
    assert "kms:CallerAccount" in statement["Condition"]["StringEquals"]


def test_without_data_repository_and_with_options():
    stack, parts = _build(
        new_app(),
        with_repository=False,
        storage_capacity_gib=4800,
        per_unit_storage_throughput_mbps=1000,
        mount_path="/scratch",
        removal_policy=cdk.RemovalPolicy.DESTROY,
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::FSx::DataRepositoryAssociation", 0)
    template.has_resource(
        "AWS::FSx::FileSystem",
        {
            "DeletionPolicy": "Delete",
            "Properties": Match.object_like(
                {
                    "StorageCapacity": 4800,
                    "LustreConfiguration": Match.object_like({"PerUnitStorageThroughput": 1000}),
                }
            ),
        },
    )
    assert parts["file_system"].data_repository_association is None
    assert parts["file_system"].mount_path == "/scratch"


def _error(**options) -> str:
    with pytest.raises(ValueError) as raised:
        _build(new_app(), with_repository=False, **options)
    return str(raised.value)


@pytest.mark.parametrize("capacity", [1000, 3000, 0, 3600])
def test_storage_capacity_off_the_persistent_2_steps(capacity):
    message = _error(storage_capacity_gib=capacity)
    assert f"storage_capacity_gib={capacity}" in message
    assert "1200, 2400, or a multiple of 2400" in message


@pytest.mark.parametrize("capacity", [1200, 2400, 4800, 7200, 100_800])
def test_storage_capacities_on_the_steps_are_accepted(built, capacity):
    network = built[0]["network"]
    SharedFileSystemProps(
        vpc=network.vpc,
        subnet=network.subnet,
        security_group=network.security_group,
        storage_capacity_gib=capacity,
    ).validate()


def test_throughput_not_offered_by_persistent_2():
    message = _error(per_unit_storage_throughput_mbps=300)
    assert "per_unit_storage_throughput_mbps=300: must be one of 125, 250, 500, 1000" in message


def test_mount_path_must_be_absolute():
    assert "mount_path='fsx': must be an absolute path" in _error(mount_path="fsx")


def test_data_repository_problems_are_reported_together():
    app = new_app()
    stack = cdk.Stack(app, "Bad")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    bucket = s3.Bucket.from_bucket_name(stack, "Bucket", "example-bucket")
    with pytest.raises(ValueError) as raised:
        SharedFileSystem(
            stack,
            "SharedFs",
            SharedFileSystemProps(
                vpc=network.vpc,
                subnet=network.subnet,
                security_group=network.security_group,
                storage_capacity_gib=3000,
                data_repository=DataRepositoryAssociationProps(
                    bucket=bucket,
                    bucket_prefix="/datasets/",
                    file_system_path="s3",
                    auto_export_events=("NEW", "RENAMED"),
                ),
            ),
        )
    message = str(raised.value)
    assert "storage_capacity_gib=3000" in message
    assert "data_repository.bucket_prefix='/datasets/': must not start with '/'" in message
    assert "data_repository.file_system_path='s3': must be an absolute path" in message
    assert (
        "data_repository.auto_export_events='RENAMED': must be one of NEW, CHANGED, DELETED"
        in message
    )


def test_whole_bucket_link_and_imported_bucket_without_key():
    stack = cdk.Stack(new_app(), "Whole")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    bucket = s3.Bucket.from_bucket_name(stack, "Bucket", "example-bucket")
    SharedFileSystem(
        stack,
        "SharedFs",
        SharedFileSystemProps(
            vpc=network.vpc,
            subnet=network.subnet,
            security_group=network.security_group,
            data_repository=DataRepositoryAssociationProps(
                bucket=bucket, auto_import_events=(), file_system_path="/datasets"
            ),
        ),
    )
    template = Template.from_stack(stack)
    _, association = _only(template, "AWS::FSx::DataRepositoryAssociation")
    assert association["Properties"]["DataRepositoryPath"] == "s3://example-bucket"
    assert association["Properties"]["FileSystemPath"] == "/datasets"
    assert "AutoImportPolicy" not in association["Properties"]["S3"]


def test_imported_bucket_key_gets_a_warning():
    stack = cdk.Stack(new_app(), "ImportedKey")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    key = kms.Key.from_key_arn(
        stack, "Key", "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    )
    bucket = s3.Bucket.from_bucket_attributes(
        stack, "Bucket", bucket_name="example-bucket", encryption_key=key
    )
    SharedFileSystem(
        stack,
        "SharedFs",
        SharedFileSystemProps(
            vpc=network.vpc,
            subnet=network.subnet,
            security_group=network.security_group,
            data_repository=DataRepositoryAssociationProps(bucket=bucket),
        ),
    )
    Annotations.from_stack(stack).has_warning(
        "/ImportedKey/SharedFs", Match.string_like_regexp("AWSServiceRoleForFSxS3Access")
    )


@pytest.mark.slow
def test_cfn_lint_finds_nothing(template):
    matches = lint(json.dumps(template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_nag_packs_find_nothing():
    app = new_app()
    _build(app, with_repository=True)
    assert nag_findings(app) == []


def test_storage_capacity_and_throughput_from_cloudformation_parameters_synthesize():
    stack = cdk.Stack(new_app(), "Parameterised")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    capacity = cdk.CfnParameter(stack, "Capacity", type="Number", default=2400)
    throughput = cdk.CfnParameter(stack, "Throughput", type="Number", default=500)
    SharedFileSystem(
        stack,
        "Fs",
        SharedFileSystemProps(
            vpc=network.vpc,
            subnet=network.subnet,
            security_group=network.security_group,
            storage_capacity_gib=capacity.value_as_number,
            per_unit_storage_throughput_mbps=throughput.value_as_number,
        ),
    )
    _, file_system = _only(Template.from_stack(stack), "AWS::FSx::FileSystem")
    properties = file_system["Properties"]
    assert properties["StorageCapacity"] == {"Ref": "Capacity"}
    assert properties["LustreConfiguration"]["PerUnitStorageThroughput"] == {"Ref": "Throughput"}
