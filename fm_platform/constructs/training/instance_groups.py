"""Typed HyperPod instance groups, their validation, and the Slurm provisioning parameters
the lifecycle scripts read (classic Slurm mode)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.specs.sagemaker_model import member_shape_name
from fm_platform.validation import Problems, is_unresolved

#: The checks run on accelerated worker groups when ``deep_health_checks`` is not given.
DEFAULT_DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")

#: Accelerators HyperPod's deep health checks test (NVIDIA GPU and Trainium instances; the
#: HyperPod developer guide, "Deep health checks", lists no check for other families).
DEEP_HEALTH_CHECK_ACCELERATORS = frozenset({"nvidia-gpu", "trainium"})

#: Size of the extra EBS volume (mounted at /opt/sagemaker) when a group does not set one.
DEFAULT_EBS_VOLUME_GIB = 500

PROVISIONING_PARAMETERS_VERSION = "1.0.0"


class NodeRole(enum.Enum):
    """What the nodes of an instance group do in the Slurm cluster."""

    CONTROLLER = "controller"
    LOGIN = "login"
    WORKER = "worker"


@dataclass(frozen=True, kw_only=True)
class InstanceGroup:
    """One HyperPod instance group.

    name: the group's name (1-63 letters, digits and hyphens); changing it replaces the
        cluster.
    role: controller (exactly one group, of exactly one instance), login (at most one) or
        worker.
    instance_type: an ``ml.*`` type HyperPod offers (botocore enum ``ClusterInstanceType``).
    instance_count: how many instances the group has.
    threads_per_core: 1 (hyperthreading off, the default, as HPC jobs prefer) or 2.
    ebs_volume_gib: size of the extra EBS volume attached to every instance and mounted at
        /opt/sagemaker; by default 500 GiB. ``None`` attaches no extra volume.
    deep_health_checks: the on-start deep health checks; by default InstanceStress and
        InstanceConnectivity for worker groups of NVIDIA GPU or Trainium instances (the
        families the checks support) and none otherwise. ``()`` turns them off.
    training_plan_arn: a SageMaker training plan whose reserved capacity the group uses; by
        default on-demand capacity.
    partition_name: the Slurm partition of a worker group; by default the group name. Only
        worker groups have one.
    """

    name: str
    role: NodeRole
    instance_type: str
    instance_count: int
    threads_per_core: int = 1
    ebs_volume_gib: int | None = DEFAULT_EBS_VOLUME_GIB
    deep_health_checks: tuple[str, ...] | None = None
    training_plan_arn: str | None = None
    partition_name: str | None = None

    @property
    def slurm_partition(self) -> str | None:
        """The Slurm partition of a worker group (None for controller and login groups)."""
        if self.role is not NodeRole.WORKER:
            return None
        return self.partition_name or self.name

    @property
    def effective_deep_health_checks(self) -> tuple[str, ...]:
        """The deep health checks the group runs on start, defaults applied."""
        if self.deep_health_checks is not None:
            return tuple(self.deep_health_checks)
        if self.role is NodeRole.WORKER and _supports_deep_health_checks(self.instance_type):
            return DEFAULT_DEEP_HEALTH_CHECKS
        return ()

    @property
    def ipv4_addresses_per_instance(self) -> int:
        """Subnet addresses one instance takes: one per EFA interface, at least one.
        Types missing from the instance data file count as one."""
        try:
            return max(1, instance_spec(self.instance_type).efa_interfaces)
        except UnknownInstanceTypeError:
            return 1


def _supports_deep_health_checks(instance_type: str) -> bool:
    try:
        return instance_spec(instance_type).accelerator in DEEP_HEALTH_CHECK_ACCELERATORS
    except UnknownInstanceTypeError:
        return False


def validate_instance_groups(
    problems: Problems, groups: Sequence[InstanceGroup], field: str = "instance_groups"
) -> None:
    """Add every problem with ``groups`` to ``problems``: names, roles, types, counts,
    threads per core, EBS size, deep health checks, training plans and partitions."""
    for index, group in enumerate(groups):
        _validate_group(problems, group, f"{field}[{index}]")
    problems.check_unique(f"{field}[*].name", (g.name for g in groups))
    controllers = [g.name for g in groups if g.role is NodeRole.CONTROLLER]
    if len(controllers) != 1:
        problems.add(
            f"{field}[*].role",
            controllers,
            f"exactly one group must have role CONTROLLER (the Slurm head node); "
            f"found {len(controllers)}",
        )
    logins = [g.name for g in groups if g.role is NodeRole.LOGIN]
    if len(logins) > 1:
        problems.add(
            f"{field}[*].role",
            logins,
            f"at most one group may have role LOGIN; found {len(logins)}",
        )


def _validate_group(problems: Problems, group: InstanceGroup, field: str) -> None:
    spec = "ClusterInstanceGroupSpecification"
    problems.check_shape(f"{field}.name", group.name, "ClusterInstanceGroupName")
    problems.check_shape(f"{field}.instance_type", group.instance_type, "ClusterInstanceType")
    problems.check_shape(
        f"{field}.instance_count", group.instance_count, member_shape_name(spec, "InstanceCount")
    )
    if (
        group.role is NodeRole.CONTROLLER
        and not is_unresolved(group.instance_count)
        and group.instance_count != 1
    ):
        problems.add(
            f"{field}.instance_count",
            group.instance_count,
            "a CONTROLLER group must hold exactly 1 instance: the lifecycle scripts start one "
            "slurmctld on it (0 leaves the cluster without a controller, 2 or more start "
            "uncoordinated controllers)",
        )
    problems.check_shape(
        f"{field}.threads_per_core",
        group.threads_per_core,
        member_shape_name(spec, "ThreadsPerCore"),
    )
    problems.check_shape(
        f"{field}.ebs_volume_gib",
        group.ebs_volume_gib,
        member_shape_name("ClusterEbsVolumeConfig", "VolumeSizeInGB"),
    )
    problems.check_shape(
        f"{field}.training_plan_arn",
        group.training_plan_arn,
        member_shape_name(spec, "TrainingPlanArn"),
    )
    if group.deep_health_checks:
        for position, check in enumerate(group.deep_health_checks):
            problems.check_shape(
                f"{field}.deep_health_checks[{position}]", check, "DeepHealthCheckType"
            )
        if not _supports_deep_health_checks(group.instance_type):
            problems.add(
                f"{field}.deep_health_checks",
                group.deep_health_checks,
                f"deep health checks run only on NVIDIA GPU and Trainium instances, "
                f"not on {group.instance_type}; leave them unset or use ()",
            )
    if group.partition_name is not None:
        if group.role is not NodeRole.WORKER:
            problems.add(
                f"{field}.partition_name",
                group.partition_name,
                f"only WORKER groups have a Slurm partition; this group is {group.role.name}",
            )
        else:
            problems.check_shape(
                f"{field}.partition_name", group.partition_name, "ClusterPartitionName"
            )


def provisioning_parameters(
    groups: Sequence[InstanceGroup],
    *,
    fsx_dns_name: str,
    fsx_mount_name: str,
    fsx_mount_path: str = "/fsx",
) -> dict[str, Any]:
    """The ``provisioning_parameters.json`` document the lifecycle scripts read to learn each
    node's role, the worker partitions and the FSx for Lustre mount."""
    controller = next((g.name for g in groups if g.role is NodeRole.CONTROLLER), None)
    if controller is None:
        roles = {g.name: g.role.name for g in groups}
        raise ValueError(
            f"instance_groups={roles!r}: provisioning parameters need exactly one group with "
            "role CONTROLLER (the Slurm head node)"
        )
    login = next((g.name for g in groups if g.role is NodeRole.LOGIN), None)
    parameters: dict[str, Any] = {
        "version": PROVISIONING_PARAMETERS_VERSION,
        "workload_manager": "slurm",
        "controller_group": controller,
    }
    if login is not None:
        parameters["login_group"] = login
    parameters["worker_groups"] = [
        {"instance_group_name": g.name, "partition_name": g.slurm_partition}
        for g in groups
        if g.role is NodeRole.WORKER
    ]
    parameters["fsx_dns_name"] = fsx_dns_name
    parameters["fsx_mountname"] = fsx_mount_name
    parameters["fsx_mount_path"] = fsx_mount_path
    return parameters
