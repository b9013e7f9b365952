"""Every rule on plain values, without building a stack: what it reports (field, value,
what is allowed), and that it skips what is unset (None)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any

import botocore.session
import pytest

from fm_platform.rules import (
    accounting,
    capacity,
    cluster,
    components,
    filesystem,
    home_filesystem,
    hosting,
    inference,
    instance_groups,
    lifecycle,
    network,
    scaling,
    scheduled_update,
    variants,
)
from fm_platform.rules.problems import Problems
from fm_platform.rules.types import describe, read, well_typed


def messages(rule: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    problems = Problems("rule")
    rule(problems, *args, **kwargs)
    return list(problems.messages)


# -- network -----------------------------------------------------------------------------


def test_az_ids_not_names():
    assert messages(network.check_availability_zone_id, "az", "use1-az4") == []
    [message] = messages(network.check_availability_zone_id, "az", "us-east-1a")
    assert message.startswith("az='us-east-1a': must be an AZ ID such as use1-az4")
    assert messages(network.check_availability_zone_id, "az", None) == []


@pytest.mark.parametrize(
    ("cidr", "mask", "problem"),
    [
        ("10.0.0.0/16", 16, None),
        ("10.0.0.1/16", None, "must be an IPv4 CIDR block"),
        ("10.0.0.0/8", None, "mask must be between /16 and /28"),
        (None, None, None),
    ],
)
def test_vpc_cidr(cidr, mask, problem):
    problems = Problems("rule")
    assert network.check_vpc_cidr(problems, "vpc_cidr", cidr) == mask
    assert [m for m in problems.messages if problem and problem in m] or not problem
    assert bool(problems.messages) == bool(problem)


def test_subnet_masks_fit_the_vpc_and_vpc_limits():
    assert messages(network.check_subnet_mask, "m", 17, 16) == []
    assert messages(network.check_subnet_mask, "m", 16, 16) == [
        "m=16: must be larger than the VPC's mask /16: then each subnet is at most half the "
        "VPC and both fit in it"
    ]
    assert messages(network.check_subnet_mask, "m", 29, None) == ["m=29: must be between 16 and 28"]


def test_subnet_capacity_counts_every_efa_interface():
    assert network.usable_addresses_of_mask(24) == 251
    assert network.usable_ipv4_addresses("10.0.0.0/17") == 32763
    needed = instance_groups.required_addresses([("ml.p5.48xlarge", 8), ("ml.m5.12xlarge", 1)])
    assert needed == 8 * 32 + 1 + network.SUBNET_ADDRESS_MARGIN
    [message] = messages(network.check_subnet_capacity, "mask", 26, 26, needed)
    assert message.startswith("mask=26: 59 usable addresses, but the instance groups need 273")
    assert messages(network.check_subnet_capacity, "mask", 24, 24, None) == []


# -- file system -------------------------------------------------------------------------


@pytest.mark.parametrize(("gib", "ok"), [(1200, True), (2400, True), (4800, True), (3600, False)])
def test_persistent_2_capacity_steps(gib, ok):
    assert (messages(filesystem.check_storage_capacity, "gib", gib) == []) is ok


def test_throughput_paths_and_data_repository():
    assert messages(filesystem.check_throughput, "t", 300) == [
        "t=300: must be one of 125, 250, 500, 1000"
    ]
    assert messages(filesystem.check_absolute_path, "p", "fsx", "/fsx") == [
        "p='fsx': must be an absolute path like /fsx"
    ]
    found = messages(
        filesystem.check_data_repository,
        "data_repository",
        file_system_path="s3",
        bucket_prefix="/datasets",
        auto_import_events=("NEW", "RENAMED"),
        auto_export_events=None,
    )
    assert [m.split("=")[0] for m in found] == [
        "data_repository.file_system_path",
        "data_repository.bucket_prefix",
        "data_repository.auto_import_events",
    ]


# -- instance groups ---------------------------------------------------------------------


def _group(**overrides: Any) -> list[str]:
    values = {
        "name": "gpu",
        "role": "worker",
        "instance_type": "ml.p5.48xlarge",
        "instance_count": 2,
        "threads_per_core": 1,
        "ebs_volume_gib": 500,
        "deep_health_checks": None,
        "training_plan_arn": None,
        "partition": None,
    }
    return messages(instance_groups.check_instance_group, "g", **{**values, **overrides})


def test_an_instance_group_is_checked_against_botocore_and_its_role():
    assert _group() == []
    assert _group(name="bad_name")[0].startswith("g.name='bad_name': underscores are not allowed")
    assert "g.instance_count=2: a CONTROLLER group must hold exactly 1 instance" in " ".join(
        _group(role="controller", instance_type="ml.m5.12xlarge")
    )
    assert _group(role="controller", instance_type="ml.m5.12xlarge", instance_count=1) == []
    assert _group(partition="p", role="login", instance_type="ml.m5.xlarge", instance_count=1)[
        0
    ].endswith("only WORKER groups have a Slurm partition; this group is LOGIN")
    assert "deep health checks run only on NVIDIA GPU and Trainium instances" in " ".join(
        _group(instance_type="ml.m5.xlarge", deep_health_checks=("InstanceStress",))
    )


def test_one_controller_at_most_one_login_unique_names():
    assert messages(instance_groups.check_group_roles, "groups", [("a", "controller")]) == []
    found = messages(
        instance_groups.check_group_roles,
        "groups",
        [("a", "worker"), ("a", "login"), ("b", "login")],
    )
    assert found == [
        "groups[*].name='a': must be unique; it appears more than once",
        "groups[*].role=[]: exactly one group must have role CONTROLLER (the Slurm head node); "
        "found 0",
        "groups[*].role=['a', 'b']: at most one group may have role LOGIN; found 2",
    ]
    # A group whose role is unknown (already reported) does not skew the counts.
    assert messages(instance_groups.check_group_roles, "groups", [("a", None)]) == []


def test_minimum_counts_capacity_and_image_pins():
    assert messages(instance_groups.check_min_count, "g.min_count", 2, 4) == []
    assert messages(instance_groups.check_min_count, "g.min_count", 5, 4) == [
        "g.min_count=5: must be at most the group's instance_count (4)"
    ]
    assert messages(instance_groups.check_min_count, "g.min_count", -1, None)[0].startswith(
        "g.min_count=-1: below the minimum 0"
    )
    assert messages(instance_groups.check_capacity, "g.capacity", "on_demand") == []
    [spot] = messages(instance_groups.check_capacity, "g.capacity", "spot")
    assert spot.startswith("g.capacity='spot': HyperPod documents Spot capacity only for ")
    assert '"Spot instances in Amazon SageMaker HyperPod"' in spot
    assert messages(instance_groups.check_capacity, "g.capacity", "reserved") == [
        "g.capacity='reserved': must be one of on_demand, spot"
    ]
    assert messages(instance_groups.check_image_id, "g.image_id", "ami-0123456789abcdef0") == []
    assert messages(instance_groups.check_image_id, "g.image_id", "ami-xyz")[0].startswith(
        "g.image_id='ami-xyz': 'x', 'y' and 'z' are not allowed"
    )
    assert messages(instance_groups.check_image_id, "g.image_id", "default") == [
        "g.image_id='default': leave image_id unset for HyperPod's latest image: "
        "CloudFormation's schema takes only AMI IDs here (format AWS::EC2::Image.Id)"
    ]
    assert messages(instance_groups.check_min_count, "x", None, 4) == []
    assert messages(instance_groups.check_capacity, "x", None) == []
    assert messages(instance_groups.check_image_id, "x", None) == []


def test_the_groups_names_for_the_api_are_botocores():
    model = botocore.session.get_session().get_service_model("sagemaker")
    assert set(instance_groups.SLURM_NODE_TYPES.values()) == set(
        model.shape_for("ClusterSlurmNodeType").enum
    )
    assert set(instance_groups.CAPACITY_MEMBERS.values()) == set(
        model.shape_for("ClusterCapacityRequirements").members
    )
    assert set(model.shape_for("NodeUnavailabilityType").enum) == {
        "INSTANCE_COUNT",
        "CAPACITY_PERCENTAGE",
    }
    assert (
        cluster.DEFAULT_SLURM_CONFIG_STRATEGY in model.shape_for("ClusterSlurmConfigStrategy").enum
    )


def _update(**overrides: Any) -> list[str]:
    values = {
        "cron": "cron(0 3 ? * SUN *)",
        "batch_percent": None,
        "batch_count": None,
        "wait_s": None,
        "rollback_alarms": (),
    }
    return messages(scheduled_update.check_scheduled_update, "u", **{**values, **overrides})


@pytest.mark.parametrize(
    ("cron", "ok"),
    [
        ("cron(0 3 ? * SUN *)", True),
        ("cron(30 23 1 * ? 2027)", True),
        ("cron(0 4 ? */2 6#1 *)", True),
        ("cron(0 3 * * SUN *)", False),  # day-of-month must be a day or ?
        ("cron(0 24 ? * SUN *)", False),
        ("0 3 * * 0", False),
        ("xcron(0 3 ? * SUN *)", False),  # matched whole, not searched
    ],
)
def test_scheduled_update_cron_follows_the_schema(cron, ok):
    assert (_update(cron=cron) == []) is ok


def test_scheduled_update_batches_wait_and_alarms():
    assert _update(batch_percent=25, wait_s=600, rollback_alarms=("a",)) == []
    assert _update(batch_count=2) == []
    assert _update(batch_percent=10, batch_count=2) == [
        "u.batch_percent/batch_count=(10, 2): give one of them: the batch is either a "
        "percentage of the group or a number of instances"
    ]
    assert _update(batch_percent=101) == ["u.batch_percent=101: must be at most 100 (percent)"]
    assert _update(batch_count=0)[0].startswith("u.batch_count=0: below the minimum 1")
    assert _update(wait_s=3601)[0].startswith("u.wait_s=3601: above the maximum 3600")
    assert _update(rollback_alarms=(" ",))[0].startswith("u.rollback_alarms[0]=' ': must not be")
    [too_many] = _update(rollback_alarms=tuple(f"a{i}" for i in range(10)))
    assert too_many.endswith(
        "at most 9: the API takes 10 alarms and the cluster adds its own node-health alarm"
    )
    assert _update(cron=None, rollback_alarms=None) == []


def test_the_cron_pattern_is_the_cloudformation_schemas():
    schema = _cluster_schema()
    pattern = schema["definitions"]["ScheduledUpdateConfig"]["properties"]["ScheduleExpression"]
    assert pattern["pattern"] == scheduled_update.SCHEDULE_PATTERN


def _cluster_schema() -> dict[str, Any]:
    """cfn-lint's bundled resource schema of AWS::SageMaker::Cluster (us-east-1)."""
    import json
    from pathlib import Path

    import cfnlint

    schemas = Path(cfnlint.__file__).parent / "data" / "schemas"
    providers = json.loads((schemas / "providers" / "us-east-1.json").read_text())
    return json.loads(
        (schemas / "resources" / f"{providers['AWS::SageMaker::Cluster']}.json").read_text()
    )


# -- the cluster's Slurm mode ------------------------------------------------------------


def test_strategy_only_in_managed_mode_and_never_with_continuous_provisioning():
    check = cluster.check_slurm_config_strategy
    assert messages(check, "s", "Managed", slurm_mode="managed", continuous=False) == []
    assert messages(check, "s", None, slurm_mode="lifecycle", continuous=True) == []
    [lifecycle_mode] = messages(check, "s", "Merge", slurm_mode="lifecycle", continuous=False)
    assert lifecycle_mode.startswith("s='Merge': needs slurm_mode managed: it belongs to ")
    [continuous] = messages(check, "s", "Merge", slurm_mode="managed", continuous=True)
    assert "reject any SlurmConfigStrategy" in continuous
    assert messages(check, "s", "Manual", slurm_mode="managed", continuous=False)[0].startswith(
        "s='Manual': not supported; allowed: one of Overwrite, Managed, Merge"
    )


def test_continuous_provisioning_needs_managed_mode_and_what_needs_it():
    assert messages(cluster.check_node_provisioning, "p", "continuous", slurm_mode="managed") == []
    assert messages(cluster.check_node_provisioning, "p", "continuous", slurm_mode="lifecycle")[
        0
    ].startswith("p='continuous': needs slurm_mode managed")
    assert messages(cluster.check_node_provisioning, "p", "fast", slurm_mode="managed") == [
        "p='fast': must be one of standard, continuous"
    ]
    needs = cluster.check_needs_continuous
    assert messages(needs, "a", True, what="X", slurm_mode="managed", provisioning=None) == []
    assert messages(needs, "a", False, what="X", slurm_mode="lifecycle", provisioning=None) == []
    assert messages(needs, "a", 2, what="X", slurm_mode="managed", provisioning="standard") == [
        "a=2: X needs continuous node provisioning; set node_provisioning to continuous, or "
        "leave it unset (then it is continuous)"
    ]
    assert messages(needs, "a", 2, what="X", slurm_mode="lifecycle", provisioning=None)[0].endswith(
        "(X needs continuous provisioning)"
    )
    assert cluster.continuous_provisioning(None, accounting=True, min_counts=False)
    assert cluster.continuous_provisioning(None, accounting=False, min_counts=True)
    assert not cluster.continuous_provisioning(None, accounting=False, min_counts=False)
    assert not cluster.continuous_provisioning("standard", accounting=True, min_counts=True)
    assert messages(cluster.check_needs_managed, "h", "given", slurm_mode="lifecycle")[
        0
    ].startswith("h='given': needs slurm_mode managed")
    assert messages(cluster.check_needs_managed, "h", "given", slurm_mode="managed") == []


def test_mount_paths_hyperpod_accepts():
    assert messages(cluster.check_managed_mount_path, "m", "/fsx") == []
    assert messages(cluster.check_managed_mount_path, "m", "/fsx/") == [
        "m='/fsx/': must not end with '/' or hold '//' (e.g. /fsx)"
    ]
    assert messages(cluster.check_managed_mount_path, "m", "fsx")[0].startswith(
        "m='fsx': must start with '/'"
    )


def test_home_file_system_and_accounting_capacity():
    check = home_filesystem.check_home_file_system
    assert (
        messages(
            check, "h.", storage_capacity_gib=64, throughput_capacity_mbps=64, mount_path="/home"
        )
        == []
    )
    assert messages(
        check, "h.", storage_capacity_gib=32, throughput_capacity_mbps=100, mount_path="home"
    ) == [
        "h.storage_capacity_gib=32: must be between 64 and 524288",
        "h.throughput_capacity_mbps=100: must be one of 64, 128, 256, 512, 1024, 2048, 3072, 4096",
        "h.mount_path='home': must start with '/'; allowed: matching "
        "/[a-zA-Z0-9._/-]+; 1-1024 characters",
    ]
    assert messages(accounting.check_capacity_range, "", 0.5, 2.0) == []
    assert messages(accounting.check_capacity_range, "", 4.0, 1.25) == [
        "max_capacity_acu=1.25: must be a multiple of 0.5",
        "min_capacity_acu=4.0: must be at most max_capacity_acu (1.25)",
    ]
    assert messages(accounting.check_capacity_range, "", 0.0, 300.0) == [
        "min_capacity_acu=0.0: must be between 0.5 and 256.0",
        "max_capacity_acu=300.0: must be between 0.5 and 256.0",
    ]


# -- lifecycle ---------------------------------------------------------------------------


def test_lifecycle_assets_prefix_and_parameters(tmp_path):
    assert messages(lifecycle.check_assets_path, "assets", str(tmp_path / "none")) == [
        f"assets={str(tmp_path / 'none')!r}: must be an existing folder"
    ]
    (tmp_path / "provisioning_parameters.json").write_text("{}")
    assert [
        m.split(": ", 1)[1] for m in messages(lifecycle.check_assets_path, "a", str(tmp_path))
    ] == [
        "must contain on_create.sh",
        "must not contain provisioning_parameters.json: it is written from provisioning_parameters",
    ]
    assert messages(lifecycle.check_prefix, "prefix", "scripts/v1") == []
    assert messages(lifecycle.check_prefix, "prefix", "/scripts/")[0].startswith(
        "prefix='/scripts/': must be an S3 key prefix"
    )
    assert messages(
        lifecycle.check_provisioning_parameters, "p", {"worker_groups": [{"x": 1}]}
    ) == [
        "p.controller_group=None: is required in lifecycle Slurm mode",
        "p.worker_groups[0]={'x': 1}: must be a mapping with instance_group_name and "
        "partition_name",
    ]


def test_assets_folder_holds_none_of_the_written_files(tmp_path):
    (tmp_path / "on_create.sh").write_text("")
    assert messages(lifecycle.check_assets_path, "a", str(tmp_path), shared_users=True) == []
    (tmp_path / "fmp_node_setup.json").write_text("{}")
    (tmp_path / "shared_users.txt").write_text("alice,2001\n")
    assert messages(lifecycle.check_assets_path, "a", str(tmp_path)) == [
        f"a={str(tmp_path)!r}: must not contain fmp_node_setup.json: it is written from the "
        "node setup (managed Slurm mode)"
    ]
    # Your own shared_users.txt is used unless shared_users is configured.
    assert messages(lifecycle.check_assets_path, "a", str(tmp_path), shared_users=True)[-1] == (
        f"a={str(tmp_path)!r}: must not contain shared_users.txt: it is written from shared_users"
    )


def test_node_setup_follows_the_scripts_contract():
    good = {"version": 1, "mode": "managed", "fsx_mount_path": "/fsx"}
    assert messages(lifecycle.check_node_setup, "n", good) == []
    assert messages(lifecycle.check_node_setup, "n", {**good, "home_mount_path": "/home"}) == []
    assert (
        messages(
            lifecycle.check_node_setup,
            "n",
            {**good, "fsx_dns_name": "fs-1.fsx.us-east-1.amazonaws.com", "fsx_mountname": "abc"},
        )
        == []
    )
    assert messages(
        lifecycle.check_node_setup,
        "n",
        {
            "version": 2,
            "mode": "lifecycle",
            "fsx_mount_path": "/fsx/../x",
            "fsx_dns_name": "d",
            "extra": 1,
        },
    ) == [
        "n.extra=1: not a key of the node setup; allowed: version, mode, fsx_mount_path, "
        "fsx_dns_name, fsx_mountname, home_mount_path",
        "n.version=2: must be 1",
        "n.mode='lifecycle': must be 'managed'",
        "n.fsx_mount_path='/fsx/../x': must be an absolute, normalized path like /fsx",
        "n.fsx_dns_name/fsx_mountname=['fsx_dns_name']: give both (the scripts then mount FSx "
        "themselves) or neither",
    ]
    assert messages(lifecycle.check_node_setup, "n", {}) == [
        f"n.{key}=None: is required in managed Slurm mode"
        for key in ("version", "mode", "fsx_mount_path")
    ]
    # A value known only at deploy time (None here) is left to the node.
    assert messages(lifecycle.check_node_setup, "n", {**good, "fsx_mount_path": None}) == []


def test_shared_users_names_uids_and_homes():
    assert messages(lifecycle.check_shared_users, "u", [("alice", 2001, None)]) == []
    assert messages(
        lifecycle.check_shared_users,
        "u",
        [("Alice", 999, "home/a"), ("bob", 2001, "/home//bob"), ("bob", 2001, None)],
    ) == [
        "u[0].name='Alice': must be a user name of lowercase letters, digits, '_' and '-', "
        "starting with a letter or '_', at most 32 characters (useradd's portable form)",
        "u[0].uid=999: must be between 1000 and 60000",
        "u[0].home='home/a': must be an absolute, normalized path",
        "u[1].home='/home//bob': must be an absolute, normalized path",
        "u[*].name='bob': must be unique; it appears more than once",
        "u[*].uid='2001': must be unique; it appears more than once",
    ]
    assert messages(lifecycle.check_shared_users, "u", None) == []


# -- hosting -----------------------------------------------------------------------------


def test_hosting_instance_types_counts_and_vpc_options():
    assert messages(hosting.check_hosting_instance_type, "t", "ml.g5.12xlarge") == []
    [unknown] = messages(hosting.check_hosting_instance_type, "t", "ml.g5.13xlarge")
    assert "did you mean ml.g5.12xlarge" in unknown
    assert messages(
        hosting.check_managed_instance_counts,
        initial_instance_count=3,
        min_instance_count=1,
        max_instance_count=2,
    ) == [
        "initial_instance_count=3: must lie between min_instance_count (1) and "
        "max_instance_count (2)"
    ]
    assert (
        messages(
            hosting.check_managed_instance_counts,
            initial_instance_count=None,
            min_instance_count=3,
            max_instance_count=2,
        )
        == []
    )  # one count unknown: no ordering check
    assert messages(hosting.check_vpc_options, False, {"vpc_subnets": "x", "groups": []}) == [
        "vpc_subnets='x': needs `vpc` to be set"
    ]
    assert messages(hosting.check_vpc_options, True, {"vpc_subnets": "x"}) == []


def test_multi_model_prefix_and_hardware():
    assert messages(hosting.check_s3_prefix, "p", "s3://b/models/") == []
    assert messages(hosting.check_s3_prefix, "p", "s3://b/models")[0].endswith("ending in /")
    assert messages(hosting.check_multi_model_hardware, "t", "ml.g5.xlarge") == []
    [many] = messages(hosting.check_multi_model_hardware, "t", "ml.g5.12xlarge")
    assert many.startswith("t='ml.g5.12xlarge': has 4 x nvidia-gpu accelerators")


# -- components and capacity -------------------------------------------------------------


def test_component_names_stay_within_the_limit_and_distinct():
    assert components.component_name_for("Stack", "chat") == "Stack-chat"
    long = components.component_name_for("S" * 60, "model")
    assert len(long) == 63 and long.endswith("-model")
    assert long != components.component_name_for("S" * 61, "model")
    assert messages(components.check_component_name_free, "c", "x", True)[0].startswith(
        "c='x': must be unique on the endpoint and in the stack"
    )


def test_copy_resources_fit_one_instance():
    found = messages(
        components.check_copy_resources,
        instance_type="ml.g5.12xlarge",
        accelerators=5,
        cpu_cores=0.1,
        min_memory_mib=2048,
        max_memory_mib=1024,
    )
    assert found == [
        "cpu_cores=0.1: must be at least 0.25",
        "max_memory_mib=1024: must be at least min_memory_mib (2048)",
        "accelerators=5: at most 4 (nvidia-gpu devices on one ml.g5.12xlarge)",
    ]


def test_initial_copies_timeouts_and_rolling_updates():
    assert messages(components.check_initial_copies, 5, 5, (0, 2)) == [
        "initial_copies=5: must lie between 1 and scaling.max_copies (2)"
    ]
    assert messages(components.check_startup_timeouts, 30, 4000) == [
        "model_data_download_timeout_s=30: below the minimum 60; allowed: 60-3600",
        "container_startup_health_check_timeout_s=4000: above the maximum 3600; allowed: 60-3600",
    ]
    assert messages(
        components.check_rolling_update,
        "r",
        batch_size=150,
        batch_unit="CAPACITY_PERCENT",
        wait_interval_s=None,
        maximum_execution_timeout_s=None,
    ) == [
        "r.batch_size=150: 5-50 (percent of the copies, batch_unit CAPACITY_PERCENT): a batch "
        "is 5%-50% of the component's copies (botocore "
        "InferenceComponentRollingUpdatePolicy.MaximumBatchSize)"
    ]


@pytest.mark.parametrize(
    ("batch_size", "unit", "copies", "allowed"),
    [
        (5, "CAPACITY_PERCENT", 1, None),
        (50, "CAPACITY_PERCENT", 1, None),
        (4, "CAPACITY_PERCENT", 40, "5-50 (percent of the copies"),
        (1, "COPY_COUNT", 2, None),
        (10, "COPY_COUNT", 20, None),
        (11, "COPY_COUNT", 20, "1-10 copies: 5%-50% of the component's 20 copies"),
        # 5% of 40 copies is 2: one copy a batch is below AWS's lower bound.
        (1, "COPY_COUNT", 40, "2-20 copies: 5%-50% of the component's 40 copies"),
        (1, "COPY_COUNT", 1, "no batch of whole copies is 5%-50% of 1 copy"),
        (3, "COPY_COUNT", None, None),  # copies unknown: at least one
    ],
)
def test_a_rolling_batch_is_5_to_50_percent_of_the_copies(batch_size, unit, copies, allowed):
    found = messages(components.check_batch_share, "b", batch_size, unit, copies)
    if allowed is None:
        assert found == []
    else:
        [message] = found
        assert message.startswith(f"b={batch_size}: {allowed}")


def test_min_copies_fit_the_endpoint_with_the_arithmetic():
    demands = [
        capacity.CopyDemand(
            name=name,
            accelerators=2,
            cpu_cores=None,
            min_memory_mib=1024,
            min_copies=copies,
            initial_copies=copies,
        )
        for name, copies in (("a", 2), ("b", 1))
    ]
    assert capacity.shortfalls(demands, "ml.g5.12xlarge", 1, "min_copies") == [
        "accelerators: a 2 x 2 + b 1 x 2 = 6 > 1 instances x 4 (ml.g5.12xlarge) = 4"
    ]
    assert capacity.shortfalls(demands, "ml.g5.12xlarge", None, "min_copies") == []
    [message] = messages(capacity.check_min_copies_fit, "m", demands, "ml.g5.12xlarge", 1)
    assert message.startswith("m=1: the minimum copies of the endpoint's models need more")
    totals = capacity.CopyTotals("ml.g5.12xlarge", 1)
    totals.add(demands[1])
    assert not totals.initial_exceeds()
    totals.add(demands[0])
    assert totals.initial_exceeds()
    assert totals.initial_shortfalls() == capacity.shortfalls(
        [demands[1], demands[0]], "ml.g5.12xlarge", 1, "initial_copies"
    )


# -- scaling and variants ----------------------------------------------------------------


def test_component_and_instance_scaling():
    assert messages(
        scaling.check_component_scaling,
        "s",
        min_copies=3,
        max_copies=2,
        metric="gpu",
        metrics=("invocations_per_copy",),
        target_value=0,
        scale_in_cooldown_seconds=-1,
        scale_out_cooldown_seconds=None,
    ) == [
        "s.min_copies=3: must not exceed max_copies (2)",
        "s.metric='gpu': must be one of invocations_per_copy",
        "s.target_value=0: must be greater than 0",
        "s.scale_in_cooldown_seconds=-1: must be at least 0",
    ]
    assert messages(
        scaling.check_instance_scaling,
        "s",
        min_instances=0,
        max_instances=2,
        target_invocations_per_instance=None,
        scale_in_cooldown_seconds=300,
        scale_out_cooldown_seconds=60,
    ) == ["s.min_instances=0: must be at least 1"]


def test_variants_and_data_capture():
    assert messages(
        variants.check_variant,
        "v",
        variant_name="A B",
        instance_type="ml.m5.xlarge",
        initial_instance_count=0,
        initial_weight=-1,
    )[1:] == [
        "v.initial_instance_count=0: must be at least 1",
        "v.initial_weight=-1: must be at least 0",
    ]
    assert messages(
        variants.check_data_capture,
        "d",
        sampling_percentage=101,
        capture_requests=False,
        capture_responses=False,
        prefix="/x",
    ) == [
        "d.sampling_percentage=101: must be between 0 and 100",
        "d.capture_requests=False: capture_requests or capture_responses must be True",
        "d.prefix='/x': must be non-empty, without leading/trailing /",
    ]


# -- a whole inference stack -------------------------------------------------------------


def test_stack_wide_names_outputs_and_resources():
    assert messages(inference.check_endpoint_names, {"a": ["x", "y_z"], "b": ["x", None]})[1:] == [
        "b[0].name='x': must be unique among the endpoint names"
    ]
    assert messages(inference.check_output_count, 198, 201)[0].startswith(
        "endpoints=198: need 201 stack outputs"
    )
    assert messages(inference.check_model_names, [("m[0]", "a"), ("m[1]", "a")]) == [
        "m[1]='a': must be unique: it names the inference component, and those are unique "
        "per account and region"
    ]
    assert messages(inference.check_resource_count, 501, "split it")[0].startswith(
        "resources=501: CloudFormation allows at most 500 per stack; split it"
    )


# -- types of options and reading them from mappings -------------------------------------


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Inner:
    count: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
    name: str
    colour: Colour = Colour.RED
    size: float = 1.0
    inner: Inner | None = None
    tags: tuple[str, ...] = ()


def test_wrong_python_types_name_the_field_the_type_and_the_value():
    problems = Problems("Options")
    bad = Options(name=3, colour="red", size=True, inner=Inner(count="2"), tags=("a", 1))  # type: ignore[arg-type]
    checked = well_typed(problems, bad)
    assert problems.messages == (
        "name=3: must be a string",
        "colour='red': must be a Colour (Colour.RED)",
        "size=True: must be a number",
        "inner.count='2': must be an integer",
        "tags=('a', 1): must be a list",
    )
    assert checked == Options(name=None, colour=None, size=None, inner=Inner(count=None), tags=None)  # type: ignore[arg-type]
    assert describe(int | None) == "an integer or null"


def test_a_mapping_is_read_whole_with_every_mistake_named_by_key():
    problems = Problems("options")
    options = read(
        problems,
        "item.",
        {"colur": "red", "size": "big", "inner": {"count": 1, "extra": 2}, "tags": ["a"]},
        Options,
    )
    assert problems.messages == (
        "item.colur='red': unknown key; did you mean colour?",
        "item={'colur': 'red', 'size': 'big', 'inner': {'count': 1, 'extra': 2}, 'tags': "
        "['a']}: missing keys: name",
        "item.size='big': must be a number",
        "item.inner.extra=2: unknown key; allowed keys: count",
    )
    assert options == Options(name=None, inner=Inner(count=1), tags=("a",))  # type: ignore[arg-type]
