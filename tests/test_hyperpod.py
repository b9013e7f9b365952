"""HyperPodCluster: the CloudFormation it writes, its execution role, the provisioning
parameters, and one test per validation message."""

from __future__ import annotations

import json
from dataclasses import replace

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint
from constructs import Construct

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.constructs.training.hyperpod import (
    SUBNET_ADDRESS_MARGIN,
    HyperPodCluster,
    HyperPodClusterProps,
    InstanceGroup,
    NodeRole,
    provisioning_parameters,
    required_ipv4_addresses,
)
from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
from tests.support import nag_findings, new_app

PREFIX = "lifecycle-scripts"


class FakeLifecycle(Construct):
    """A stand-in for LifecycleScripts: a secure bucket, a placeholder resource as the
    upload, and the same read grant."""

    on_create_script = "on_create.sh"

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        secure = SecureBucket(self, "Scripts", SecureBucketProps(purpose="test scripts"))
        self.bucket = secure.bucket
        self.prefix = PREFIX
        self.s3_uri = f"s3://{self.bucket.bucket_name}/{PREFIX}/"

    def read_statements(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects(f"{PREFIX}/*")]
            ),
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn]),
            iam.PolicyStatement(
                actions=["kms:Decrypt"], resources=[self.bucket.encryption_key.key_arn]
            ),
        ]


class FakeFileSystem(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.file_system = cdk.CfnWaitConditionHandle(self, "Resource")


CONTROLLER = InstanceGroup(
    name="controller", role=NodeRole.CONTROLLER, instance_type="ml.m5.12xlarge", instance_count=1
)
LOGIN = InstanceGroup(
    name="login",
    role=NodeRole.LOGIN,
    instance_type="ml.m5.4xlarge",
    instance_count=1,
    ebs_volume_gib=None,
)
GPU_WORKERS = InstanceGroup(
    name="gpu",
    role=NodeRole.WORKER,
    instance_type="ml.p5.48xlarge",
    instance_count=2,
    threads_per_core=2,
    ebs_volume_gib=1000,
    partition="train",
)
CPU_WORKERS = InstanceGroup(
    name="cpu", role=NodeRole.WORKER, instance_type="ml.c5.4xlarge", instance_count=2
)
GROUPS = (CONTROLLER, LOGIN, GPU_WORKERS, CPU_WORKERS)


def build(app: cdk.App) -> cdk.Stack:
    stack = cdk.Stack(app, "HyperPod")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    HyperPodCluster(
        stack,
        "Cluster",
        HyperPodClusterProps(
            instance_groups=GROUPS,
            subnet=network.subnet,
            security_group=network.security_group,
            lifecycle=FakeLifecycle(stack, "Lifecycle"),
            file_system=FakeFileSystem(stack, "FileSystem"),
            tags={"team": "ml"},
        ),
    )
    return stack


@pytest.fixture(scope="module")
def template() -> Template:
    return Template.from_stack(build(new_app()))


def cluster_properties(template: Template) -> dict:
    (cluster,) = template.find_resources("AWS::SageMaker::Cluster").values()
    return cluster


def groups_by_name(template: Template) -> dict[str, dict]:
    groups = cluster_properties(template)["Properties"]["InstanceGroups"]
    return {g["InstanceGroupName"]: g for g in groups}


def logical_id(template: Template, resource_type: str, path_part: str) -> str:
    matches = [k for k in template.find_resources(resource_type) if k.startswith(path_part)]
    assert len(matches) == 1, matches
    return matches[0]


# --- the cluster resource -----------------------------------------------------------------


def test_every_group_runs_the_lifecycle_scripts(template):
    for group in groups_by_name(template).values():
        config = group["LifeCycleConfig"]
        assert config["OnCreate"] == "on_create.sh"
        assert config["SourceS3Uri"]["Fn::Join"][1][-1] == f"/{PREFIX}/"


def test_groups_carry_type_count_threads_and_role(template):
    groups = groups_by_name(template)
    assert list(groups) == ["controller", "login", "gpu", "cpu"]
    gpu = groups["gpu"]
    assert gpu["InstanceType"] == "ml.p5.48xlarge"
    assert gpu["InstanceCount"] == 2
    assert gpu["ThreadsPerCore"] == 2
    assert groups["controller"]["ThreadsPerCore"] == 1
    role = logical_id(template, "AWS::IAM::Role", "ClusterExecutionRole")
    assert {json.dumps(g["ExecutionRole"]) for g in groups.values()} == {
        json.dumps({"Fn::GetAtt": [role, "Arn"]})
    }


def test_ebs_volume_default_explicit_and_none(template):
    groups = groups_by_name(template)
    assert groups["controller"]["InstanceStorageConfigs"] == [
        {"EbsVolumeConfig": {"VolumeSizeInGB": 500}}
    ]
    assert groups["gpu"]["InstanceStorageConfigs"] == [
        {"EbsVolumeConfig": {"VolumeSizeInGB": 1000}}
    ]
    assert "InstanceStorageConfigs" not in groups["login"]


def test_deep_health_checks_only_on_accelerated_workers(template):
    groups = groups_by_name(template)
    assert groups["gpu"]["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    for name in ("controller", "login", "cpu"):
        assert "OnStartDeepHealthChecks" not in groups[name], name


def test_classic_slurm_mode_sets_no_slurm_config(template):
    cluster = cluster_properties(template)["Properties"]
    assert "Orchestrator" not in cluster
    assert all("SlurmConfig" not in g for g in cluster["InstanceGroups"])


def test_cluster_properties(template):
    template.has_resource_properties(
        "AWS::SageMaker::Cluster",
        {
            "NodeRecovery": "Automatic",
            "VpcConfig": {
                "Subnets": [{"Ref": Match.string_like_regexp("^NetworkVpcPrivateSubnet1")}],
                "SecurityGroupIds": [
                    {
                        "Fn::GetAtt": [
                            Match.string_like_regexp("^NetworkClusterSecurityGroup"),
                            "GroupId",
                        ]
                    }
                ],
            },
            "Tags": [{"Key": "team", "Value": "ml"}],
        },
    )
    assert "ClusterName" not in cluster_properties(template)["Properties"]


def test_cluster_waits_for_file_system_and_role_policy(template):
    depends_on = cluster_properties(template)["DependsOn"]
    for resource_type, prefix in [
        ("AWS::CloudFormation::WaitConditionHandle", "FileSystem"),
        ("AWS::IAM::ManagedPolicy", "ClusterExecutionRolePolicy"),
    ]:
        assert logical_id(template, resource_type, prefix) in depends_on


# --- the execution role -------------------------------------------------------------------


def policy_statements(template: Template) -> list[dict]:
    policy_id = logical_id(template, "AWS::IAM::ManagedPolicy", "ClusterExecutionRolePolicy")
    policy = template.find_resources("AWS::IAM::ManagedPolicy")[policy_id]
    return policy["Properties"]["PolicyDocument"]["Statement"]


def statement_for(template: Template, action: str) -> dict:
    matches = [
        s
        for s in policy_statements(template)
        if action in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    ]
    assert len(matches) == 1, (action, matches)
    return matches[0]


def test_role_trusts_sagemaker_and_has_the_managed_instance_policy(template):
    template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": {
                "Statement": [
                    Match.object_like({"Principal": {"Service": "sagemaker.amazonaws.com"}})
                ]
            },
            "ManagedPolicyArns": [
                {
                    "Fn::Join": [
                        "",
                        [
                            "arn:",
                            {"Ref": "AWS::Partition"},
                            ":iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",
                        ],
                    ]
                }
            ],
        },
    )


def test_role_reads_lifecycle_objects_and_lists_the_bucket(template):
    bucket = logical_id(template, "AWS::S3::Bucket", "LifecycleScriptsBucket")
    get_object = statement_for(template, "s3:GetObject")
    assert get_object["Resource"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, f"/{PREFIX}/*"]]
    }
    assert statement_for(template, "s3:ListBucket")["Resource"] == {"Fn::GetAtt": [bucket, "Arn"]}
    key = logical_id(template, "AWS::KMS::Key", "LifecycleScriptsKey")
    assert statement_for(template, "kms:Decrypt")["Resource"] == {"Fn::GetAtt": [key, "Arn"]}


def test_role_may_describe_file_systems(template):
    assert statement_for(template, "fsx:DescribeFileSystems")["Resource"] == "*"


def test_role_creates_interfaces_only_in_the_cluster_subnet_and_group(template):
    resources = json.dumps(statement_for(template, "ec2:CreateNetworkInterface")["Resource"])
    assert ":network-interface/*" in resources
    assert "NetworkVpcPrivateSubnet1Subnet" in resources and ":subnet/" in resources
    assert "NetworkClusterSecurityGroup" in resources and ":security-group/" in resources
    # DeleteNetworkInterfacePermission's resource is the interface (EC2's service
    # authorization reference), so it is bound like the other interface actions.
    for action in (
        "ec2:DeleteNetworkInterface",
        "ec2:CreateTags",
        "ec2:DeleteNetworkInterfacePermission",
    ):
        resource = json.dumps(statement_for(template, action)["Resource"])
        assert resource.endswith(':network-interface/*"]]}'), (action, resource)
    assert statement_for(template, "ec2:DescribeSubnets")["Resource"] == "*"
    # Detaching authorises the interface (this account's) and the instance (HyperPod's).
    detach = json.dumps(statement_for(template, "ec2:DetachNetworkInterface")["Resource"])
    assert ':network-interface/*"]]}' in detach and ':*:instance/*"]]}' in detach


def test_a_given_role_is_used_and_no_role_is_created():
    app = new_app()
    stack = cdk.Stack(app, "Byo")
    role = iam.Role.from_role_arn(
        stack, "Role", "arn:aws:iam::123456789012:role/hyperpod", mutable=False
    )
    cluster = HyperPodCluster(stack, "Cluster", props(stack, execution_role=role))
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::IAM::Role", 0)
    assert cluster.execution_role is role
    groups = template.find_resources("AWS::SageMaker::Cluster")
    (resource,) = groups.values()
    assert {g["ExecutionRole"] for g in resource["Properties"]["InstanceGroups"]} == {
        "arn:aws:iam::123456789012:role/hyperpod"
    }


def _actions_of(statements: list[dict]) -> set[str]:
    return {
        a
        for s in statements
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }


# What the created role is granted beyond its managed policy, one action of each statement.
GRANTED_ACTIONS = {
    "ec2:CreateNetworkInterface",
    "ec2:DeleteNetworkInterface",
    "ec2:DetachNetworkInterface",
    "ec2:DescribeSubnets",
    "s3:GetObject",
    "s3:ListBucket",
    "kms:Decrypt",
    "fsx:DescribeFileSystems",
}


def test_a_given_role_of_the_app_gets_the_grants_of_the_created_one():
    stack = cdk.Stack(new_app(), "Byo")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    HyperPodCluster(
        stack,
        "Cluster",
        props(stack, execution_role=role, file_system=FakeFileSystem(stack, "Fs")),
    )
    template = Template.from_stack(stack)
    (policy,) = template.find_resources("AWS::IAM::Policy").values()
    assert _actions_of(policy["Properties"]["PolicyDocument"]["Statement"]) >= GRANTED_ACTIONS
    (role_resource,) = template.find_resources("AWS::IAM::Role").values()
    assert "AmazonSageMakerClusterInstanceRolePolicy" in json.dumps(
        role_resource["Properties"]["ManagedPolicyArns"]
    )


def test_a_role_that_already_has_the_managed_policy_gets_it_once():
    stack = cdk.Stack(new_app(), "Byo")
    role = iam.Role(
        stack,
        "Role",
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        managed_policies=[
            iam.ManagedPolicy.from_aws_managed_policy_name(
                "AmazonSageMakerClusterInstanceRolePolicy"
            )
        ],
    )
    HyperPodCluster(stack, "Cluster", props(stack, execution_role=role))
    (role_resource,) = Template.from_stack(stack).find_resources("AWS::IAM::Role").values()
    assert len(role_resource["Properties"]["ManagedPolicyArns"]) == 1


def test_an_imported_mutable_role_gets_the_statements_and_a_managed_policy_warning():
    stack = cdk.Stack(new_app(), "Byo")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::123456789012:role/hyperpod")
    HyperPodCluster(stack, "Cluster", props(stack, execution_role=role))
    template = Template.from_stack(stack)
    (policy,) = template.find_resources("AWS::IAM::Policy").values()
    assert policy["Properties"]["Roles"] == ["hyperpod"]
    assert GRANTED_ACTIONS - {"fsx:DescribeFileSystems"} <= _actions_of(
        policy["Properties"]["PolicyDocument"]["Statement"]
    )
    Annotations.from_stack(stack).has_warning(
        "/Byo/Cluster",
        Match.string_like_regexp(
            "make sure the AWS managed policy AmazonSageMakerClusterInstanceRolePolicy is attached"
        ),
    )


def test_an_immutable_role_gets_a_warning_listing_every_statement_to_attach():
    stack = cdk.Stack(new_app(), "Byo")
    role = iam.Role.from_role_arn(
        stack, "Role", "arn:aws:iam::123456789012:role/hyperpod", mutable=False
    )
    HyperPodCluster(
        stack,
        "Cluster",
        props(stack, execution_role=role, file_system=FakeFileSystem(stack, "Fs")),
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::IAM::Policy", 0)
    (warning,) = Annotations.from_stack(stack).find_warning("/Byo/Cluster", Match.any_value())
    message = warning.entry.data
    assert "attach the AWS managed policy AmazonSageMakerClusterInstanceRolePolicy" in message
    listed, _ = json.JSONDecoder().raw_decode(message[message.index(": [") + 2 :])
    assert _actions_of(listed) >= GRANTED_ACTIONS
    create = next(s for s in listed if s.get("Sid") == "CreateInterfacesInClusterSubnet")
    assert "subnet/subnet-0123456789abcdef0" in json.dumps(create["Resource"])


@pytest.mark.slow
def test_cfn_lint_finds_nothing(template):
    matches = lint(json.dumps(template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_nag_packs_find_nothing():
    app = new_app()
    build(app)
    assert nag_findings(app) == []


# --- provisioning parameters --------------------------------------------------------------


def test_provisioning_parameters_from_groups():
    assert provisioning_parameters(
        GROUPS, fsx_dns_name="fs.example", fsx_mount_name="abcd", fsx_mount_path="/fsx"
    ) == {
        "version": "1.0.0",
        "workload_manager": "slurm",
        "controller_group": "controller",
        "login_group": "login",
        "worker_groups": [
            {"instance_group_name": "gpu", "partition_name": "train"},
            {"instance_group_name": "cpu", "partition_name": "cpu"},
        ],
        "fsx_dns_name": "fs.example",
        "fsx_mountname": "abcd",
        "fsx_mount_path": "/fsx",
    }


def test_provisioning_parameters_without_login_group_leave_it_out():
    parameters = provisioning_parameters(
        (CONTROLLER, CPU_WORKERS), fsx_dns_name="d", fsx_mount_name="m"
    )
    assert "login_group" not in parameters
    assert parameters["fsx_mount_path"] == "/fsx"


def test_provisioning_parameters_without_controller_name_the_groups():
    with pytest.raises(ValueError) as error:
        provisioning_parameters((CPU_WORKERS,), fsx_dns_name="d", fsx_mount_name="m")
    message = str(error.value)
    assert f"instance_groups={{'{CPU_WORKERS.name}': 'WORKER'}}" in message
    assert "exactly one group with role CONTROLLER" in message


# --- validation ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scope() -> cdk.Stack:
    return cdk.Stack(new_app(), "Validation")


def props(stack: cdk.Stack, *, cidr: str = "10.0.0.0/17", **overrides) -> HyperPodClusterProps:
    """Props with an imported subnet of ``cidr`` (constructs created once per id)."""
    subnet_id = f"Subnet{cidr.replace('.', '-').replace('/', '_')}"
    subnet = stack.node.try_find_child(subnet_id) or ec2.Subnet.from_subnet_attributes(
        stack,
        subnet_id,
        subnet_id="subnet-0123456789abcdef0",
        ipv4_cidr_block=cidr,
        route_table_id="rtb-0123456789abcdef0",
    )
    group = stack.node.try_find_child("Sg") or ec2.SecurityGroup.from_security_group_id(
        stack, "Sg", "sg-0123456789abcdef0"
    )
    lifecycle = stack.node.try_find_child("Lifecycle") or FakeLifecycle(stack, "Lifecycle")
    values = dict(
        instance_groups=(CONTROLLER, CPU_WORKERS),
        subnet=subnet,
        security_group=group,
        lifecycle=lifecycle,
    )
    values.update(overrides)
    return HyperPodClusterProps(**values)


def problems_of(props_: HyperPodClusterProps) -> str:
    with pytest.raises(ValueError) as error:
        props_.validate()
    return str(error.value)


def test_valid_props_pass(scope):
    props(scope).validate()
    props(scope, instance_groups=GROUPS, cluster_name="my-cluster-1").validate()


@pytest.mark.parametrize("instance_type", ["ml.g4dn.banana", "ml.inf2.xlarge"])
def test_instance_type_hyperpod_does_not_offer(scope, instance_type):
    group = replace(CPU_WORKERS, instance_type=instance_type)
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert f"instance_groups[1].instance_type='{instance_type}': not supported" in message
    assert "values of botocore's ClusterInstanceType; did you mean ml." in message
    assert "ml.p5.48xlarge" not in message  # the closest names, not the whole list


def test_group_name_with_underscore(scope):
    group = replace(CPU_WORKERS, name="cpu_workers")
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].name='cpu_workers'" in message


def test_group_name_of_64_characters(scope):
    group = replace(CPU_WORKERS, name="w" * 64)
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert f"instance_groups[1].name='{'w' * 64}': too long: at most 63" in message


def test_two_groups_with_one_name(scope):
    group = replace(CPU_WORKERS, name="controller")
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[*].name='controller': must be unique" in message


def test_no_controller_group(scope):
    message = problems_of(props(scope, instance_groups=(CPU_WORKERS,)))
    assert "instance_groups[*].role=[]: exactly one group must have role CONTROLLER" in message


def test_two_controller_groups(scope):
    second = replace(CONTROLLER, name="controller2")
    message = problems_of(props(scope, instance_groups=(CONTROLLER, second, CPU_WORKERS)))
    assert "['controller', 'controller2']: exactly one group must have role CONTROLLER" in message
    assert "found 2" in message


@pytest.mark.parametrize("count", [0, 2])
def test_controller_group_must_hold_exactly_one_instance(scope, count):
    controller = replace(CONTROLLER, instance_count=count)
    message = problems_of(props(scope, instance_groups=(controller, CPU_WORKERS)))
    assert (
        f"instance_groups[0].instance_count={count}: a CONTROLLER group must hold exactly "
        "1 instance" in message
    )


def test_controller_count_from_a_parameter_is_not_checked(scope):
    count = cdk.CfnParameter(cdk.Stack.of(scope), "ControllerCount", type="Number")
    controller = replace(CONTROLLER, instance_count=count.value_as_number)
    props(scope, instance_groups=(controller, CPU_WORKERS)).validate()


def test_two_login_groups(scope):
    second = replace(LOGIN, name="login2")
    message = problems_of(props(scope, instance_groups=(CONTROLLER, LOGIN, second)))
    assert "['login', 'login2']: at most one group may have role LOGIN" in message


def test_threads_per_core_3(scope):
    group = replace(CPU_WORKERS, threads_per_core=3)
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].threads_per_core=3: above the maximum 2" in message


def test_instance_count_below_range(scope):
    group = replace(CPU_WORKERS, instance_count=-1)
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].instance_count=-1: below the minimum 0" in message


@pytest.mark.parametrize(
    ("size", "why"), [(0, "below the minimum 1"), (20000, "above the maximum 16384")]
)
def test_ebs_volume_out_of_range(scope, size, why):
    group = replace(CPU_WORKERS, ebs_volume_gib=size)
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert f"instance_groups[1].ebs_volume_gib={size}: {why}" in message


def test_unknown_deep_health_check(scope):
    group = replace(GPU_WORKERS, deep_health_checks=("InstanceStress", "Vibes"))
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].deep_health_checks[1]='Vibes': not supported" in message
    assert "deep_health_checks[0]" not in message


def test_deep_health_checks_on_a_cpu_group(scope):
    group = replace(CPU_WORKERS, deep_health_checks=("InstanceStress",))
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].deep_health_checks=('InstanceStress',)" in message
    assert "only on NVIDIA GPU and Trainium instances, not on ml.c5.4xlarge" in message


def test_partition_on_a_controller_group(scope):
    group = replace(CONTROLLER, partition="dev")
    message = problems_of(props(scope, instance_groups=(group, CPU_WORKERS)))
    assert "instance_groups[0].partition='dev': only WORKER groups" in message


def test_bad_training_plan_arn(scope):
    group = replace(GPU_WORKERS, training_plan_arn="arn:aws:sagemaker:plan")
    message = problems_of(props(scope, instance_groups=(CONTROLLER, group)))
    assert "instance_groups[1].training_plan_arn='arn:aws:sagemaker:plan'" in message


@pytest.mark.parametrize("name", ["bad_name", "c" * 64])
def test_invalid_cluster_name(scope, name):
    message = problems_of(props(scope, cluster_name=name))
    assert f"cluster_name='{name}'" in message


def test_invalid_node_recovery(scope):
    message = problems_of(props(scope, node_recovery="Manual"))
    assert "node_recovery='Manual': not supported; allowed: one of Automatic, None" in message


def test_subnet_too_small_for_efa_workers(scope):
    workers = replace(GPU_WORKERS, instance_count=16)
    message = problems_of(props(scope, cidr="10.0.0.0/24", instance_groups=(CONTROLLER, workers)))
    required = 1 + 16 * 32 + SUBNET_ADDRESS_MARGIN
    assert (
        f"subnet='10.0.0.0/24': 251 usable addresses, but the instance groups need {required}"
        in (message)
    )
    assert "use a /22 subnet or a larger one" in message


def test_subnet_that_fits_passes(scope):
    workers = replace(GPU_WORKERS, instance_count=16)
    props(scope, cidr="10.0.0.0/22", instance_groups=(CONTROLLER, workers)).validate()


def test_required_addresses_treat_unknown_types_as_one_address():
    unknown = replace(CPU_WORKERS, instance_type="ml.unknown.xlarge", instance_count=3)
    assert required_ipv4_addresses((CONTROLLER, unknown)) == 1 + 3 + SUBNET_ADDRESS_MARGIN


def test_every_problem_is_reported_at_once(scope):
    group = replace(CPU_WORKERS, name="bad_name", threads_per_core=3)
    message = problems_of(props(scope, instance_groups=(group,), cluster_name="x_y"))
    for field in ("instance_groups[0].name", "threads_per_core", "role", "cluster_name"):
        assert field in message
