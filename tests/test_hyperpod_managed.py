"""HyperPodCluster in managed Slurm mode and the group options of both modes: the Slurm
topology HyperPod gets from the API, the mounts it makes, continuous provisioning, the
accounting database, scheduled updates and their rollback alarm, capacity and image pins;
one test per validation message, each naming its key."""

from __future__ import annotations

import json
from dataclasses import replace

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint
from constructs import Construct

from fm_platform.constructs.training.hyperpod import (
    HyperPodCluster,
    HyperPodClusterProps,
    NodeProvisioning,
    SlurmMode,
)
from fm_platform.constructs.training.instance_groups import Capacity, ScheduledUpdate
from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
from tests.support import nag_findings, new_app
from tests.test_hyperpod import (
    CONTROLLER,
    CPU_WORKERS,
    GPU_WORKERS,
    LOGIN,
    FakeFileSystem,
    FakeLifecycle,
    problems_of,
    props,
    statement_for,
)

SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-abcdef"
UPDATE = ScheduledUpdate(
    cron="cron(0 3 ? * SUN *)", batch_percent=25, wait_s=600, rollback_alarms=("my-alarm",)
)
AMI = "ami-0123456789abcdef0"


class FakeLustre(Construct):
    """A stand-in for SharedFileSystem: what HyperPod needs to mount it."""

    dns_name = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
    mount_name = "abcdefgh"
    mount_path = "/fsx"

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.file_system = cdk.CfnWaitConditionHandle(self, "Resource")


class FakeHome(FakeLustre):
    """A stand-in for HomeFileSystem."""

    dns_name = "fs-0fedcba9876543210.fsx.us-east-1.amazonaws.com"
    mount_path = "/home"


class FakeDatabase:
    """A stand-in for SlurmAccountingDatabase."""

    endpoint = "slurm.cluster-abc.us-east-1.rds.amazonaws.com"
    port = 3306
    secret_arn = SECRET_ARN

    def secret_read_statements(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[SECRET_ARN])
        ]


GROUPS = (
    replace(CONTROLLER, capacity=Capacity.ON_DEMAND, image_id=AMI),
    LOGIN,
    replace(GPU_WORKERS, min_count=1, scheduled_update=UPDATE),
    CPU_WORKERS,
)


def build(app: cdk.App, **overrides: object) -> cdk.Stack:
    stack = cdk.Stack(app, "Managed")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    values: dict[str, object] = dict(
        instance_groups=GROUPS,
        subnet=network.subnet,
        security_group=network.security_group,
        lifecycle=FakeLifecycle(stack, "Lifecycle"),
        file_system=FakeLustre(stack, "FileSystem"),
        home_file_system=FakeHome(stack, "Home"),
        accounting_database=FakeDatabase(),
        slurm_mode=SlurmMode.MANAGED,
    )
    values.update(overrides)
    HyperPodCluster(stack, "Cluster", HyperPodClusterProps(**values))  # type: ignore[arg-type]
    return stack


@pytest.fixture(scope="module")
def template() -> Template:
    return Template.from_stack(build(new_app()))


def cluster_of(template: Template) -> dict:
    (cluster,) = template.find_resources("AWS::SageMaker::Cluster").values()
    return cluster


def groups_of(template: Template) -> dict[str, dict]:
    groups = cluster_of(template)["Properties"]["InstanceGroups"]
    return {g["InstanceGroupName"]: g for g in groups}


# --- the Slurm topology and the mounts ----------------------------------------------------


def test_each_group_has_the_node_type_of_its_role_and_workers_their_partition(template):
    groups = groups_of(template)
    assert groups["controller"]["SlurmConfig"] == {"NodeType": "Controller"}
    assert groups["login"]["SlurmConfig"] == {"NodeType": "Login"}
    assert groups["gpu"]["SlurmConfig"] == {"NodeType": "Compute", "PartitionNames": ["train"]}
    # A worker without a partition gets its group's name.
    assert groups["cpu"]["SlurmConfig"] == {"NodeType": "Compute", "PartitionNames": ["cpu"]}


def test_the_scripts_run_after_hyperpods_own_initialization(template):
    for group in groups_of(template).values():
        config = group["LifeCycleConfig"]
        assert config["OnInitComplete"] == "on_create.sh"
        assert "OnCreate" not in config  # the schema: mutually exclusive


def test_hyperpod_mounts_fsx_and_the_home_file_system_on_every_group(template):
    groups = groups_of(template)
    for name, group in groups.items():
        storage = group["InstanceStorageConfigs"]
        assert {"FsxLustreConfig": {**_lustre(), "MountPath": "/fsx"}} in storage, name
        assert {
            "FsxOpenZfsConfig": {"DnsName": FakeHome.dns_name, "MountPath": "/home"}
        } in storage, name
    # The EBS volume stays first where there is one; the login group has none.
    assert groups["gpu"]["InstanceStorageConfigs"][0] == {
        "EbsVolumeConfig": {"VolumeSizeInGB": 1000}
    }
    assert len(groups["login"]["InstanceStorageConfigs"]) == 2


def _lustre() -> dict[str, str]:
    return {"DnsName": FakeLustre.dns_name, "MountName": FakeLustre.mount_name}


def test_the_cluster_waits_for_both_file_systems(template):
    depends_on = cluster_of(template)["DependsOn"]
    assert any(d.startswith("FileSystem") for d in depends_on)
    assert any(d.startswith("Home") for d in depends_on)


# --- provisioning, accounting, strategy ---------------------------------------------------


def test_accounting_turns_continuous_provisioning_on_and_omits_the_strategy(template):
    properties = cluster_of(template)["Properties"]
    assert properties["NodeProvisioningMode"] == "Continuous"
    assert properties["Orchestrator"] == {
        "Slurm": {
            "AccountingDatabase": {
                "Endpoint": FakeDatabase.endpoint,
                "Port": 3306,
                "SecretArn": SECRET_ARN,
            }
        }
    }


def test_the_role_reads_the_accounting_secret(template):
    policies = template.find_resources("AWS::IAM::ManagedPolicy")
    (policy,) = [p for name, p in policies.items() if name.startswith("ClusterExecutionRole")]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {
        "Action": "secretsmanager:GetSecretValue",
        "Effect": "Allow",
        "Resource": SECRET_ARN,
    } in (statements)


def test_standard_provisioning_writes_merge_and_no_provisioning_mode():
    groups = (CONTROLLER, CPU_WORKERS)
    template = Template.from_stack(
        build(new_app(), instance_groups=groups, accounting_database=None)
    )
    properties = cluster_of(template)["Properties"]
    assert properties["Orchestrator"] == {"Slurm": {"SlurmConfigStrategy": "Merge"}}
    assert "NodeProvisioningMode" not in properties


def test_a_given_strategy_is_written():
    template = Template.from_stack(
        build(
            new_app(),
            instance_groups=(CONTROLLER, CPU_WORKERS),
            accounting_database=None,
            slurm_config_strategy="Managed",
        )
    )
    assert cluster_of(template)["Properties"]["Orchestrator"] == {
        "Slurm": {"SlurmConfigStrategy": "Managed"}
    }


def test_a_minimum_count_alone_turns_continuous_provisioning_on(template):
    assert groups_of(template)["gpu"]["MinInstanceCount"] == 1
    minimum_only = Template.from_stack(build(new_app(), accounting_database=None))
    properties = cluster_of(minimum_only)["Properties"]
    assert properties["NodeProvisioningMode"] == "Continuous"
    assert properties["Orchestrator"] == {"Slurm": {}}


def test_continuous_provisioning_asked_for_without_anything_needing_it():
    template = Template.from_stack(
        build(
            new_app(),
            instance_groups=(CONTROLLER, CPU_WORKERS),
            accounting_database=None,
            node_provisioning=NodeProvisioning.CONTINUOUS,
        )
    )
    assert cluster_of(template)["Properties"]["NodeProvisioningMode"] == "Continuous"


# --- capacity, image, scheduled update and its alarm --------------------------------------


def test_capacity_type_and_image_pin(template):
    controller = groups_of(template)["controller"]
    assert controller["CapacityRequirements"] == {"OnDemand": {}}
    assert controller["ImageId"] == AMI
    assert "CapacityRequirements" not in groups_of(template)["cpu"]
    assert "ImageId" not in groups_of(template)["cpu"]


def test_a_scheduled_update_rolls_back_on_its_alarms_and_the_node_health_alarm(template):
    ((alarm_id, alarm),) = template.find_resources("AWS::CloudWatch::Alarm").items()
    name = alarm["Properties"]["AlarmName"]
    assert name.startswith("Managed-") and name.endswith("-unhealthy-nodes")
    assert groups_of(template)["gpu"]["ScheduledUpdateConfig"] == {
        "ScheduleExpression": "cron(0 3 ? * SUN *)",
        "DeploymentConfig": {
            "RollingUpdatePolicy": {
                "MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 25}
            },
            "WaitIntervalInSeconds": 600,
            "AutoRollbackConfiguration": [{"AlarmName": "my-alarm"}, {"AlarmName": name}],
        },
    }
    assert "ScheduledUpdateConfig" not in groups_of(template)["cpu"]
    # The alarm counts the matches of a rule on this cluster's unhealthy-node events.
    ((rule_id, rule),) = template.find_resources("AWS::Events::Rule").items()
    cluster_id = next(iter(template.find_resources("AWS::SageMaker::Cluster")))
    assert rule["Properties"]["EventPattern"] == {
        "source": ["aws.sagemaker"],
        "detail-type": ["SageMaker HyperPod Cluster Node Health Event"],
        "detail": {
            "ClusterArn": [{"Fn::GetAtt": [cluster_id, "ClusterArn"]}],
            "HealthSummary": {"HealthStatus": ["Unhealthy"]},
        },
    }
    properties = alarm["Properties"]
    assert (properties["Namespace"], properties["MetricName"]) == ("AWS/Events", "TriggeredRules")
    # The alarm names the rule by its fixed name, so that it can exist before the cluster.
    rule_name = rule["Properties"]["Name"]
    assert rule_name == name and len(rule_name) <= 64
    assert properties["Dimensions"] == [{"Name": "RuleName", "Value": rule_name}]
    assert (properties["Threshold"], properties["ComparisonOperator"]) == (
        1,
        "GreaterThanOrEqualToThreshold",
    )
    # HyperPod refuses rollback alarms that do not exist: the cluster waits for the alarm,
    # the rule (on the cluster's ARN) for the cluster.
    assert alarm_id in cluster_of(template)["DependsOn"]
    assert rule_id not in json.dumps(cluster_of(template).get("DependsOn", []))
    # The instances' role may read the alarms it rolls back on.
    resources = json.dumps(statement_for(template, "cloudwatch:DescribeAlarms")["Resource"])
    assert ":alarm:my-alarm" in resources and f":alarm:{name}" in resources


def test_a_count_batch_is_written_as_an_instance_count():
    update = ScheduledUpdate(cron="cron(0 3 ? * SUN *)", batch_count=2)
    groups = (CONTROLLER, replace(CPU_WORKERS, scheduled_update=update))
    template = Template.from_stack(
        build(new_app(), instance_groups=groups, accounting_database=None)
    )
    config = groups_of(template)["cpu"]["ScheduledUpdateConfig"]["DeploymentConfig"]
    assert config["RollingUpdatePolicy"] == {
        "MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 2}
    }
    assert "WaitIntervalInSeconds" not in config


def test_lifecycle_mode_takes_the_group_options_that_need_no_api_driven_slurm():
    groups = (
        replace(CONTROLLER, image_id=AMI, capacity=Capacity.ON_DEMAND),
        replace(CPU_WORKERS, scheduled_update=UPDATE),
    )
    template = Template.from_stack(_lifecycle(groups))
    properties = cluster_of(template)["Properties"]
    assert "Orchestrator" not in properties and "NodeProvisioningMode" not in properties
    group = {g["InstanceGroupName"]: g for g in properties["InstanceGroups"]}
    assert group["controller"]["ImageId"] == AMI
    assert "ScheduledUpdateConfig" in group["cpu"]
    assert all(g["LifeCycleConfig"]["OnCreate"] == "on_create.sh" for g in group.values())


def _lifecycle(groups: tuple) -> cdk.Stack:
    stack = cdk.Stack(new_app(), "Lifecycle")
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    HyperPodCluster(
        stack,
        "Cluster",
        HyperPodClusterProps(
            instance_groups=groups,
            subnet=network.subnet,
            security_group=network.security_group,
            lifecycle=FakeLifecycle(stack, "Lifecycle"),
            file_system=FakeFileSystem(stack, "FileSystem"),
        ),
    )
    return stack


@pytest.mark.slow
def test_cfn_lint_finds_nothing(template):
    matches = lint(json.dumps(template.to_json()), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_nag_packs_find_nothing():
    app = new_app()
    build(app)
    # Only the warning about the pinned image next to the external accounting database.
    assert nag_findings(app) == ["Annotation::fm_platform:accountingPinnedImage at Managed/Cluster"]


# --- validation: each bad value named by its key -------------------------------------------


@pytest.fixture(scope="module")
def scope() -> cdk.Stack:
    return cdk.Stack(new_app(), "ManagedValidation")


def managed(scope: cdk.Stack, **overrides: object) -> HyperPodClusterProps:
    lustre = scope.node.try_find_child("Lustre") or FakeLustre(scope, "Lustre")
    return props(scope, slurm_mode=SlurmMode.MANAGED, file_system=lustre, **overrides)


def test_valid_managed_props_pass(scope):
    managed(scope).validate()
    managed(scope, accounting_database=FakeDatabase(), instance_groups=GROUPS).validate()


def test_lifecycle_mode_refuses_what_needs_the_api_driven_configuration(scope):
    home = scope.node.try_find_child("Home") or FakeHome(scope, "Home")
    groups = (CONTROLLER, replace(CPU_WORKERS, min_count=1))
    message = problems_of(
        props(
            scope,
            instance_groups=groups,
            home_file_system=home,
            accounting_database=FakeDatabase(),
            slurm_config_strategy="Merge",
            node_provisioning=NodeProvisioning.CONTINUOUS,
        )
    )
    for line in (
        "node_provisioning='continuous': needs slurm_mode managed",
        "instance_groups[1].min_count=1: needs slurm_mode managed",
        "slurm_config_strategy='Merge': needs slurm_mode managed",
        "home_file_system='given': needs slurm_mode managed",
        "accounting_database='given': needs slurm_mode managed",
    ):
        assert line in message, line


def test_accounting_and_minimum_counts_refuse_standard_provisioning(scope):
    groups = (CONTROLLER, replace(CPU_WORKERS, min_count=1))
    message = problems_of(
        managed(
            scope,
            instance_groups=groups,
            accounting_database=FakeDatabase(),
            node_provisioning=NodeProvisioning.STANDARD,
        )
    )
    assert (
        "accounting_database='given': an external accounting database needs continuous node "
        "provisioning" in message
    )
    assert "instance_groups[1].min_count=1: a minimum count needs continuous node" in message


def test_a_strategy_with_continuous_provisioning(scope):
    message = problems_of(
        managed(scope, accounting_database=FakeDatabase(), slurm_config_strategy="Managed")
    )
    assert "slurm_config_strategy='Managed': leave it unset with continuous node provisioning" in (
        message
    )


def test_a_strategy_botocore_does_not_know(scope):
    message = problems_of(managed(scope, slurm_config_strategy="Replace"))
    assert "slurm_config_strategy='Replace': not supported; allowed: one of Overwrite" in message


def test_a_file_system_hyperpod_cannot_mount(scope):
    plain = scope.node.try_find_child("Plain") or FakeFileSystem(scope, "Plain")
    message = problems_of(props(scope, slurm_mode=SlurmMode.MANAGED, file_system=plain))
    assert "file_system='FakeFileSystem': managed Slurm mode mounts the file system" in message
    assert "missing: dns_name, mount_name, mount_path" in message


def test_a_mount_path_hyperpod_refuses(scope):
    class Trailing(FakeLustre):
        mount_path = "/fsx/"

    message = problems_of(
        props(scope, slurm_mode=SlurmMode.MANAGED, file_system=Trailing(scope, "T"))
    )
    assert "file_system.mount_path='/fsx/': must not end with '/'" in message


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        (replace(CPU_WORKERS, min_count=3), "instance_groups[1].min_count=3: must be at most"),
        (
            replace(CPU_WORKERS, capacity=Capacity.SPOT),
            "instance_groups[1].capacity='spot': HyperPod documents Spot capacity only",
        ),
        (replace(CPU_WORKERS, image_id="ubuntu"), "instance_groups[1].image_id='ubuntu'"),
        (
            replace(CPU_WORKERS, scheduled_update=replace(UPDATE, cron="every sunday")),
            "instance_groups[1].scheduled_update.cron='every sunday': must be cron(",
        ),
        (
            replace(CPU_WORKERS, scheduled_update=replace(UPDATE, batch_count=1)),
            "instance_groups[1].scheduled_update.batch_percent/batch_count=(25, 1)",
        ),
        (
            replace(CPU_WORKERS, scheduled_update=replace(UPDATE, wait_s=-1)),
            "instance_groups[1].scheduled_update.wait_s=-1: below the minimum 0",
        ),
        (
            replace(CPU_WORKERS, partition="gpu_training"),
            "instance_groups[1].partition='gpu_training': underscores are not allowed",
        ),
    ],
)
def test_bad_group_options_name_their_key(scope, group, expected):
    assert expected in problems_of(managed(scope, instance_groups=(CONTROLLER, group)))


def test_the_schema_and_botocore_let_a_group_run_its_scripts_on_init_complete_alone():
    # Why managed groups carry OnInitComplete without OnCreate: neither is required, and the
    # schema calls them mutually exclusive.
    import botocore.session

    from tests.test_rules import _cluster_schema

    config = _cluster_schema()["definitions"]["ClusterLifeCycleConfig"]
    assert "required" not in config
    assert (
        "Mutually exclusive with OnInitComplete" in config["properties"]["OnCreate"]["description"]
    )
    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.shape_for("ClusterLifeCycleConfig")
    assert shape.required_members == [] and "OnInitComplete" in shape.members


def test_a_pinned_image_with_external_accounting_is_warned_about():
    # External accounting needs AMIs released after 2026-08-30: a pinned image may be older.
    warnings = Annotations.from_stack(build(new_app())).find_warning(
        "*", Match.string_like_regexp("needs a HyperPod AMI released after 2026-08-30")
    )
    assert len(warnings) == 1
    assert "instance_groups[0].image_id='ami-0123456789abcdef0'" in warnings[0].entry.data
    without = Annotations.from_stack(build(new_app(), accounting_database=None))
    assert not without.find_warning("*", Match.string_like_regexp("released after"))
