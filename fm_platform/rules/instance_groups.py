"""Rules of HyperPod instance groups: names, types, counts, Slurm roles and partitions,
deep health checks, and the addresses the groups take in their subnet."""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.network import SUBNET_ADDRESS_MARGIN
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name

CONTROLLER, LOGIN, WORKER = "controller", "login", "worker"

#: Accelerators HyperPod's deep health checks test (NVIDIA GPU and Trainium instances; the
#: HyperPod developer guide, "Deep health checks", lists no check for other families).
DEEP_HEALTH_CHECK_ACCELERATORS = frozenset({"nvidia-gpu", "trainium"})

_SPEC = "ClusterInstanceGroupSpecification"


def supports_deep_health_checks(instance_type: str | None) -> bool:
    """Whether HyperPod's deep health checks run on ``instance_type``."""
    if instance_type is None:
        return False
    try:
        return instance_spec(instance_type).accelerator in DEEP_HEALTH_CHECK_ACCELERATORS
    except UnknownInstanceTypeError:
        return False


def addresses_per_instance(instance_type: str | None) -> int:
    """Subnet addresses one instance takes: one per EFA interface, at least one. Types
    missing from the instance data count as one."""
    if instance_type is None:
        return 1
    try:
        return max(1, instance_spec(instance_type).efa_interfaces)
    except UnknownInstanceTypeError:
        return 1


def required_addresses(groups: Sequence[tuple[str | None, int | None]]) -> int | None:
    """Subnet addresses of groups given as ``(instance_type, instance_count)``: for each
    instance, one per EFA interface (at least one), plus :data:`SUBNET_ADDRESS_MARGIN`;
    None when a count is unknown."""
    total = 0
    for instance_type, count in groups:
        if count is None:
            return None
        total += count * addresses_per_instance(instance_type)
    return total + SUBNET_ADDRESS_MARGIN


def check_instance_group(
    problems: Problems,
    field: str,
    *,
    name: str | None,
    role: str | None,
    instance_type: str | None,
    instance_count: int | None,
    threads_per_core: int | None,
    ebs_volume_gib: int | None,
    deep_health_checks: Sequence[str] | None,
    training_plan_arn: str | None,
    partition_name: str | None,
) -> None:
    """One group's settings (``role``: controller, login or worker)."""
    problems.check_shape(f"{field}.name", name, "ClusterInstanceGroupName")
    problems.check_shape(f"{field}.instance_type", instance_type, "ClusterInstanceType")
    problems.check_shape(
        f"{field}.instance_count", instance_count, member_shape_name(_SPEC, "InstanceCount")
    )
    if role == CONTROLLER and instance_count is not None and instance_count != 1:
        problems.add(
            f"{field}.instance_count",
            instance_count,
            "a CONTROLLER group must hold exactly 1 instance: the lifecycle scripts start one "
            "slurmctld on it (0 leaves the cluster without a controller, 2 or more start "
            "uncoordinated controllers)",
        )
    problems.check_shape(
        f"{field}.threads_per_core", threads_per_core, member_shape_name(_SPEC, "ThreadsPerCore")
    )
    problems.check_shape(
        f"{field}.ebs_volume_gib",
        ebs_volume_gib,
        member_shape_name("ClusterEbsVolumeConfig", "VolumeSizeInGB"),
    )
    problems.check_shape(
        f"{field}.training_plan_arn",
        training_plan_arn,
        member_shape_name(_SPEC, "TrainingPlanArn"),
    )
    if deep_health_checks:
        for position, check in enumerate(deep_health_checks):
            problems.check_shape(
                f"{field}.deep_health_checks[{position}]", check, "DeepHealthCheckType"
            )
        if instance_type is not None and not supports_deep_health_checks(instance_type):
            problems.add(
                f"{field}.deep_health_checks",
                tuple(deep_health_checks),
                f"deep health checks run only on NVIDIA GPU and Trainium instances, "
                f"not on {instance_type}; leave them unset or use ()",
            )
    if partition_name is not None and role is not None:
        if role != WORKER:
            problems.add(
                f"{field}.partition_name",
                partition_name,
                f"only WORKER groups have a Slurm partition; this group is {role.upper()}",
            )
        else:
            problems.check_shape(f"{field}.partition_name", partition_name, "ClusterPartitionName")


def check_group_roles(
    problems: Problems, field: str, groups: Sequence[tuple[str | None, str | None]]
) -> None:
    """Names unique, exactly one controller group and at most one login group, for groups
    given as ``(name, role)``."""
    problems.check_unique(f"{field}[*].name", (name for name, _ in groups))
    if any(role is None for _, role in groups):
        return  # a group's role is unknown: the counts below would mislead
    controllers = [name for name, role in groups if role == CONTROLLER]
    if len(controllers) != 1:
        problems.add(
            f"{field}[*].role",
            controllers,
            f"exactly one group must have role CONTROLLER (the Slurm head node); "
            f"found {len(controllers)}",
        )
    logins = [name for name, role in groups if role == LOGIN]
    if len(logins) > 1:
        problems.add(
            f"{field}[*].role",
            logins,
            f"at most one group may have role LOGIN; found {len(logins)}",
        )
