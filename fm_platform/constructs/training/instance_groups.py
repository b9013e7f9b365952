"""Typed HyperPod instance groups, their validation, and the Slurm provisioning parameters
the lifecycle scripts read (classic Slurm mode)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fm_platform.rules.instance_groups import (
    addresses_per_instance,
    check_group_roles,
    check_instance_group,
    supports_deep_health_checks,
)
from fm_platform.rules.problems import Problems

#: The checks run on accelerated worker groups when ``deep_health_checks`` is not given.
DEFAULT_DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")

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
        if self.role is NodeRole.WORKER and supports_deep_health_checks(self.instance_type):
            return DEFAULT_DEEP_HEALTH_CHECKS
        return ()

    @property
    def ipv4_addresses_per_instance(self) -> int:
        """Subnet addresses one instance takes: one per EFA interface, at least one.
        Types missing from the instance data file count as one."""
        return addresses_per_instance(self.instance_type)

    def check(self, problems: Problems, field: str) -> None:
        """Record every problem of this group in ``problems``, under ``field``."""
        check_instance_group(
            problems,
            field,
            name=self.name,
            role=self.role.value if isinstance(self.role, NodeRole) else None,
            instance_type=self.instance_type,
            instance_count=self.instance_count,
            threads_per_core=self.threads_per_core,
            ebs_volume_gib=self.ebs_volume_gib,
            deep_health_checks=self.deep_health_checks,
            training_plan_arn=self.training_plan_arn,
            partition_name=self.partition_name,
        )


def validate_instance_groups(
    problems: Problems, groups: Sequence[InstanceGroup | None], field: str = "instance_groups"
) -> None:
    """Add every problem with ``groups`` to ``problems``: names, roles, types, counts,
    threads per core, EBS size, deep health checks, training plans and partitions."""
    for index, group in enumerate(groups):
        if group is not None:
            group.check(problems, f"{field}[{index}]")
    check_group_roles(
        problems,
        field,
        [
            (
                group.name if group is not None else None,
                group.role.value
                if group is not None and isinstance(group.role, NodeRole)
                else None,
            )
            for group in groups
        ],
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
